// End to end: the conditions chosen on the page reach the server, which applies them to both
// legs alike and says so in every response's timing; a Compare under an emulated link draws its
// per-turn chart — what the server modelled apart from what was measured — and explains its
// result, the measured part first; a sweep says how long it takes; a server that does not allow
// client-chosen
// conditions refuses them with a message the page shows.
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
    server.url + plain("/?transport=compare&profile=burst&repetitions=2&link=home-uplink&api_costs=hosted&autorun=1"),
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
  // What the server modelled is drawn apart, on every turn of both legs (the hop at least).
  for (const panel of await chart.getByTestId("chart-panel").all()) {
    assert.ok((await panel.locator("rect.seg-modelled").count()) >= turns, "every turn's modelled waits");
  }
  assert.match(await chart.getByTestId("chart-legend").textContent(), /modelled, not measured/);
  const modelled = await page.getByTestId("compare-modelled").locator("td").allTextContents();
  assert.ok(parseFloat(modelled[1]) > 0 && parseFloat(modelled[0]) > 0, `modelled: ${modelled}`);
  // The result leads with what was measured, then the modelled waits, apart.
  const said = await page.getByTestId("speedup-text").textContent();
  assert.match(said, /^Measured on this machine[:,] .* With the modelled hosted costs \(not measured\): \d+\.\d\d\d?×/);
  const measured = parseFloat(await page.getByTestId("speedup").textContent());
  const total = parseFloat(await page.getByTestId("speedup-total").textContent());
  assert.ok(total > measured, `the classifier's scans are HTTP's: ${measured}× measured, ${total}× in all`);
  // The result in words: what made the difference, the link's round trips, the modelled waits.
  const why = await page.getByTestId("speedup-why").textContent();
  assert.match(why, /^(Measured on this machine|The model and the tools)/);
  assert.match(why, /Both transports wait for the link's 40 ms round trip on every turn/);
  assert.match(why, /Modelled, not measured: the hosted API's services \(a safety classifier at 5\.7 µs per scanned token/);
  // Each turn's API time names what of it was the modelled classifier, as the totals do.
  const splits = await page.getByTestId("leg-http").getByTestId("server-split").allTextContents();
  assert.ok(splits.length > 0 && splits.every((s) => /^API [\d.]+ m?s, [\d.]+ m?s of it modelled · engine /.test(s)), splits.join(" | "));
  // A shared link's autorun on its own page is followed as a click is: the focus on the result.
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "result", "the focus is on the result");
  assert.deepEqual(pageErrors, []);
  await page.screenshot({ path: artifactPath("playground-compare-link.png"), fullPage: true });
  await page.close();
});

test("a sweep measures pairs per model speed, says how long first, plots the saving and can be stopped", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(server.url + plain("/?transport=compare&link=same-region&repetitions=2"));
  await page.getByTestId("tab-agent").click();
  await page.locator('select[data-testid="profile"]').waitFor();
  // The button says how long before it starts; more repetitions a point take longer.
  const estimate = page.getByTestId("sweep-estimate");
  assert.match(await estimate.textContent(), /^ · (about \d+ (s|min)|a few seconds)/);
  const two = Number(await estimate.getAttribute("data-ms"));
  await page.getByTestId("repetitions").fill("4");
  await page.getByTestId("repetitions").dispatchEvent("change");
  assert.ok(Number(await estimate.getAttribute("data-ms")) > two, "four pairs a point take longer");
  await page.getByTestId("repetitions").fill("2");
  await page.getByTestId("repetitions").dispatchEvent("change");
  await page.getByTestId("sweep").click();
  // The warm-up and the first point (flagship, 65 tokens/s) take a while: stop during them.
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]')?.textContent === "running",
  );
  // A warm-up pair, then two pairs a point on each of four profiles.
  assert.match(await page.getByTestId("progress-text").textContent(), /leg \d+ of 18/);
  assert.match(await page.getByTestId("sweep-chart").locator("figcaption").textContent(), /median of its pairs and its bar their range/);
  await page.getByTestId("stop").click();
  await waitFinished(page);
  assert.equal(await page.getByTestId("run-status").textContent(), "stopped");
  assert.equal(await page.getByTestId("sweep-chart").count(), 1);
  await page.close();
});

test("a link outside the bounds is refused before anything is sent", async () => {
  const page = await browser.newPage();
  await page.goto(server.url + plain("/?transport=ws"));
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("rtt-ms").fill("5000");
  assert.match(await page.getByTestId("link-note").textContent(), /RTT must be a number of milliseconds from 0 to 1000; got "5000"/);
  // Nothing runs: Run says why where it is (inputs.test.mjs has every case).
  await page.getByTestId("run").click();
  await page.waitForTimeout(300);
  assert.equal(await page.getByTestId("run-status").textContent(), "idle");
  assert.match(await page.getByTestId("input-errors").textContent(), /RTT must be/);
  await page.close();
});

