// The official openai-node SDK, unmodified, against a real tether-server: HTTP, SSE and
// WebSocket mode through `ResponsesWS` from `openai/resources/responses/ws` (needs `ws`).
// Needs TETHER_SERVER_BIN; run through tests/conformance/run.sh.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { ResponsesWS } from "openai/resources/responses/ws";
import { engineTestsSkipped, metricSamples, startLlmsim, startServer } from "../e2e/server.mjs";

const TIMEOUT_MS = 10_000;
const MODEL = "tether-conformance";
const TERMINAL = new Set(["response.completed", "response.failed", "response.incomplete"]);
const WEATHER_TOOL = {
  type: "function",
  name: "get_weather",
  description: "Current weather for a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  strict: true,
};

let server;
let client;
let dataDir;

before(async () => {
  // startServer passes --static-dir $TETHER_DIST; these tests need no static files.
  process.env.TETHER_DIST ||= "/nonexistent";
  dataDir = mkdtempSync(join(tmpdir(), "tether-conformance-"));
  server = await startServer(["--tokens-per-second", "100000", "--data-dir", dataDir]);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "test", timeout: TIMEOUT_MS, maxRetries: 0 });
});

after(async () => {
  await server?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The cache lookups counted in /metrics (summed over a deployment's replicas). */
async function cacheLookups() {
  const samples = await metricSamples(server, TIMEOUT_MS);
  const value = (result) => {
    const name = `tether_cache_lookups_total{result="${result}"}`;
    assert.ok(samples.has(name), `/metrics has no ${name}`);
    return samples.get(name);
  };
  return { hit: value("hit"), store: value("store"), miss: value("miss") };
}

/** Sends one response.create and resolves to its events, up to the terminal event or an error. */
function turn(rws, params) {
  return new Promise((resolve, reject) => {
    const events = [];
    const finish = (fn) => {
      clearTimeout(timer);
      rws.off("event", onEvent);
      rws.off("close", onClose);
      rws.off("error", onError);
      fn();
    };
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(new Error(`no terminal event within ${TIMEOUT_MS} ms; got ${events.map((e) => e.type).join(", ")}`)),
        ),
      TIMEOUT_MS,
    );
    const onEvent = (event) => {
      events.push(event);
      if (TERMINAL.has(event.type) || (event.type === "error" && event.sequence_number == null)) {
        finish(() => resolve(events));
      }
    };
    // Error frames arrive on "event" first, then on "error" (see `openWS`); a socket-level
    // failure only on "error".
    const onError = (error) => {
      if (!error.error) finish(() => reject(error));
    };
    const onClose = (code, reason) => finish(() => reject(new Error(`socket closed (${code} ${reason})`)));
    rws.on("event", onEvent);
    rws.on("error", onError);
    rws.on("close", onClose);
    rws.send({ type: "response.create", model: MODEL, ...params });
  });
}

/**
 * A ResponsesWS with a permanent "error" listener: the SDK emits every error frame on "error"
 * after "event", and without a listener it turns the frame into an unhandled rejection.
 */
function openWS() {
  const rws = new ResponsesWS(client);
  rws.on("error", () => {});
  return rws;
}

/** The text of a raw Response object (`output_text` is an HTTP-only SDK convenience). */
function outputText(response) {
  return response.output
    .filter((item) => item.type === "message")
    .flatMap((item) => item.content)
    .filter((part) => part.type === "output_text")
    .map((part) => part.text)
    .join("");
}

function completed(events) {
  const types = events.map((event) => event.type);
  const errors = events.filter((event) => event.type === "error").map((event) => JSON.stringify(event.error));
  assert.equal(types.at(-1), "response.completed", `turn did not complete: ${types.join(", ")}; errors: ${errors}`);
  assert.equal(types[0], "response.created");
  const numbers = events.map((event) => event.sequence_number);
  assert.equal(numbers[0], 0, `sequence_number must start at 0: ${numbers}`);
  assert.ok(numbers.every((n, i) => i === 0 || n > numbers[i - 1]), `sequence_number must increase: ${numbers}`);
  return events.at(-1).response;
}

function functionCalls(events) {
  return events
    .filter((event) => event.type === "response.output_item.done" && event.item.type === "function_call")
    .map((event) => event.item);
}

test("HTTP: responses.create returns the quoted input", async () => {
  const response = await client.responses.create({ model: MODEL, input: "hi from node" });
  assert.equal(response.status, "completed");
  assert.match(response.output_text, /hi from node/);
});

test("SSE: responses.stream yields deltas and a final response", async () => {
  const stream = client.responses.stream({ model: MODEL, input: "node streaming" });
  let text = "";
  for await (const event of stream) {
    if (event.type === "response.output_text.delta") text += event.delta;
  }
  const final = await stream.finalResponse();
  assert.equal(final.status, "completed");
  assert.equal(text, final.output_text);
  assert.match(text, /node streaming/);
});

test("WebSocket: a 2-turn tool loop chained with previous_response_id hits the connection cache", async () => {
  const rws = openWS();
  try {
    const events = await turn(rws, { input: "weather in Paris?", tools: [WEATHER_TOOL], store: false });
    const first = completed(events);
    const calls = functionCalls(events);
    assert.equal(calls.length, 1, `turn 1: expected one function_call, got ${JSON.stringify(first.output)}`);
    assert.equal(calls[0].name, "get_weather");
    assert.equal(typeof JSON.parse(calls[0].arguments), "object");

    const beforeLookups = await cacheLookups();
    const events2 = await turn(rws, {
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: calls[0].call_id, output: "sunny, 21 C" }],
      tools: [WEATHER_TOOL],
      store: false,
    });
    const second = completed(events2);
    const afterLookups = await cacheLookups();
    assert.ok(
      afterLookups.hit > beforeLookups.hit,
      `tether_cache_lookups_total{result="hit"} did not increase: ${JSON.stringify({ beforeLookups, afterLookups })}`,
    );
    assert.equal(second.previous_response_id, first.id);
    assert.equal(functionCalls(events2).length, 0, "turn 2: the model called a tool after a function_call_output");
    assert.ok(outputText(second), `turn 2: expected a text answer, got ${JSON.stringify(second.output)}`);
  } finally {
    rws.close();
  }
});

