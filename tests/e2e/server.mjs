// Starts and stops a real tether-server for end-to-end tests, and launches headless Chromium.
// The server binds 127.0.0.1 port 0 and prints "Tether listening on http://…" as its first
// line; we read the URL from there.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";

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

/** Starts the server with extra CLI arguments; resolves to { url, stop }. */
export async function startServer(extraArgs = []) {
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
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    },
  };
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
