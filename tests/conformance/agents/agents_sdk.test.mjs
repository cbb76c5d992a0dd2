// The OpenAI Agents SDK for JavaScript (@openai/agents, pinned in this directory's package.json)
// against a real tether-server over WebSocket mode, set up as its documentation shows a new user:
// `withResponsesWebSocketSession` with the server's `/v1` as the provider's base URL, an agent
// with a function tool, streamed runs chained with `previousResponseId`, a handoff, an agent used
// as another's tool, and a request the server refuses. Node 20 has no global WebSocket; the SDK
// takes the `ws` package's, which sends the upgrade's headers (the API key).
//
// The model is the simulator's `echo-tools` generator: while the conversation does not end with a
// tool output it calls the first tool it is offered, with arguments made from the tool's schema
// (`{"city": "example"}` here), then answers quoting what the tool returned. /metrics shows where
// every model call went: WebSocket responses on one connection a session, nothing over HTTP, the
// chained calls found in the connection's cache. Tracing is off (it would go to OpenAI's API).
// Needs TETHER_SERVER_BIN; run through tests/conformance/run.sh.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, tool, withResponsesWebSocketSession } from "@openai/agents";
import WebSocket from "ws";
import { z } from "zod";
import { metricSamples, startServer } from "../../e2e/server.mjs";

globalThis.WebSocket ??= WebSocket;

const TIMEOUT_MS = 30_000;
const MODEL = "tether-conformance";
/** What the simulator passes for a required string property. */
const CITY = "example";

let server;
let dataDir;

before(async () => {
  // startServer passes --static-dir $TETHER_DIST; these tests need no static files.
  process.env.TETHER_DIST ||= "/nonexistent";
  dataDir = mkdtempSync(join(tmpdir(), "tether-conformance-agents-"));
  server = await startServer(["--tokens-per-second", "100000", "--data-dir", dataDir]);
});

after(async () => {
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** An agent with one function tool, which records the cities it is asked about. */
function weatherAgent(calls) {
  const getWeather = tool({
    name: "get_weather",
    description: "The current weather in a city.",
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return `sunny, 21 C in ${city}`;
    },
  });
  return new Agent({
    name: "Weather",
    instructions: "Answer questions about the weather; look it up with get_weather.",
    model: MODEL,
    tools: [getWeather],
  });
}

const SERIES = {
  ws: 'tether_responses_total{transport="ws"}',
  http: 'tether_responses_total{transport="http"}',
  sse: 'tether_responses_total{transport="sse"}',
  connections: "tether_ws_connections_total",
  hit: 'tether_cache_lookups_total{result="hit"}',
  store: 'tether_cache_lookups_total{result="store"}',
  miss: 'tether_cache_lookups_total{result="miss"}',
};

/** The counters that say which transport carried what. */
async function counts() {
  const samples = await metricSamples(server);
  return Object.fromEntries(
    Object.entries(SERIES).map(([name, series]) => {
      assert.ok(samples.has(series), `/metrics has no ${series}`);
      return [name, samples.get(series)];
    }),
  );
}

/** That the counters named in `expected` moved by as much, and the others not at all. */
function assertMoved(moved, expected) {
  const want = Object.fromEntries(Object.keys(SERIES).map((name) => [name, expected[name] ?? 0]));
  assert.deepEqual(moved, want);
}

/** What the counters moved by while `work` ran. */
async function countsDuring(work) {
  const before = await counts();
  const result = await work();
  const after = await counts();
  const moved = Object.fromEntries(Object.keys(SERIES).map((name) => [name, after[name] - before[name]]));
  return { result, moved };
}

/** A session on the server's WebSocket mode, every run bounded. */
function session(callback) {
  return withResponsesWebSocketSession(
    (ws) => {
      const timeout = new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`the session did not finish within ${TIMEOUT_MS} ms`)), TIMEOUT_MS).unref(),
      );
      return Promise.race([callback(ws), timeout]);
    },
    {
      providerOptions: { apiKey: "test", baseURL: `${server.url}/v1` },
      runnerConfig: { tracingDisabled: true },
    },
  );
}

test("a tool-calling agent runs over one WebSocket", async () => {
  const calls = [];
  const agent = weatherAgent(calls);
  const { result, moved } = await countsDuring(() =>
    session(({ run }) => run(agent, "What is the weather in Paris?")),
  );
  assert.deepEqual(calls, [CITY], "the tool ran once, with the arguments the model gave");
  assert.match(result.finalOutput, new RegExp(`sunny, 21 C in ${CITY}`));
  assert.equal(result.rawResponses.length, 2, "a tool call, then the answer");
  assert.equal(result.lastResponseId, result.rawResponses.at(-1).responseId);
  // The second call resends the conversation (no previousResponseId): no cache lookup.
  assertMoved(moved, { ws: 2, connections: 1 });
});