test("WebSocket: continuing an unknown response is an error frame with status 400", async () => {
  const rws = openWS();
  try {
    const events = await turn(rws, { previous_response_id: "resp_unknown", input: "continue", store: false });
    const error = events.find((event) => event.type === "error");
    assert.ok(error, `expected an error frame, got ${events.map((e) => e.type).join(", ")}`);
    assert.equal(error.status, 400);
    assert.equal(error.error.code, "previous_response_not_found");
  } finally {
    rws.close();
  }
});

// Every field Open Responses' ResponseResource requires (tests/conformance/open_responses/).
const OPEN_RESPONSES_FIELDS = [
  "id", "object", "created_at", "completed_at", "status", "incomplete_details", "model",
  "previous_response_id", "instructions", "output", "error", "tools", "tool_choice", "truncation",
  "parallel_tool_calls", "text", "top_p", "presence_penalty", "frequency_penalty", "top_logprobs",
  "temperature", "reasoning", "usage", "max_output_tokens", "max_tool_calls", "store", "background",
  "service_tier", "metadata", "safety_identifier", "prompt_cache_key",
];

test("HTTP: a response carries every Open Responses field, function tools in full", async () => {
  const bare = { type: "function", name: "lookup", parameters: { type: "object" } };
  const response = await client.responses.create({
    model: MODEL,
    input: "hi",
    tools: [WEATHER_TOOL, bare],
    tool_choice: "none",
    store: false,
  });
  const missing = OPEN_RESPONSES_FIELDS.filter((field) => !(field in response));
  assert.deepEqual(missing, [], `missing fields: ${JSON.stringify(response)}`);
  assert.deepEqual(response.tools[1], { ...bare, description: null, strict: null });
  assert.deepEqual(response.text, { format: { type: "text" } });
});

