// Benchmark (not a test): how long the playground takes to show and to open its Agent tab on a
// slow network and a slow phone, emulated in Chromium through the DevTools protocol.
//
//   TETHER_SERVER_BIN=… TETHER_DIST=… CHROMIUM=/usr/bin/chromium node tests/e2e/bench/load.mjs
//
// Each run is a fresh browser context (an empty cache) with, over CDP,
// `Network.emulateNetworkConditions` at DevTools' presets — "4G" (Fast 4G: 9 Mbit/s down,
// 1.5 up, 165 ms of latency) and "slow 4G" (1.6 Mbit/s down, 750 kbit/s up, 562.5 ms) — and
// `Emulation.setCPUThrottlingRate` 4 (a mid-range phone). Measured, medians of REPEAT runs:
//
// - first paint: the `first-contentful-paint` of the page (`performance` paint timing);
// - app: until the overview — the app itself, its wasm loaded and run — is drawn;
// - Agent tab, clicked at once: from clicking the tab as soon as the app is there until the
//   agent view's Run button is;
// - Agent tab, after reading: the same once the page has been open 10 s (the page fetches the
//   agent's module in the background meanwhile).
//
// TETHER_DIST may list several builds, comma-separated, to compare them.
import { spawn } from "node:child_process";
import { launchBrowser } from "../server.mjs";

const REPEAT = Number(process.env.REPEAT || 3);
const NETWORKS = {
  "4G": { latency: 60 * 2.75, downloadThroughput: (9e6 / 8) * 0.9, uploadThroughput: (1.5e6 / 8) * 0.9 },
  "slow 4G": { latency: 150 * 3.75, downloadThroughput: (1.6e6 / 8) * 0.9, uploadThroughput: (750e3 / 8) * 0.9 },
};

async function serve(dist) {
  const child = spawn(
    process.env.TETHER_SERVER_BIN,
    ["--addr", "127.0.0.1:0", "--static-dir", dist, "--data-dir", ":memory:"],
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

/** The first view the app draws: the overview, or (an older build) the chat view. */
const APP = '[data-testid="overview"], [data-testid="prompt"]';

async function once(browser, url, network, wait) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", { offline: false, ...network });
  await cdp.send("Emulation.setCPUThrottlingRate", { rate: 4 });
  const bytes = { total: 0 };
  cdp.on("Network.loadingFinished", (e) => (bytes.total += e.encodedDataLength));
  await page.goto(url, { waitUntil: "commit", timeout: 120_000 });
  await page.waitForSelector(APP, { timeout: 120_000 });
  const app = await page.evaluate(() => performance.now());
  const paint = await page.evaluate(
    () => performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? null,
  );
  if (wait) await page.waitForTimeout(wait);
  const clicked = await page.evaluate(() => performance.now());
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("run").waitFor({ timeout: 120_000 });
  const agent = (await page.evaluate(() => performance.now())) - clicked;
  const firstLoadBytes = bytes.total;
  await context.close();
  return { paint, app, agent, firstLoadBytes };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const browser = await launchBrowser();
for (const dist of process.env.TETHER_DIST.split(",")) {
  const server = await serve(dist);
  try {
    for (const [name, network] of Object.entries(NETWORKS)) {
      const now = [];
      const later = [];
      for (let i = 0; i < REPEAT; i++) {
        now.push(await once(browser, server.url, network, 0));
        later.push(await once(browser, server.url, network, 10_000));
      }
      const ms = (runs, key) => Math.round(median(runs.map((r) => r[key])));
      console.log(
        JSON.stringify({
          dist,
          network: name,
          firstPaintMs: ms(now, "paint"),
          appMs: ms(now, "app"),
          agentTabAtOnceMs: ms(now, "agent"),
          agentTabAfter10sMs: ms(later, "agent"),
          bytesUntilAgentAtOnce: ms(now, "firstLoadBytes"),
          runs: now.map((r) => [Math.round(r.paint), Math.round(r.app), Math.round(r.agent)]),
        }),
      );
    }
  } finally {
    server.stop();
  }
}
await browser.close();
