// End to end: what the page does for everyone besides its numbers. Nothing moves while a run
// streams (layout shifts measured with a PerformanceObserver, in every view, at `burst`, the
// fastest paced profile); an axe-core scan of every view finds nothing serious; the keyboard
// reaches and works everything (the view tabs, Ctrl+Enter, the focus after Run and Stop); the
// static files arrive precompressed with caching headers that fit them.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { request as httpRequest } from "node:http";
import {
  artifactPath,
  axeViolations,
  launchBrowser,
  layoutShiftSince,
  plain,
  recordLayoutShifts,
  startServer,
  waitFinished,
} from "./server.mjs";

let server;
let browser;

before(async () => {
  // Client-chosen conditions: a comparison with the modelled hosted costs has more to say.
  server = await startServer(["--allow-client-conditions"]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** The page of `path` at `viewport`, recording its layout shifts. */
async function open(path, viewport = { width: 1280, height: 800 }) {
  const page = await browser.newPage({ viewport });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  await recordLayoutShifts(page);
  await page.goto(server.url + plain(path));
  return { page, pageErrors };
}

/** Clicks Run once the agent view is there; the page's clock when it did. */
async function clickRun(page) {
  await page.getByTestId("run").waitFor();
  // Let the first frames settle (the model list, the agent's module) before measuring.
  await page.waitForTimeout(300);
  const since = await page.evaluate(() => performance.now());
  await page.getByTestId("run").click();
  return since;
}

/** Asserts the layout shifts since `since` add up to at most 0.05 (CLS's "good" is 0.1). */
async function assertStill(page, since, what) {
  const { total, shifts } = await layoutShiftSince(page, since);
  assert.ok(total <= 0.05, `${what}: layout shifts add up to ${total.toFixed(3)}: ${JSON.stringify(shifts)}`);
  return total;
}

test("nothing moves while a run streams, in every view", async () => {
  const totals = {};
  for (const [name, path, viewport] of [
    ["agent, single run", "/?transport=ws&profile=burst", undefined],
    ["agent, comparison", "/?transport=compare&profile=burst&repetitions=2", undefined],
    ["agent on a phone", "/?transport=compare&profile=burst&repetitions=1", { width: 390, height: 844 }],
    // Three repetitions (a first result, refined twice) with the modelled part's line, where a
    // phone wraps the most: the lines take their room before the result arrives.
    [
      "comparison with hosted costs on a phone",
      "/?transport=compare&profile=burst&repetitions=3&api_costs=hosted",
      { width: 390, height: 844 },
    ],
    ["agent over HTTP on a phone", "/?transport=http&profile=burst", { width: 390, height: 844 }],
  ]) {
    const { page, pageErrors } = await open(path, viewport);
    await page.getByTestId("tab-agent").click();
    const since = await clickRun(page);
    await waitFinished(page);
    assert.equal(await page.getByTestId("run-status").textContent(), "done", name);
    totals[name] = await assertStill(page, since, name);
    assert.deepEqual(pageErrors, []);
    await page.close();
  }
  // Embedded (the docs page's demos): autorun from the URL.
  {
    const { page } = await open("/?embed=1&transport=compare&profile=burst&repetitions=1&autorun=1", {
      width: 720,
      height: 520,
    });
    const since = await page.evaluate(() => performance.now());
    await waitFinished(page);
    totals.embed = await assertStill(page, since, "embedded comparison");
    await page.close();
  }
  // The chat view: the answer streams at the end of the view, under everything else.
  {
    const { page } = await open("/?profile=burst");
    await page.getByTestId("tab-chat").click();
    await page.getByTestId("prompt").fill("A long question. ".repeat(120));
    const since = await page.evaluate(() => performance.now());
    await page.getByTestId("send").click();
    await waitFinished(page);
    totals.chat = await assertStill(page, since, "chat");
    await page.close();
  }
  console.log("layout shifts while streaming:", JSON.stringify(totals));
});

test("nothing moves through a long run to its end: a comparison of the long task, desktop and phone", async () => {
  // The long rollout (41 turns a leg, the chart and the tables growing all along, the result
  // arriving at the end) on the model with no model time, so it takes seconds, not minutes.
  const path = "/?transport=compare&task_length=long&profile=instant&repetitions=1";
  const totals = {};
  for (const [name, viewport] of [
    ["desktop", undefined],
    ["phone", { width: 390, height: 844 }],
  ]) {
    const { page, pageErrors } = await open(path, viewport);
    await page.getByTestId("tab-agent").click();
    const since = await clickRun(page);
    await waitFinished(page, 240_000);
    assert.equal(await page.getByTestId("run-status").textContent(), "done", name);
    // Through completion: the last frames the result draws included.
    await page.waitForTimeout(500);
    totals[name] = await assertStill(page, since, `long comparison, ${name}`);
    assert.deepEqual(pageErrors, []);
    await page.close();
  }
  console.log("layout shifts through a long run:", JSON.stringify(totals));
});

test("on a phone the timeline comes before the conversation and its tool outputs", async () => {
  const { page } = await open("/?transport=ws&profile=burst", { width: 390, height: 844 });
  await page.getByTestId("tab-agent").click();
  await clickRun(page);
  await waitFinished(page);
  const top = (testId) =>
    page.evaluate(
      (id) => document.querySelector(`[data-testid="${id}"]`).getBoundingClientRect().top + scrollY,
      testId,
    );
  const timeline = await top("timeline");
  const conversation = await top("conversation");
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  assert.ok(timeline < conversation, `timeline at ${timeline}px, conversation at ${conversation}px`);
  assert.ok(timeline < 2000, `the timeline starts ${timeline}px down a ${height}px page`);
  console.log(`phone: the timeline starts ${Math.round(timeline)}px down a ${height}px page`);
  await page.screenshot({ path: artifactPath("playground-phone-run.png"), fullPage: true });
  await page.close();
});

test("axe finds no serious or critical violation in any view", async () => {
  const found = {};
  const scan = async (name, target) => {
    found[name] = await axeViolations(target);
  };
  const { page } = await open("/");
  await page.getByTestId("overview").waitFor();
  await scan("overview", page);
  await page.getByTestId("tab-chat").click();
  await page.getByTestId("send").click();
  await waitFinished(page);
  await scan("chat with an answer", page);
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("run").waitFor();
  await scan("agent, idle", page);
  await page.getByTestId("transport").selectOption("ws");
  await page.getByTestId("profile").selectOption("burst");
  await page.getByTestId("run").click();
  await waitFinished(page);
  await scan("agent after a run", page);
  await page.getByTestId("details-tab-events").click();
  await scan("agent, events tab", page);
  await page.getByTestId("transport").selectOption("compare");
  await page.getByTestId("repetitions").fill("1");
  await page.getByTestId("repetitions").press("Tab");
  await page.getByTestId("run").click();
  await waitFinished(page);
  await scan("comparison", page);
  await page.close();

  const embedded = await browser.newPage({ viewport: { width: 720, height: 520 } });
  await embedded.goto(server.url + plain("/?embed=1&transport=compare&profile=burst&repetitions=1&autorun=1"));
  await waitFinished(embedded);
  await scan("embedded comparison", embedded);
  await embedded.close();

  const docs = await browser.newPage();
  await docs.goto(server.url + "/docs/");
  await scan("docs page", docs);
  await docs.close();

  for (const [name, violations] of Object.entries(found)) {
    assert.deepEqual(violations, [], `${name}: ${violations.join("\n")}`);
  }
});

test("what a review found stays fixed: disabled looks disabled, definitions are shown, colours mean one thing", async () => {
  const { page, pageErrors } = await open("/?transport=ws&profile=burst");
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("run").waitFor();
  // The disabled Stop does not look like the red, enabled one.
  const background = (id) =>
    page.getByTestId(id).evaluate((el) => getComputedStyle(el).backgroundColor);
  assert.equal(await page.getByTestId("stop").isDisabled(), true);
  assert.notEqual(await background("stop"), "rgb(255, 107, 107)", "a disabled Stop is not red");
  // The long-running checkbox is a checkbox's size, not squashed by its label.
  const check = await page.getByTestId("compare-long-running").boundingBox();
  assert.ok(check.width >= 12 && check.height >= 12, `${check.width}×${check.height}`);
  await page.getByTestId("run").click();
  await waitFinished(page);
  // What the timeline's columns and the breakdown's parts mean is on the page, not in a tooltip.
  const definitions = page.getByTestId("timeline-definitions");
  assert.ok(await definitions.isVisible());
  assert.match(await definitions.textContent(), /First tokenuntil the first delta/);
  assert.match(await page.getByTestId("breakdown").textContent(), /the simulated model \(engine\)/);
  // A stage of the timeline's bar never has the colour of another part of the breakdown.
  const colours = await page.evaluate(() => {
    const of = (cls) => {
      const probe = document.createElement("span");
      probe.className = cls;
      document.body.append(probe);
      const colour = getComputedStyle(probe).backgroundColor;
      probe.remove();
      return colour;
    };
    const stages = ["load", "resolve", "render", "validate", "classify", "persist", "bill"];
    const others = ["engine", "tools", "client", "link", "network"];
    return { stages: stages.map((s) => of(`stage stage-${s}`)), others: others.map((p) => of(`part part-${p}`)) };
  });
  for (const stage of colours.stages) assert.ok(!colours.others.includes(stage), `${stage} is another part's colour`);
  // The Events list can leave the deltas out, so each turn's request is in the newest 200.
  await page.getByTestId("details-tab-events").click();
  await page.getByTestId("inspector-hide-deltas").check();
  const rows = await page.getByTestId("inspector-row").allTextContents();
  assert.ok(rows.some((row) => /response\.create/.test(row)), "a response.create is listed");
  assert.ok(rows.every((row) => !/\.delta/.test(row)), "no delta is listed");
  assert.deepEqual(pageErrors, []);
  await page.close();

  // Embedded: a heading, and the way to the playground.
  const embedded = await browser.newPage({ viewport: { width: 720, height: 520 } });
  await embedded.goto(server.url + plain("/?embed=1&transport=compare&profile=burst&repetitions=1"));
  assert.match(await embedded.locator("h1").textContent(), /WebSocket mode against HTTP stateless/);
  const link = await embedded.getByTestId("open-in-playground").getAttribute("href");
  assert.match(link, /\/\?transport=compare&profile=burst&scenario=fix-sample-project/);
  assert.doesNotMatch(link, /autorun|embed/);
  await embedded.close();
});

test("the keyboard works the tabs, runs the agent with Ctrl+Enter and follows Run and Stop", async () => {
  const slow = await startServer(["--tokens-per-second", "20"]);
  try {
    const page = await browser.newPage();
    await page.goto(slow.url + plain("/?transport=ws&scenario="));
    // The view tabs: one tab stop, arrows move and select, each controls the one panel.
    const overview = page.getByTestId("tab-overview");
    await overview.waitFor();
    assert.equal(await overview.getAttribute("tabindex"), "0");
    assert.equal(await page.getByTestId("tab-chat").getAttribute("tabindex"), "-1");
    assert.equal(await overview.getAttribute("aria-controls"), "view-panel");
    assert.equal(
      await page.locator("#view-panel").getAttribute("aria-labelledby"),
      "tab-overview",
    );
    await overview.focus();
    await page.keyboard.press("ArrowRight");
    assert.equal(await page.getByTestId("tab-chat").getAttribute("aria-selected"), "true");
    assert.equal(await page.evaluate(() => document.activeElement.id), "tab-chat");
    await page.keyboard.press("End");
    assert.equal(await page.getByTestId("tab-agent").getAttribute("aria-selected"), "true");
    await page.keyboard.press("ArrowRight");
    assert.equal(await page.getByTestId("tab-overview").getAttribute("aria-selected"), "true");
    await page.keyboard.press("ArrowLeft");
    assert.equal(await page.locator("#view-panel").getAttribute("aria-labelledby"), "tab-agent");

    // Ctrl+Enter in the task runs it; the task and Run disable themselves and the focus moves
    // to Stop.
    await page.getByTestId("task").focus();
    await page.keyboard.press("Control+Enter");
    await page.waitForFunction(
      () => document.querySelector('[data-testid="run-status"]').textContent === "running",
    );
    const focused = () => page.evaluate(() => document.activeElement?.dataset.testid);
    assert.equal(await focused(), "stop", "the run started: the focus is on Stop");
    // Stop from the keyboard: Stop disables itself and the focus moves to Run.
    await page.keyboard.press("Enter");
    await waitFinished(page);
    assert.equal(await page.getByTestId("run-status").textContent(), "stopped");
    assert.equal(await focused(), "run", "Stop disabled itself: the focus is on Run");
    await page.keyboard.press("Enter");
    await page.waitForFunction(
      () => document.querySelector('[data-testid="run-status"]').textContent === "running",
    );
    assert.equal(await focused(), "stop", "Run disabled itself: the focus is on Stop");
    await page.getByTestId("stop").click();
    await waitFinished(page);
    assert.equal(await focused(), "run");
    // Every scrolling region takes the focus.
    for (const testId of ["timeline", "conversation"]) {
      const focusable = await page.evaluate(
        (id) => document.querySelector(`[data-testid="${id}"]`).closest("[tabindex]")?.tabIndex,
        testId,
      );
      assert.equal(focusable, 0, testId);
    }
    await page.close();
  } finally {
    await slow.stop();
  }
});

/** GET `path` with `Accept-Encoding: encoding`: status, headers and the body's length. */
function fetchRaw(path, encoding) {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      server.url + path,
      { headers: encoding ? { "accept-encoding": encoding } : {} },
      (response) => {
        let length = 0;
        response.on("data", (chunk) => (length += chunk.length));
        response.on("end", () => resolve({ status: response.statusCode, headers: response.headers, length }));
      },
    );
    request.on("error", reject);
    request.end();
  });
}

