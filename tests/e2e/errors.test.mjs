// End to end: errors name their cause and where. A refused WebSocket upgrade, which the browser
// reports as nothing but "failed", is diagnosed over HTTP (a wrong key, a missing key, nothing
// listening); an HTTP request that gets no answer, or a server that stops mid-run, names its
// URL; a profile the server does not offer, asked for in the URL, is reported like any other bad
// URL value.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { closedPort, launchBrowser, plain, startServer, waitFinished } from "./server.mjs";

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

/** Runs the agent of `page` and returns its error. */
async function runFails(page) {
  await page.getByTestId("run").click();
  await waitFinished(page, 30_000);
  assert.equal(await page.getByTestId("run-status").textContent(), "failed");
  return page.getByTestId("error").textContent();
}

test("a refused WebSocket upgrade says why: a wrong key, or no key", async () => {
  const guarded = await startServer(["--api-key", "k-right"]);
  try {
    const page = await browser.newPage();
    await page.goto(guarded.url + plain("/?transport=ws&profile=instant"));
    await page.getByTestId("tab-agent").click();
    await page.getByTestId("api-key").fill("k-wrong");
    await page.getByTestId("api-key").press("Tab");
    const wrong = await runFails(page);
    const ws = guarded.url.replace("http://", "ws://") + "/v1/responses";
    assert.match(wrong, /^401: wrong API key/, wrong);
    assert.ok(wrong.includes(ws + " "), `names ${ws}: ${wrong}`);
    assert.ok(!wrong.includes("k-wrong"), "never the key itself");
    // The key is refused where the page mints the upgrade's client secret, and that is said.
    assert.ok(wrong.includes(`POST ${guarded.url}/v1/responses/client_secrets answers 401`), wrong);

    await page.getByTestId("api-key").fill("");
    await page.getByTestId("api-key").press("Tab");
    const missing = await runFails(page);
    assert.match(missing, /^401: this server needs an API key/, missing);

    // The same over HTTP: the server's own 401.
    await page.getByTestId("transport").selectOption("http-stateless");
    assert.match(await runFails(page), /HTTP 401/);
    await page.close();
  } finally {
    await guarded.stop();
  }
});

test("nothing listening is reported with the URL, over WebSocket and over HTTP", async () => {
  const port = await closedPort();
  const nowhere = `http://127.0.0.1:${port}`;
  const page = await browser.newPage();
  await page.goto(server.url + plain("/?transport=ws&profile=instant"));
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("server-url").fill(nowhere);
  await page.getByTestId("server-url").press("Tab");
  const ws = await runFails(page);
  assert.ok(ws.startsWith(`nothing listens at ws://127.0.0.1:${port}/v1/responses: `), ws);
  assert.match(ws, /GET http:\/\/127\.0\.0\.1:\d+\/v1\/models got no answer/);

  await page.getByTestId("transport").selectOption("http-stateless");
  const http = await runFails(page);
  assert.ok(http.startsWith(`nothing listens at ${nowhere}/v1/responses: `), http);
  assert.match(http, /is the server running/);
  await page.getByTestId("reset").click();
  await page.close();
});

test("the chat view with no server names the URL it could not reach", async () => {
  const gone = await startServer();
  const page = await browser.newPage();
  await page.goto(gone.url + plain("/?profile=instant"));
  await page.getByTestId("tab-chat").click();
  await page.getByTestId("prompt").waitFor();
  await gone.stop();
  await page.getByTestId("send").click();
  await waitFinished(page, 15_000);
  const error = await page.getByTestId("error").textContent();
  const ws = gone.url.replace("http://", "ws://") + "/v1/responses";
  assert.ok(error.startsWith(`cannot open the WebSocket: nothing listens at ${ws}: `), error);
  await page.close();
});

