// Benchmark (not a test): the playground's Compare, run as a user would, for conditions given as
// the page's own URL settings — to hold against `cargo xtask bench -- --task …` for the same
// conditions (BENCHMARKS.md, "Part 3").
//
//   TETHER_SERVER_BIN=target/release/tether-server TETHER_DIST=dist CHROMIUM=/usr/bin/chromium \
//     node tests/e2e/bench/page-compare.mjs \
//     "transport=compare&task_length=long&profile=spark&link=home-uplink&api_costs=hosted&repetitions=5"
//
// It starts the server as `cargo xtask run` does (`--allow-client-conditions`, the built page,
// a store in a temporary directory, every other flag at its default — as the bench's server),
// opens the page in headless Chromium with those settings and `autorun=1`, waits for the
// comparison to finish (printing each repetition as it ends) and prints what the page shows:
// the estimate its Run button gave before the run beside the time the run took (first request
// of the warm-up to the last leg's end, and until its first result), the speedup measured and
// with the modelled waits, every row of its "each leg" table (median [range] per part), every
// repetition with its order and ratio, and the saving from the medians, `1 − WebSocket ÷ HTTP`
// — the bench's figure — of the end-to-end times and of the measured ones.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchBrowser } from "../server.mjs";

const settings =
  process.argv[2] ||
  "transport=compare&task_length=long&profile=spark&link=home-uplink&api_costs=hosted&repetitions=5";
