//! The interpreter: walks a [`Script`] against the sandbox, counting every command and loop
//! iteration against the call's [`Limits`](crate::Limits) and checking the wall clock.
//!
//! It is async only because `node` awaits the [`JsRuntime`](crate::JsRuntime); everything else
//! completes immediately. Pipelines run their commands one after another, each reading the whole
//! output of the previous one — there are no infinite producers in this command set, and it
//! keeps the interpreter single-threaded for wasm. When a limit is hit the interpreter stops at
//! the next command boundary, so every file operation either happened whole or not at all.

use std::future::Future;
use std::pin::Pin;

use super::Input;
use super::ast::*;
use super::conditional::{self, CondToken, Scope};
use crate::commands::{self, Ctx};
use crate::js::{JsEntry, JsRequest, is_script_file};
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

/// What a loop does after its body ran.
enum LoopStep {
    Next,
    Stop,
}

/// The standard streams of the command being run.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    pub stdin: Input,
    pub out: Vec<u8>,
    pub err: Vec<u8>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Options {
    errexit: bool,
    nounset: bool,
    pipefail: bool,
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
    wall_clock_ms: u64,
    commands: usize,
    iterations: usize,
    pub(crate) abort: Option<Abort>,
    pub(crate) status: i32,
    options: Options,
    condition_depth: usize,
    loop_depth: usize,
    nesting: usize,
    /// `$1`, `$2`, … of the running function or script.
    pub(crate) positional: Vec<String>,
    /// `$0`: `bash`, or the name of the running script.
    pub(crate) arg0: String,
    /// Variables declared `local` in each active function call, with their outer values.
    locals: Vec<Vec<(String, Option<String>)>>,
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

    fn elapsed_ms(&self) -> f64 {
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
    fn tick_iteration(&mut self) -> bool {
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
    fn enter(&mut self) -> bool {
        if self.nesting >= MAX_NESTING {
            if self.abort.is_none() {
                self.abort = Some(Abort::Limit(LimitExceeded::Nesting(MAX_NESTING)));
            }
            return false;
        }
        self.nesting += 1;
        true
    }

    fn leave(&mut self) {
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
                        Err(message) => {
                            io.err
                                .extend_from_slice(format!("bash: {message}\n").as_bytes());
                            return 1;
                        }
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

    fn control<'a>(&'a mut self, compound: &'a Compound, io: &'a mut Streams) -> Local<'a, i32> {
        Box::pin(async move {
            match compound {
                Compound::For { var, items, body } => {
                    let values = match self.expand_words(items, io).await {
                        Ok(values) => values,
                        Err(e) => {
                            io.err.extend_from_slice(format!("bash: {e}\n").as_bytes());
                            return 1;
                        }
                    };
                    let mut status = 0;
                    self.loop_depth += 1;
                    for value in values {
                        if !self.tick_iteration() {
                            break;
                        }
                        self.sandbox.env.insert(var.clone(), value);
                        status = self.script(body, io).await;
                        if let LoopStep::Stop = self.after_body() {
                            break;
                        }
                    }
                    self.loop_depth -= 1;
                    status
                }
                Compound::While {
                    until,
                    condition,
                    body,
                } => {
                    let mut status = 0;
                    self.loop_depth += 1;
                    loop {
                        if !self.tick_iteration() {
                            break;
                        }
                        self.condition_depth += 1;
                        let test = self.script(condition, io).await;
                        self.condition_depth -= 1;
                        if self.abort.is_some() || (test == 0) == *until {
                            break;
                        }
                        status = self.script(body, io).await;
                        if let LoopStep::Stop = self.after_body() {
                            break;
                        }
                    }
                    self.loop_depth -= 1;
                    status
                }
                Compound::If {
                    branches,
                    otherwise,
                } => {
                    for (condition, body) in branches {
                        self.condition_depth += 1;
                        let test = self.script(condition, io).await;
                        self.condition_depth -= 1;
                        if self.abort.is_some() {
                            return test;
                        }
                        if test == 0 {
                            return self.script(body, io).await;
                        }
                    }
                    match otherwise {
                        Some(body) => self.script(body, io).await,
                        None => 0,
                    }
                }
                Compound::Conditional(parts) => {
                    let mut tokens = Vec::new();
                    for part in parts {
                        tokens.push(match part {
                            ConditionalPart::Op(op) => CondToken::Op(op),
                            ConditionalPart::Word(word) => {
                                let expanded = match self.expand_single(word, io).await {
                                    Ok(text) => {
                                        self.expand_pattern(word, io).await.map(|p| (text, p))
                                    }
                                    Err(e) => Err(e),
                                };
                                match expanded {
                                    Ok((text, pattern)) => CondToken::Word { text, pattern },
                                    Err(e) => {
                                        io.err.extend_from_slice(format!("bash: {e}\n").as_bytes());
                                        return 1;
                                    }
                                }
                            }
                        });
                    }
                    let scope = Scope {
                        vfs: &self.sandbox.vfs,
                        cwd: &self.sandbox.cwd,
                        env: &self.sandbox.env,
                    };
                    match conditional::evaluate(&tokens, &scope) {
                        Ok(true) => 0,
                        Ok(false) => 1,
                        Err(message) => {
                            io.err
                                .extend_from_slice(format!("bash: {message}\n").as_bytes());
                            2
                        }
                    }
                }
                Compound::Case { word, arms } => {
                    let value = match self.expand_single(word, io).await {
                        Ok(value) => value,
                        Err(e) => {
                            io.err.extend_from_slice(format!("bash: {e}\n").as_bytes());
                            return 1;
                        }
                    };
                    for (patterns, body) in arms {
                        for pattern in patterns {
                            let pattern = match self.expand_pattern(pattern, io).await {
                                Ok(pattern) => pattern,
                                Err(e) => {
                                    io.err.extend_from_slice(format!("bash: {e}\n").as_bytes());
                                    return 1;
                                }
                            };
                            if super::glob::matches(&pattern, &value) {
                                return self.script(body, io).await;
                            }
                        }
                    }
                    0
                }
                Compound::Group { subshell, body } => {
                    if *subshell {
                        self.subshell(body, io).await
                    } else {
                        self.script(body, io).await
                    }
                }
            }
        })
    }

    /// Consumes a pending `break`/`continue` aimed at this loop and says whether to go on.
    fn after_body(&mut self) -> LoopStep {
        match self.abort {
            None => LoopStep::Next,
            Some(Abort::Break(levels)) => {
                self.abort = (levels > 1).then_some(Abort::Break(levels - 1));
                LoopStep::Stop
            }
            Some(Abort::Continue(levels)) if levels > 1 => {
                self.abort = Some(Abort::Continue(levels - 1));
                LoopStep::Stop
            }
            Some(Abort::Continue(_)) => {
                self.abort = None;
                LoopStep::Next
            }
            Some(_) => LoopStep::Stop,
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
            Err(e) => {
                io.err.extend_from_slice(format!("bash: {e}\n").as_bytes());
                return 1;
            }
        };
        let mut values = Vec::new();
        for (name, word) in assigns {
            match self.expand_single(word, io).await {
                Ok(value) => values.push((name.clone(), value)),
                Err(e) => {
                    io.err.extend_from_slice(format!("bash: {e}\n").as_bytes());
                    return 1;
                }
            }
        }
        if self.abort.is_some() {
            return self.status;
        }
        let (stdin, sinks) = match self.redirects(redirects, io).await {
            Ok(setup) => setup,
            Err(message) => {
                io.err
                    .extend_from_slice(format!("bash: {message}\n").as_bytes());
                return 1;
            }
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
        let mut out = Vec::new();
        let mut err = Vec::new();
        let status = match stdin {
            Some(mut input) => self.invoke(&argv, &mut input, &mut out, &mut err).await,
            None => {
                let mut input = std::mem::take(&mut io.stdin);
                let status = self.invoke(&argv, &mut input, &mut out, &mut err).await;
                io.stdin = input;
                status
            }
        };
        for (name, old) in saved {
            match old {
                Some(value) => self.sandbox.env.insert(name, value),
                None => self.sandbox.env.remove(&name),
            };
        }
        let delivered = self.route(&sinks, out, err, io);
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
                        io.err.extend_from_slice(
                            format!("bash: {path}: write error: {e}\n").as_bytes(),
                        );
                        delivered = false;
                    }
                }
            }
        }
        delivered
    }

    /// Runs one command: a builtin that needs the interpreter, or a command from the table.
    /// Runs one command. The arms that await (functions, `node`, nested scripts, `xargs`,
    /// `find -exec`, `env CMD`) stay here; everything synchronous is in [`Shell::builtin`], which
    /// keeps this function's frame small — it sits on the stack once per level of recursion.
    async fn invoke(
        &mut self,
        argv: &[String],
        stdin: &mut Input,
        out: &mut Vec<u8>,
        err: &mut Vec<u8>,
    ) -> i32 {
        let name = argv[0].as_str();
        let args = &argv[1..];
        if let Some(body) = self.sandbox.functions.get(name).cloned() {
            return Box::pin(self.call_function(&body, args, stdin, out, err)).await;
        }
        match name {
            "node" => Box::pin(self.node(args, stdin, out, err)).await,
            "xargs" => Box::pin(self.xargs(args, stdin, out, err)).await,
            "find" if args.iter().any(|a| a == "-exec") => {
                Box::pin(self.find_exec(args, stdin, out, err)).await
            }
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
                Box::pin(self.run_argv(assigns, &args[split..], out, err)).await
            }
            "bash" | "sh" | "eval" | "source" | "." => {
                Box::pin(self.nested(name, args, stdin, out, err)).await
            }
            _ => self.builtin(name, args, stdin, out, err),
        }
    }

    /// Synchronous builtins and the command table.
    fn builtin(
        &mut self,
        name: &str,
        args: &[String],
        stdin: &mut Input,
        out: &mut Vec<u8>,
        err: &mut Vec<u8>,
    ) -> i32 {
        match name {
            "return" => {
                if self.locals.is_empty() {
                    err.extend_from_slice(
                        b"bash: return: can only `return' from a function or sourced script\n",
                    );
                    return 1;
                }
                let code = args
                    .first()
                    .and_then(|a| a.parse::<i32>().ok())
                    .map_or(self.status, |c| c & 0xff);
                self.abort = Some(Abort::Return(code));
                code
            }
            "local" => {
                let Some(frame) = self.locals.last_mut() else {
                    err.extend_from_slice(b"bash: local: can only be used in a function\n");
                    return 1;
                };
                for arg in args.iter().filter(|a| !a.starts_with('-')) {
                    let (var, value) = arg.split_once('=').unwrap_or((arg.as_str(), ""));
                    if !super::parse::is_name(var) {
                        err.extend_from_slice(
                            format!("bash: local: `{arg}': not a valid identifier\n").as_bytes(),
                        );
                        return 1;
                    }
                    frame.push((var.to_string(), self.sandbox.env.get(var).cloned()));
                    self.sandbox.env.insert(var.to_string(), value.to_string());
                }
                0
            }
            "shift" => {
                let count = args
                    .first()
                    .and_then(|a| a.parse::<usize>().ok())
                    .unwrap_or(1);
                if count > self.positional.len() {
                    return 1;
                }
                self.positional.drain(..count);
                0
            }
            "cd" => self.cd(args, err),
            "export" | "unset" | "set" => self.variables(name, args, out, err),
            "read" => self.read(args, stdin),
            "exit" => {
                let code = match args.first() {
                    Some(arg) => arg.parse::<i32>().map(|c| c & 0xff).unwrap_or_else(|_| {
                        err.extend_from_slice(
                            format!("bash: exit: {arg}: numeric argument required\n").as_bytes(),
                        );
                        2
                    }),
                    None => self.status,
                };
                self.abort = Some(Abort::Exit(code));
                code
            }
            "break" | "continue" => {
                if self.loop_depth == 0 {
                    err.extend_from_slice(
                        format!(
                            "bash: {name}: only meaningful in a `for', `while', or `until' loop\n"
                        )
                        .as_bytes(),
                    );
                    return 0;
                }
                let levels = args
                    .first()
                    .and_then(|a| a.parse::<u32>().ok())
                    .unwrap_or(1)
                    .max(1);
                let levels = levels.min(u32::try_from(self.loop_depth).unwrap_or(u32::MAX));
                self.abort = Some(if name == "break" {
                    Abort::Break(levels)
                } else {
                    Abort::Continue(levels)
                });
                0
            }
            "env" => {
                let mut env = self.sandbox.env.clone();
                env.extend(args.iter().filter_map(|a| {
                    a.split_once('=')
                        .map(|(n, v)| (n.to_string(), v.to_string()))
                }));
                for (name, value) in env {
                    out.extend_from_slice(format!("{name}={value}\n").as_bytes());
                }
                0
            }
            _ => match commands::lookup(name) {
                Some(_) => self.invoke_command(name, args, stdin, out, err),
                None => {
                    let path = vfs::normalize(&self.sandbox.cwd, name);
                    if name.contains('/') && self.sandbox.vfs.is_file(&path) {
                        err.extend_from_slice(
                            format!("bash: {name}: Permission denied\n").as_bytes(),
                        );
                        126
                    } else if name.contains('/') {
                        err.extend_from_slice(
                            format!("bash: {name}: No such file or directory\n").as_bytes(),
                        );
                        127
                    } else {
                        err.extend_from_slice(
                            format!("bash: {name}: command not found\n").as_bytes(),
                        );
                        127
                    }
                }
            },
        }
    }

    /// Calls a shell function: `$1…` become its arguments, `local` variables are restored and
    /// `return` ends it.
    async fn call_function(
        &mut self,
        body: &Command,
        args: &[String],
        stdin: &mut Input,
        out: &mut Vec<u8>,
        err: &mut Vec<u8>,
    ) -> i32 {
        if !self.enter() {
            return self.status;
        }
        let outer = std::mem::replace(&mut self.positional, args.to_vec());
        self.locals.push(Vec::new());
        let mut io = Streams {
            stdin: std::mem::take(stdin),
            out: std::mem::take(out),
            err: std::mem::take(err),
        };
        let mut status = self.command(body, &mut io).await;
        if let Some(Abort::Return(code)) = self.abort {
            self.abort = None;
            status = code;
        }
        *stdin = io.stdin;
        *out = io.out;
        *err = io.err;
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
    async fn run_argv(
        &mut self,
        assigns: Vec<(String, String)>,
        argv: &[String],
        out: &mut Vec<u8>,
        err: &mut Vec<u8>,
    ) -> i32 {
        let command = Command::Simple {
            assigns: assigns
                .into_iter()
                .map(|(name, value)| (name, Word::literal(&value)))
                .collect(),
            words: argv.iter().map(|a| Word::literal(a)).collect(),
            redirects: Vec::new(),
        };
        let mut io = Streams {
            stdin: Input::default(),
            out: std::mem::take(out),
            err: std::mem::take(err),
        };
        let status = self.command(&command, &mut io).await;
        *out = io.out;
        *err = io.err;
        status
    }

    /// `find … -exec CMD {} ;` and `-exec CMD {} +`: the search runs as the `find` command,
    /// then CMD runs once per path (`;`) or once with all paths (`+`).
    async fn find_exec(
        &mut self,
        args: &[String],
        stdin: &mut Input,
        out: &mut Vec<u8>,
        err: &mut Vec<u8>,
    ) -> i32 {
        let exec_at = args.iter().position(|a| a == "-exec").unwrap_or(args.len());
        let Some(end) = args[exec_at..].iter().position(|a| a == ";" || a == "+") else {
            err.extend_from_slice(b"find: missing argument to `-exec'\n");
            return 1;
        };
        let template = &args[exec_at + 1..exec_at + end];
        let batch = args[exec_at + end] == "+";
        let mut search: Vec<String> = args[..exec_at].to_vec();
        search.extend(args[exec_at + end + 1..].iter().cloned());
        let mut listing = Vec::new();
        let status = self.invoke_command("find", &search, stdin, &mut listing, err);
        if template.is_empty() {
            err.extend_from_slice(b"find: missing argument to `-exec'\n");
            return 1;
        }
        let paths: Vec<String> = String::from_utf8_lossy(&listing)
            .lines()
            .map(str::to_string)
            .collect();
        let mut failed = false;
        let runs: Vec<Vec<String>> = if batch {
            let mut argv = Vec::new();
            for word in template {
                if word == "{}" {
                    argv.extend(paths.iter().cloned());
                } else {
                    argv.push(word.clone());
                }
            }
            if paths.is_empty() {
                Vec::new()
            } else {
                vec![argv]
            }
        } else {
            paths
                .iter()
                .map(|path| template.iter().map(|w| w.replace("{}", path)).collect())
                .collect()
        };
        for argv in runs {
            failed |= self.run_argv(Vec::new(), &argv, out, err).await != 0;
            if self.abort.is_some() {
                break;
            }
        }
        if status != 0 || (batch && failed) {
            status.max(1)
        } else {
            0
        }
    }

    /// Runs a command from the table directly (no expansion, no redirection).
    fn invoke_command(
        &mut self,
        name: &str,
        args: &[String],
        stdin: &mut Input,
        out: &mut Vec<u8>,
        err: &mut Vec<u8>,
    ) -> i32 {
        let Some(command) = commands::lookup(name) else {
            return 127;
        };
        let max_output = self.sandbox.limits.max_pipe_bytes;
        let mut ctx = Ctx {
            vfs: &mut self.sandbox.vfs,
            cwd: &self.sandbox.cwd,
            env: &self.sandbox.env,
            stdin,
            out: std::mem::take(out),
            err: std::mem::take(err),
            max_output,
            overflowed: false,
        };
        let status = command(&mut ctx, args);
        let overflowed = ctx.overflowed;
        *out = ctx.out;
        *err = ctx.err;
        if overflowed {
            self.pipe_overflow();
        }
        status
    }

    /// `xargs [-n N] [-I REPLACE] [-0] [-r] [COMMAND [ARGS]]`.
    async fn xargs(
        &mut self,
        args: &[String],
        stdin: &mut Input,
        out: &mut Vec<u8>,
        err: &mut Vec<u8>,
    ) -> i32 {
        let mut per_call = usize::MAX;
        let mut replace: Option<String> = None;
        let mut nul = false;
        let mut skip_empty = false;
        let mut rest = args.iter();
        let mut command: Vec<String> = Vec::new();
        while let Some(arg) = rest.next() {
            match arg.as_str() {
                "-n" => per_call = rest.next().and_then(|n| n.parse().ok()).unwrap_or(1).max(1),
                "-I" | "-i" => replace = Some(rest.next().cloned().unwrap_or_else(|| "{}".into())),
                "-0" | "--null" => nul = true,
                "-r" | "--no-run-if-empty" => skip_empty = true,
                a if a.starts_with("-n") && a.len() > 2 => {
                    per_call = a[2..].parse().unwrap_or(1).max(1);
                }
                a if a.starts_with("-I") && a.len() > 2 => replace = Some(a[2..].to_string()),
                _ => {
                    command.push(arg.clone());
                    command.extend(rest.by_ref().cloned());
                }
            }
        }
        if command.is_empty() {
            command.push("echo".into());
        }
        let input = String::from_utf8_lossy(&stdin.take_all()).into_owned();
        let mut status = 0;
        let mut record = |code: i32| match code {
            0 => {}
            127 => status = 127,
            _ if status != 127 => status = 123,
            _ => {}
        };
        if let Some(token) = replace {
            for line in input.lines().map(str::trim_start).filter(|l| !l.is_empty()) {
                let argv: Vec<String> = command.iter().map(|a| a.replace(&token, line)).collect();
                let code = self.run_argv(Vec::new(), &argv, out, err).await;
                record(code);
                if self.abort.is_some() {
                    break;
                }
            }
            return status;
        }
        let items = if nul {
            input
                .split('\0')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        } else {
            xargs_items(&input)
        };
        if items.is_empty() {
            if !skip_empty {
                record(self.run_argv(Vec::new(), &command, out, err).await);
            }
            return status;
        }
        for batch in items.chunks(per_call.min(items.len())) {
            let mut argv = command.clone();
            argv.extend(batch.iter().cloned());
            let code = self.run_argv(Vec::new(), &argv, out, err).await;
            record(code);
            if self.abort.is_some() {
                break;
            }
        }
        status
    }

    fn cd(&mut self, args: &[String], err: &mut Vec<u8>) -> i32 {
        let target = match args.first().map(String::as_str) {
            None => self
                .sandbox
                .env
                .get("HOME")
                .cloned()
                .unwrap_or_else(|| "/".into()),
            Some("-") => self
                .sandbox
                .env
                .get("OLDPWD")
                .cloned()
                .unwrap_or_else(|| self.sandbox.cwd.clone()),
            Some(dir) => dir.to_string(),
        };
        let path = vfs::normalize(&self.sandbox.cwd, &target);
        match self.sandbox.vfs.kind(&path) {
            Some(vfs::EntryKind::Dir) => {
                let old = std::mem::replace(&mut self.sandbox.cwd, path.clone());
                self.sandbox.env.insert("OLDPWD".into(), old);
                self.sandbox.env.insert("PWD".into(), path);
                0
            }
            Some(vfs::EntryKind::File) => {
                err.extend_from_slice(format!("bash: cd: {target}: Not a directory\n").as_bytes());
                1
            }
            None => {
                err.extend_from_slice(
                    format!("bash: cd: {target}: No such file or directory\n").as_bytes(),
                );
                1
            }
        }
    }

    fn variables(
        &mut self,
        name: &str,
        args: &[String],
        out: &mut Vec<u8>,
        err: &mut Vec<u8>,
    ) -> i32 {
        match name {
            "export" => {
                for arg in args.iter().filter(|a| !a.starts_with('-')) {
                    match arg.split_once('=') {
                        Some((var, value)) if super::parse::is_name(var) => {
                            self.sandbox.env.insert(var.into(), value.into());
                        }
                        None if super::parse::is_name(arg) => {
                            self.sandbox.env.entry(arg.clone()).or_default();
                        }
                        _ => {
                            err.extend_from_slice(
                                format!("bash: export: `{arg}': not a valid identifier\n")
                                    .as_bytes(),
                            );
                            return 1;
                        }
                    }
                }
                if args.is_empty() {
                    for (var, value) in &self.sandbox.env {
                        out.extend_from_slice(format!("declare -x {var}=\"{value}\"\n").as_bytes());
                    }
                }
                0
            }
            "unset" => {
                for arg in args.iter().filter(|a| !a.starts_with('-')) {
                    self.sandbox.env.remove(arg);
                }
                0
            }
            _ => {
                let mut args = args.iter();
                while let Some(arg) = args.next() {
                    let (on, flags) = match arg.strip_prefix('-') {
                        Some(flags) => (true, flags),
                        None => match arg.strip_prefix('+') {
                            Some(flags) => (false, flags),
                            None => continue,
                        },
                    };
                    for flag in flags.chars() {
                        match flag {
                            'e' => self.options.errexit = on,
                            'u' => self.options.nounset = on,
                            'o' => match args.next().map(String::as_str) {
                                Some("pipefail") => self.options.pipefail = on,
                                Some("errexit") => self.options.errexit = on,
                                Some("nounset") => self.options.nounset = on,
                                other => {
                                    err.extend_from_slice(
                                        format!(
                                            "bash: set: {}: invalid option name\n",
                                            other.unwrap_or("")
                                        )
                                        .as_bytes(),
                                    );
                                    return 2;
                                }
                            },
                            other => {
                                err.extend_from_slice(
                                    format!("bash: set: -{other}: invalid option\n").as_bytes(),
                                );
                                return 2;
                            }
                        }
                    }
                }
                0
            }
        }
    }

    pub(crate) fn nounset(&self) -> bool {
        self.options.nounset
    }

    fn read(&mut self, args: &[String], stdin: &mut Input) -> i32 {
        let raw = args.iter().any(|a| a == "-r");
        let names: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        let Some((line, terminated)) = stdin.read_line() else {
            for name in &names {
                self.sandbox.env.insert((*name).clone(), String::new());
            }
            return 1;
        };
        let line = if raw {
            line
        } else {
            let mut text = String::new();
            let mut chars = line.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    text.extend(chars.next());
                } else {
                    text.push(c);
                }
            }
            text
        };
        if names.is_empty() {
            self.sandbox.env.insert("REPLY".into(), line);
        } else {
            let mut rest = line.trim_start_matches([' ', '\t']);
            for (index, name) in names.iter().enumerate() {
                let value = if index + 1 == names.len() {
                    let value = rest.trim_end_matches([' ', '\t']);
                    rest = "";
                    value
                } else {
                    let end = rest.find([' ', '\t']).unwrap_or(rest.len());
                    let value = &rest[..end];
                    rest = rest[end..].trim_start_matches([' ', '\t']);
                    value
                };
                self.sandbox.env.insert((*name).clone(), value.to_string());
            }
        }
        i32::from(!terminated)
    }

    /// `bash -c`, `sh FILE`, `eval`, `source`: a script within the script.
    async fn nested(
        &mut self,
        name: &str,
        args: &[String],
        stdin: &mut Input,
        out: &mut Vec<u8>,
        err: &mut Vec<u8>,
    ) -> i32 {
        let mut positional: Option<Vec<String>> = None;
        let mut arg0: Option<String> = None;
        let (source, subshell, errexit) = match name {
            "eval" => (Ok(args.join(" ")), false, false),
            "bash" | "sh" => {
                let mut errexit = false;
                let mut command = None;
                let mut rest = args.iter();
                while let Some(arg) = rest.next() {
                    if let Some(flags) = arg.strip_prefix('-') {
                        errexit |= flags.contains('e');
                        if flags.contains('c') {
                            command = rest.next().cloned().map(Ok);
                            arg0 = rest.next().cloned();
                            positional = Some(rest.by_ref().cloned().collect());
                            break;
                        }
                    } else {
                        command = Some(self.script_file(arg));
                        arg0 = Some(arg.clone());
                        positional = Some(rest.by_ref().cloned().collect());
                        break;
                    }
                }
                match command {
                    Some(source) => (source, true, errexit),
                    None => {
                        err.extend_from_slice(
                            format!(
                                "{name}: interactive shells are not available in this sandbox\n"
                            )
                            .as_bytes(),
                        );
                        return 2;
                    }
                }
            }
            _ => match args.first() {
                Some(file) => {
                    if args.len() > 1 {
                        positional = Some(args[1..].to_vec());
                    }
                    (self.script_file(file), false, false)
                }
                None => {
                    err.extend_from_slice(
                        format!("bash: {name}: filename argument required\n").as_bytes(),
                    );
                    return 2;
                }
            },
        };
        let source = match source {
            Ok(source) => source,
            Err(message) => {
                err.extend_from_slice(format!("{name}: {message}\n").as_bytes());
                return 127;
            }
        };
        let script = match super::parse(&source) {
            Ok(script) => script,
            Err(e) => {
                err.extend_from_slice(format!("{name}: -c: line 1: {e}\n").as_bytes());
                return 2;
            }
        };
        if !self.enter() {
            return self.status;
        }
        let outer = positional.map(|p| std::mem::replace(&mut self.positional, p));
        let outer_arg0 = arg0.map(|a| std::mem::replace(&mut self.arg0, a));
        let mut io = Streams {
            stdin: std::mem::take(stdin),
            out: std::mem::take(out),
            err: std::mem::take(err),
        };
        let status = if subshell {
            let options = self.options;
            self.options.errexit |= errexit;
            let status = self.subshell(&script, &mut io).await;
            self.options = options;
            status
        } else {
            self.script(&script, &mut io).await
        };
        *stdin = io.stdin;
        *out = io.out;
        *err = io.err;
        if let Some(outer) = outer {
            self.positional = outer;
        }
        if let Some(outer) = outer_arg0 {
            self.arg0 = outer;
        }
        self.leave();
        status
    }

    fn script_file(&self, file: &str) -> Result<String, String> {
        let path = vfs::normalize(&self.sandbox.cwd, file);
        self.sandbox
            .vfs
            .read_text(&path)
            .map_err(|e| format!("{file}: {e}"))
    }

    /// `node FILE [ARGS]` and `node -e CODE`, through the attached [`JsRuntime`](crate::JsRuntime).
    async fn node(
        &mut self,
        args: &[String],
        stdin: &mut Input,
        out: &mut Vec<u8>,
        err: &mut Vec<u8>,
    ) -> i32 {
        let cwd = self.sandbox.cwd.clone();
        let (entry_path, code, script_args) = match args.first().map(String::as_str) {
            None => {
                err.extend_from_slice(
                    b"node: interactive mode is not available in this sandbox; run `node FILE`\n",
                );
                return 2;
            }
            Some("-e" | "--eval") => match args.get(1) {
                Some(code) => (None, Some(code.clone()), &args[2..]),
                None => {
                    err.extend_from_slice(b"node: -e requires an argument\n");
                    return 9;
                }
            },
            Some(file) => {
                let path = vfs::normalize(&cwd, file);
                let path = if self.sandbox.vfs.is_file(&path) {
                    path
                } else if self.sandbox.vfs.is_file(&format!("{path}.js")) {
                    format!("{path}.js")
                } else {
                    err.extend_from_slice(
                        format!("Error: Cannot find module '{path}'\n").as_bytes(),
                    );
                    return 1;
                };
                (Some(path), None, &args[1..])
            }
        };
        let remaining = (self.wall_clock_ms as f64 - self.elapsed_ms()).max(0.0) as u64;
        let sandbox = &*self.sandbox;
        let Some(runtime) = sandbox.js.as_deref() else {
            err.extend_from_slice(b"node: no JavaScript runtime is attached to this sandbox\n");
            return 127;
        };
        let input = stdin.take_all();
        let entry = match (&entry_path, &code) {
            (Some(path), _) => JsEntry::File(path),
            (None, Some(code)) => JsEntry::Eval(code),
            (None, None) => return 2,
        };
        let request = JsRequest {
            entry,
            args: script_args,
            cwd: &cwd,
            files: sandbox
                .vfs
                .files()
                .filter(|(path, _)| is_script_file(path))
                .filter_map(|(path, data)| Some((path, std::str::from_utf8(data).ok()?)))
                .collect(),
            stdin: &input,
            timeout_ms: remaining,
            max_output_bytes: sandbox.limits.max_stream_bytes,
        };
        let outcome = runtime.run(request).await;
        out.extend_from_slice(outcome.stdout.as_bytes());
        err.extend_from_slice(outcome.stderr.as_bytes());
        if outcome.timed_out {
            err.extend_from_slice(format!("node: timed out after {remaining} ms\n").as_bytes());
            return LIMIT_EXIT_CODE;
        }
        outcome.exit_code
    }
}

/// Splits `xargs` input into items: blanks separate, quotes and backslashes group.
fn xargs_items(input: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut started = false;
    let mut quote: Option<char> = None;
    let mut chars = input.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, '\\') => {
                current.extend(chars.next());
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    items.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            (None, c) => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        items.push(current);
    }
    items
}
