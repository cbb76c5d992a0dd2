// End to end: compare mode runs the same scenario over WebSocket, then over HTTP stateless, and
// reports the speedup; Stop ends a comparison.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { artifactPath, launchBrowser, startServer } from "./server.mjs";

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

test("compare mode runs both transports and reports the speedup", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  const sockets = [];
  const posts = [];
  page.on("websocket", (ws) => sockets.push(ws.url()));
  page.on("request", (request) => {
    if (request.method() === "POST") posts.push(JSON.parse(request.postData()));
  });
  await page.goto(server.url + "/?transport=compare&profile=spark&autorun=1");
  const status = page.getByTestId("run-status");
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]')?.textContent === "running",
  );
  // While the WebSocket leg runs, the speedup is not known yet.
  assert.equal(await page.getByTestId("speedup").textContent(), "measuring…");
  await page.waitForFunction(
    () => ["done", "failed"].includes(document.querySelector('[data-testid="run-status"]').textContent),
    null,
    { timeout: 40_000 },
  );
  const error = await page.locator('[data-testid="error"]').allTextContents();
  assert.equal(await status.textContent(), "done", `the comparison failed: ${error}`);
  const speedup = await page.getByTestId("speedup").textContent();
  assert.match(speedup, /^\d+\.\d\d×$/);
  assert.ok(parseFloat(speedup) > 0, speedup);
  // One socket for the WebSocket leg, then the HTTP leg's stateless posts.
  assert.equal(sockets.length, 1);
  assert.ok(posts.length >= 4);
  assert.ok(posts.every((body) => body.store === false && !body.previous_response_id));
  // Both legs' per-turn durations are listed.
  const rows = await page.getByTestId("compare-turn").allTextContents();
  assert.ok(rows.length >= 4);
  assert.ok(rows.every((row) => /\d+ ms.*\d+ ms/.test(row)), rows.join(" | "));
  // The HTTP leg, shown below, fixed its own fresh copy of the project.
  const outputs = await page.getByTestId("tool-output").allTextContents();
  assert.ok(outputs.at(-1).includes("6 passing, 0 failing"), outputs.at(-1));
  assert.deepEqual(pageErrors, []);
  await page.screenshot({ path: artifactPath("playground-compare.png"), fullPage: true });
  await page.close();
});

test("Stop ends a comparison as stopped", async () => {
  const slow = await startServer(["--tokens-per-second", "20"]);
  try {
    const page = await browser.newPage();
    await page.goto(slow.url + "/?transport=compare&autorun=1");
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
