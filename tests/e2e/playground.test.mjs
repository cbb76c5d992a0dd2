// End to end: the real server, the real built page, headless Chromium. The page opens on the
// overview, whose one click runs a comparison that explains itself; a prompt is typed, sent over
// WebSocket mode, and its answer is watched streaming into the page; the agent's module loads
// apart.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { artifactPath, launchBrowser, plain, startServer } from "./server.mjs";

let server;
let browser;

before(async () => {
  // 100 tokens/s makes the ~60-token answer take about half a second: slow enough to observe
  // the page mid-stream, fast enough for a quick test.
  server = await startServer(["--tokens-per-second", "100", "--allow-client-conditions"]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test("a prompt's answer streams into the page over one WebSocket", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  const sockets = [];
  page.on("websocket", (ws) => sockets.push(ws.url()));

  await page.goto(server.url + plain());
  await page.getByTestId("tab-chat").click();
  const status = page.getByTestId("run-status");
  await status.waitFor();
  assert.equal(await status.textContent(), "idle");

  const prompt = "Hello from the end-to-end test";
  await page.getByTestId("prompt").fill(prompt);
  await page.getByTestId("send").click();

  // Mid-stream: running, with part of the answer already on the page.
  await page.waitForFunction(() => {
    const status = document.querySelector('[data-testid="run-status"]').textContent;
    const answer = document.querySelector('[data-testid="answer"]').textContent;
    return status === "running" && answer.length > 0;
  });
  const partial = await page.getByTestId("answer").textContent();
  // A send while it streams is not taken, and the hint says so; the prompt stays.
  assert.equal(await page.getByTestId("prompt-hint").textContent(), "Streaming: Send works again once it is done.");
  assert.equal(await page.getByTestId("prompt").inputValue(), prompt);

  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]').textContent === "done",
    null,
    { timeout: 15_000 },
  );
  const answer = await page.getByTestId("answer").textContent();
  assert.ok(answer.startsWith(partial), "the answer grew from what was shown mid-stream");
  assert.ok(answer.length > partial.length, "more arrived after the mid-stream snapshot");
  assert.ok(answer.includes(`"${prompt}"`), `the answer quotes the prompt: ${answer}`);

  const ttft = await page.getByTestId("ttft").textContent();
  assert.match(ttft, /^\d+ ms$/);
  const rate = await page.getByTestId("tokens-per-second").textContent();
  const tokensPerSecond = Number(rate.replace(" tokens/s", "").replaceAll(",", ""));
  // The server paces at 100 tokens/s; browser timing is coarse, so only the magnitude is checked.
  assert.ok(tokensPerSecond > 30 && tokensPerSecond < 400, `decoding speed ${rate}`);
  assert.match(await page.getByTestId("tokens").textContent(), /^[\d,]+ \/ [\d,]+$/);
  await page.screenshot({ path: artifactPath("playground-answer.png"), fullPage: true });

  // A second turn reuses the same connection.
  await page.getByTestId("prompt").fill("And a second question");
  await page.getByTestId("send").click();
  await page.waitForFunction(() => {
    const answer = document.querySelector('[data-testid="answer"]').textContent;
    const status = document.querySelector('[data-testid="run-status"]').textContent;
    return status === "done" && answer.includes("And a second question");
  });
  assert.equal(sockets.length, 1, `one WebSocket for both turns, saw ${sockets.join(", ")}`);
  assert.ok(sockets[0].endsWith("/v1/responses"));
  assert.deepEqual(pageErrors, []);
  await page.close();
});

test("the connection failing shows up as a failed turn, not a hang", async () => {
  const page = await browser.newPage();
  await page.goto(server.url + plain());
  await page.getByTestId("tab-chat").click();
  await page.getByTestId("run-status").waitFor();
  // Point the page at a port where nothing listens by cutting the network.
  await page.context().setOffline(true);
  await page.getByTestId("send").click();
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]').textContent === "failed",
  );
  const error = await page.getByTestId("error").textContent();
  assert.match(error, /connection|WebSocket/i);
  await page.context().setOffline(false);
  await page.close();
});

test("the agent's module loads only when the Agent tab opens, and a failed load can be retried", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  const wasm = [];
  page.on("request", (request) => {
    if (request.url().endsWith(".wasm")) wasm.push(new URL(request.url()).pathname);
  });
  // Fetching the agent's chunk fails, as on a dropped connection, until `blocked` is lifted.
  let blocked = true;
  let failed = 0;
  await page.route(/\/pkg\/split_[^/]*\.wasm$/, (route) => {
    if (blocked) {
      failed += 1;
      return route.abort("connectionfailed");
    }
    return route.continue();
  });

  await page.goto(server.url + plain());
  // The overview and the chat view work on the main module alone, the agent's chunk blocked.
  await page.getByTestId("overview").waitFor();
  assert.equal(wasm[0], "/pkg/tether_playground_bg.wasm");
  await page.getByTestId("tab-chat").click();
  await page.getByTestId("send").click();
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]').textContent === "done",
  );
  assert.ok(wasm.every((path) => path === "/pkg/tether_playground_bg.wasm" || path.includes("split_")));
  await page.getByTestId("tab-agent").click();
  const error = page.getByTestId("agent-load-error");
  await error.waitFor({ timeout: 15_000 });
  assert.match(await error.textContent(), /could not be loaded/);
  assert.ok(failed >= 1);
  blocked = false;
  await error.getByRole("button", { name: "Try again" }).click();
  await page.getByTestId("run").waitFor({ timeout: 15_000 });
  const chunks = wasm.filter((path) => /\/pkg\/split_.*\.wasm$/.test(path));
  // The page fetches the chunk in the background once it is up, and again when the tab opens:
  // every failed fetch, then the one that worked.
  assert.equal(chunks.length, failed + 1, `failed fetches, then one that worked: ${wasm.join(", ")}`);
  // The chunk is named by its content, so no page runs another build's chunk.
  assert.match(chunks.at(-1), /\/pkg\/split_agent_view\.[0-9a-f]{16}\.wasm$/);
  // The view works: a run over WebSocket reaches done.
  await page.getByTestId("run").click();
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]').textContent === "done",
    null,
    { timeout: 30_000 },
  );
  assert.deepEqual(pageErrors, []);
  await page.close();
});