test("a server that does not allow client-chosen conditions: the page says so before a run, and runs what it takes", async () => {
  const bare = await startServer();
  try {
    const page = await browser.newPage();
    await page.goto(bare.url + plain("/?transport=compare&profile=instant&repetitions=1&link=same-region&autorun=1"));
    // The page asked the server with its model list: nothing is sent that it would refuse.
    const refused = page.getByTestId("conditions-refused");
    await refused.waitFor();
    assert.match(await refused.textContent(), /does not accept client-chosen conditions.*--allow-client-conditions/);
    // The link's note does not promise what the server will not do.
    assert.match(await page.getByTestId("link-note").textContent(), /^This server does not emulate a link: .* is refused \(above\)\.$/);
    // The way out looks like a button of this page (the accent colour), not a grey default one.
    const look = await page.getByTestId("use-server-conditions").evaluate((b) => {
      const style = getComputedStyle(b);
      return { background: style.backgroundColor, size: parseFloat(style.fontSize) };
    });
    const accent = await page.getByTestId("run").evaluate((b) => getComputedStyle(b).backgroundColor);
    assert.deepEqual(look, { background: accent, size: look.size });
    assert.ok(look.size >= 14, `the way out in ${look.size} px type`);
    await page.waitForTimeout(500);
    assert.equal(await page.getByTestId("run-status").textContent(), "idle", "the autorun did not start");
    // Nothing can run as asked: the button announces no duration.
    assert.equal(await page.getByTestId("run-estimate").count(), 0);
    // Run clicked anyway: nothing starts, and the focus goes to the way out.
    await page.getByTestId("run").click();
    await page.waitForTimeout(300);
    assert.equal(await page.getByTestId("run-status").textContent(), "idle");
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "use-server-conditions");
    // What the server runs: the same machine, its own API costs — and then the run goes.
    await page.getByTestId("use-server-conditions").click();
    assert.equal(await refused.count(), 0);
    await page.getByTestId("run-estimate").waitFor();
    await page.waitForFunction(() => document.activeElement?.dataset.testid === "link");
    await page.getByTestId("run").click();
    await waitFinished(page);
    assert.equal(await page.getByTestId("run-status").textContent(), "done");
    await page.close();
    // The page's own default conditions (a link, hosted costs), which nobody chose, give way
    // to what this server runs, said in a notice: the overview's button describes and
    // estimates that run, and nothing is refused.
    const overview = await browser.newPage();
    await overview.goto(bare.url + "/");
    await overview.getByTestId("notices").waitFor();
    assert.match(await overview.getByTestId("notices").textContent(), /does not take client-chosen conditions .*so the page runs what it does: the same machine, its own API costs/);
    assert.equal(await overview.getByTestId("link").inputValue(), "loopback");
    assert.equal(await overview.getByTestId("api-costs").inputValue(), "server");
    assert.equal(await overview.getByTestId("conditions-refused").count(), 0);
    assert.match(await overview.getByTestId("intro-estimate").textContent(), /^ · (about \d|a few)/);
    // Not stored: the defaults come back where a server takes them.
    assert.equal(await overview.evaluate(() => localStorage.getItem("tether.settings")), null);
    // Chosen conditions stay: one asked for by a link is said to be refused, as above.
    await overview.goto(bare.url + plain("/?api_costs=hosted"));
    await overview.getByTestId("conditions-refused").waitFor();
    assert.equal(await overview.getByTestId("intro-estimate").count(), 0);
    await overview.getByTestId("intro-compare").click();
    await overview.waitForTimeout(300);
    assert.equal(await overview.getByTestId("tab-overview").getAttribute("aria-selected"), "true", "still here");
    assert.equal(await overview.evaluate(() => document.activeElement?.dataset.testid), "use-server-conditions");
    await overview.close();
    // Embedded (a docs page's demo) there are no conditions to say it at: the run goes, and
    // ends failed with the server's message, so a page waiting for it goes on.
    const embedded = await browser.newPage();
    await embedded.goto(bare.url + plain("/?embed=1&transport=compare&profile=instant&repetitions=1&link=same-region&autorun=1"));
    await waitFinished(embedded);
    // An embedded demo's autorun leaves the docs page's focus and scroll alone.
    assert.equal(await embedded.evaluate(() => document.activeElement?.dataset.testid), undefined);
    assert.equal(await embedded.evaluate(() => window.scrollY), 0);
    assert.equal(await embedded.getByTestId("run-status").textContent(), "failed");
    assert.match(await embedded.getByTestId("error").textContent(), /does not accept client-chosen conditions/);
    await embedded.close();
  } finally {
    await bare.stop();
  }
});
