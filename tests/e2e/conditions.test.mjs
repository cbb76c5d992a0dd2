// End to end: the conditions chosen on the page reach the server, which applies them to both
// legs alike and says so in every response's timing; a Compare under an emulated link draws its
// per-turn chart and explains its result; a server that does not allow client-chosen
// conditions refuses them with a message the page shows.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { artifactPath, launchBrowser, startServer, waitFinished } from "./server.mjs";

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

const LINK = "tether_rtt_ms=40&tether_up_mbit=20&tether_down_mbit=100";

test("a Compare under a home uplink: the server applies the link to both legs, the chart is drawn, the result says why", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  // What each leg asked for, and what the server said it applied (the WebSocket legs' frames).
  const asked = [];
  const applied = [];
  page.on("websocket", (ws) => {
    asked.push(ws.url());
    ws.on("framereceived", ({ payload }) => {
      const event = JSON.parse(payload);
      if (event.tether_timing) applied.push(event.tether_timing);
    });
  });
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().includes("/v1/responses")) {
      asked.push(request.url());
    }
  });
  await page.goto(
    server.url + "/?transport=compare&profile=burst&repetitions=2&link=home-uplink&api_costs=hosted&autorun=1",
  );
  await waitFinished(page, 180_000);
  const error = await page.locator('[data-testid="error"]').allTextContents();
  assert.equal(await page.getByTestId("run-status").textContent(), "done", `${error}`);

  // Both legs asked the same way; the warm-up without the modelled waits.
  assert.ok(asked.length > 4, asked.join(" | "));
  for (const url of asked) assert.ok(url.includes(LINK), url);
  assert.ok(asked.some((url) => url.includes("tether_api_costs=local")), "the warm-up asks for local costs");
  assert.ok(asked.some((url) => url.includes("tether_api_costs=hosted")), "the repetitions ask for hosted");
  // The server applied them: every WebSocket turn's timing says so, and the link delayed it.
  const counted = applied.filter((t) => t.conditions.api_costs === "hosted");
  assert.ok(counted.length >= 2, JSON.stringify(applied.slice(0, 2)));
  for (const timing of counted) {
    assert.equal(timing.conditions.rtt_ms, 40);
    assert.equal(timing.conditions.up_mbit, 20);
    assert.equal(timing.conditions.chosen_by, "client");
    assert.equal(timing.conditions.model, "burst");
    assert.ok(timing.link.up_us >= 20_000 && timing.link.down_us >= 20_000, JSON.stringify(timing.link));
  }
  // The page shows what the server applied (the HTTP leg's timing included).
  assert.match(
    await page.getByTestId("conditions-applied").textContent(),
    /40 ms RTT, 20 Mbit\/s up, 100 Mbit\/s down · hosted API costs · burst at 4,000 tokens\/s \(as this page asked\)/,
  );
  // The link's part of each leg: at least one round trip per turn.
  const link = await page.getByTestId("compare-link").locator("td").allTextContents();
  const turns = Number((await page.getByTestId("leg-ws").getByTestId("leg-turns").textContent()));
  for (const cell of link.slice(0, 2)) {
    const ms = parseFloat(cell);
    assert.ok(ms >= 40 * turns * 0.9, `link ${cell} for ${turns} turns`);
  }

  // The chart: both legs, every turn a stack of segments, the link among them, and the context.
  const chart = page.getByTestId("turn-chart").first();
  assert.equal(await chart.getByTestId("chart-panel").count(), 2);
  for (const panel of await chart.getByTestId("chart-panel").all()) {
    assert.ok((await panel.getByTestId("chart-bar").count()) >= turns, "a bar per turn");
    assert.ok((await panel.locator("rect.seg-link").count()) >= turns, "every turn crossed the link");
    assert.match(await panel.getByTestId("chart-context").getAttribute("points"), /\d+\.\d,\d+\.\d \d/);
  }
  assert.match(await chart.getByTestId("chart-legend").textContent(), /link \(emulated\)/);
  // The result in words: what made the difference.
  const why = await page.getByTestId("speedup-why").textContent();
  assert.ok(why.length > 40, why);
  assert.match(why, /HTTP|WebSocket|little to save/);
  // An autorun leaves the focus alone (a click on the overview's button moves it to the result).
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), undefined, "autorun leaves the focus alone");
  assert.deepEqual(pageErrors, []);
  await page.screenshot({ path: artifactPath("playground-compare-link.png"), fullPage: true });
  await page.close();
});

test("a sweep measures a pair per model speed, plots the saving and can be stopped", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(server.url + "/?transport=compare&link=same-region");
  await page.getByTestId("tab-agent").click();
  await page.locator('select[data-testid="profile"]').waitFor();
  await page.getByTestId("sweep").click();
  // The warm-up and the first point (flagship, 65 tokens/s) take a while: stop during them.
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]')?.textContent === "running",
  );
  assert.match(await page.getByTestId("progress-text").textContent(), /leg \d of 10/);
  await page.getByTestId("stop").click();
  await waitFinished(page);
  assert.equal(await page.getByTestId("run-status").textContent(), "stopped");
  assert.equal(await page.getByTestId("sweep-chart").count(), 1);
  await page.close();
});

test("a link outside the bounds is refused before anything is sent", async () => {
  const page = await browser.newPage();
  await page.goto(server.url + "/?transport=ws");
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("rtt-ms").fill("5000");
  await page.getByTestId("rtt-ms").dispatchEvent("change");
  assert.match(await page.getByTestId("link-note").textContent(), /round-trip time must be from 0 to 1000 ms/);
  await page.getByTestId("run").click();
  await waitFinished(page);
  assert.match(await page.getByTestId("error").textContent(), /round-trip time/);
  await page.close();
});

test("a server that does not allow client-chosen conditions refuses them, and the page says so", async () => {
  const bare = await startServer();
  try {
    const page = await browser.newPage();
    await page.goto(bare.url + "/?transport=compare&profile=instant&repetitions=1&link=same-region&autorun=1");
    await waitFinished(page);
    assert.equal(await page.getByTestId("run-status").textContent(), "failed");
    assert.match(await page.getByTestId("error").textContent(), /does not accept client-chosen conditions/);
    await page.close();
  } finally {
    await bare.stop();
  }
});