test("the page opens on what it is for, and its one click runs a comparison that explains itself", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  const sockets = [];
  page.on("websocket", (ws) => sockets.push(ws.url()));
  await page.goto(server.url);
  const overview = page.getByTestId("overview");
  await overview.waitFor();
  assert.equal(await page.getByTestId("tab-overview").getAttribute("aria-selected"), "true");
  const text = await overview.textContent();
  assert.match(text, /WebSocket mode/);
  assert.match(text, /The model is simulated/);
  // The profiles with what they do, from the one table in src/profiles.rs.
  const profiles = await page.getByTestId("profiles").textContent();
  assert.match(profiles, /flagship65 tok\/s, TTFT 400 ms \+ 0\.2 ms\/token of prefill/);
  assert.match(profiles, /instantno delay/);
  assert.equal(await page.locator('a[href="docs/"]').count() >= 1, true, "a link to /docs/");
  // Chat is one tab away.
  assert.equal(await page.getByTestId("tab-chat").count(), 1);
  // The button is above the fold, and says what it runs, under which conditions.
  const button = await page.getByTestId("intro-compare").boundingBox();
  assert.ok(button.y + button.height <= 800, `the button ends at y=${button.y + button.height}`);
  assert.match(await page.getByTestId("intro-what").textContent(), /long rollout.*spark.*40 ms RTT, 20 Mbit\/s up.*hosted API costs/);
  assert.match(await page.getByTestId("api-costs-note").textContent(), /Llama Guard 3 1B.*Numbers Everyone Should Know/);
  // Here: the short demo on loopback, with no model time — quick, and where there is little to save.
  await page.locator('select[data-testid="profile"]').waitFor();
  await page.getByTestId("task-length").selectOption("short");
  await page.getByTestId("profile").selectOption("instant");
  await page.getByTestId("link").selectOption("loopback");
  await page.getByTestId("api-costs").selectOption("server");
  assert.match(await page.getByTestId("intro-what").textContent(), /short demo.*instant.*loopback.*the server's own API costs/);

  await page.getByTestId("intro-compare").click();
  await page.getByTestId("run-status").waitFor({ timeout: 15_000 });
  assert.equal(await page.getByTestId("tab-agent").getAttribute("aria-selected"), "true");
  await page.waitForFunction(
    () => ["done", "failed"].includes(document.querySelector('[data-testid="run-status"]')?.textContent),
    null,
    { timeout: 60_000 },
  );
  const error = await page.locator('[data-testid="error"]').allTextContents();
  assert.equal(await page.getByTestId("run-status").textContent(), "done", `${error}`);
  assert.equal(await page.getByTestId("transport").inputValue(), "compare");
  assert.equal(await page.getByTestId("profile").inputValue(), "instant");
  assert.equal(sockets.length, 4, "one WebSocket per WebSocket leg, the warm-up's included");
  // The result is in view and has the focus.
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "result");
  const result = await page.getByTestId("result").boundingBox();
  assert.ok(result.y >= -1 && result.y < 800, `the result is at y=${result.y}`);
  // The result says what it is and what it is made of.
  assert.match(await page.getByTestId("speedup").textContent(), /^\d+\.\d\d\d?×$/);
  assert.match(
    await page.getByTestId("speedup-text").textContent(),
    /^Measured on this machine(: WebSocket mode was .*|, within noise: .*)\(median of 3 repetitions; .*\)\.$/,
  );
  const explained = await page.getByTestId("speedup-explained").textContent();
  assert.match(
    explained,
    /^Part by part, HTTP stateless took .* per run than WebSocket \(means of 3 runs each, which add up(; the median runs differ the other way, [^)]*)?\): .*API overhead [+−]/,
  );
  const api = await page.getByTestId("compare-api").textContent();
  assert.match(api, /API overhead.*ms.*ms/);
  assert.match(await page.getByTestId("announce").textContent(), /^Comparison done\./);
  assert.deepEqual(pageErrors, []);
  await page.screenshot({ path: artifactPath("playground-first-click.png"), fullPage: true });
  await page.close();
});

test("on a phone too, the overview's button is above the fold", async () => {
  const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  await page.goto(server.url);
  const button = await page.getByTestId("intro-compare").boundingBox();
  assert.ok(button.y + button.height <= 844, `the button ends at y=${button.y + button.height}`);
  await page.close();
});

test("before the wasm is there, the page says it is loading", async () => {
  const page = await browser.newPage();
  let release;
  const held = new Promise((resolve) => (release = resolve));
  await page.route("**/pkg/tether_playground_bg.wasm", async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(server.url, { waitUntil: "domcontentloaded" });
  const boot = page.locator("#boot");
  assert.match(await boot.textContent(), /Loading the playground/);
  assert.match(await boot.textContent(), /WebSocket mode/);
  release();
  await page.getByTestId("overview").waitFor({ timeout: 15_000 });
  assert.equal(await page.locator("#boot").count(), 0, "the app removed the notice");
  await page.close();
});
