// End to end: the sandbox's awk and jq are modules of their own in the dist build, fetched the
// first time a command line runs them (src/main.rs, sandbox/coreutils/src/on_demand.rs). Opening
// the Agent tab fetches neither; a scripted agent that runs awk (which brings jq, since awk can
// run it), awk running jq, then jq gets bash's answers, and the page fetched each module once.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchBrowser, plain, startServer, waitFinished } from "./server.mjs";

// Through a wrapper function, as agents' shells often have one: `command awk` loads it too.
const AWK =
  "awk() { command awk \"$@\"; }; printf 'a 1\\nb 2\\na 3\\n' | awk '{s[$1]+=$2} END {for (k in s) print k, s[k]}' | sort";
// awk runs jq itself, without the shell: jq came with awk.
const AWK_RUNS_JQ = "awk 'BEGIN { print \"{\\\"x\\\":[1,2,3]}\" | \"jq -c .x\" }'";
const JQ = "echo '{\"x\":[1,2,3]}' | jq -c '.x | map(. * 2)'";

const scenario = {
  name: "on-demand-commands",
  description: "runs awk, awk running jq, then jq, in the page's sandbox",
  steps: [
    { id: "awk", calls: [{ tool: "shell", arguments: { command: ["bash", "-lc", AWK] } }] },
    {
      id: "awk-runs-jq",
      when: [{ output_contains: "a 4\nb 2" }],
      calls: [{ tool: "shell", arguments: { command: ["bash", "-lc", AWK_RUNS_JQ] } }],
    },
    {
      id: "jq",
      when: [{ output_contains: "[1,2,3]" }],
      calls: [{ tool: "shell", arguments: { command: ["bash", "-lc", JQ] } }],
    },
    { id: "done", when: [{ output_contains: "[2,4,6]" }], message: "awk and jq both answered." },
  ],
  on_exhausted: { message: "A command did not answer as bash does." },
};

let dir;
let server;
let browser;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "tether-on-demand-"));
  writeFileSync(join(dir, "on-demand-commands.json"), JSON.stringify(scenario));
  server = await startServer(["--tokens-per-second", "2000", "--scenario-dir", dir]);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("awk and jq load on first use and answer as bash does", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(error));
  const fetched = [];
  page.on("request", (request) => {
    const name = new URL(request.url()).pathname.split("/").pop();
    if (name.endsWith(".wasm")) fetched.push(name);
  });
  await page.goto(server.url + plain());
  await page.getByTestId("tab-agent").click();
  const status = page.getByTestId("run-status");
  await status.waitFor();
  const commands = () => fetched.filter((name) => name.startsWith("split_sandbox_"));
  assert.ok(fetched.some((name) => name.startsWith("split_agent_view")), `fetched: ${fetched}`);
  assert.deepEqual(commands(), [], "the Agent tab alone fetches no command's module");

  await page.getByTestId("transport").selectOption("ws");
  await page.getByTestId("scenario").fill("on-demand-commands");
  await page.getByTestId("run").click();
  await waitFinished(page, 30_000);
  const error = await page.locator('[data-testid="error"]').allTextContents();
  assert.equal(await status.textContent(), "done", `the run failed: ${error}`);
  const outputs = await page.getByTestId("tool-output").allTextContents();
  assert.ok(outputs.some((text) => text.includes("a 4\nb 2")), `awk's output: ${outputs}`);
  assert.ok(outputs.some((text) => text.includes("[1,2,3]")), `awk running jq: ${outputs}`);
  assert.ok(outputs.some((text) => text.includes("[2,4,6]")), `jq's output: ${outputs}`);
  const answer = await page.getByTestId("assistant-text").last().textContent();
  assert.match(answer, /awk and jq both answered/);
  const loaded = commands().map((name) => name.split(".")[0]).sort();
  assert.deepEqual(loaded, ["split_sandbox_awk", "split_sandbox_jq"], `fetched: ${fetched}`);
  assert.deepEqual(pageErrors, []);
  await page.close();
});
