// The Codex CLI, unmodified (`@openai/codex`, pinned in tests/conformance/codex/package.json),
// against a real tether-server: `codex exec` plays the `codex-smoke` scenario
// (tests/conformance/codex/scenarios/), whose model runs two commands through Codex's own shell
// tool, each built on the last one's output, then answers. Codex really runs them, in a
// temporary work directory, and the files they write are checked. Which transport Codex used is
// checked server-side through /metrics, as docs/protocol.md §7 asks: Codex falls back to HTTP
// silently, so its success alone proves nothing about WebSocket mode.
// Needs TETHER_SERVER_BIN; run through tests/conformance/run.sh, which installs the CLI.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { engineTestsSkipped, metricSamples, startLlmsim, startServer } from "../e2e/server.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const CODEX = join(HERE, "codex", "node_modules", ".bin", "codex");
const SCENARIOS = join(HERE, "codex", "scenarios");
/** A whole `codex exec` run; it takes about a second here. */
const RUN_TIMEOUT_MS = 60_000;
const ANSWER = "Done: proof.txt and upper.txt are written.";

const cleanups = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A tether-server with the Codex scenarios, stopped after the file's tests. */
async function server(extraArgs = [], tokensPerSecond = 100000) {
  // startServer passes --static-dir $TETHER_DIST; these tests need no static files.
  process.env.TETHER_DIST ||= "/nonexistent";
  const started = await startServer([
    "--tokens-per-second",
    String(tokensPerSecond),
    "--scenario-dir",
    SCENARIOS,
    ...extraArgs,
  ]);
  cleanups.push(() => started.stop());
  return started;
}

/**
 * Runs `codex exec PROMPT` against `url` in a fresh work directory, with a fresh CODEX_HOME
 * whose config.toml names Tether as the model provider. Resolves to the exit code, the output,
 * the last message and the work directory; rejects if Codex has not finished in time.
 */
function codexExec(url, prompt, { config = [], root = [], env = {}, model = "codex-smoke" } = {}) {
  assert.ok(existsSync(CODEX), `${CODEX} is missing: run tests/conformance/run.sh (it installs the Codex CLI)`);
  const home = tempDir("tether-codex-home-");
  const work = tempDir("tether-codex-work-");
  // What a user writes to point Codex at Tether: a Responses provider that supports WebSockets.
  writeFileSync(
    join(home, "config.toml"),
    [
      `model = "${model}"`,
      'model_provider = "tether"',
      ...root,
      "",
      "[model_providers.tether]",
      'name = "Tether"',
      `base_url = "${url}/v1"`,
      'wire_api = "responses"',
      'env_key = "TETHER_CODEX_KEY"',
      "supports_websockets = true",
      "",
      ...config,
      "",
    ].join("\n"),
  );
  const lastMessage = join(home, "last-message.txt");
  const args = ["exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", "-o", lastMessage, prompt];
  return new Promise((resolve, reject) => {
    // A process group of its own: `codex` is a node launcher that runs the native binary as its
    // child, and a timeout must stop both (and whatever commands they started).
    const child = spawn(CODEX, args, {
      cwd: work,
      env: { ...hermeticEnv(), CODEX_HOME: home, TETHER_CODEX_KEY: "test", ...env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is gone already.
      }
      child.stdout.destroy();
      child.stderr.destroy();
      reject(new Error(`codex exec did not finish within ${RUN_TIMEOUT_MS} ms; its output:\n${output}`));
    }, RUN_TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      const last = existsSync(lastMessage) ? readFileSync(lastMessage, "utf8") : null;
      resolve({ code, output, last, work });
    });
  });
}

/**
 * This process's environment without the variables that would steer Codex elsewhere: its own
 * settings, OpenAI's, and proxies (the server is on 127.0.0.1).
 */
function hermeticEnv() {
  const steering = /^(CODEX_|OPENAI_|RUST_LOG$|(HTTPS?|ALL|NO)_PROXY$)/i;
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !steering.test(name)));
}

/**
 * The value of every sample in /metrics, by its name and labels as printed, less its value in
 * `before` (an earlier call's samples): what one run added, also on a deployment that other
 * tests used first (summed over its replicas).
 */
async function metrics(started, before = new Map()) {
  const samples = await metricSamples(started);
  const metric = (name) => {
    assert.ok(samples.has(name), `/metrics has no ${name}`);
    return samples.get(name) - (before.get(name) ?? 0);
  };
  metric.samples = samples;
  return metric;
}

