// End to end: the agent view runs its loop against the real server — tool calls executed by the
// sandbox in the page (`node` in a Web Worker) — over WebSocket mode and over HTTP (chained and
// stateless), until the run is done after at least two turns; and the fix-sample-project scenario
// fixes the sample project in the page.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { artifactPath, launchBrowser, plain, startServer } from "./server.mjs";

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

/** Opens the agent view, picks `transport` (and `scenario`), runs the default task. */
async function runAgent(transport, record, scenario = "") {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  page.on("websocket", (ws) => record.sockets.push(ws.url()));
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().endsWith("/v1/responses")) {
      record.posts.push(JSON.parse(request.postData()));
    }
  });
  await page.goto(server.url + plain());
  await page.getByTestId("tab-agent").click();
  const status = page.getByTestId("run-status");
  await status.waitFor();
  assert.equal(await status.textContent(), "idle");
  // Before a run, each empty box says what it will hold; the run replaces the notes.
  assert.match(await page.getByTestId("timeline-empty").textContent(), /^No turns yet/);
  assert.match(await page.getByTestId("conversation-empty").textContent(), /^Nothing yet/);
  await page.getByTestId("transport").selectOption(transport);
  await page.getByTestId("scenario").fill(scenario);
  await page.getByTestId("run").click();
  await page.waitForFunction(
    () => {
      const status = document.querySelector('[data-testid="run-status"]').textContent;
      return status === "done" || status === "failed";
    },
    null,
    { timeout: 20_000 },
  );
  const error = await page.locator('[data-testid="error"]').allTextContents();
  assert.equal(await status.textContent(), "done", `the run failed: ${error}`);
  assert.equal(await page.getByTestId("timeline-empty").count(), 0);
  assert.equal(await page.getByTestId("conversation-empty").count(), 0);
  assert.deepEqual(pageErrors, []);
  return page;
}

async function checkRun(page) {
  const turns = Number(await page.getByTestId("turn-count").textContent());
  assert.ok(turns >= 2, `at least two turns, saw ${turns}`);
  // The model called a tool; the sandbox in the page ran it and showed its output.
  assert.ok((await page.getByTestId("tool-call").count()) >= 1);
  const output = await page.getByTestId("tool-output").first().textContent();
  assert.ok(output.length > 0, "the tool produced output");
  assert.equal(await page.getByTestId("timeline-row").count(), turns);
  const answer = await page.getByTestId("assistant-text").last().textContent();
  assert.ok(answer.length > 0, "a final answer");
  const ttft = await page.getByTestId("turn-ttft").first().textContent();
  assert.match(ttft, /^\d+ ms$/);
  return turns;
}

test("the agent runs to a final answer over one WebSocket", async () => {
  const record = { sockets: [], posts: [] };
  const page = await runAgent("ws", record);
  await checkRun(page);
  assert.equal(record.sockets.length, 1, `one WebSocket: ${record.sockets}`);
  assert.deepEqual(record.posts, [], "no HTTP requests");
  // The second turn was chained: it names the first response and sends only the tool output.
  const sent = await page.getByTestId("timeline-row").nth(1).textContent();
  assert.match(sent, /1 new item\(s\) after resp_/);
  await page.screenshot({ path: artifactPath("playground-agent-ws.png"), fullPage: true });
  await page.close();
});

test("the agent runs over HTTP, chained through the store", async () => {
  const record = { sockets: [], posts: [] };
  const page = await runAgent("http-chained", record);
  const turns = await checkRun(page);
  assert.deepEqual(record.sockets, [], "no WebSocket");
  assert.equal(record.posts.length, turns);
  assert.ok(record.posts.every((body) => body.stream === true && body.store === true));
  assert.equal(record.posts[0].previous_response_id, undefined);
  assert.match(record.posts[1].previous_response_id, /^resp_/);
  assert.equal(record.posts[1].input.length, 1);
  assert.equal(record.posts[1].input[0].type, "function_call_output");
  await page.screenshot({ path: artifactPath("playground-agent-http.png"), fullPage: true });
  await page.close();
});

