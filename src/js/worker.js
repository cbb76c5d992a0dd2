// The playground's JavaScript runtime for the sandbox's `node` command, run in a Web Worker so a
// runaway script can be terminated. One message in (JSON: entry, args, cwd, files, stdin, cap),
// one message out (JSON: stdout, stderr, exit_code). `require` resolves relative paths against
// the request's file snapshot (`x`, `x.js`, `x.json`, `x/index.js`); there are no Node built-ins,
// and only synchronous work is waited for.
self.onmessage = (message) => {
  const request = JSON.parse(message.data);
  const files = new Map(request.files);
  const cap = request.max_output_bytes;
  let stdout = "";
  let stderr = "";
  const write = (text, toStdout) => {
    if (toStdout) {
      if (stdout.length < cap) stdout += text;
    } else if (stderr.length < cap) {
      stderr += text;
    }
  };
  const show = (value) => {
    if (typeof value === "string") return value;
    if (value instanceof Error) return value.stack || String(value);
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  };
  const line = (args) => args.map(show).join(" ") + "\n";
  const console = {
    log: (...args) => write(line(args), true),
    info: (...args) => write(line(args), true),
    warn: (...args) => write(line(args), false),
    error: (...args) => write(line(args), false),
  };
  class Exit {
    constructor(code) {
      this.code = code;
    }
  }
  const entryPath = request.entry.file ?? "[eval]";
  const process = {
    argv: ["node", entryPath, ...request.args],
    env: {},
    exitCode: undefined,
    platform: "linux",
    cwd: () => request.cwd,
    exit: (code) => {
      throw new Exit(code ?? process.exitCode ?? 0);
    },
    stdout: { write: (text) => (write(String(text), true), true) },
    stderr: { write: (text) => (write(String(text), false), true) },
  };
  const normalize = (path) => {
    const parts = [];
    for (const part of path.split("/")) {
      if (!part || part === ".") continue;
      if (part === "..") parts.pop();
      else parts.push(part);
    }
    return "/" + parts.join("/");
  };
  const dirname = (path) => path.slice(0, path.lastIndexOf("/")) || "/";
  const notFound = (spec) => {
    const error = new Error(`Cannot find module '${spec}'`);
    error.code = "MODULE_NOT_FOUND";
    return error;
  };
  const resolve = (fromDir, spec) => {
    if (!(spec.startsWith("./") || spec.startsWith("../") || spec.startsWith("/"))) {
      throw notFound(spec);
    }
    const base = normalize(spec.startsWith("/") ? spec : `${fromDir}/${spec}`);
    for (const candidate of [base, `${base}.js`, `${base}.json`, `${base}/index.js`]) {
      if (files.has(candidate)) return candidate;
    }
    throw notFound(spec);
  };
  const cache = new Map();
  const run = (source, filename, module) => {
    const dir = filename === "[eval]" ? request.cwd : dirname(filename);
    const require = (spec) => load(resolve(dir, spec));
    const body = new Function(
      "exports", "require", "module", "__filename", "__dirname", "console", "process", source,
    );
    body(module.exports, require, module, filename, dir, console, process);
  };
  const load = (path) => {
    if (cache.has(path)) return cache.get(path).exports;
    const module = { exports: {}, id: path, filename: path };
    cache.set(path, module);
    const source = files.get(path);
    if (path.endsWith(".json")) module.exports = JSON.parse(source);
    else run(source, path, module);
    return module.exports;
  };
  let exitCode;
  try {
    if (request.entry.file) load(request.entry.file);
    else run(request.entry.eval, "[eval]", { exports: {} });
    exitCode = process.exitCode ?? 0;
  } catch (error) {
    if (error instanceof Exit) {
      exitCode = error.code;
    } else {
      write(`${show(error)}\n`, false);
      exitCode = 1;
    }
  }
  self.postMessage(JSON.stringify({ stdout, stderr, exit_code: exitCode }));
};