/** The scenario ran to its answer and both commands really ran in the work directory. */
function assertToolLoopRan({ code, output, last, work }) {
  assert.equal(code, 0, `codex exec failed; its output:\n${output}`);
  assert.equal(last?.trim(), ANSWER, `the last message; codex's output:\n${output}`);
  assert.equal(readFileSync(join(work, "proof.txt"), "utf8"), "tether\n");
  assert.equal(readFileSync(join(work, "upper.txt"), "utf8"), "TETHER\n");
}

test("Codex CLI over WebSocket mode: one connection, a prewarm, then every turn a continuation from the connection cache", async () => {
  const started = await server();
  const before = (await metrics(started)).samples;
  const run = await codexExec(started.url, "Write proof.txt, then its upper-case copy.");
  assertToolLoopRan(run);
  const metric = await metrics(started, before);
  assert.equal(metric("tether_ws_connections_total"), 1, "one WebSocket for the whole session");
  assert.equal(metric('tether_responses_total{transport="http"}'), 0, "no HTTP fallback");
  assert.equal(metric('tether_responses_total{transport="sse"}'), 0, "no HTTP fallback");
  // The `generate: false` prewarm, then the three model turns (two tool calls, the answer).
  assert.equal(metric('tether_responses_total{transport="ws"}'), 4);
  // Each turn sent only its new items after previous_response_id, found in the connection's
  // cache (the first one continues the prewarm).
  assert.equal(metric('tether_cache_lookups_total{result="hit"}'), 3);
  assert.equal(metric('tether_cache_lookups_total{result="store"}'), 0);
  assert.equal(metric('tether_cache_lookups_total{result="miss"}'), 0);
});

test("Codex CLI falls back to HTTP when the server refuses the upgrade (426), and the same loop runs", async () => {
  const started = await server(["--no-websocket"]);
  const before = (await metrics(started)).samples;
  const beforeEach = await samplesPerReplica(started);
  const run = await codexExec(started.url, "Write proof.txt, then its upper-case copy.");
  assertToolLoopRan(run);
  const metric = await metrics(started, before);
  assert.equal(metric("tether_ws_connections_total"), 0);
  // Streaming POSTs, each with the whole conversation (Codex sends store: false).
  assert.equal(metric('tether_responses_total{transport="sse"}'), 3);
  assert.equal(metric('tether_responses_total{transport="ws"}'), 0);
  // Behind a balancer (the deployment suite), all three went to one replica: Codex sent back
  // the turn-state token of the first answer, and the balancer routes on it.
  const sse = 'tether_responses_total{transport="sse"}';
  const perReplica = (await samplesPerReplica(started)).map(
    (samples, i) => (samples.get(sse) ?? 0) - (beforeEach[i].get(sse) ?? 0),
  );
  assert.deepEqual(
    perReplica.filter((n) => n > 0),
    [3],
    `the turn's requests by replica: ${perReplica}`,
  );
});

/** The samples of /metrics of each of the server's replicas (one for a server of its own). */
async function samplesPerReplica(started) {
  const each = [];
  for (const url of started.metricsUrls) each.push(await metricSamples({ metricsUrls: [url] }));
  return each;
}

/**
 * An OTLP/HTTP receiver on 127.0.0.1 for Codex's metrics exporter (protocol "json"): it keeps
 * every exported body and answers at once, so Codex's exit is not delayed. Stopped after the
 * file's tests.
 */
async function otlpReceiver() {
  const { createServer } = await import("node:http");
  const bodies = [];
  const receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      bodies.push(body);
      response.writeHead(200, { "content-type": "application/json" });
      response.end("{}");
    });
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => receiver.close(resolve)));
  const base = `http://127.0.0.1:${receiver.address().port}`;
  return { base, endpoint: `${base}/v1/metrics`, bodies };
}

/** Count and sum of the histogram `name` over every exported body (delta temporality). */
function histogram(bodies, name) {
  let count = 0;
  let sum = 0;
  for (const body of bodies) {
    for (const resource of JSON.parse(body).resourceMetrics ?? []) {
      for (const scope of resource.scopeMetrics ?? []) {
        for (const metric of scope.metrics ?? []) {
          if (metric.name !== name) continue;
          for (const point of metric.histogram?.dataPoints ?? []) {
            count += Number(point.count);
            sum += Number(point.sum);
          }
        }
      }
    }
  }
  return { count, sum };
}