test("static files arrive precompressed, the hashed chunk cached for good", async () => {
  const dist = process.env.TETHER_DIST;
  const pkg = readdirSync(`${dist}/pkg`);
  const chunk = pkg.find((name) => /^split_agent_view\.[0-9a-f]{16}\.wasm$/.test(name));
  assert.ok(chunk, pkg.join(", "));
  const sizes = {};
  for (const path of ["/", "/pkg/tether_playground_bg.wasm", "/pkg/tether_playground.js", `/pkg/${chunk}`, "/style/main.css"]) {
    const file = path === "/" ? "index.html" : path.slice(1);
    const raw = readFileSync(`${dist}/${file}`).length;
    const br = await fetchRaw(path, "gzip, deflate, br");
    assert.equal(br.status, 200, path);
    assert.equal(br.headers["content-encoding"], "br", path);
    // A cache keeps one copy per encoding (the CORS layer adds the preflight's header too).
    assert.ok(br.headers.vary.split(/,\s*/).includes("accept-encoding"), `${path}: vary ${br.headers.vary}`);
    assert.ok(br.length < raw, `${path}: ${br.length} bytes brotli'd of ${raw}`);
    const gz = await fetchRaw(path, "gzip");
    assert.equal(gz.headers["content-encoding"], "gzip", path);
    assert.ok(br.length <= gz.length && gz.length < raw, `${path}: gzip ${gz.length}`);
    const plain = await fetchRaw(path, "");
    assert.equal(plain.headers["content-encoding"], undefined, path);
    assert.equal(plain.length, raw, path);
    const cache = br.headers["cache-control"];
    if (path.includes("split_agent_view")) {
      assert.equal(cache, "public, max-age=31536000, immutable", path);
    } else {
      assert.equal(cache, "no-cache", path);
    }
    sizes[path] = { raw, gzip: gz.length, brotli: br.length };
  }
  // The wasm is served as wasm, so the browser compiles it while it streams in.
  const wasm = await fetchRaw("/pkg/tether_playground_bg.wasm", "br");
  assert.equal(wasm.headers["content-type"], "application/wasm");
  // What the browser itself received for the page and both modules.
  const page = await browser.newPage();
  await page.goto(server.url + plain("/?transport=ws&autorun=1"));
  await waitFinished(page);
  const received = await page.evaluate(() =>
    performance
      .getEntriesByType("resource")
      .filter((e) => e.name.endsWith(".wasm"))
      .map((e) => ({ name: e.name.split("/").pop(), transfer: e.encodedBodySize, decoded: e.decodedBodySize })),
  );
  // The main module, the agent view's and the chunks it shares with awk and jq; not awk's or
  // jq's own modules, which load the first time a command line runs them (no run here does).
  const names = received.map((entry) => entry.name);
  assert.ok(names.includes("tether_playground_bg.wasm"), JSON.stringify(received));
  assert.ok(names.some((name) => name.startsWith("split_agent_view.")), JSON.stringify(received));
  assert.ok(!names.some((name) => name.startsWith("split_sandbox_")), JSON.stringify(received));
  assert.ok(names.every((name) => /^(tether_playground_bg|split_agent_view\.|chunk_\d+\.)/.test(name)), JSON.stringify(received));
  for (const entry of received) {
    // A chunk of a few hundred bytes cannot shrink much; every module of size does.
    const ratio = entry.decoded > 4096 ? 0.6 : 1;
    assert.ok(entry.transfer > 0 && entry.transfer < entry.decoded * ratio, JSON.stringify(entry));
  }
  console.log("transfer sizes:", JSON.stringify({ sizes, received }));
  await page.close();
});
