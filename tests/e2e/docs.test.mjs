// End to end: the docs page at /docs embeds two live demos; both run to done inside their
// iframes, the comparison with a speedup and what it is made of.
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

async function frameDone(page, testId) {
  const frame = page.frameLocator(`[data-testid="${testId}"]`);
  const status = frame.getByTestId("run-status");
  for (let waited = 0; waited < 60_000; waited += 250) {
    const text = await status.textContent({ timeout: 10_000 });
    if (text === "done" || text === "failed") break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const error = await frame.locator('[data-testid="error"]').allTextContents();
  assert.equal(await status.textContent(), "done", `${testId}: ${error}`);
  return frame;
}

test("/docs serves the walkthrough and both live demos run to done", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  // Every resource the page and its demos ask for exists.
  const missing = [];
  page.on("response", (r) => r.status() === 404 && missing.push(r.url()));
  const response = await page.goto(server.url + "/docs");
  assert.equal(response.status(), 200);
  assert.ok(page.url().endsWith("/docs/"), page.url());
  assert.match(await page.locator("h1").textContent(), /WebSocket mode/);
  assert.match(await page.textContent("body"), /previous_response_id/);
  await frameDone(page, "demo-ws");
  const compare = await frameDone(page, "demo-compare");
  const speedup = await compare.getByTestId("speedup").textContent();
  assert.ok(parseFloat(speedup) > 0, speedup);
  assert.match(await compare.getByTestId("speedup-explained").textContent(), /API overhead/);
  // The page says what the number is made of, and claims no number of its own.
  const text = await page.textContent("body");
  assert.match(text, /API overhead/);
  assert.doesNotMatch(text, /about 1\.2×|roughly 1\.2×/);
  assert.deepEqual(pageErrors, []);
  assert.deepEqual(missing, []);
  await page.screenshot({ path: artifactPath("docs-page.png"), fullPage: true });
  await page.close();
});

test("/docs does not scroll sideways on a 390 px phone", async () => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await page.goto(server.url + "/docs/");
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
  await page.close();
});
