// End to end: the docs page at /docs embeds three live demos, which run one after another —
// never two at once — to done inside their iframes: one run over WebSocket, a comparison on
// this machine, and a comparison of the long rollout over an emulated home uplink with hosted
// API costs, each with its speedup, what it is made of and why.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { artifactPath, launchBrowser, startServer } from "./server.mjs";

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

const DEMOS = ["demo-ws", "demo-compare", "demo-pays"];

async function frameDone(page, testId, timeout = 60_000) {
  const frame = page.frameLocator(`[data-testid="${testId}"]`);
  const status = frame.getByTestId("run-status");
  for (let waited = 0; waited < timeout; waited += 250) {
    const text = await status.textContent({ timeout: 30_000 });
    if (text === "done" || text === "failed") break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const error = await frame.locator('[data-testid="error"]').allTextContents();
  assert.equal(await status.textContent(), "done", `${testId}: ${error}`);
  return frame;
}

test("/docs serves the walkthrough and its three live demos run to done, one at a time", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  // Every resource the page and its demos ask for exists.
  const missing = [];
  page.on("response", (r) => r.status() === 404 && missing.push(r.url()));
  // Layout shift through every demo's run: the frames are reserved about their final height.
  await page.addInitScript(() => {
    window.__shift = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.__shift += entry.value;
    }).observe({ type: "layout-shift", buffered: true });
  });
  const response = await page.goto(server.url + "/docs");
  assert.equal(response.status(), 200);
  assert.ok(page.url().endsWith("/docs/"), page.url());
  assert.match(await page.locator("h1").textContent(), /WebSocket mode/);
  assert.match(await page.textContent("body"), /previous_response_id/);
  // Which demos run at once, sampled in the page while they go: never more than one.
  await page.evaluate((demos) => {
    window.__running = [];
    setInterval(() => {
      const running = demos.filter((id) => {
        const frame = document.querySelector(`[data-testid="${id}"]`);
        try {
          return frame.contentDocument?.querySelector('[data-testid="run-status"]')?.textContent === "running";
        } catch {
          return false;
        }
      });
      window.__running.push(running.length);
    }, 100);
  }, DEMOS);
  assert.equal(await page.locator('[data-testid="demo-pays"]').getAttribute("src"), null, "the last one waits");
  await frameDone(page, "demo-ws");
  // Each next demo is watched where it runs, as a reader would: its shifts are in view.
  await page.getByTestId("demo-compare").scrollIntoViewIfNeeded();
  const compare = await frameDone(page, "demo-compare");
  const speedup = await compare.getByTestId("speedup").textContent();
  assert.ok(parseFloat(speedup) > 0, speedup);
  assert.match(await compare.getByTestId("speedup-explained").textContent(), /API overhead/);
  await page.getByTestId("demo-pays").scrollIntoViewIfNeeded();
  const pays = await frameDone(page, "demo-pays", 240_000);
  assert.match(await pays.getByTestId("speedup").textContent(), /^\d+\.\d\d\d?×$/);
  assert.ok((await pays.getByTestId("speedup-why").textContent()).length > 40);
  assert.equal(await pays.getByTestId("chart-panel").count(), 2, "the chart of both legs");
  assert.match(await pays.getByTestId("conditions-applied").textContent(), /40 ms RTT.*hosted API costs/);
  // Embedded, a demo says what it is and leads to the playground.
  assert.match(await pays.locator("h1").textContent(), /WebSocket mode against HTTP/);
  assert.match(await pays.getByTestId("open-in-playground").getAttribute("href"), /task_length=long/);
  const overlapping = await page.evaluate(() => Math.max(...window.__running));
  assert.ok(overlapping <= 1, `${overlapping} demos ran at once`);
  await assertFramesFit(page);
  const shift = await page.evaluate(() => window.__shift);
  assert.ok(shift <= 0.05, `the docs page shifted by ${shift.toFixed(3)} (CLS) while its demos ran`);
  // The page says what the number is made of, and claims no number of its own.
  const text = await page.textContent("body");
  assert.match(text, /API overhead/);
  assert.doesNotMatch(text, /about 1\.2×|roughly 1\.2×/);
  // Both transports pay the round trip every turn: the walkthrough does not count it a saving.
  assert.doesNotMatch(text, /No new request/);
  assert.match(text, /both wait for the link's round trip on every turn/);
  assert.match(text, /another continent[\s\S]*smaller ratio/);
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(missing, []);
  await page.screenshot({ path: artifactPath("docs-page.png"), fullPage: true });
  await page.close();
});

/**
 * Every demo's frame fits its content: as tall as its page (which tells the docs page its
 * height), and nothing in it wider than the frame — every column of a comparison's tables in
 * view, "HTTP − WebSocket" included.
 */
async function assertFramesFit(page) {
  // The last height message is handled within a frame or two.
  await page.waitForTimeout(500);
  for (const id of DEMOS) {
    const fit = await page.evaluate((id) => {
      const frame = document.querySelector(`[data-testid="${id}"]`);
      const doc = frame.contentDocument;
      // A timeline is checked in its own box, below.
      const wide = [...doc.querySelectorAll("table:not(.timeline), svg, .chart-box, .table-scroll")]
        .filter((el) => el.getBoundingClientRect().right > doc.documentElement.clientWidth + 1 || el.scrollWidth > el.clientWidth + 1)
        .map((el) => `${el.tagName.toLowerCase()}.${el.className?.baseVal ?? el.className}`);
      return {
        frame: frame.clientHeight,
        content: Math.ceil(doc.body.getBoundingClientRect().height),
        sideways: doc.documentElement.scrollWidth - doc.documentElement.clientWidth,
        wide,
        lastColumn: [...doc.querySelectorAll("table.compare-totals th")].some((th) => /HTTP − WebSocket/.test(th.textContent)),
        // Each timeline's box: does it hide columns at its side, or turns below its height?
        timelines: [...doc.querySelectorAll(".timeline-box")].map((box) => ({
          sideways: box.scrollWidth > box.clientWidth + 1,
          below: box.scrollHeight > box.clientHeight + 1,
        })),
      };
    }, id);
    assert.ok(Math.abs(fit.frame - fit.content) <= 2, `${id}: frame ${fit.frame}px for ${fit.content}px of content`);
    assert.ok(fit.sideways <= 0, `${id} scrolls sideways by ${fit.sideways}px`);
    assert.deepEqual(fit.wide, [], `${id}: wider than the frame`);
    if (id !== "demo-ws") assert.ok(fit.lastColumn, `${id} has its HTTP − WebSocket column`);
    // Every timeline's columns in view; a single run's every turn too (a comparison's legs
    // scroll theirs, 41 turns each).
    assert.ok(fit.timelines.length > 0 && fit.timelines.every((t) => !t.sideways), `${id}: ${JSON.stringify(fit.timelines)}`);
    if (id === "demo-ws") assert.ok(!fit.timelines[0].below, `${id}: turns hidden below the timeline's box`);
  }
}

test("/docs does not scroll sideways on a 390 px phone", async () => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await page.goto(server.url + "/docs/");
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
  await page.close();
});
