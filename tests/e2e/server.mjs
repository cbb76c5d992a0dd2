// Starts and stops a real tether-server for end-to-end tests, and launches headless Chromium.
// The server binds 127.0.0.1 port 0 and prints "Tether listening on http://…" as its first
// line; we read the URL from there.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

/**
 * What most tests run: the short demo on this machine — no link, the server's own API costs —
 * on the server's default model (the one `--tokens-per-second` paces). The page itself starts
 * from the long rollout over a home uplink with hosted costs; a test that wants that gives
 * no such parameters.
 */
export const PLAIN = "task_length=short&link=loopback&api_costs=server&profile=tether-sim";

/** `path` (`/`, `/?a=b`) with {@link PLAIN} first: the path's own values win. */
export function plain(path = "/") {
  const [base, query] = path.split("?");
  return `${base}?${PLAIN}${query ? `&${query}` : ""}`;
}

/** Flags that keep Chromium off the closed network and working as root. */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

function required(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run these tests through \`cargo xtask test\``);
  return value;
}

/**
 * Starts the server with extra CLI arguments; resolves to { url, metricsUrls, stop }.
 *
 * With TETHER_BASE_URL set (a deployment, `cargo xtask deploy --test`), nothing is started: the
 * tests run against that URL, `--no-websocket` maps to TETHER_NO_WEBSOCKET_URL (a port of the
 * balancer that refuses upgrades), and `metricsUrls` lists every replica (TETHER_METRICS_URLS)
 * so that /metrics can be summed over them ({@link metricSamples}).
 */
