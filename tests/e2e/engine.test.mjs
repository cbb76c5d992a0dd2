// End to end with a real engine behind Tether: the playground's agent runs its tool loop —
// the model's calls executed by the sandbox in the page — through Tether to llmsim (an
// OpenAI-compatible server nobody here wrote, installed by `cargo xtask setup`) over WebSocket
// mode and over HTTP; and the replay fixture recorded from llmsim
// (tests/fixtures/llmsim-tool-loop) serves the official SDK's tool loop with no upstream at all.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { ResponsesWS } from "openai/resources/responses/ws";
import { engineTestsSkipped, launchBrowser, plain, startLlmsim, startServer } from "./server.mjs";

const FIXTURE = fileURLToPath(new URL("../fixtures/llmsim-tool-loop", import.meta.url));
const TIMEOUT_MS = 10_000;
const skip = engineTestsSkipped() ?? false;

let browser;

before(async () => {
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
});

/** The playground's agent view over `transport` against `url`, its run to the end. */
async function runAgent(url, transport) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  // The page offers the engine's models (llmsim's list), not the simulator's profiles.
  await page.goto(url + plain("/?profile=gpt-5"));
  await page.getByTestId("tab-agent").click();
  await page.getByTestId("run-status").waitFor();
  await page.getByTestId("transport").selectOption(transport);
  // No scenario: the simulator's knobs mean nothing to an engine.
  await page.getByTestId("scenario").fill("");
  await page.getByTestId("run").click();
  await page.waitForFunction(
    () => ["done", "failed"].includes(document.querySelector('[data-testid="run-status"]').textContent),
    null,
    { timeout: 20_000 },
  );
  const error = await page.locator('[data-testid="error"]').allTextContents();
  assert.equal(await page.getByTestId("run-status").textContent(), "done", `the run failed: ${error}`);
  assert.deepEqual(pageErrors, []);
  return page;
}

for (const transport of ["ws", "http-chained"]) {
  test(`the playground's agent runs its tool loop through Tether to llmsim (${transport})`, { skip }, async () => {
    // llmsim's script: the playground's exec_command on the sample project, then an answer.
    const llmsim = await startLlmsim({
      turns: [
        { type: "tool_calls", calls: [{ name: "exec_command", arguments: { cmd: "ls /src" } }] },
        { type: "assistant", text: "The sample project has its sources in /src." },
      ],
      on_exhausted: "error",
    });
    const server = await startServer(["--engine", llmsim.url]);
    try {
      const page = await runAgent(server.url, transport);
      assert.equal(await page.getByTestId("turn-count").textContent(), "2");
      assert.deepEqual(await page.getByTestId("tool-name").allTextContents(), ["exec_command"]);
      // The sandbox in the page ran the call llmsim made.
      const output = await page.getByTestId("tool-output").first().textContent();
      assert.match(output, /paginate\.js/);
      assert.equal(
        await page.getByTestId("assistant-text").last().textContent(),
        "The sample project has its sources in /src.",
      );
      await page.close();
    } finally {
      await server.stop();
      await llmsim.stop();
    }
  });
}

// The conversation the fixture holds (its README.md): the same request gives the same upstream
// request, whichever transport carried it.
const MODEL = "gpt-5";
const INSTRUCTIONS = "You run shell commands for the user.";
const PROMPT = "Run `echo hi` and tell me what it printed.";
const TOOLS = [
  {
    type: "function",
    name: "exec_command",
    description: "Runs a shell command.",
    parameters: { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] },
  },
];
const ANSWER = "Done: the command printed hi.";

/** One response.create over `rws`, its events up to the terminal one. */
function turn(rws, params) {
  return new Promise((resolve, reject) => {
    const events = [];
    const timer = setTimeout(() => reject(new Error(`no terminal event within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
    const onEvent = (event) => {
      events.push(event);
      if (["response.completed", "response.failed", "response.incomplete", "error"].includes(event.type)) {
        clearTimeout(timer);
        rws.off("event", onEvent);
        resolve(events);
      }
    };
    rws.on("event", onEvent);
    rws.send({ type: "response.create", ...params });
  });
}

test("the replay fixture recorded from llmsim serves the SDK's tool loop with no upstream", async () => {
  const server = await startServer(["--engine", `replay:${FIXTURE}`, "--replay-timing", "instant"]);
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "test", timeout: TIMEOUT_MS, maxRetries: 0 });
    // WebSocket mode: the continuation from the connection cache.
    const rws = new ResponsesWS(client);
    rws.on("error", () => {});
    const first = (await turn(rws, { model: MODEL, instructions: INSTRUCTIONS, input: PROMPT, tools: TOOLS, store: false }))
      .at(-1).response;
    assert.equal(first.output[0].name, "exec_command");
    assert.equal(first.output[0].arguments, '{"cmd":"echo hi"}');
    const second = (
      await turn(rws, {
        model: MODEL,
        instructions: INSTRUCTIONS,
        previous_response_id: first.id,
        tools: TOOLS,
        store: false,
        input: [{ type: "function_call_output", call_id: first.output[0].call_id, output: "hi\n" }],
      })
    ).at(-1).response;
    assert.equal(second.output[0].content[0].text, ANSWER);
    rws.close();
    // HTTP, chained through the store: the same two exchanges.
    const one = await client.responses.create({ model: MODEL, instructions: INSTRUCTIONS, input: PROMPT, tools: TOOLS });
    const two = await client.responses.create({
      model: MODEL,
      instructions: INSTRUCTIONS,
      previous_response_id: one.id,
      tools: TOOLS,
      input: [{ type: "function_call_output", call_id: one.output[0].call_id, output: "hi\n" }],
    });
    assert.equal(two.output_text, ANSWER);
    // What was not recorded is refused, naming where it departs from the closest recording.
    await assert.rejects(
      client.responses.create({ model: MODEL, instructions: INSTRUCTIONS, input: "Run `ls`.", tools: TOOLS }),
      (error) => error.status === 404 && /messages\[1\]\.content/.test(error.message),
    );
  } finally {
    await server.stop();
  }
});
