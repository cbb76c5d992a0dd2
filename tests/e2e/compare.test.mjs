// End to end: compare mode runs the same scenario over WebSocket and over HTTP stateless — a
// warm-up of both legs first, not counted, then the legs alternating which goes first over the
// repetitions, each leg warmed first and with a prompt-cache key of its own; it shows both legs
// — timelines, conversations, the engine's cached tokens and the connection cache's reuse, the
// server's timings — and, from the first repetition on, the speedup with what it is made of and
// why, coloured only when the repetitions separate the legs. Stop ends a comparison.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { artifactPath, launchBrowser, plain, startServer } from "./server.mjs";

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test("compare mode alternates the legs, shows both side by side and explains the speedup", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  // Which leg ran when: a WebSocket opening, or an HTTP turn (the first of each leg).
  const legs = [];
  const posts = [];
  page.on("websocket", (ws) => legs.push("ws"));
  page.on("request", (request) => {
    if (request.method() === "POST") {
      const body = JSON.parse(request.postData());
      posts.push(body);
      // A stateless leg's first turn carries the task alone.
      if (body.input.length === 1) legs.push("http");
    }
  });
  await page.goto(server.url + plain("/?transport=compare&profile=spark&repetitions=3&autorun=1"));
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]')?.textContent === "running",
  );
  // While the first leg runs, no speedup, and no total for a leg that is not done.
  assert.equal(await page.getByTestId("speedup").textContent(), "measuring…");
  const early = await page.getByTestId("compare-end-to-end").locator("td").allTextContents();
  assert.equal(early[1], "–", `no HTTP total before an HTTP leg is done: ${early}`);
  await page.waitForFunction(
    () => ["done", "failed"].includes(document.querySelector('[data-testid="run-status"]').textContent),
    null,
    { timeout: 60_000 },
  );
  const error = await page.locator('[data-testid="error"]').allTextContents();
  assert.equal(await page.getByTestId("run-status").textContent(), "done", `the comparison failed: ${error}`);
  // The warm-up of both legs, then WebSocket first in odd repetitions, HTTP first in even ones.
  assert.deepEqual(legs, ["ws", "http", "ws", "http", "http", "ws", "ws", "http"]);
  assert.ok(posts.every((body) => body.store === false && !body.previous_response_id));
  // The warm-up ran on the model with no model time; every run had a prompt-cache key of its own.
  const firsts = posts.filter((body) => body.input.length === 1);
  assert.deepEqual(firsts.map((body) => body.model), ["instant", "spark", "spark", "spark"]);
  const keys = new Set(firsts.map((body) => body.prompt_cache_key));
  assert.equal(keys.size, 4, [...keys].join(" "));
  // The warm-up has a row, but no result: no times, no ratio beside the repetitions'.
  const warmUp = await page.getByTestId("compare-warm-up").allTextContents();
  assert.equal(warmUp.length, 1);
  assert.match(warmUp[0], /done.*done.*not a result \(instant, local costs\)$/);
  assert.doesNotMatch(warmUp[0], /ms|×/);

  const speedup = page.getByTestId("speedup");
  assert.match(await speedup.textContent(), /^\d+\.\d\d\d?×$/);
  // Coloured only when every run of one leg took less time than every run of the other.
  const verdict = (await speedup.getAttribute("class")).match(/verdict-(\w+)/)[1];
  const said = await page.getByTestId("speedup-text").textContent();
  const ends = (await page.getByTestId("compare-end-to-end").locator("td").allTextContents()).slice(0, 2);
  // A time as the page prints it: milliseconds below a second, seconds from there.
  const time = (text) => {
    const [, number, unit] = text.trim().match(/^([\d.]+) (ms|s)$/);
    return Number(number) * (unit === "s" ? 1000 : 1);
  };
  // `median (low – high, 3 runs)`, or `median (all 3 runs alike)` when they print alike.
  const range = (cell) => {
    const alike = cell.match(/^(.*?) \(all 3 runs alike\)$/);
    return alike ? [time(alike[1]), time(alike[1])] : cell.match(/\((.*?) – (.*?), 3 runs\)/).slice(1).map(time);
  };
  const [[wsMin, wsMax], [httpMin, httpMax]] = ends.map(range);
  if (wsMax < httpMin) assert.equal(verdict, "faster", said);
  else if (httpMax < wsMin) assert.equal(verdict, "slower", said);
  else {
    assert.equal(verdict, "noise", said);
    assert.match(said, /within noise: .*the legs' ranges overlap/);
  }
  assert.match(said, /^Measured on this machine[:,] /);
  assert.equal(await page.getByTestId("speedup-total").count(), 0, "nothing modelled: one result");
  // Three repetitions, each with both legs' times and their ratio.
  const repetitions = await page.getByTestId("compare-repetition").allTextContents();
  assert.equal(repetitions.length, 3);
  assert.ok(repetitions.every((row) => /\d m?s.*\d m?s.*\d\.\d\d\d?×$/.test(row)), repetitions.join(" | "));
  // Each part of each leg's time: median and range, and HTTP's difference.
  // On loopback with the server's own costs no run had a link or modelled waits: said, not 0.
  for (const [part, none] of [["modelled", "– (none: local costs)"], ["link", "– (none: no link emulated)"]]) {
    const cells = await page.getByTestId(`compare-${part}`).locator("td").allTextContents();
    assert.deepEqual(cells, [none, none, ""], part);
  }
  assert.doesNotMatch(await page.getByTestId("speedup-explained").textContent(), /link [+−]/);
  for (const part of ["end-to-end", "measured", "api", "engine", "tools", "client", "network"]) {
    const cells = await page.getByTestId(`compare-${part}`).locator("td").allTextContents();
    assert.match(cells[0], /m?s \((.* m?s – .* m?s, 3 runs|all 3 runs alike)\)$/, `${part}: ${cells}`);
    assert.match(cells[1], /m?s \((.* m?s – .* m?s, 3 runs|all 3 runs alike)\)$/, `${part}: ${cells}`);
    assert.match(cells[2], /^[+−]/, `${part}: ${cells}`);
  }
  assert.match(await page.getByTestId("compare-per-event").textContent(), /µs.*µs/);
  // The connection cache reuses tokens over WebSocket only; the engine cache counts on both.
  const reused = await page.getByTestId("compare-reused").locator("td").allTextContents();
  assert.ok(Number(reused[0].replace(/,/g, "")) > 0 && reused[1] === "0", `reused: ${reused}`);
  assert.match(await page.getByTestId("speedup-explained").textContent(), /API overhead [+−]/);
  assert.ok((await page.getByTestId("speedup-why").textContent()).length > 40);
  // The chart of both legs, a bar per turn.
  assert.equal(await page.getByTestId("turn-chart").getByTestId("chart-panel").count(), 2);

  // Both legs side by side: status, timeline (with the server's timings), conversation.
  for (const [leg, path] of [["ws", /path ws_(hit|miss)$/], ["http", /path http$/]]) {
    const column = page.getByTestId(`leg-${leg}`);
    assert.equal(await column.getByTestId("leg-status").textContent(), "done");
    // Every column of the timeline is in view, the connection's reuse included.
    const reusedHeader = column.locator("th", { hasText: "Reused by the connection" });
    const box = await column.locator(".timeline-box").boundingBox();
    const header = await reusedHeader.boundingBox();
    assert.ok(header.x + header.width <= box.x + box.width + 1, `${leg}: the last column is out of view`);
    assert.match(await column.locator("h3").textContent(), /repetition 3 of 3/);
    const rows = await column.getByTestId("timeline-row").count();
    assert.ok(rows >= 4, `${leg}: ${rows} turns`);
    const timings = await column.getByTestId("server-timing").allTextContents();
    assert.equal(timings.length, rows);
    assert.ok(timings.every((t) => path.test(t)), timings.join(" | "));
    assert.ok((await column.getByTestId("server-split").count()) === rows);
    const tokens = await column.getByTestId("turn-tokens").allTextContents();
    assert.ok(tokens.every((t) => /^[\d,]+ \([\d,]+ cached\) \/ [\d,]+$/.test(t)), tokens.join(" | "));
    // The conversation is collapsed; opened, it holds the fixed project's tests.
    await column.locator("details.conversation-details > summary").click();
    const outputs = await column.getByTestId("tool-output").allTextContents();
    assert.ok(outputs.at(-1).includes("6 passing, 0 failing"), outputs.at(-1));
  }
  const wsReused = await page.getByTestId("leg-ws").getByTestId("turn-reused").allTextContents();
  assert.ok(wsReused.slice(1).every((n) => Number(n.replaceAll(",", "")) > 0), `continuations reuse: ${wsReused}`);
  assert.deepEqual(pageErrors, []);
  await page.screenshot({ path: artifactPath("playground-compare.png"), fullPage: true });
  await page.close();
});

test("Stop ends a comparison as stopped", async () => {
  const slow = await startServer(["--tokens-per-second", "20"]);
  try {
    const page = await browser.newPage();
    await page.goto(slow.url + plain("/?transport=compare&autorun=1"));
    await page.waitForFunction(
      () => document.querySelector('[data-testid="run-status"]')?.textContent === "running",
    );
    await page.getByTestId("stop").click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="run-status"]').textContent === "stopped",
    );
    assert.equal(await page.getByTestId("speedup").textContent(), "–");
    assert.ok(await page.getByTestId("run").isEnabled());
    await page.close();
  } finally {
    await slow.stop();
  }
});
