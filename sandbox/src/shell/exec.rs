//! The interpreter: walks a [`Script`] against the sandbox, counting every command and loop
//! iteration against the call's [`Limits`](crate::Limits) and checking the wall clock.
//!
//! It is async only because `node` awaits the [`JsRuntime`](crate::JsRuntime); everything else
//! completes immediately. Pipelines run their commands one after another, each reading the whole
//! output of the previous one — there are no infinite producers in this command set, and it
//! keeps the interpreter single-threaded for wasm. When a limit is hit the interpreter stops at
//! the next command boundary, so every file operation either happened whole or not at all.
//!
//! This file holds the walk itself — lists, pipelines, simple commands with their
//! expansions and redirections, functions, subshells; the compound commands are in
//! [`super::compound`], one method each, and the builtins in [`super::builtins`]. Every
//! command runs with its [`Streams`], which carry its stdin and collect its output.

use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;

use super::Input;
use super::ast::*;
use crate::commands::{self, Ctx};
use crate::limits::{LIMIT_EXIT_CODE, LimitExceeded};
use crate::sandbox::Sandbox;
use crate::vfs;

pub(crate) type Local<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// Why execution is unwinding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Abort {
    Limit(LimitExceeded),
    Exit(i32),
    /// `break N` / `continue N`: unwinding to the Nth enclosing loop.
    Break(u32),
    Continue(u32),
    /// `return N` from a function.
    Return(i32),
}

/// How deeply functions, subshells and nested scripts may nest. Execution recurses on the
/// native stack, so this bounds it well below what a browser or a test thread allows.
pub(crate) const MAX_NESTING: usize = 50;

/// The standard streams of the command being run.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    pub stdin: Input,
    pub out: Vec<u8>,
    pub err: Vec<u8>,
}

/// The `set` options in force.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Options {
    pub(super) errexit: bool,
    pub(super) nounset: bool,
    pub(super) pipefail: bool,
}

/// Where fd 1 or fd 2 of a command goes.
#[derive(Debug, Clone, PartialEq)]
enum Sink {
    Out,
    Err,
    File(String),
    Null,
}

pub(crate) struct Shell<'s> {
    pub(crate) sandbox: &'s mut Sandbox,
    started_ms: f64,
    pub(super) wall_clock_ms: u64,
    commands: usize,
    iterations: usize,
    pub(crate) abort: Option<Abort>,
    pub(crate) status: i32,
    pub(super) options: Options,
    /// How many conditions (`if`, `while`, `&&`, `!` …) enclose the running command: inside
    /// one, a failure does not trigger `set -e`.
    pub(super) condition_depth: usize,
    pub(super) loop_depth: usize,
    nesting: usize,
    /// `$1`, `$2`, … of the running function or script.
    pub(crate) positional: Vec<String>,
    /// `$0`: `bash`, or the name of the running script.
    pub(crate) arg0: String,
    /// Variables declared `local` in each active function call, with their outer values.
    pub(super) locals: Vec<Vec<(String, Option<String>)>>,
}

impl<'s> Shell<'s> {
    pub(crate) fn new(sandbox: &'s mut Sandbox, wall_clock_ms: u64) -> Self {
        let started_ms = sandbox.clock.now_ms();
        Shell {
            sandbox,
            started_ms,
            wall_clock_ms,
            commands: 0,
            iterations: 0,
            abort: None,
            status: 0,
            options: Options::default(),
            condition_depth: 0,
            loop_depth: 0,
            nesting: 0,
            positional: Vec::new(),
            arg0: "bash".into(),
            locals: Vec::new(),
        }
    }

    pub(super) fn elapsed_ms(&self) -> f64 {
        self.sandbox.clock.now_ms() - self.started_ms
    }

    fn out_of_time(&mut self) -> bool {
        if self.abort.is_none() && self.elapsed_ms() > self.wall_clock_ms as f64 {
            self.abort = Some(Abort::Limit(LimitExceeded::WallClock(self.wall_clock_ms)));
        }
        self.abort.is_some()
    }