test("the agent runs over HTTP statelessly, resending the full input", async () => {
  const record = { sockets: [], posts: [] };
  const page = await runAgent("http-stateless", record);
  const turns = await checkRun(page);
  assert.equal(record.posts.length, turns);
  assert.ok(record.posts.every((body) => body.store === false && !body.previous_response_id));
  const types = record.posts[1].input.map((item) => item.type ?? "message");
  assert.deepEqual(types, ["message", "function_call", "function_call_output"]);
  await page.close();
});

test("the fix-sample-project scenario patches the sandbox's file in the page", async () => {
  const record = { sockets: [], posts: [] };
  const page = await runAgent("ws", record, "fix-sample-project");
  const turns = await checkRun(page);
  assert.ok(turns >= 4, `the scenario takes several turns, saw ${turns}`);
  const names = await page.getByTestId("tool-name").allTextContents();
  assert.ok(names.includes("apply_patch"), `tools called: ${names}`);
  assert.ok(names.includes("read_file"), `tools called: ${names}`);
  // The patch applied cleanly to the page's copy of the sample project.
  const patch = page.getByTestId("tool-call").filter({ hasText: "apply_patch" }).first();
  assert.match(await patch.getByTestId("tool-output").textContent(), /Success/);
  assert.match(await patch.locator(".changes").textContent(), /modified \/src\/paginate\.js/);
  // `node test/run.js` ran in the page's Web Worker: failing before the fix, passing after.
  const outputs = await page.getByTestId("tool-output").allTextContents();
  assert.ok(outputs.some((text) => text.includes("3 passing, 3 failing")), "tests fail first");
  assert.ok(outputs.at(-1).includes("6 passing, 0 failing"), `tests pass after: ${outputs.at(-1)}`);
  assert.equal(record.sockets.length, 1);
  await page.screenshot({ path: artifactPath("playground-agent-scenario.png"), fullPage: true });
  await page.close();
});

test("Stop ends a running agent mid-stream and closes its WebSocket", async () => {
  // A slow model (5 tokens/s) keeps the first answer streaming long enough to press Stop, even
  // from a slow (debug) build of the page.
  const slow = await startServer(["--tokens-per-second", "5"]);
  try {
    const page = await browser.newPage();
    const closed = [];
    page.on("websocket", (ws) => ws.on("close", () => closed.push(ws.url())));
    await page.goto(slow.url + plain());
    await page.getByTestId("tab-agent").click();
    // The echo generator's first answer, not the default scenario's.
    await page.getByTestId("scenario").fill("");
    // Said before the run: what the echo generator does with the sandbox's tools.
    assert.match(await page.getByTestId("scenario-note").textContent(), /^Empty: the echo generator, not an agent .*empty command, which fails/);
    await page.getByTestId("run").click();
    // Mid-stream: the first request is out (the run is connected and counting its turn).
    await page.waitForFunction(
      () =>
        document.querySelector('[data-testid="run-status"]').textContent === "running" &&
        document.querySelector('[data-testid="turn-count"]').textContent === "1",
    );
    // The echo generator's first answer is a tool call: wait until its arguments stream.
    await page.getByTestId("tool-call").first().waitFor();
    await page.getByTestId("stop").click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="run-status"]').textContent === "stopped",
    );
    assert.equal(await page.getByTestId("turn-count").textContent(), "1");
    assert.equal(await page.getByTestId("error").count(), 0);
    assert.ok(await page.getByTestId("run").isEnabled(), "a new run can start");
    // The call cut off by Stop is marked stopped, not running, and is not counted.
    assert.equal(await page.getByTestId("tool-state").first().textContent(), "stopped");
    assert.equal(await page.getByTestId("tool-call-count").textContent(), "0");
    // The focus moved to the button that is enabled now.
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "run");
    for (let waited = 0; closed.length === 0 && waited < 5000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(closed.length, 1, "the run's WebSocket was closed");
    await page.close();
  } finally {
    await slow.stop();
  }
});
