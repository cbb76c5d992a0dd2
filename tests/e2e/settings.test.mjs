// End to end: the agent view's settings — URL parameters (autorun, transport, profile, embed),
// persistence across a reload and Reset, corrupt storage, the shareable link, an API key on
// both transports, and the 390 px phone layout. Runs use the fast `spark` profile.
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

/** Waits until `run-status` (in `frame`, a page or an iframe) is done or failed; asserts done. */
async function waitDone(frame, timeout = 30_000) {
  await frame.waitForFunction(
    () => {
      const status = document.querySelector('[data-testid="run-status"]')?.textContent;
      return status === "done" || status === "failed";
    },
    null,
    { timeout },
  );
  const errors = await frame.locator('[data-testid="error"]').allTextContents();
  assert.equal(await frame.getByTestId("run-status").textContent(), "done", `failed: ${errors}`);
}

async function open(path, viewport = { width: 1280, height: 800 }) {
  const page = await browser.newPage({ viewport });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  const record = { sockets: [], posts: [], pageErrors };
  page.on("websocket", (ws) => record.sockets.push(ws.url()));
  page.on("request", (request) => {
    if (request.method() === "POST" && request.url().endsWith("/v1/responses")) {
      record.posts.push(JSON.parse(request.postData()));
    }
  });
  await page.goto(server.url + plain(path));
  return { page, record };
}

/** The default scenario fixed the sample project: the last test run in the page passes. */
async function assertTestsPass(page) {
  const outputs = await page.getByTestId("tool-output").allTextContents();
  assert.ok(outputs.some((text) => text.includes("3 passing, 3 failing")), "tests fail first");
  assert.ok(outputs.at(-1).includes("6 passing, 0 failing"), `tests pass: ${outputs.at(-1)}`);
}

test("autorun over WebSocket runs the default scenario to done; the tests pass", async () => {
  const { page, record } = await open("/?transport=ws&profile=spark&autorun=1");
  await waitDone(page);
  assert.equal(await page.getByTestId("tab-agent").getAttribute("aria-selected"), "true");
  assert.ok(Number(await page.getByTestId("turn-count").textContent()) >= 4);
  await assertTestsPass(page);
  assert.equal(record.sockets.length, 1);
  assert.match(record.sockets[0], /\/v1\/responses/);
  assert.deepEqual(record.posts, []);
  assert.match(await page.getByTestId("total-time").textContent(), /^\d+\.\d\d s$/);
  assert.ok(Number((await page.getByTestId("total-output").textContent()).replace(/,/g, "")) > 0);
  assert.deepEqual(record.pageErrors, []);
  await page.screenshot({ path: artifactPath("playground-agent-done.png"), fullPage: true });
  await page.close();
});

test("transport=http is HTTP stateless: full input, store:false; the tests pass", async () => {
  const { page, record } = await open("/?transport=http&profile=spark&autorun=1");
  await waitDone(page);
  await assertTestsPass(page);
  assert.deepEqual(record.sockets, []);
  assert.ok(record.posts.length >= 4);
  assert.ok(record.posts.every((b) => b.store === false && !b.previous_response_id));
  assert.ok(record.posts.every((b) => b.model === "spark"));
  assert.ok(record.posts.every((b) => b.metadata?.scenario === "fix-sample-project"));
  assert.equal(await page.getByTestId("transport").inputValue(), "http-stateless");
  await page.close();
});