    /// Counts one command; false when the call must stop.
    fn tick_command(&mut self) -> bool {
        self.commands += 1;
        let max = self.sandbox.limits.max_commands;
        if self.commands > max && self.abort.is_none() {
            self.abort = Some(Abort::Limit(LimitExceeded::Commands(max)));
        }
        !self.out_of_time()
    }

    /// Counts one loop iteration; false when the call must stop.
    pub(super) fn tick_iteration(&mut self) -> bool {
        self.iterations += 1;
        let max = self.sandbox.limits.max_loop_iterations;
        if self.iterations > max && self.abort.is_none() {
            self.abort = Some(Abort::Limit(LimitExceeded::LoopIterations(max)));
        }
        !self.out_of_time()
    }

    fn pipe_overflow(&mut self) {
        if self.abort.is_none() {
            let max = self.sandbox.limits.max_pipe_bytes;
            self.abort = Some(Abort::Limit(LimitExceeded::PipeBytes(max)));
        }
    }

    /// Enters a function, subshell or nested script; false (and the call ends) when that
    /// would nest deeper than [`MAX_NESTING`]. Pair with [`Shell::leave`].
    pub(super) fn enter(&mut self) -> bool {
        if self.nesting >= MAX_NESTING {
            if self.abort.is_none() {
                self.abort = Some(Abort::Limit(LimitExceeded::Nesting(MAX_NESTING)));
            }
            return false;
        }
        self.nesting += 1;
        true
    }

    pub(super) fn leave(&mut self) {
        self.nesting -= 1;
    }

    pub(crate) fn value_too_large(&mut self, len: usize) -> bool {
        let max = self.sandbox.limits.max_stream_bytes.max(1024 * 1024);
        if len > max && self.abort.is_none() {
            self.abort = Some(Abort::Limit(LimitExceeded::ValueSize(max)));
        }
        self.abort.is_some()
    }

    /// Runs a whole script and returns its exit status, applying `exit` and limits.
    pub(crate) async fn run(&mut self, script: &Script, io: &mut Streams) -> i32 {
        let status = self.script(script, io).await;
        match &self.abort {
            None => status,
            Some(Abort::Exit(code)) => *code,
            Some(Abort::Break(_) | Abort::Continue(_)) => status,
            Some(Abort::Return(code)) => *code,
            Some(Abort::Limit(limit)) => {
                io.err
                    .extend_from_slice(format!("tether-sandbox: {limit}\n").as_bytes());
                LIMIT_EXIT_CODE
            }
        }
    }