test("SSE: a failure mid-stream throws the APIError the error event carries", async () => {
  const stream = await client.responses.create({
    model: MODEL,
    input: "fail mid-stream",
    stream: true,
    metadata: { sim_fail: "server_error" },
  });
  const types = [];
  await assert.rejects(
    (async () => {
      for await (const event of stream) types.push(event.type);
    })(),
    (error) => error instanceof OpenAI.APIError && error.code === "server_error" && /simulated/.test(error.message),
  );
  assert.ok(types.includes("response.output_text.delta"), types.join(", "));
});

test("WebSocket: a parameter out of range is an error frame with status, param and a code", async () => {
  const rws = openWS();
  try {
    const events = await turn(rws, { input: "hi", temperature: 3, store: false });
    const error = events.find((event) => event.type === "error");
    assert.ok(error, `expected an error frame, got ${events.map((e) => e.type).join(", ")}`);
    assert.equal(error.status, 400);
    assert.equal(error.error.param, "temperature");
    assert.equal(error.error.code, "decimal_above_max_value");
    const after = await turn(rws, { input: "still usable", store: false });
    completed(after);
  } finally {
    rws.close();
  }
});

test("HTTP: client.conversations creates, lists, updates and deletes a conversation and its items", async () => {
  const user = (text) => ({ type: "message", role: "user", content: text });
  const conversation = await client.conversations.create({ metadata: { topic: "cats" }, items: [user("hello")] });
  assert.equal(conversation.object, "conversation");
  assert.ok(conversation.id.startsWith("conv_"));
  assert.deepEqual((await client.conversations.retrieve(conversation.id)).metadata, { topic: "cats" });
  const updated = await client.conversations.update(conversation.id, { metadata: { topic: "dogs" } });
  assert.deepEqual(updated.metadata, { topic: "dogs" });
  const added = await client.conversations.items.create(conversation.id, { items: [user("m0"), user("m1"), user("m2")] });
  assert.deepEqual(added.data.map((item) => item.content[0].text), ["m0", "m1", "m2"]);
  // The SDK pages on `last_id` and `has_more`.
  const texts = [];
  for await (const item of client.conversations.items.list(conversation.id, { order: "asc", limit: 2 })) {
    texts.push(item.content[0].text);
  }
  assert.deepEqual(texts, ["hello", "m0", "m1", "m2"]);
  const response = await client.responses.create({ model: MODEL, input: "hi", conversation: conversation.id });
  assert.equal(response.conversation.id, conversation.id);
  const after = await client.conversations.items.list(conversation.id, { limit: 1 });
  assert.equal(after.data[0].id, response.output[0].id, "the answer was appended last");
  const item = await client.conversations.items.retrieve(added.data[0].id, { conversation_id: conversation.id });
  assert.equal(item.id, added.data[0].id);
  const remaining = await client.conversations.items.delete(added.data[0].id, { conversation_id: conversation.id });
  assert.equal(remaining.id, conversation.id);
  const deleted = await client.conversations.delete(conversation.id);
  assert.deepEqual(deleted, { id: conversation.id, object: "conversation.deleted", deleted: true });
  await assert.rejects(client.conversations.retrieve(conversation.id), (error) => error.status === 404);
});