test("settings and the last run survive a reload; Reset clears them", async () => {
  const { page } = await open("/");
  await page.getByTestId("tab-agent").click();
  // The profile list comes from GET /v1/models.
  await page.locator('select[data-testid="profile"]').waitFor();
  await page.getByTestId("transport").selectOption("http-chained");
  await page.getByTestId("profile").selectOption("instant");
  await page.getByTestId("max-turns").fill("12");
  await page.getByTestId("run").click();
  await waitDone(page);
  const turns = await page.getByTestId("turn-count").textContent();

  // Without the URL's parameters, which would override what was kept.
  await page.goto(server.url + "/");
  await page.getByTestId("tab-agent").click();
  assert.equal(await page.getByTestId("transport").inputValue(), "http-chained");
  await page.locator('select[data-testid="profile"]').waitFor();
  assert.equal(await page.getByTestId("profile").inputValue(), "instant");
  assert.equal(await page.getByTestId("max-turns").inputValue(), "12");
  // The last run is back: its status, turns and timeline.
  assert.equal(await page.getByTestId("run-status").textContent(), "done");
  assert.equal(await page.getByTestId("turn-count").textContent(), turns);
  assert.equal(await page.getByTestId("timeline-row").count(), Number(turns));
  // And the files it left, with a word on its diffs, which are not kept.
  await page.getByTestId("details-tab-files").click();
  const files = page.getByTestId("files");
  await files.getByTestId("file-tree").getByRole("button", { name: "paginate.js" }).click();
  assert.match(await files.getByTestId("file-view").textContent(), /const start = \(current - 1\) \* pageSize;/);
  assert.match(await files.getByTestId("changes-none").textContent(), /^This run's diffs are not kept between visits/);

  await page.getByTestId("reset").click();
  assert.equal(await page.getByTestId("transport").inputValue(), "ws");
  assert.equal(await page.getByTestId("run-status").textContent(), "idle");
  assert.match(await page.getByTestId("notices").textContent(), /Reset/);
  await page.goto(server.url + "/");
  await page.getByTestId("tab-agent").click();
  assert.equal(await page.getByTestId("transport").inputValue(), "ws");
  assert.equal(await page.getByTestId("max-turns").inputValue(), "20");
  assert.equal(await page.getByTestId("run-status").textContent(), "idle");
  assert.equal(await page.getByTestId("turn-count").textContent(), "0");
  await page.close();
});

test("a run cut off by a reload comes back as stopped", async () => {
  const { page } = await open("/");
  await page.getByTestId("tab-agent").click();
  await page.locator('select[data-testid="profile"]').waitFor();
  // flagship decodes at ~65 tokens/s: the run is still going after its first turns.
  await page.getByTestId("profile").selectOption("flagship");
  await page.getByTestId("run").click();
  await page.waitForFunction(
    () => document.querySelectorAll('[data-testid="timeline-row"]').length >= 1,
    null,
    { timeout: 15_000 },
  );
  assert.equal(await page.getByTestId("run-status").textContent(), "running");
  await page.reload();
  await page.getByTestId("tab-agent").click();
  assert.equal(await page.getByTestId("run-status").textContent(), "stopped");
  assert.ok((await page.getByTestId("timeline-row").count()) >= 1);
  await page.getByTestId("reset").click();
  await page.close();
});

test("settings given by the URL are not stored by the page itself", async () => {
  const { page } = await open("/?transport=compare&profile=turbo&repetitions=2&link=home-uplink");
  await page.getByTestId("tab-agent").click();
  // The model list answered: the unknown profile is an error at its field (inputs.test.mjs).
  await page.locator('select[data-testid="profile"]').waitFor();
  assert.match(await page.getByTestId("input-errors").textContent(), /The URL's profile: .*got "turbo"/);
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => localStorage.getItem("tether.settings")), null);
  // A change of the user's keeps them all.
  await page.getByTestId("max-turns").fill("9");
  await page.getByTestId("max-turns").press("Tab");
  const kept = JSON.parse(await page.evaluate(() => localStorage.getItem("tether.settings")));
  assert.equal(kept.max_turns, 9);
  assert.equal(kept.link, "home-uplink");
  await page.getByTestId("reset").click();
  await page.close();
});

test("a reload mid-run says the run was interrupted, and autorun does not start another", async () => {
  const { page, record } = await open("/?transport=ws&profile=flagship&autorun=1");
  const sockets = record.sockets;
  await page.waitForFunction(
    () => document.querySelectorAll('[data-testid="timeline-row"]').length >= 1,
    null,
    { timeout: 15_000 },
  );
  assert.equal(await page.getByTestId("run-status").textContent(), "running");
  await page.reload();
  await page.getByTestId("run-status").waitFor();
  assert.match(
    await page.getByTestId("notices").textContent(),
    /The last run was interrupted: the page was reloaded or left while it ran \(a run, at turn \d+\).*autorun=1 did not start another one/,
  );
  assert.equal(await page.getByTestId("run-status").textContent(), "stopped");
  await page.waitForTimeout(1500);
  assert.equal(await page.getByTestId("run-status").textContent(), "stopped", "nothing started");
  assert.equal(sockets.length, 1, "no second run opened a socket");
  // Said once: the next load runs as its URL asks.
  await page.reload();
  await page.waitForFunction(
    () => document.querySelector('[data-testid="run-status"]')?.textContent === "running",
  );
  await page.getByTestId("stop").click();
  await page.getByTestId("reset").click();
  await page.close();
});

