// End to end: the long-running design (v1 beta, `response.append`) as a transport of the agent
// view, the Steer box (`response.steer`) while a run streams, and a Compare with the long-running
// leg — against the real server, in headless Chromium.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { artifactPath, launchBrowser, plain, startServer, waitFinished } from "./server.mjs";

let server;
let browser;

before(async () => {
  server = await startServer(["--tokens-per-second", "2000"]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Waits until the run is over and returns its status. */
async function finished(page, timeout = 30_000) {
  await waitFinished(page, timeout);
  return page.getByTestId("run-status").textContent();
}

/** A page whose WebSockets are recorded: their URLs and every frame sent. */
async function recordedPage(path) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const record = { sockets: [], sent: [], posts: [], errors: [] };
  page.on("pageerror", (error) => record.errors.push(error));
  page.on("websocket", (ws) => {
    record.sockets.push(ws.url());
    ws.on("framesent", ({ payload }) => record.sent.push(JSON.parse(payload)));
  });
  page.on("request", (request) => {
    if (request.method() === "POST") record.posts.push(request.url());
  });
  await page.goto(server.url + plain(path));
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("run-status").waitFor();
  return { page, record };
}

/** Runs the fix-sample-project scenario over `transport`; what the run showed. */
async function runScenario(transport) {
  const { page, record } = await recordedPage(
    `/?transport=${transport}&profile=instant&scenario=fix-sample-project`,
  );
  await page.getByTestId("run").click();
  const status = await finished(page);
  const error = await page.locator('[data-testid="error"]').allTextContents();
  assert.equal(status, "done", `the ${transport} run failed: ${error}`);
  assert.deepEqual(record.errors, []);
  const shown = {
    turns: Number(await page.getByTestId("turn-count").textContent()),
    tools: await page.getByTestId("tool-name").allTextContents(),
    outputs: await page.getByTestId("tool-output").allTextContents(),
    answer: await page.getByTestId("assistant-text").last().textContent(),
    rows: await page.getByTestId("timeline-row").allTextContents(),
  };
  return { page, record, shown };
}

test("the long-running transport completes with the same conversation as WebSocket", async () => {
  const ws = await runScenario("ws");
  const long = await runScenario("ws-append");

  // The same agent, the same tools in the same order, the same outputs and answer.
  assert.ok(long.shown.turns >= 4, `several turns: ${long.shown.turns}`);
  assert.equal(long.shown.turns, ws.shown.turns);
  assert.deepEqual(long.shown.tools, ws.shown.tools);
  assert.deepEqual(long.shown.outputs, ws.shown.outputs);
  assert.equal(long.shown.answer, ws.shown.answer);
  assert.match(long.shown.outputs.join("\n"), /6 passing|passing/);

  // One socket that asked for the v1 beta, one response.create, then only response.append.
  assert.equal(long.record.sockets.length, 1, long.record.sockets.join());
  assert.match(long.record.sockets[0], /[?&]openai_beta=responses_websockets%3D2026-02-04/);
  const types = long.record.sent.map((frame) => frame.type);
  assert.equal(types[0], "response.create");
  assert.deepEqual(new Set(types.slice(1)), new Set(["response.append"]));
  assert.equal(types.length, long.shown.turns);
  for (const append of long.record.sent.slice(1)) {
    assert.deepEqual(Object.keys(append).sort(), ["input", "type"], "an append has no settings");
    assert.ok(append.input.every((item) => item.type.endsWith("_call_output")), "tool outputs only");
  }
  // WebSocket v2 sends a response.create per turn.
  assert.ok(ws.record.sent.every((frame) => frame.type === "response.create"));
  assert.deepEqual(long.record.posts, [], "no HTTP request");

  // The timeline says what each turn sent and that the response paused; the whole response's
  // server timings come on its last turn.
  assert.match(long.shown.rows[0], /paused \(response\.done\)/);
  assert.match(long.shown.rows[1], /response\.append: \d+ item\(s\) to resp_/);
  assert.doesNotMatch(long.shown.rows.at(-1), /paused/);
  const timings = await long.page.getByTestId("server-timing").allTextContents();
  assert.match(timings.at(-1), /^server: /);
  assert.match(timings[0], /with the whole response, on its last turn/);
  await long.page.screenshot({ path: artifactPath("playground-long-running.png"), fullPage: true });
  await ws.page.close();
  await long.page.close();
});

test("a long-running run that ends before its response does says its server's parts are unknown", async () => {
  // Three turns, all paused: the summary that covers them would come at the response's end.
  const { page } = await recordedPage("/?transport=ws-append&profile=instant&scenario=fix-sample-project&max_turns=3");
  await page.getByTestId("run").click();
  assert.equal(await finished(page), "failed");
  for (const part of ["api", "engine", "link", "network", "modelled"]) {
    assert.equal(await page.getByTestId(`breakdown-${part}`).textContent(), "–", part);
  }
  assert.match(await page.getByTestId("breakdown-unknown").textContent(), /long-running response reports them at its end/);
  await page.close();
});

test("a steer sent while a run streams shows its outcome in the timeline and the events", async () => {
  // flagship: 0.4 s to the first token at 65 tokens/s, so the first response runs long enough.
  const { page, record } = await recordedPage("/?transport=ws&profile=flagship&scenario=");
  const steer = page.getByTestId("steer");
  assert.ok(await steer.isDisabled(), "nothing to steer before a run");
  assert.match(await page.getByTestId("steer-note").textContent(), /No response is running/);
  await page.getByTestId("run").click();
  await page.waitForFunction(
    () => !document.querySelector('[data-testid="steer"]').disabled,
    null,
    { timeout: 10_000 },
  );
  await page.getByTestId("steer-input").fill("make it about a cat");
  await steer.click();
  const row = page.getByTestId("timeline-steer").first();
  await row.waitFor();
  await page.waitForFunction(
    () =>
      /→ (accepted|pending|failed)/.test(
        document.querySelector('[data-testid="timeline-steer"]')?.textContent ?? "",
      ),
    null,
    { timeout: 10_000 },
  );
  const status = await finished(page, 60_000);
  const error = await page.locator('[data-testid="error"]').allTextContents();
  assert.equal(status, "done", `the run failed: ${error}`);
  assert.deepEqual(record.errors, []);

  // The frame went out on the run's one socket, in the documented shape.
  assert.equal(record.sockets.length, 1);
  const steers = record.sent.filter((frame) => frame.type === "response.steer");
  assert.equal(steers.length, 1);
  assert.deepEqual(Object.keys(steers[0]).sort(), ["input", "previous_response_id", "type"]);
  assert.equal(steers[0].input, "make it about a cat");
  assert.match(steers[0].previous_response_id, /^resp_/);

  const outcome = await row.textContent();
  assert.match(outcome, /response\.steer “make it about a cat” → (accepted|pending|failed)/);
  if (/accepted/.test(outcome)) {
    // Taken: the response ended at a safe boundary and the server's successor carried on with
    // the steer, which the echo generator's answer quotes.
    assert.match(outcome, /applied: turn \d+ is its automatic successor/);
    assert.match(await page.getByTestId("timeline").textContent(), /ended by a steer/);
    assert.match(await page.getByTestId("steer-entry").textContent(), /make it about a cat/);
    const answer = await page.getByTestId("assistant-text").last().textContent();
    assert.match(answer, /make it about a cat/);
  }
  assert.match(await page.getByTestId("steer-note").textContent(), /Last steer: “make it about a cat”/);

  // The events view lists the steer sent and the server's answer.
  await page.getByTestId("details-tab-events").click();
  const inspector = page.getByTestId("inspector");
  await inspector.waitFor();
  await inspector.getByTestId("inspector-filter").fill("response.steer");
  const types = await inspector.getByTestId("inspector-row").locator(".frame-kind").allTextContents();
  assert.ok(types.includes("response.steer"), types.join());
  assert.ok(types.some((type) => /^response\.steer\.(accepted|pending|failed)$/.test(type)), types.join());
  await page.screenshot({ path: artifactPath("playground-steer.png"), fullPage: true });
  await page.close();
});

test("steering is disabled, with the reason, over HTTP", async () => {
  const { page } = await recordedPage("/?transport=http-stateless&profile=flagship&scenario=");
  await page.getByTestId("run").click();
  await page.getByTestId("timeline-row").first().waitFor();
  assert.ok(await page.getByTestId("steer").isDisabled());
  assert.match(await page.getByTestId("steer-note").textContent(), /needs a WebSocket transport/);
  await page.getByTestId("stop").click();
  assert.equal(await finished(page), "stopped");
  await page.close();
});

test("compare can run the long-running design as a third leg", async () => {
  const { page, record } = await recordedPage(
    "/?transport=compare&profile=instant&repetitions=1&long_running=1",
  );
  assert.ok(await page.getByTestId("compare-long-running").isChecked());
  await page.getByTestId("run").click();
  const status = await finished(page, 60_000);
  const error = await page.locator('[data-testid="error"]').allTextContents();
  assert.equal(status, "done", `the comparison failed: ${error}`);
  assert.match(await page.getByTestId("speedup").textContent(), /^\d+\.\d\d\d?×$/);
  assert.match(await page.getByTestId("speedup-long-running").textContent(), /^\d+\.\d\d\d?×$/);
  assert.match(
    await page.getByTestId("speedup-long-running-text").textContent(),
    /^Measured on this machine(: the long-running response \(response\.append\) was|, within noise: .*1 repetition: no spread to judge by)/,
  );
  for (const leg of ["leg-ws", "leg-http", "leg-long-running"]) {
    assert.equal(await page.getByTestId(leg).getByTestId("leg-status").textContent(), "done", leg);
  }
  // Three legs, each warmed up once first: two sockets a run (one of them with the beta), and
  // HTTP posts.
  assert.equal(record.sockets.length, 4, record.sockets.join());
  assert.equal(record.sockets.filter((url) => url.includes("openai_beta=")).length, 2);
  const header = await page.locator(".compare-totals thead").textContent();
  assert.match(header, /WebSocket long-running/);
  await page.close();
});