test("HTTP: a background response is queued, polled to its end, streamed again and cancelled", async () => {
  const queued = await client.responses.create({ model: MODEL, input: "hi", background: true });
  assert.equal(queued.status, "queued");
  const deadline = Date.now() + TIMEOUT_MS;
  let done = queued;
  while (done.status === "queued" || done.status === "in_progress") {
    assert.ok(Date.now() < deadline, `still ${done.status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    done = await client.responses.retrieve(queued.id);
  }
  assert.equal(done.status, "completed");
  const events = [];
  for await (const event of await client.responses.retrieve(queued.id, { stream: true, starting_after: 1 })) {
    events.push(event);
  }
  assert.equal(events[0].sequence_number, 2);
  assert.equal(events.at(-1).type, "response.completed");
  const long = await client.responses.create({
    model: MODEL, input: "a long story", background: true, metadata: { sim_output_tokens: "300000" },
  });
  const cancelled = await client.responses.cancel(long.id);
  assert.equal(cancelled.status, "cancelled");
});

test("HTTP: a parameter Tether does not know is refused by name", async () => {
  await assert.rejects(
    client.responses.create({ model: MODEL, input: "hi", previous_responce_id: "resp_x" }),
    (error) => error.status === 400 && error.code === "unknown_parameter" && error.param === "previous_responce_id",
  );
});

// --- Through Tether to a real upstream engine: llmsim (crates.io, `cargo xtask setup`) ----------

const EXEC_TOOL = {
  type: "function",
  name: "exec_command",
  description: "Runs a shell command.",
  parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
};
const ENGINE_ANSWER = "Done: the command printed hi.";
/** llmsim's script: a call of exec_command, then the answer, again and again. */
const LLMSIM_SCRIPT = {
  turns: [
    { type: "tool_calls", calls: [{ name: "exec_command", arguments: { cmd: "echo hi" } }] },
    { type: "assistant", text: ENGINE_ANSWER },
  ],
  on_exhausted: "loop",
};
const engineSkip = engineTestsSkipped() ?? false;

/** A fresh llmsim, and Tether in front of it (`--engine`). */
async function engineServer() {
  const llmsim = await startLlmsim(LLMSIM_SCRIPT);
  const tether = await startServer(["--engine", llmsim.url]);
  return {
    tether,
    client: new OpenAI({ baseURL: `${tether.url}/v1`, apiKey: "test", timeout: TIMEOUT_MS, maxRetries: 0 }),
    async stop() {
      await tether.stop();
      await llmsim.stop();
    },
  };
}

test("engine: the tool loop through Tether to llmsim over HTTP, then SSE", { skip: engineSkip }, async () => {
  const engine = await engineServer();
  try {
    const first = await engine.client.responses.create({ model: MODEL, input: "Run `echo hi`.", tools: [EXEC_TOOL] });
    assert.equal(first.status, "completed");
    const [call] = first.output;
    assert.equal(call.type, "function_call");
    assert.deepEqual(JSON.parse(call.arguments), { cmd: "echo hi" });
    const stream = engine.client.responses.stream({
      model: MODEL,
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call.call_id, output: "hi\n" }],
      tools: [EXEC_TOOL],
    });
    let text = "";
    for await (const event of stream) {
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    const final = await stream.finalResponse();
    assert.equal(final.output_text, ENGINE_ANSWER);
    assert.equal(text, ENGINE_ANSWER);
  } finally {
    await engine.stop();
  }
});

test("engine: the tool loop through Tether to llmsim over WebSocket mode", { skip: engineSkip }, async () => {
  const engine = await engineServer();
  const rws = new ResponsesWS(engine.client);
  rws.on("error", () => {});
  try {
    const events = await turn(rws, { input: "Run `echo hi`.", tools: [EXEC_TOOL], store: false });
    const first = completed(events);
    const calls = functionCalls(events);
    assert.equal(calls.length, 1, JSON.stringify(first.output));
    const events2 = await turn(rws, {
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: calls[0].call_id, output: "hi\n" }],
      tools: [EXEC_TOOL],
      store: false,
    });
    assert.equal(outputText(completed(events2)), ENGINE_ANSWER);
    const samples = await metricSamples(engine.tether, TIMEOUT_MS);
    assert.equal(samples.get('tether_cache_lookups_total{result="hit"}'), 1, "the continuation came from the cache");
  } finally {
    rws.close();
    await engine.stop();
  }
});