test("corrupt storage falls back to the defaults and says so", async () => {
  const { page, record } = await open("/");
  await page.evaluate(() => {
    localStorage.setItem("tether.settings", "{not json");
    localStorage.setItem("tether.last-run", JSON.stringify({ version: 99 }));
  });
  await page.reload();
  await page.getByTestId("tab-agent").click();
  // The last run is read (and found unusable) when the agent view opens.
  await page.getByTestId("run").waitFor();
  const notices = await page.getByTestId("notices").textContent();
  assert.match(notices, /stored settings were not usable/);
  assert.match(notices, /last run was not usable/);
  assert.equal(await page.getByTestId("transport").inputValue(), "ws");
  assert.equal(await page.getByTestId("run-status").textContent(), "idle");
  assert.deepEqual(record.pageErrors, []);
  await page.close();
});

test("Copy link reproduces the settings without the API key", async () => {
  const { page } = await open("/");
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("transport").selectOption("compare");
  await page.getByTestId("scenario").fill("");
  await page.getByTestId("api-key").fill("sk-very-secret");
  await page.getByTestId("copy-link").click();
  const link = await page.getByTestId("share-link").inputValue();
  assert.ok(link.startsWith(server.url + "/?"), link);
  assert.match(link, /transport=compare/);
  assert.match(link, /scenario=&|scenario=$/);
  assert.doesNotMatch(link, /autorun/, "a shared link starts nothing (inputs.test.mjs)");
  assert.ok(!link.includes("secret"), link);
  await page.close();
});

test("an API key goes as a bearer header over HTTP, never in the upgrade URL: the upgrade carries a minted client secret", async () => {
  const guarded = await startServer(["--api-key", "k-e2e"]);
  try {
    const page = await browser.newPage();
    const authHeaders = [];
    const mints = [];
    const sockets = [];
    page.on("request", (request) => {
      if (request.method() === "POST") authHeaders.push(request.headers().authorization);
      if (request.url().endsWith("/v1/responses/client_secrets")) mints.push(request.method());
    });
    page.on("websocket", (ws) => sockets.push(ws.url()));
    // The upgrade's own headers, as Chromium sends them.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Network.enable");
    const handshakes = [];
    cdp.on("Network.webSocketWillSendHandshakeRequest", (event) =>
      handshakes.push(event.request.headers),
    );
    await page.goto(guarded.url + plain("/?transport=ws&profile=instant"));
    await page.getByTestId("tab-agent").click();
    // Without the key the model list is refused, and the reason is shown (once the agent view's
    // module has loaded and its model list request has been answered).
    await page.waitForFunction(
      () => /401|API key/.test(document.querySelector('[data-testid="profile-note"]')?.textContent ?? ""),
      null,
      { timeout: 15_000 },
    );
    assert.match(await page.getByTestId("profile-note").textContent(), /401|API key/);
    // Typing the key and clicking Run at once: the key field's change (on the click's mousedown)
    // reloads the model list, and nothing below it may move under the click.
    // In the page's coordinates: the click scrolls Run into view when it is below the fold.
    const top = () => page.getByTestId("run").evaluate((el) => el.getBoundingClientRect().top + window.scrollY);
    const before = await top();
    await page.getByTestId("api-key").fill("k-e2e");
    await page.getByTestId("run").click();
    await waitDone(page);
    await page.locator('select[data-testid="profile"]').waitFor();
    const after = await top();
    assert.ok(Math.abs(after - before) <= 1, `Run moved from ${before} to ${after}`);
    // The WebSocket run worked without the key in its URL: a client secret minted with the key
    // (POST /v1/responses/client_secrets, Bearer) went as the subprotocol beside "responses".
    assert.equal(sockets.length, 1, sockets.join());
    assert.ok(!sockets[0].includes("api_key") && !sockets[0].includes("k-e2e"), sockets[0]);
    assert.deepEqual(mints, ["POST"]);
    const protocols = handshakes
      .map((headers) => headers["Sec-WebSocket-Protocol"] ?? headers["sec-websocket-protocol"])
      .filter(Boolean);
    assert.equal(protocols.length, 1, JSON.stringify(handshakes));
    assert.match(protocols[0], /^responses, openai-insecure-api-key\.ek_\S+$/);
    assert.ok(!protocols[0].includes("k-e2e"), "the key itself is never offered");
    await page.getByTestId("transport").selectOption("http-stateless");
    await page.getByTestId("run").click();
    await waitDone(page);
    assert.ok(authHeaders.length >= 1 && authHeaders.every((h) => h === "Bearer k-e2e"));
    await page.close();
  } finally {
    await guarded.stop();
  }
});