    pub(crate) fn script<'a>(
        &'a mut self,
        script: &'a Script,
        io: &'a mut Streams,
    ) -> Local<'a, i32> {
        Box::pin(async move {
            for item in &script.items {
                if self.abort.is_some() {
                    break;
                }
                self.and_or(item, io).await;
            }
            self.status
        })
    }

    async fn and_or(&mut self, list: &AndOr, io: &mut Streams) {
        let guarded = !list.rest.is_empty();
        if guarded {
            self.condition_depth += 1;
        }
        let mut status = self.pipeline(&list.first, io).await;
        let mut last_ran = 0;
        for (index, (connector, pipeline)) in list.rest.iter().enumerate() {
            if self.abort.is_some() {
                break;
            }
            let run = match connector {
                Connector::And => status == 0,
                Connector::Or => status != 0,
            };
            if run {
                if index + 1 == list.rest.len() {
                    self.condition_depth -= 1;
                }
                status = self.pipeline(pipeline, io).await;
                if index + 1 == list.rest.len() {
                    self.condition_depth += 1;
                }
                last_ran = index + 1;
            }
        }
        if guarded {
            self.condition_depth -= 1;
        }
        self.status = status;
        let last_pipeline = list.rest.last().map_or(&list.first, |(_, p)| p);
        if self.options.errexit
            && status != 0
            && self.condition_depth == 0
            && last_ran == list.rest.len()
            && !last_pipeline.negated
            && self.abort.is_none()
        {
            self.abort = Some(Abort::Exit(status));
        }
    }

    async fn pipeline(&mut self, pipeline: &Pipeline, io: &mut Streams) -> i32 {
        if pipeline.negated {
            self.condition_depth += 1;
        }
        let mut status = if pipeline.commands.len() == 1 {
            self.command(&pipeline.commands[0], io).await
        } else {
            let mut input: Option<Input> = None;
            let mut statuses = Vec::new();
            let last = pipeline.commands.len() - 1;
            for (index, command) in pipeline.commands.iter().enumerate() {
                let stdin = match input.take() {
                    Some(piped) => piped,
                    None => std::mem::take(&mut io.stdin),
                };
                let mut stage = Streams {
                    stdin,
                    out: Vec::new(),
                    err: Vec::new(),
                };
                // Each stage of a multi-command pipeline is a subshell, as in bash.
                let (cwd, env, options) = (
                    self.sandbox.cwd.clone(),
                    self.sandbox.env.clone(),
                    self.options,
                );
                let mut status = self.command(command, &mut stage).await;
                if let Some(Abort::Exit(code)) = self.abort {
                    self.abort = None;
                    status = code;
                }
                (self.sandbox.cwd, self.sandbox.env, self.options) = (cwd, env, options);
                statuses.push(status);
                if index == 0 {
                    io.stdin = std::mem::take(&mut stage.stdin);
                }
                io.err.append(&mut stage.err);
                if index == last {
                    io.out.append(&mut stage.out);
                } else {
                    input = Some(Input::new(stage.out));
                }
                if self.abort.is_some() {
                    break;
                }
            }
            let last_status = statuses.last().copied().unwrap_or(0);
            if self.options.pipefail {
                statuses
                    .iter()
                    .rev()
                    .find(|s| **s != 0)
                    .copied()
                    .unwrap_or(0)
            } else {
                last_status
            }
        };
        if pipeline.negated {
            self.condition_depth -= 1;
            status = i32::from(status == 0);
        }
        self.status = status;
        status
    }

    fn command<'a>(&'a mut self, command: &'a Command, io: &'a mut Streams) -> Local<'a, i32> {
        Box::pin(async move {
            let status = match command {
                Command::Simple {
                    assigns,
                    words,
                    redirects,
                } => self.simple(assigns, words, redirects, io).await,
                Command::Compound { body, redirects } => {
                    let (stdin, sinks) = match self.redirects(redirects, io).await {
                        Ok(setup) => setup,
                        Err(message) => return fail(&mut io.err, message),
                    };
                    let mut inner = Streams {
                        stdin: stdin.unwrap_or_else(|| std::mem::take(&mut io.stdin)),
                        out: Vec::new(),
                        err: Vec::new(),
                    };
                    let status = self.compound(body, &mut inner).await;
                    if !redirects.iter().any(|r| r.fd == 0) {
                        io.stdin = inner.stdin;
                    }
                    let delivered = self.route(&sinks, inner.out, inner.err, io);
                    if delivered { status } else { status.max(1) }
                }
                Command::Function { name, body } => {
                    self.sandbox
                        .functions
                        .insert(name.clone(), (**body).clone());
                    0
                }
            };
            self.status = status;
            status
        })
    }

    /// Groups run inline (they are on the path of every function call); the other compound
    /// commands run in [`Shell::control`], boxed, so this frame stays small.
    async fn compound(&mut self, compound: &Compound, io: &mut Streams) -> i32 {
        match compound {
            Compound::Group {
                subshell: false,
                body,
            } => self.script(body, io).await,
            Compound::Group {
                subshell: true,
                body,
            } => self.subshell(body, io).await,
            other => self.control(other, io).await,
        }
    }

    /// Runs `script` with the working directory, variables and options restored afterwards;
    /// `exit` inside it ends only the subshell.
    pub(crate) async fn subshell(&mut self, script: &Script, io: &mut Streams) -> i32 {
        if !self.enter() {
            return self.status;
        }
        let cwd = self.sandbox.cwd.clone();
        let env = self.sandbox.env.clone();
        let functions = self.sandbox.functions.clone();
        let options = self.options;
        let mut status = self.script(script, io).await;
        if let Some(Abort::Exit(code)) = self.abort {
            self.abort = None;
            status = code;
        }
        self.sandbox.cwd = cwd;
        self.sandbox.env = env;
        self.sandbox.functions = functions;
        self.options = options;
        self.leave();
        status
    }

    async fn simple(
        &mut self,
        assigns: &[(String, Word)],
        words: &[Word],
        redirects: &[Redirect],
        io: &mut Streams,
    ) -> i32 {
        if !self.tick_command() {
            return self.status;
        }
        let argv = match self.expand_words(words, io).await {
            Ok(argv) => argv,
            Err(e) => return fail(&mut io.err, e),
        };
        let mut values = Vec::new();
        for (name, word) in assigns {
            match self.expand_single(word, io).await {
                Ok(value) => values.push((name.clone(), value)),
                Err(e) => return fail(&mut io.err, e),
            }
        }
        if self.abort.is_some() {
            return self.status;
        }
        let (stdin, sinks) = match self.redirects(redirects, io).await {
            Ok(setup) => setup,
            Err(message) => return fail(&mut io.err, message),
        };
        if argv.is_empty() {
            for (name, value) in values {
                self.sandbox.env.insert(name, value);
            }
            return 0;
        }
        let saved: Vec<(String, Option<String>)> = values
            .iter()
            .map(|(name, _)| (name.clone(), self.sandbox.env.get(name).cloned()))
            .collect();
        for (name, value) in values {
            self.sandbox.env.insert(name, value);
        }
        let redirected = stdin.is_some();
        let mut own = Streams {
            stdin: stdin.unwrap_or_else(|| std::mem::take(&mut io.stdin)),
            out: Vec::new(),
            err: Vec::new(),
        };
        let status = self.invoke(&argv, &mut own).await;
        if !redirected {
            io.stdin = std::mem::take(&mut own.stdin);
        }
        for (name, old) in saved {
            match old {
                Some(value) => self.sandbox.env.insert(name, value),
                None => self.sandbox.env.remove(&name),
            };
        }
        let delivered = self.route(&sinks, own.out, own.err, io);
        if delivered { status } else { status.max(1) }
    }

    /// Applies redirections in order: returns the replacement stdin, if any, and the sinks of
    /// fd 1 and fd 2. Files named by `>` are truncated here, before the command runs.
    async fn redirects(
        &mut self,
        redirects: &[Redirect],
        io: &mut Streams,
    ) -> Result<(Option<Input>, [Sink; 2]), String> {
        let mut sinks = [Sink::Out, Sink::Err];
        let mut stdin = None;
        for redirect in redirects {
            let fd = redirect.fd as usize;
            match &redirect.op {
                RedirectOp::Read(word) => {
                    let target = self
                        .expand_single(word, io)
                        .await
                        .map_err(|e| e.to_string())?;
                    if target == "/dev/null" {
                        stdin = Some(Input::default());
                        continue;
                    }
                    let path = vfs::normalize(&self.sandbox.cwd, &target);
                    match self.sandbox.vfs.read(&path) {
                        Ok(data) => stdin = Some(Input::new(data.to_vec())),
                        Err(e) => return Err(format!("{target}: {e}")),
                    }
                }
                RedirectOp::Write(word)
                | RedirectOp::Append(word)
                | RedirectOp::WriteBoth { target: word, .. } => {
                    let target = self
                        .expand_single(word, io)
                        .await
                        .map_err(|e| e.to_string())?;
                    let truncate = matches!(
                        redirect.op,
                        RedirectOp::Write(_) | RedirectOp::WriteBoth { append: false, .. }
                    );
                    let sink = match target.as_str() {
                        "/dev/null" => Sink::Null,
                        "/dev/stdout" => Sink::Out,
                        "/dev/stderr" => Sink::Err,
                        "" => return Err(": No such file or directory".to_string()),
                        _ => {
                            let path = vfs::normalize(&self.sandbox.cwd, &target);
                            let result = if truncate || !self.sandbox.vfs.exists(&path) {
                                self.sandbox.vfs.write(&path, Vec::new())
                            } else if self.sandbox.vfs.is_dir(&path) {
                                Err(vfs::VfsError::IsADirectory)
                            } else {
                                Ok(())
                            };
                            result.map_err(|e| format!("{target}: {e}"))?;
                            Sink::File(path)
                        }
                    };
                    if let RedirectOp::WriteBoth { .. } = redirect.op {
                        sinks = [sink.clone(), sink];
                    } else if (1..=2).contains(&fd) {
                        sinks[fd - 1] = sink;
                    }
                }
                RedirectOp::Duplicate(word) => {
                    let target = self
                        .expand_single(word, io)
                        .await
                        .map_err(|e| e.to_string())?;
                    if fd == 0 || fd > 2 {
                        continue;
                    }
                    sinks[fd - 1] = match target.as_str() {
                        "1" => sinks[0].clone(),
                        "2" => sinks[1].clone(),
                        "-" => Sink::Null,
                        other => return Err(format!("{other}: Bad file descriptor")),
                    };
                }
                RedirectOp::HereDoc { body, expand } => {
                    let text = if *expand {
                        let parts = super::parse::expandable_text(body);
                        self.expand_quoted_parts(&parts, io)
                            .await
                            .map_err(|e| e.to_string())?
                    } else {
                        body.clone()
                    };
                    stdin = Some(Input::new(text.into_bytes()));
                }
                RedirectOp::HereString(word) => {
                    let mut text = self
                        .expand_single(word, io)
                        .await
                        .map_err(|e| e.to_string())?;
                    text.push('\n');
                    stdin = Some(Input::new(text.into_bytes()));
                }
            }
        }
        Ok((stdin, sinks))
    }

    /// Delivers a command's output to its sinks; false when a file write failed (the command
    /// then fails, as a write error does in bash).
    fn route(&mut self, sinks: &[Sink; 2], out: Vec<u8>, err: Vec<u8>, io: &mut Streams) -> bool {
        let mut delivered = true;
        for (sink, data) in sinks.iter().zip([out, err]) {
            if data.is_empty() {
                continue;
            }
            match sink {
                Sink::Out | Sink::Err
                    if io.out.len() + io.err.len() + data.len()
                        > self.sandbox.limits.max_pipe_bytes =>
                {
                    self.pipe_overflow();
                }
                Sink::Out => io.out.extend_from_slice(&data),
                Sink::Err => io.err.extend_from_slice(&data),
                Sink::Null => {}
                Sink::File(path) => {
                    if let Err(e) = self.sandbox.vfs.append(path, &data) {
                        report(&mut io.err, format!("{path}: write error: {e}"));
                        delivered = false;
                    }
                }
            }
        }
        delivered
    }

    /// Runs one command. The arms that await (functions, `node`, nested scripts, `xargs`,
    /// `find -exec`, `env CMD`) stay here; everything synchronous is in [`Shell::builtin`], which
    /// keeps this function's frame small — it sits on the stack once per level of recursion.
    async fn invoke(&mut self, argv: &[String], io: &mut Streams) -> i32 {
        let name = argv[0].as_str();
        let args = &argv[1..];
        if let Some(body) = self.sandbox.functions.get(name).cloned() {
            return Box::pin(self.call_function(&body, args, io)).await;
        }
        match name {
            "node" => Box::pin(self.node(args, io)).await,
            "xargs" => Box::pin(self.xargs(args, io)).await,
            "find" if args.iter().any(|a| a == "-exec") => Box::pin(self.find_exec(args, io)).await,
            "env" if args.iter().any(|a| !a.contains('=')) => {
                let split = args
                    .iter()
                    .position(|a| !a.contains('='))
                    .unwrap_or(args.len());
                let assigns: Vec<(String, String)> = args[..split]
                    .iter()
                    .filter_map(|a| {
                        a.split_once('=')
                            .map(|(n, v)| (n.to_string(), v.to_string()))
                    })
                    .collect();
                Box::pin(self.run_argv(assigns, &args[split..], io)).await
            }
            "bash" | "sh" | "eval" | "source" | "." => Box::pin(self.nested(name, args, io)).await,
            _ => self.builtin(name, args, io),
        }
    }

    /// Calls a shell function: `$1…` become its arguments, `local` variables are restored and
    /// `return` ends it.
    async fn call_function(&mut self, body: &Command, args: &[String], io: &mut Streams) -> i32 {
        if !self.enter() {
            return self.status;
        }
        let outer = std::mem::replace(&mut self.positional, args.to_vec());
        self.locals.push(Vec::new());
        let mut status = self.command(body, io).await;
        if let Some(Abort::Return(code)) = self.abort {
            self.abort = None;
            status = code;
        }
        for (name, value) in self.locals.pop().unwrap_or_default().into_iter().rev() {
            match value {
                Some(value) => self.sandbox.env.insert(name, value),
                None => self.sandbox.env.remove(&name),
            };
        }
        self.positional = outer;
        self.leave();
        status
    }

    /// Runs an already-expanded argv (for `xargs` and `env`), with optional assignments.
    /// It reads no input.
    pub(super) async fn run_argv(
        &mut self,
        assigns: Vec<(String, String)>,
        argv: &[String],
        io: &mut Streams,
    ) -> i32 {
        let command = Command::Simple {
            assigns: assigns
                .into_iter()
                .map(|(name, value)| (name, Word::literal(&value)))
                .collect(),
            words: argv.iter().map(|a| Word::literal(a)).collect(),
            redirects: Vec::new(),
        };
        let stdin = std::mem::take(&mut io.stdin);
        let status = self.command(&command, io).await;
        io.stdin = stdin;
        status
    }

    /// Runs a command from the table directly (no expansion, no redirection).
    pub(super) fn invoke_command(&mut self, name: &str, args: &[String], io: &mut Streams) -> i32 {
        let Some(command) = commands::lookup(name) else {
            return 127;
        };
        let max_output = self.sandbox.limits.max_pipe_bytes;
        let mut ctx = Ctx {
            vfs: &mut self.sandbox.vfs,
            cwd: &self.sandbox.cwd,
            env: &self.sandbox.env,
            stdin: &mut io.stdin,
            out: std::mem::take(&mut io.out),
            err: std::mem::take(&mut io.err),
            max_output,
            overflowed: false,
        };
        let status = command(&mut ctx, args);
        let overflowed = ctx.overflowed;
        io.out = ctx.out;
        io.err = ctx.err;
        if overflowed {
            self.pipe_overflow();
        }
        status
    }

    pub(crate) fn nounset(&self) -> bool {
        self.options.nounset
    }
}

/// Writes `bash: MESSAGE` and a newline to `err`, as bash reports its own errors.
pub(super) fn report(err: &mut Vec<u8>, message: impl Display) {
    err.extend_from_slice(format!("bash: {message}\n").as_bytes());
}

/// [`report`]s `message` and returns 1, the status of a command that failed before it ran.
pub(super) fn fail(err: &mut Vec<u8>, message: impl Display) -> i32 {
    report(err, message);
    1
}
