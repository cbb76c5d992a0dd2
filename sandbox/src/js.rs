//! Running JavaScript: the [`JsRuntime`] trait behind `node FILE` and `node -e CODE`.
//!
//! The sandbox itself runs no JavaScript. The playground implements this trait with a Web Worker
//! that resolves `require('./x')` from the request's file snapshot; the CLI and native tests use
//! `NodeProcessRuntime` (feature `native`), which runs the real `node` binary on a temporary copy
//! of the snapshot. The trait is not `Send` because wasm is single-threaded and a Worker handle
//! cannot cross threads anyway.

use std::future::Future;
use std::pin::Pin;

/// What to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsEntry<'a> {
    /// A script file, as a normalised absolute VFS path.
    File(&'a str),
    /// Source text given with `node -e`.
    Eval(&'a str),
}

/// One `node` invocation.
#[derive(Debug, Clone)]
pub struct JsRequest<'a> {
    pub entry: JsEntry<'a>,
    /// The script's arguments (`process.argv.slice(2)`).
    pub args: &'a [String],
    /// The working directory, a normalised absolute VFS path.
    pub cwd: &'a str,
    /// Every `.js`, `.cjs`, `.mjs` and `.json` file of the VFS as (absolute path, text), so
    /// `require` of other files can be resolved.
    pub files: Vec<(&'a str, &'a str)>,
    pub stdin: &'a [u8],
    /// Stop the script after this long and report `timed_out`.
    pub timeout_ms: u64,
    /// Keep at most this many bytes of each output stream.
    pub max_output_bytes: usize,
}

/// How a run ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JsOutcome {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
    pub timed_out: bool,
}

/// A JavaScript engine the shell's `node` command delegates to.
///
/// What an implementation should do, so scripts behave as under `node`: run the entry as a
/// CommonJS module whose `require` resolves relative paths (with `.js`/`.json`/`/index.js`
/// completion) against [`JsRequest::files`]; expose `process.argv` (`["node", entry, ...args]`),
/// `process.cwd()`, `process.exitCode` and `process.exit(n)`; send `console.log`/`info` to
/// stdout and `console.error`/`warn` to stderr; report an uncaught exception as its stack on
/// stderr with exit code 1; stop after `timeout_ms` and set `timed_out`.
pub trait JsRuntime {
    fn run<'a>(&'a self, request: JsRequest<'a>) -> Pin<Box<dyn Future<Output = JsOutcome> + 'a>>;
}

/// File extensions included in a request's snapshot.
pub fn is_script_file(path: &str) -> bool {
    [".js", ".cjs", ".mjs", ".json"]
        .iter()
        .any(|ext| path.ends_with(ext))
}
