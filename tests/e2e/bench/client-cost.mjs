// Benchmark (not a test): what the page does per frame it receives while a run streams.
//
//   TETHER_SERVER_BIN=… TETHER_DIST=… CHROMIUM=/usr/bin/chromium node tests/e2e/bench/client-cost.mjs
//
// The agent view runs a one-turn scenario over WebSocket mode on `burst` (4,000 tokens/s: a
// frame a millisecond, four tokens each): an answer of SHORT or LONG words, written into a
// scenario directory the server loads (`--scenario-dir`). Each size runs REPEAT times after a
// warm-up run, each in a fresh page. Measured:
//
// - `page`: the page's own work per event, as it measures it (the run's `client_ms / events` of
//   the answer's turn, read from the run it keeps in localStorage) — decoding and applying each
//   event, from the poll that had its data to the state that holds it — and per delta
//   (`delta_client_ms / deltas`: the same work on the deltas alone, without the few large
//   frames that end a turn);
// - `main thread`: Chromium's own account (CDP `Performance.getMetrics`, `TaskDuration`) of the
//   renderer's main thread over the run, per frame received, as the marginal cost between the
//   short and the long task (so what every run pays once cancels out): the page's work, the
//   browser's delivery of each frame, and drawing;
// - the same marginal cost for a page that only opens a WebSocket and counts its frames
//   (`bare socket`): the browser's share, which no page code can remove.
//
// TETHER_DIST may list several builds, comma-separated, to compare them.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchBrowser } from "../server.mjs";

const REPEAT = Number(process.env.REPEAT || 5);
const SHORT = 200;
const LONG = 2400;

const words = (n) => Array.from({ length: n }, (_, i) => `word${i % 97}`).join(" ");

/** Two scenarios that answer at once with `SHORT` and `LONG` words. */
function scenarios() {
  const dir = mkdtempSync(join(tmpdir(), "tether-bench-"));
  for (const [name, n] of [["bench-short", SHORT], ["bench-long", LONG]]) {
    const scenario = { name, description: `an answer of ${n} words`, steps: [{ id: "answer", message: words(n) }] };
    writeFileSync(join(dir, `${name}.json`), JSON.stringify(scenario));
  }
  return dir;
}

async function serve(dist) {
  const child = spawn(
    process.env.TETHER_SERVER_BIN,
    ["--addr", "127.0.0.1:0", "--static-dir", dist, "--data-dir", ":memory:", "--scenario-dir", scenarios()],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const url = await new Promise((resolve) => {
    let buffered = "";
    child.stdout.on("data", (chunk) => {
      buffered += chunk;
      const match = buffered.match(/listening on (http:\/\/\S+)/);
      if (match) resolve(match[1]);
    });
  });
  return { url, stop: () => child.kill("SIGTERM") };
}

const scenario = (n) => (n === SHORT ? "bench-short" : "bench-long");

async function metrics(cdp) {
  const { metrics } = await cdp.send("Performance.getMetrics");
  return Object.fromEntries(metrics.map((m) => [m.name, m.value]));
}

/** One run of the agent view on a task of `n` words: frames received, main-thread ms, the page's µs per event. */
async function agentRun(browser, url, n) {
  const page = await browser.newPage();
  let frames = 0;
  page.on("websocket", (ws) => ws.on("framereceived", () => frames++));
  await page.goto(
    `${url}/?task_length=short&link=loopback&api_costs=server&transport=ws&profile=burst&scenario=${scenario(n)}&max_turns=3`,
  );
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("run").waitFor();
  await page.waitForTimeout(500);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const before = await metrics(cdp);
  frames = 0;
  await page.getByTestId("run").click();
  await page.waitForFunction(
    () => ["done", "failed"].includes(document.querySelector('[data-testid="run-status"]').textContent),
    null,
    { timeout: 60_000 },
  );
  const after = await metrics(cdp);
  const kept = await page.evaluate(() => localStorage.getItem("tether.last-run"));
  await page.close();
  let pageUs = null;
  let deltaUs = null;
  const run = kept && JSON.parse(kept).run;
  const answer = run?.turns?.at(-1);
  if (answer && answer.events) pageUs = (answer.client_ms * 1000) / answer.events;
  if (answer && answer.deltas) deltaUs = (answer.delta_client_ms * 1000) / answer.deltas;
  return { frames, taskMs: (after.TaskDuration - before.TaskDuration) * 1000, pageUs, deltaUs };
}

/** The same stream to a page that only counts its frames. */
async function bareRun(browser, url, n) {
  const page = await browser.newPage();
  await page.goto(`${url}/healthz`);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const before = await metrics(cdp);
  const frames = await page.evaluate(
    async ({ url, scenario }) => {
      const ws = new WebSocket(url.replace("http", "ws") + "/v1/responses");
      await new Promise((resolve) => (ws.onopen = resolve));
      let frames = 0;
      const done = new Promise((resolve) => {
        ws.onmessage = (m) => {
          frames++;
          if (m.data.includes('"response.completed"')) resolve();
        };
      });
      ws.send(
        JSON.stringify({ type: "response.create", model: "burst", input: "go", store: false, metadata: { scenario } }),
      );
      await done;
      ws.close();
      return frames;
    },
    { url, scenario: scenario(n) },
  );
  const after = await metrics(cdp);
  await page.close();
  return { frames, taskMs: (after.TaskDuration - before.TaskDuration) * 1000, pageUs: null, deltaUs: null };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function measure(browser, url, one) {
  await one(browser, url, SHORT); // warm-up
  const runs = { short: [], long: [] };
  for (let i = 0; i < REPEAT; i++) {
    runs.short.push(await one(browser, url, SHORT));
    runs.long.push(await one(browser, url, LONG));
  }
  const m = (size, key) => median(runs[size].map((r) => r[key]));
  const marginal = (m("long", "taskMs") - m("short", "taskMs")) / (m("long", "frames") - m("short", "frames"));
  const pageUs = runs.long.map((r) => r.pageUs).filter((x) => x !== null);
  const deltaUs = runs.long.map((r) => r.deltaUs).filter((x) => x !== null);
  return {
    frames: { short: m("short", "frames"), long: m("long", "frames") },
    mainThreadMs: { short: m("short", "taskMs"), long: m("long", "taskMs") },
    mainThreadUsPerFrame: +(marginal * 1000).toFixed(1),
    pageUsPerEvent: pageUs.length ? +median(pageUs).toFixed(1) : null,
    pageUsPerEventRange: pageUs.length ? [Math.min(...pageUs).toFixed(1), Math.max(...pageUs).toFixed(1)] : null,
    pageUsPerDelta: deltaUs.length ? +median(deltaUs).toFixed(1) : null,
    pageUsPerDeltaRange: deltaUs.length ? [Math.min(...deltaUs).toFixed(1), Math.max(...deltaUs).toFixed(1)] : null,
  };
}

const browser = await launchBrowser();
for (const dist of process.env.TETHER_DIST.split(",")) {
  const server = await serve(dist);
  try {
    const bare = await measure(browser, server.url, bareRun);
    const agent = await measure(browser, server.url, agentRun);
    console.log(JSON.stringify({ dist, bare, agent }));
  } finally {
    server.stop();
  }
}
await browser.close();
