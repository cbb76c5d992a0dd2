// Runs command lines in just-bash (npm, pinned in package.json) for sandbox/benches/peers.rs:
// reads a request on stdin — {"projects": {NAME: {PATH: TEXT}}, "cases": [{"id", "project",
// "cwd", "script"}], "runs": N, "raised_limits": BOOL, "budget_ms": MS} — and writes one JSON object a case on
// stdout: {"id", "stdout", "stderr", "exit_code", "times_ms": [run times]}. Each run is a
// fresh Bash with the project's files, in its working directory; only exec() is timed. Runs
// stop early (after two) once a case has taken budget_ms.
import { Bash } from "just-bash";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const runs = Math.max(1, request.runs ?? 1);
// Past this much time on one case, stop after the run in progress (at least two runs).
const budgetMs = request.budget_ms ?? Infinity;
// Corpus lines run with just-bash's defaults (bounded at 10 s like the others); the heavy
// pipelines with the same generous bounds every engine gets there.
const executionLimits = request.raised_limits
  ? {
      maxCommandCount: 10_000_000,
      maxLoopIterations: 10_000_000,
      maxAwkIterations: 10_000_000,
      maxSedIterations: 10_000_000,
      maxWorkUnits: 1_000_000_000,
      maxExecutionTimeMs: 120_000,
      maxOutputSize: 512 * 1024 * 1024,
      maxStringLength: 512 * 1024 * 1024,
    }
  : { maxExecutionTimeMs: 10_000 };

for (const c of request.cases) {
  const files = request.projects[c.project] ?? {};
  const times = [];
  let last = { stdout: "", stderr: "", exitCode: 0 };
  const caseStarted = performance.now();
  for (let run = 0; run < runs; run++) {
    if (run >= 2 && performance.now() - caseStarted > budgetMs) break;
    try {
      const bash = new Bash({ files: { ...files }, cwd: c.cwd, executionLimits });
      const started = performance.now();
      last = await bash.exec(c.script);
      times.push(performance.now() - started);
    } catch (error) {
      last = { stdout: "", stderr: `just-bash: ${error?.message ?? error}`, exitCode: 2 };
      break;
    }
  }
  process.stdout.write(
    JSON.stringify({
      id: c.id,
      stdout: last.stdout,
      stderr: last.stderr,
      exit_code: last.exitCode,
      times_ms: times,
    }) + "\n",
  );
}
