// End to end: a run shows itself where the visitor is looking. The overview's button says how
// long the comparison will take before it starts; once pressed, the Agent tab brings the run's
// buttons, its progress and the per-turn chart into the window from the first second, with the
// focus on something in sight; the chart fills in as the legs run, and a first result shows
// after the first repetition, refined as the others arrive — within noise until the repetitions
// can separate the legs.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { artifactPath, launchBrowser, plain, startServer, waitFinished } from "./server.mjs";

let server;
let browser;

before(async () => {
  server = await startServer(["--allow-client-conditions"]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Whether the element `testid` is (at least partly, or with `whole` entirely) in the window. */
async function inSight(page, testid, whole = false) {
  return page.evaluate(
    ([testid, whole]) => {
      const box = document.querySelector(`[data-testid="${testid}"]`)?.getBoundingClientRect();
      if (!box || box.height === 0) return false;
      return whole
        ? box.top >= 0 && box.bottom <= window.innerHeight
        : box.top < window.innerHeight && box.bottom > 0;
    },
    [testid, whole],
  );
}

for (const viewport of [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
]) {
  test(`at ${viewport.width}×${viewport.height}, a Compare from the overview shows its progress and chart from the first second`, async () => {
    const page = await browser.newPage({ viewport });
    const pageErrors = [];
    page.on("pageerror", (error) => pageErrors.push(error));
    await page.goto(server.url);
    await page.locator('select[data-testid="profile"]').waitFor();
    // What is simulated, in a line, before the button.
    const simulated = await page.getByTestId("intro-simulated").boundingBox();
    const button = await page.getByTestId("intro-compare").boundingBox();
    assert.ok(simulated.y < button.y, "the line comes before the button");
    assert.match(
      await page.getByTestId("intro-simulated").textContent(),
      /^Simulated alike for both transports: the model's pace and the network link\. Measured here: this server's work, each transport's bytes and their time on the link, this page\. Modelled, with hosted costs only/,
    );
    // The long task with no model time on loopback: a few seconds a leg.
    await page.getByTestId("task-length").selectOption("long");
    await page.getByTestId("profile").selectOption("instant");
    await page.getByTestId("link").selectOption("loopback");
    await page.getByTestId("api-costs").selectOption("local");
    // The button says how long, before anything starts.
    const estimate = page.getByTestId("intro-estimate");
    assert.match(await estimate.textContent(), /^ · (about \d+ (s|min)|a few seconds)/);
    const estimated = Number(await estimate.getAttribute("data-ms"));
    assert.ok(estimated > 1000, `${estimated} ms`);
    assert.match(await page.getByTestId("intro-what").textContent(), /It takes (about|a few)/);

    await page.getByTestId("intro-compare").click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="run-status"]')?.textContent === "running",
      null,
      { timeout: 15_000 },
    );
    // The first second: the progress, whole, and the chart in the window; the focus on
    // something in sight.
    await page.waitForTimeout(1000);
    assert.equal(await page.getByTestId("run-status").textContent(), "running", "still running");
    assert.ok(await inSight(page, "progress", true), "the progress is in sight");
    assert.ok(await inSight(page, "turn-chart"), "the chart is in sight");
    const focused = await page.evaluate(() => {
      const active = document.activeElement;
      const box = active?.getBoundingClientRect();
      return {
        id: active?.dataset.testid,
        seen: !!box && box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight,
      };
    });
    assert.ok(focused.seen, `the focus is on ${focused.id}, out of sight`);
    // The chart fills in while the legs run.
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="turn-chart"] [data-testid="chart-bar"]').length > 10,
      null,
      { timeout: 30_000 },
    );
    // A first result once a repetition has both legs, within noise with one repetition counted.
    await page.waitForFunction(
      () => /^So far \(1 of 3 repetitions\)/.test(document.querySelector('[data-testid="speedup-text"]')?.textContent),
      null,
      { timeout: 180_000 },
    );
    assert.match(await page.getByTestId("speedup-text").textContent(), /1 repetition: no spread to judge by/);
    assert.match(await page.getByTestId("speedup").getAttribute("class"), /verdict-noise/);
    assert.match(await page.getByTestId("speedup").textContent(), /^\d+\.\d\d\d?×$/);
    await waitFinished(page, 300_000);
    assert.equal(await page.getByTestId("run-status").textContent(), "done");
    assert.doesNotMatch(await page.getByTestId("speedup-text").textContent(), /^So far/);
    assert.deepEqual(pageErrors, []);
    await page.screenshot({ path: artifactPath(`playground-progress-${viewport.width}.png`) });
    await page.close();
  });
}

test("a shared link that runs on opening shows its progress from the first second, on a phone", async () => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await page.goto(server.url + plain("/?transport=compare&profile=spark&repetitions=1&autorun=1"));
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]')?.textContent === "running",
    null,
    { timeout: 15_000 },
  );
  await page.waitForTimeout(500);
  assert.ok(await inSight(page, "progress", true), "the progress is in sight");
  await waitFinished(page, 120_000);
  assert.equal(await page.getByTestId("run-status").textContent(), "done");
  assert.ok(await inSight(page, "result"), "the result is in sight");
  await page.close();
});