export async function startServer(extraArgs = []) {
  if (process.env.TETHER_BASE_URL) return existingServer(process.env.TETHER_BASE_URL, extraArgs);
  // Each test server gets a private in-memory store unless the caller picks a directory.
  const store = extraArgs.includes("--data-dir") ? [] : ["--data-dir", ":memory:"];
  const child = spawn(
    required("TETHER_SERVER_BIN"),
    ["--addr", "127.0.0.1:0", "--static-dir", required("TETHER_DIST"), ...store, ...extraArgs],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the server did not start within 30 s")), 30_000);
    let buffered = "";
    child.stdout.on("data", (chunk) => {
      buffered += chunk;
      const match = buffered.match(/listening on (http:\/\/\S+)/);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited early with code ${code}`));
    });
  });
  return {
    url,
    metricsUrls: [url],
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    },
    /** Ends the server at once, as a crash would: no graceful end of the responses under way. */
    async kill() {
      if (child.exitCode === null) {
        child.kill("SIGKILL");
        await once(child, "exit");
      }
    },
  };
}

/** The deployment at `base` as a started server; the flags it cannot honour are refused. */
function existingServer(base, extraArgs) {
  let url = base.replace(/\/$/, "");
  // The deployment runs with the conformance suite's scenarios and a store of its own; the
  // speed it was started with serves these tests as well.
  const ignored = new Set(["--tokens-per-second", "--data-dir", "--scenario-dir"]);
  for (let i = 0; i < extraArgs.length; i++) {
    if (extraArgs[i] === "--no-websocket") {
      url = required("TETHER_NO_WEBSOCKET_URL").replace(/\/$/, "");
    } else if (ignored.has(extraArgs[i])) {
      i++;
    } else {
      throw new Error(`startServer: ${extraArgs[i]} cannot be applied to the deployment at ${base}`);
    }
  }
  const listed = (process.env.TETHER_METRICS_URLS || "").split(",").filter(Boolean);
  return { url, metricsUrls: listed.length ? listed : [url], async stop() {} };
}

/** Every sample of /metrics by its name and labels as printed, summed over `server.metricsUrls`. */
export async function metricSamples(server, timeoutMs = 10_000) {
  const samples = new Map();
  for (const url of server.metricsUrls ?? [server.url]) {
    const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
    if (response.status !== 200) throw new Error(`GET ${url}/metrics answered ${response.status}`);
    for (const line of (await response.text()).split("\n")) {
      const match = line.match(/^([^#\s]\S*) (\S+)$/);
      if (match) samples.set(match[1], (samples.get(match[1]) ?? 0) + Number(match[2]));
    }
  }
  return samples;
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: CHROMIUM_ARGS,
  });
}

/** Where screenshots go (a CI artifact directory). */
export function artifactPath(name) {
  const dir = process.env.TETHER_ARTIFACTS || "test-artifacts";
  mkdirSync(dir, { recursive: true });
  return `${dir}/${name}`;
}

/** A port on 127.0.0.1 where nothing listens (one the OS just handed out and took back). */
export async function closedPort() {
  const { createServer } = await import("node:net");
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * Records every layout shift of `page` from its first paint on (call before `goto`); read them
 * with `layoutShiftSince`.
 */
export async function recordLayoutShifts(page) {
  await page.addInitScript(() => {
    window.__layoutShifts = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        window.__layoutShifts.push({
          value: entry.value,
          at: entry.startTime,
          recentInput: entry.hadRecentInput,
          sources: (entry.sources ?? []).map((s) => s.node?.className || s.node?.nodeName || "?"),
        });
      }
    }).observe({ type: "layout-shift", buffered: true });
  });
}

/**
 * The layout shifts since `since` (a `performance.now()` of the page), summed — all of them,
 * even those right after an input, which CLS itself leaves out: stricter than CLS.
 */
export async function layoutShiftSince(page, since) {
  const shifts = await page.evaluate(
    (since) => window.__layoutShifts.filter((s) => s.at >= since),
    since,
  );
  return { total: shifts.reduce((sum, s) => sum + s.value, 0), shifts };
}

/**
 * Runs axe-core (from node_modules, pinned in package.json) on `page` or a frame; resolves to
 * the serious and critical violations, each as "rule: targets".
 */
export async function axeViolations(target) {
  const { createRequire } = await import("node:module");
  const require = createRequire(import.meta.url);
  await target.addScriptTag({ path: require.resolve("axe-core/axe.min.js") });
  const results = await target.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const found = await axe.run(document, { resultTypes: ["violations"] });
    return found.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
    }));
  });
  return results
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}: ${v.help}): ${v.targets.join(" | ")}`);
}

/** Waits until `run-status` (in a page or a frame) is no longer idle or running. */
export async function waitFinished(target, timeout = 60_000) {
  await target.waitForFunction(
    () => {
      const status = document.querySelector('[data-testid="run-status"]')?.textContent;
      return status === "done" || status === "failed" || status === "stopped";
    },
    null,
    { timeout },
  );
}

/**
 * Where `cargo xtask setup` installs llmsim, the OpenAI-compatible server the engine tests put
 * Tether in front of (TETHER_LLMSIM_BIN overrides it); null when it is not there.
 */
export function llmsimBinary() {
  const path =
    process.env.TETHER_LLMSIM_BIN ||
    fileURLToPath(new URL("../../target/tools/llmsim/bin/llmsim", import.meta.url));
  return existsSync(path) ? path : null;
}

/**
 * Why the engine tests cannot run here, or null: llmsim not installed (setup has not run), or
 * the suite runs against a deployment, whose replicas serve the simulator.
 */
export function engineTestsSkipped() {
  if (process.env.TETHER_BASE_URL) return "against a deployment: its replicas serve the simulator, not an engine";
  if (!llmsimBinary()) return "llmsim is not installed (target/tools/llmsim): run `cargo xtask setup`";
  return null;
}

/**
 * llmsim playing `script` (its scripted mode: `{turns: [...], on_exhausted}`) in its instant
 * latency profile, on a port the OS just handed out (tried again if taken meanwhile); resolves
 * to `{ url, stop }`, `url` its OpenAI base URL as `--engine` takes it.
 */
export async function startLlmsim(script) {
  const binary = llmsimBinary();
  if (!binary) throw new Error("llmsim is not installed: run `cargo xtask setup`");
  const dir = mkdtempSync(join(tmpdir(), "tether-llmsim-"));
  const scriptPath = join(dir, "script.json");
  writeFileSync(scriptPath, JSON.stringify(script));
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await closedPort();
    const config = join(dir, "llmsim.toml");
    writeFileSync(
      config,
      `[server]\nport = ${port}\nhost = "127.0.0.1"\n[latency]\nprofile = "instant"\n` +
        `[response]\nscript_path = ${JSON.stringify(scriptPath)}\n`,
    );
    const child = spawn(binary, ["serve", "--config", config], { stdio: "ignore" });
    const listening = await new Promise((resolve) => {
      const deadline = Date.now() + 20_000;
      const poll = async () => {
        if (child.exitCode !== null) return resolve(false);
        try {
          await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1000) });
          return resolve(true);
        } catch {
          if (Date.now() > deadline) return resolve(false);
          setTimeout(poll, 20);
        }
      };
      poll();
    });
    if (listening) {
      return {
        url: `http://127.0.0.1:${port}/openai/v1`,
        async stop() {
          if (child.exitCode === null) {
            child.kill("SIGTERM");
            await once(child, "exit");
          }
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    if (child.exitCode === null) {
      child.kill("SIGKILL");
      await once(child, "exit");
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error("llmsim did not start listening within 20 s (five ports tried)");
}