test("the playground runs over HTTP against another Tether server (CORS)", async () => {
  const other = await startServer();
  try {
    const { page, record } = await open("/?transport=http&profile=instant");
    await page.getByTestId("tab-agent").click();
    const note = page.getByTestId("server-url-note");
    const here = new URL(page.url()).origin;
    assert.equal(await note.textContent(), `Runs use ${here}; empty: this page's server.`);
    await page.getByTestId("server-url").fill(other.url);
    await page.getByTestId("server-url").press("Tab");
    // The field's note names the server the run will use.
    const there = new URL(other.url).origin;
    assert.equal(await note.textContent(), `Runs use ${there}; empty: this page's server.`);
    // The model list comes from the other server too.
    await page.locator('select[data-testid="profile"]').waitFor();
    const requests = [];
    page.on("request", (request) => requests.push(request.url()));
    await page.getByTestId("run").click();
    await waitDone(page);
    assert.ok(record.posts.length >= 4);
    const posts = requests.filter((url) => url.endsWith("/v1/responses"));
    assert.ok(posts.length >= 4 && posts.every((url) => url.startsWith(other.url)), posts.join());
    await page.getByTestId("reset").click();
    await page.close();
  } finally {
    await other.stop();
  }
});

test("embed=1 shows only the run: controls, status, totals, timeline", async () => {
  const { page } = await open("/?embed=1&transport=ws&profile=spark&autorun=1", {
    width: 720,
    height: 520,
  });
  await waitDone(page);
  assert.equal(await page.getByTestId("tab-agent").count(), 0, "no tabs");
  assert.equal(await page.getByTestId("task").count(), 0, "no task form");
  assert.equal(await page.getByTestId("settings").count(), 0, "no settings");
  assert.ok((await page.getByTestId("timeline-row").count()) >= 4);
  assert.match(await page.getByTestId("embed-summary").textContent(), /spark/);
  // An embedded run keeps nothing in the visitor's storage.
  assert.equal(await page.evaluate(() => localStorage.length), 0);
  await page.screenshot({ path: artifactPath("playground-embed.png"), fullPage: true });
  await page.close();
});

test("the 390 px phone layout does not scroll sideways", async () => {
  const { page } = await open("/?transport=compare&profile=spark&autorun=1", {
    width: 390,
    height: 844,
  });
  await waitDone(page);
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
  // Nor does anything in it: the chart is laid out for the width, the verdict and the compare
  // tables wrap to it (the timeline's box scrolls, on purpose: its columns line the legs up).
  const wide = await page.evaluate(() =>
    [...document.querySelectorAll(".compare .table-scroll, .compare table, .chart-box, .chart-box svg, .speedup-line")]
      .filter((el) => el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().right > innerWidth + 1)
      .map((el) => `${el.className?.baseVal ?? el.className}: ${el.scrollWidth}px in ${el.clientWidth}px`),
  );
  assert.deepEqual(wide, []);
  await page.screenshot({ path: artifactPath("playground-phone.png"), fullPage: true });
  await page.close();
});