test("chained streamed runs continue from the connection cache", async () => {
  const calls = [];
  const agent = weatherAgent(calls);
  const streamed = async (run, input, options = {}) => {
    const result = await run(agent, input, { stream: true, ...options });
    const events = [];
    for await (const event of result) events.push(event);
    await result.completed;
    return { result, events };
  };
  const { result: runs, moved } = await countsDuring(() =>
    session(async ({ run }) => {
      const first = await streamed(run, "What is the weather in Paris?");
      const second = await streamed(run, "And in Rome?", { previousResponseId: first.result.lastResponseId });
      return [first, second];
    }),
  );
  for (const { result, events } of runs) {
    const deltas = events
      .filter((event) => event.type === "raw_model_stream_event" && event.data.type === "output_text_delta")
      .map((event) => event.data.delta);
    assert.ok(deltas.length > 0, "the answer streamed as text deltas");
    assert.equal(deltas.join(""), result.finalOutput);
    const items = events.filter((event) => event.type === "run_item_stream_event").map((event) => event.name);
    assert.deepEqual(items.slice(0, 2), ["tool_called", "tool_output"], items.join(", "));
    assert.equal(items.at(-1), "message_output_created", items.join(", "));
  }
  assert.match(runs[1].result.finalOutput, /Rome/);
  assert.deepEqual(calls, [CITY, CITY]);
  // The second run sends only its new input, chained to the first run's last response, and its
  // tool output chained to its own first response: both found in the connection's cache.
  assertMoved(moved, { ws: 4, connections: 1, hit: 2 });
});

test("a handoff passes the conversation to another agent", async () => {
  const calls = [];
  const weather = weatherAgent(calls);
  const triage = new Agent({
    name: "Triage",
    instructions: "Hand weather questions to the weather agent.",
    model: MODEL,
    handoffs: [weather],
  });
  const { result, moved } = await countsDuring(() =>
    session(({ run }) => run(triage, "What is the weather in Paris?")),
  );
  assert.deepEqual(
    result.newItems.map((item) => item.type),
    ["handoff_call_item", "handoff_output_item", "message_output_item"],
  );
  assert.equal(result.lastAgent, weather);
  // The conversation now ends with the handoff's output, so the simulator answers it rather
  // than calling the weather agent's tool.
  assert.deepEqual(calls, []);
  assert.match(result.finalOutput, /The tool returned/);
  assertMoved(moved, { ws: 2, connections: 1 });
});

test("an agent used as a tool runs on the same connection", async () => {
  const calls = [];
  const weather = weatherAgent(calls);
  const lead = new Agent({
    name: "Lead",
    instructions: "Ask the weather agent about the weather.",
    model: MODEL,
    tools: [weather.asTool({ toolName: "ask_weather", toolDescription: "Ask the weather agent." })],
  });
  const { result, moved } = await countsDuring(() =>
    session(({ run }) => run(lead, "What is the weather in Paris?")),
  );
  // The lead calls ask_weather; the weather agent, run for it, calls get_weather; the lead answers
  // with what it returned.
  assert.deepEqual(calls, [CITY]);
  assert.match(result.finalOutput, new RegExp(`sunny, 21 C in ${CITY}`));
  // Two calls of the lead and two of the weather agent, on the session's one connection.
  assertMoved(moved, { ws: 4, connections: 1 });
});

test("a refused request ends the run, its error in the stream, and the session goes on", async () => {
  const tooHot = new Agent({ name: "Hot", instructions: "Answer.", model: MODEL, modelSettings: { temperature: 9 } });
  const calm = new Agent({ name: "Calm", instructions: "Answer.", model: MODEL });
  const { result: ran, moved } = await countsDuring(() =>
    session(async ({ run }) => {
      const result = await run(tooHot, "hello", { stream: true });
      const events = [];
      const refused = await (async () => {
        for await (const event of result) events.push(event);
        await result.completed;
      })().then(
        () => assert.fail("the run should have been refused"),
        (error) => error,
      );
      return { events, refused, answer: await run(calm, "hello again") };
    }),
  );
  const { events, refused, answer } = ran;
  // The SDK's error names only the terminal state; the server's error frame is the stream's last
  // raw event.
  assert.match(refused.message, /unsuccessful terminal state "error"/);
  const frame = events.at(-1)?.data?.event;
  assert.equal(frame?.type, "error", JSON.stringify(events.at(-1)));
  assert.equal(frame.status, 400);
  assert.equal(frame.error.code, "decimal_above_max_value");
  assert.equal(frame.error.param, "temperature");
  assert.match(answer.finalOutput, /You said: "hello again"/);
  // Both requests count as WebSocket responses, the refused one too; the next run goes on over the
  // same connection.
  assertMoved(moved, { ws: 2, connections: 1 });
});