const TIMING_HISTOGRAMS = [
  "codex.responses_api_overhead.duration_ms",
  "codex.responses_api_inference_time.duration_ms",
  "codex.responses_api_engine_iapi_ttft.duration_ms",
  "codex.responses_api_engine_service_ttft.duration_ms",
  "codex.responses_api_engine_iapi_tbt.duration_ms",
  "codex.responses_api_engine_service_tbt.duration_ms",
];

test("Codex CLI with runtime metrics on asks for responsesapi.websocket_timing and records all six values of every response", async () => {
  // 1,000 tokens/s, so the engine's share of each turn is whole milliseconds.
  const started = await server([], 1000);
  const before = (await metrics(started)).samples;
  const { endpoint, bodies } = await otlpReceiver();
  const run = await codexExec(started.url, "Write proof.txt, then its upper-case copy.", {
    config: [
      "suppress_unstable_features_warning = true",
      "[features]",
      "runtime_metrics = true",
      "[otel]",
      `metrics_exporter = { otlp-http = { endpoint = "${endpoint}", protocol = "json" } }`,
    ],
  });
  assertToolLoopRan(run);
  const metric = await metrics(started, before);
  assert.equal(metric('tether_responses_total{transport="ws"}'), 4);
  // One timing event per response — the prewarm and the three model turns — each value
  // recorded by Codex from the event the server sent.
  for (const name of TIMING_HISTOGRAMS) {
    const { count } = histogram(bodies, name);
    assert.equal(count, 4, `${name}: ${bodies.length} export(s) received`);
  }
  const inference = histogram(bodies, "codex.responses_api_inference_time.duration_ms");
  const ttft = histogram(bodies, "codex.responses_api_engine_service_ttft.duration_ms");
  assert.ok(inference.sum > 0, "the engine's time was recorded");
  assert.ok(inference.sum >= ttft.sum, "the engine's total includes its time to first token");
});

test("Codex CLI without runtime metrics does not ask for the timing event, and the server sends none", async () => {
  const { url } = await server([], 1000);
  const { endpoint, bodies } = await otlpReceiver();
  const run = await codexExec(url, "Write proof.txt, then its upper-case copy.", {
    config: ["[otel]", `metrics_exporter = { otlp-http = { endpoint = "${endpoint}", protocol = "json" } }`],
  });
  assertToolLoopRan(run);
  // Codex records the event whenever it arrives, so its absence shows the server's gate.
  for (const name of TIMING_HISTOGRAMS) {
    assert.equal(histogram(bodies, name).count, 0, name);
  }
});

/** Every span of OTLP/JSON trace bodies, with its resource's service name. */
function exportedSpans(bodies) {
  const spans = [];
  for (const body of bodies) {
    for (const resource of JSON.parse(body).resourceSpans ?? []) {
      const service = resource.resource?.attributes?.find((a) => a.key === "service.name")?.value?.stringValue;
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) spans.push({ ...span, service });
      }
    }
  }
  return spans;
}

test(
  "Codex's trace and Tether's are one: every response is a span under the Codex span that sent it, with the server's stages under it",
  // The deployment's replicas run without an exporter; a server of its own is needed.
  { skip: process.env.TETHER_BASE_URL ? "needs a server of its own (--otlp-endpoint)" : false },
  async () => {
    const { base, bodies } = await otlpReceiver();
    const started = await server(["--otlp-endpoint", base, "--otlp-protocol", "http/json"]);
    const run = await codexExec(started.url, "Write proof.txt, then its upper-case copy.", {
      config: ["[otel]", `trace_exporter = { otlp-http = { endpoint = "${base}/v1/traces", protocol = "json" } }`],
    });
    assertToolLoopRan(run);
    // The server exports its last spans as it stops; Codex exported its own as it exited.
    await started.stop();
    const spans = exportedSpans(bodies);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const responses = spans.filter((span) => span.service === "tether-server" && span.name === "tether.response");
    // The prewarm and the three model turns, each sent from a Codex span of its own.
    assert.equal(responses.length, 4, `spans: ${spans.length}`);
    const senders = new Set();
    for (const response of responses) {
      const sender = byId.get(response.parentSpanId);
      assert.ok(sender, `the parent of ${response.spanId} is a span Codex exported`);
      assert.notEqual(sender.service, "tether-server");
      assert.equal(sender.traceId, response.traceId, "one trace");
      senders.add(sender.spanId);
      const children = spans.filter((span) => span.parentSpanId === response.spanId).map((span) => span.name);
      for (const stage of ["tether.render", "tether.validate", "tether.classify", "tether.generate", "tether.bill"]) {
        assert.ok(children.includes(stage), `${stage} under the response: ${children}`);
      }
    }
    assert.equal(senders.size, 4, "each response under the request that sent it");
  },
);