const TIMEOUT_MS = Number(process.env.TIMEOUT_MS || 30 * 60_000);

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (see the comment at the top of this file)`);
  return value;
}

async function serve(dataDir) {
  const child = spawn(
    required("TETHER_SERVER_BIN"),
    ["--addr", "127.0.0.1:0", "--static-dir", required("TETHER_DIST"), "--data-dir", dataDir, "--allow-client-conditions"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const url = await new Promise((resolve, reject) => {
    let buffered = "";
    child.stdout.on("data", (chunk) => {
      buffered += chunk;
      const match = buffered.match(/listening on (http:\/\/\S+)/);
      if (match) resolve(match[1]);
    });
    child.on("exit", (code) => reject(new Error(`the server exited with code ${code}`)));
  });
  return { url, stop: () => child.kill("SIGTERM") };
}

/** "11.8 s" / "812 ms" / "1,234 ms" → milliseconds. */
function ms(text) {
  const match = text.replace(/,/g, "").match(/([\d.]+)\s*(ms|s)\b/);
  if (!match) return NaN;
  return Number(match[1]) * (match[2] === "s" ? 1000 : 1);
}

const dataDir = mkdtempSync(join(tmpdir(), "tether-page-compare-"));
const server = await serve(dataDir);
const browser = await launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (error) => console.error("page error:", error.message));
  const started = new Date();
  console.log(`page: ${server.url}/?${settings}&autorun=1 (started ${started.toISOString()})`);
  await page.goto(`${server.url}/?${settings}&autorun=1`);
  await page.getByTestId("run-status").waitFor({ timeout: 60_000 });
  const estimate = page.getByTestId("run-estimate");
  const estimatedMs = Number(await estimate.getAttribute("data-ms"));
  console.log(`estimate before the run:${await estimate.textContent()} (${(estimatedMs / 1000).toFixed(1)} s)`);
  // The run's wall-clock time, from when the page says it runs to when it says it is done, and
  // until its first result (a repetition with both legs), polled every 100 ms.
  let said = "";
  let began = null;
  let firstResult = null;
  for (let waited = 0; ; waited += 100) {
    const status = await page.getByTestId("run-status").textContent();
    if (status === "running" && began === null) began = Date.now();
    const speedup = await page.getByTestId("speedup").textContent();
    if (firstResult === null && /×$/.test(speedup)) firstResult = Date.now();
    const rows = await page.locator('[data-testid="compare-repetition"], [data-testid="compare-warm-up"]').allTextContents();
    const now = rows.join("\n");
    if (now !== said) {
      said = now;
      console.log(`[${Math.round(waited / 1000)} s]\n${now}`);
    }
    if (status !== "running" && began !== null) break;
    if (waited > TIMEOUT_MS) throw new Error("the comparison did not finish in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const tookMs = Date.now() - began;
  const status = await page.getByTestId("run-status").textContent();
  if (status !== "done") {
    throw new Error(`the comparison ${status}: ${await page.locator('[data-testid="error"]').allTextContents()}`);
  }
  console.log(`finished ${new Date().toISOString()}`);
  console.log(
    `took ${(tookMs / 1000).toFixed(1)} s, estimated ${(estimatedMs / 1000).toFixed(1)} s ` +
      `(the estimate ${((estimatedMs / tookMs - 1) * 100).toFixed(0)} % off); ` +
      `first result after ${((firstResult - began) / 1000).toFixed(1)} s`,
  );
  // What starting a leg costs (the estimate's LEG_SETUP_MS), from the page's own record of
  // every leg: the gap from one leg's last response to the next leg's first request.
  const stored = JSON.parse(await page.evaluate(() => localStorage.getItem("tether.last-run")));
  const spans = stored.legs
    .map((leg) => leg.run.turns)
    .filter((turns) => turns.length > 0)
    .map((turns) => [turns[0].sent_at - (turns[0].lost_ms || 0), turns.at(-1).completed_at]);
  const gaps = spans.slice(1).map(([start], i) => start - spans[i][1]).sort((a, b) => a - b);
  const median = gaps[Math.floor(gaps.length / 2)];
  console.log(
    `between legs: median ${median.toFixed(0)} ms [${gaps[0].toFixed(0)}–${gaps.at(-1).toFixed(0)}] ` +
      `over ${gaps.length} gaps (one leg's last response to the next one's first request)`,
  );
  console.log(`conditions: ${await page.getByTestId("conditions-applied").textContent()}`);
  const total = await page.getByTestId("speedup-total").allTextContents();
  console.log(
    `speedup, measured: ${await page.getByTestId("speedup").textContent()}` +
      (total.length ? `; with the modelled waits: ${total[0]}` : " (nothing modelled)"),
  );
  console.log(`said: ${await page.getByTestId("speedup-text").textContent()}`);
  console.log(`why: ${await page.getByTestId("speedup-why").textContent()}`);
  console.log(`explained: ${await page.getByTestId("speedup-explained").textContent()}`);
  console.log("each leg, median (range):");
  for (const row of await page.locator(".compare-totals tbody tr").all()) {
    const cells = await row.locator("th, td").allTextContents();
    console.log(`  ${cells.join(" | ")}`);
  }
  const totals = await page.getByTestId("compare-end-to-end").locator("td").allTextContents();
  const [ws, http] = totals.slice(0, 2).map(ms);
  const measured = await page.getByTestId("compare-measured").locator("td").allTextContents();
  const [wsMeasured, httpMeasured] = measured.slice(0, 2).map(ms);
  console.log(
    `measured only (end to end less the modelled waits): ${((1 - wsMeasured / httpMeasured) * 100).toFixed(1)}% ` +
      `faster (medians ${(wsMeasured / 1000).toFixed(2)} s vs ${(httpMeasured / 1000).toFixed(2)} s)`,
  );
  const savings = [];
  for (const row of await page.getByTestId("compare-repetition").all()) {
    const cells = await row.locator("th, td").allTextContents();
    const [w, h] = [ms(cells[2]), ms(cells[3])];
    savings.push(((1 - w / h) * 100).toFixed(1));
  }
  console.log(
    `WebSocket vs HTTP stateless: ${((1 - ws / http) * 100).toFixed(1)}% faster end to end (medians ` +
      `${(ws / 1000).toFixed(2)} s vs ${(http / 1000).toFixed(2)} s); per repetition: ${savings.join(", ")} %`,
  );
  await page.close();
} finally {
  await browser.close();
  server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
