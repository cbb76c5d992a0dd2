// End to end: the run in detail. The fix-sample-project scenario runs over WebSocket to `done`
// (at 4,000 tokens/s: the view batches its updates per animation frame); then the timeline shows
// the server's stage timings for every turn, the Events tab lists every frame — the
// `response.create`s sent and the `response.completed`s received — and filters them, and the
// Files tab shows the patched file and its diff. Screenshots of both tabs are saved.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { artifactPath, launchBrowser, plain, startServer } from "./server.mjs";

let server;
let browser;

before(async () => {
  server = await startServer(["--tokens-per-second", "4000"]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test("server timings, the event inspector and the files view after a WebSocket run", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  const sockets = [];
  page.on("websocket", (ws) => sockets.push(ws.url()));
  await page.goto(server.url + plain());
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("transport").selectOption("ws");
  await page.getByTestId("scenario").fill("fix-sample-project");
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
  assert.equal(await page.getByTestId("run-status").textContent(), "done", `failed: ${error}`);
  assert.deepEqual(pageErrors, []);
  const turns = Number(await page.getByTestId("turn-count").textContent());
  assert.ok(turns >= 4, `the scenario takes several turns, saw ${turns}`);

  // The page opted in on the upgrade URL; every turn has the server's stage timings, the first
  // on the full path, the continuations from the connection cache.
  assert.equal(sockets.length, 1);
  assert.match(sockets[0], /\/v1\/responses\?tether_timing=1$/);
  const timings = await page.getByTestId("server-timing").allTextContents();
  assert.equal(timings.length, turns);
  // A stage prints as `0.21 ms`, `3.4 ms` or `812 ms` by its size: a slow machine may take
  // 100 ms or more to render a turn in this debug build.
  const stage = (name) => `${name} \\d+(?:\\.\\d+)? ms`;
  assert.match(timings[0], new RegExp(`^server: .*${stage("render")} · .*${stage("generate")} · path ws_miss$`));
  for (const text of timings.slice(1)) {
    assert.match(text, new RegExp(`${stage("render")} · .* · path ws_hit$`));
  }
  assert.ok(
    (await page.locator(".server-timing .stage-bar .stage").count()) >= turns,
    "a stacked bar per turn",
  );

  // Events: every request and every terminal event, in order, filterable.
  await page.getByTestId("details-tab-events").click();
  const inspector = page.getByTestId("inspector");
  await inspector.waitFor();
  const rows = inspector.getByTestId("inspector-row");
  const kinds = await rows.locator(".frame-kind").allTextContents();
  assert.equal(kinds[0], "response.create");
  assert.equal(kinds.filter((k) => k === "response.create").length, turns);
  assert.equal(kinds.filter((k) => k === "response.completed").length, turns);
  assert.equal(kinds.at(-1), "response.completed");
  await page.getByTestId("inspector-filter").fill("response.completed");
  await page.waitForFunction(
    (n) => document.querySelectorAll('[data-testid="inspector-row"]').length === n,
    turns,
  );
  const shown = await rows.locator(".frame-kind").allTextContents();
  assert.ok(shown.every((k) => k === "response.completed"), `${shown}`);
  await rows.first().getByRole("button", { name: /^JSON of/ }).click();
  assert.match(await inspector.locator(".frame-json").textContent(), /"type": "response\.completed"/);
  await inspector.screenshot({ path: artifactPath("playground-events.png") });

  // Files: the tree after the last tool call, the patched file, its diff.
  await page.getByTestId("details-tab-files").click();
  const files = page.getByTestId("files");
  await files.waitFor();
  await files.getByTestId("file-tree").getByRole("button", { name: "paginate.js" }).click();
  assert.match(
    await files.getByTestId("file-view").textContent(),
    /const start = \(current - 1\) \* pageSize;/,
  );
  const diff = await files.getByTestId("diff").first().textContent();
  assert.match(diff, /^--- a\/src\/paginate\.js\n\+\+\+ b\/src\/paginate\.js\n/);
  assert.match(diff, /\n\+ {2}const start = \(current - 1\) \* pageSize;\n/);
  await files.screenshot({ path: artifactPath("playground-files.png") });
  await page.close();
});