// --- Through Tether to a real upstream engine: llmsim (crates.io, `cargo xtask setup`) ----------

test(
  "Codex CLI runs its tool loop through Tether to llmsim, a real upstream, over WebSocket mode with runtime metrics",
  { skip: engineTestsSkipped() ?? false },
  async () => {
    // llmsim knows nothing of Codex: its script calls Codex's exec_command, then answers.
    const llmsim = await startLlmsim({
      turns: [
        { type: "tool_calls", calls: [{ name: "exec_command", arguments: { cmd: "echo tether > proof.txt" } }] },
        { type: "assistant", text: "Done: proof.txt is written." },
      ],
      on_exhausted: "error",
    });
    cleanups.push(() => llmsim.stop());
    const started = await server(["--engine", llmsim.url]);
    const before = (await metrics(started)).samples;
    const { endpoint, bodies } = await otlpReceiver();
    const run = await codexExec(started.url, "Write proof.txt.", {
      model: "gpt-5",
      // Codex offers its hosted web_search tool by default, which no engine but OpenAI's can
      // run; Tether refuses it rather than drop it (docs/engines.md), so it is turned off.
      root: ['web_search = "disabled"', "suppress_unstable_features_warning = true"],
      config: [
        "[features]",
        "runtime_metrics = true",
        "[otel]",
        `metrics_exporter = { otlp-http = { endpoint = "${endpoint}", protocol = "json" } }`,
      ],
    });
    assert.equal(run.code, 0, `codex exec failed; its output:\n${run.output}`);
    assert.equal(run.last?.trim(), "Done: proof.txt is written.", run.output);
    assert.equal(readFileSync(join(run.work, "proof.txt"), "utf8"), "tether\n");
    const metric = await metrics(started, before);
    assert.equal(metric("tether_ws_connections_total"), 1);
    assert.equal(metric('tether_responses_total{transport="http"}'), 0);
    assert.equal(metric('tether_responses_total{transport="sse"}'), 0);
    // The prewarm (no engine call) and two model turns, both continuations from the cache.
    assert.equal(metric('tether_responses_total{transport="ws"}'), 3);
    assert.equal(metric('tether_cache_lookups_total{result="hit"}'), 2);
    const upstream = llmsim.url;
    assert.equal(metric(`tether_engine_requests_total{engine="${upstream}",outcome="ok",upstream="${upstream}"}`), 2);
    // Each response's timing event reached Codex; the engine's part came from llmsim's stream.
    for (const name of TIMING_HISTOGRAMS) {
      assert.equal(histogram(bodies, name).count, 3, name);
    }
  },
);

test(
  "Codex CLI falls back to HTTP in front of llmsim too, each turn the whole conversation",
  { skip: engineTestsSkipped() ?? false },
  async () => {
    const llmsim = await startLlmsim({
      turns: [
        { type: "tool_calls", calls: [{ name: "exec_command", arguments: { cmd: "echo tether > proof.txt" } }] },
        { type: "assistant", text: "Done: proof.txt is written." },
      ],
      on_exhausted: "error",
    });
    cleanups.push(() => llmsim.stop());
    const started = await server(["--engine", llmsim.url, "--no-websocket"]);
    const before = (await metrics(started)).samples;
    const run = await codexExec(started.url, "Write proof.txt.", { model: "gpt-5", root: ['web_search = "disabled"'] });
    assert.equal(run.code, 0, `codex exec failed; its output:\n${run.output}`);
    assert.equal(readFileSync(join(run.work, "proof.txt"), "utf8"), "tether\n");
    const metric = await metrics(started, before);
    assert.equal(metric('tether_responses_total{transport="sse"}'), 2);
    assert.equal(metric("tether_ws_connections_total"), 0);
  },
);