test("the chat view says where it sends, and sends nothing while the Server URL is in error", async () => {
  const page = await browser.newPage();
  const sockets = [];
  page.on("websocket", (ws) => sockets.push(ws.url()));
  await page.goto(server.url + plain("/?profile=instant"));
  await page.getByTestId("tab-chat").click();
  assert.match(await page.getByTestId("chat-target").textContent(), new RegExp(`^To ${server.url}, model instant`));
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("server-url").fill("htp://x");
  await page.getByTestId("server-url").press("Tab");
  await page.getByTestId("tab-chat").click();
  assert.match(await page.getByTestId("chat-blocked").textContent(), /^Nothing is sent until the Agent tab's Server URL is fixed: Server URL must be/);
  sockets.length = 0;
  await page.getByTestId("send").click();
  await page.waitForTimeout(500);
  assert.deepEqual(sockets, [], "nothing was sent to another server in its place");
  assert.equal(await page.locator('.chat-view [data-testid="run-status"]').textContent(), "idle", "no turn started");
  await page.close();
});

/**
 * Runs the agent over `transport` from the page's server against another, slow one (`rate`
 * tokens a second), which is killed `ms` into turn `turn`; returns the page and that server.
 */
async function killedMidTurn(transport, rate, turn, ms) {
  const slow = await startServer(["--tokens-per-second", String(rate)]);
  const page = await browser.newPage();
  try {
    await page.goto(server.url + plain(`/?transport=${transport}&scenario=`));
    await page.getByTestId("tab-agent").click();
    await page.getByTestId("server-url").fill(slow.url);
    await page.getByTestId("server-url").press("Tab");
    await page.getByTestId("run").click();
    await page.waitForFunction(
      (turn) =>
        document.querySelector('[data-testid="run-status"]').textContent === "running" &&
        document.querySelector('[data-testid="turn-count"]').textContent === String(turn),
      turn,
    );
    await page.waitForTimeout(ms);
  } finally {
    await slow.kill();
  }
  await waitFinished(page, 30_000);
  return { page, slow };
}

test("a server stopped during an HTTP run is named, with what failed", async () => {
  const { page, slow } = await killedMidTurn("http", 20, 1, 300);
  const error = await page.getByTestId("error").textContent();
  assert.equal(await page.getByTestId("run-status").textContent(), "failed");
  assert.ok(error.includes(`${slow.url}/v1/responses`), error);
  assert.doesNotMatch(error, /^TypeError/);
  await page.getByTestId("reset").click();
  await page.close();
});

test("a server gone mid-turn over WebSocket: the loss said first, its time not the turn before's", async () => {
  // Turn 2 streams for a second before the server is killed.
  const { page } = await killedMidTurn("ws", 10, 2, 1000);
  assert.equal(await page.getByTestId("run-status").textContent(), "failed");
  const error = await page.getByTestId("error").textContent();
  assert.match(error, /^the connection was lost mid-turn \(.*\), and sending the turn again failed: /, error);
  const rows = await page.getByTestId("timeline-row").allTextContents();
  assert.match(rows.at(-1), /connection lost, and sending it again failed/, rows.at(-1));
  // No usage came for turn 2: its tokens are not known, not zero.
  assert.equal(await page.getByTestId("turn-tokens").last().textContent(), "–");
  // Turn 1's bar ends when turn 2 was first sent: the second waited ≥ 1 s on a dead server.
  const titles = await page.locator('[data-testid="chart-bar"] title').allTextContents();
  const handling = titles.find((t) => t.startsWith("turn 1: client handling"));
  assert.ok(handling, titles.join("\n"));
  const [, amount, unit] = handling.match(/ ([\d.]+) (ms|s)$/);
  const ms = Number(amount) * (unit === "s" ? 1000 : 1);
  assert.ok(ms < 500, handling);
  assert.ok(!titles.some((t) => t.startsWith("turn 2:")), "turn 2 never finished: no bar");
  // The run's time is counted until turn 2 was sent, and split: the server's parts of turn 1
  // and the page's own are known.
  assert.match(
    await page.getByTestId("total-time").textContent(),
    /^\d+\.\d\d s \(until turn 2 was sent: nothing came back for it\)$/,
  );
  for (const part of ["api", "engine", "tools", "client"]) {
    assert.notEqual(await page.getByTestId(`breakdown-${part}`).textContent(), "–", part);
  }
  // On loopback with the server's own (local) costs: what did not happen says why, not 0.00 ms.
  assert.equal(await page.getByTestId("breakdown-link").textContent(), "– (none: no link emulated)");
  assert.equal(await page.getByTestId("breakdown-modelled").textContent(), "– (none: local costs)");
  await page.getByTestId("reset").click();
  await page.close();
});

