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
use super::expand::ExpandError;
use super::parse::is_declaration;
use super::procsub::Substituted;
use super::state::ShellState;
use super::traps::Traps;
use super::variables::SavedVar;
use crate::commands::{self, Ctx};
use crate::limits::{Clock, LIMIT_EXIT_CODE, LimitExceeded};

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

/// `$RANDOM`'s seed: the sandbox is deterministic, so every call draws the same sequence.
const RANDOM_SEED: u32 = 0x2545_f491;

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
    /// `set -x`: each simple command is echoed to stderr with a `+ ` before it runs.
    pub(super) xtrace: bool,
}

pub(crate) struct Shell<'s> {
    pub(crate) state: &'s mut ShellState,
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
    pub(super) locals: Vec<Vec<(String, SavedVar)>>,
    /// The files of the process substitutions of the commands being run.
    pub(super) substituted: Vec<Substituted>,
    /// The status of the last command substitution, for `x=$(cmd)`'s own status.
    pub(super) substitution_status: Option<i32>,
    /// `trap` actions.
    pub(super) traps: Traps,
    /// `$RANDOM`'s generator state.
    pub(super) random: u32,
    /// `getopts`' place inside a group of flags: (OPTIND, character offset).
    pub(super) getopts_place: Option<(usize, usize)>,
    /// Arithmetic expressions parsed in this call, by their text.
    pub(super) arith_cache:
        std::collections::HashMap<String, std::rc::Rc<Option<super::arith::Expr>>>,
}

impl<'s> Shell<'s> {
    pub(crate) fn new(state: &'s mut ShellState, wall_clock_ms: u64) -> Self {
        let started_ms = state.clock.now_ms();
        Shell {
            state,
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
            substituted: Vec::new(),
            substitution_status: None,
            traps: Traps::default(),
            random: RANDOM_SEED,
            getopts_place: None,
            arith_cache: std::collections::HashMap::new(),
        }
    }

    pub(super) fn elapsed_ms(&self) -> f64 {
        self.state.clock.now_ms() - self.started_ms
    }

    fn out_of_time(&mut self) -> bool {
        if self.abort.is_none() && self.elapsed_ms() > self.wall_clock_ms as f64 {
            self.abort = Some(Abort::Limit(LimitExceeded::WallClock(self.wall_clock_ms)));
        }
        self.abort.is_some()
    }

    /// Counts one command; false when the call must stop.
    fn tick_command(&mut self) -> bool {
        let elapsed_ms = self.elapsed_ms();
        let max = self.state.limits.max_commands;
        if let Some(limit) = count_command(&mut self.commands, max, elapsed_ms, self.wall_clock_ms)
        {
            self.abort.get_or_insert(Abort::Limit(limit));
        }
        self.abort.is_none()
    }

    /// Counts one loop iteration; false when the call must stop.
    pub(super) fn tick_iteration(&mut self) -> bool {
        self.iterations += 1;
        let max = self.state.limits.max_loop_iterations;
        if self.iterations > max && self.abort.is_none() {
            self.abort = Some(Abort::Limit(LimitExceeded::LoopIterations(max)));
        }
        !self.out_of_time()
    }

    pub(super) fn pipe_overflow(&mut self) {
        if self.abort.is_none() {
            let max = self.state.limits.max_pipe_bytes;
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
        let max = self.state.limits.max_stream_bytes.max(1024 * 1024);
        if len > max && self.abort.is_none() {
            self.abort = Some(Abort::Limit(LimitExceeded::ValueSize(max)));
        }
        self.abort.is_some()
    }

    /// Runs a whole script and returns its exit status, applying `exit` and limits.
    pub(crate) async fn run(&mut self, script: &Script, io: &mut Streams) -> i32 {
        self.script(script, io).await;
        let status = self.finish(io).await;
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

    /// The status a script ends with (its last command's, or `exit`'s), after the `EXIT` trap
    /// ran; an `exit` inside the trap sets the status instead.
    pub(super) async fn finish(&mut self, io: &mut Streams) -> i32 {
        let status = match self.abort {
            Some(Abort::Exit(code) | Abort::Return(code)) => code,
            _ => self.status,
        };
        let Some(action) = self.traps.exit.take() else {
            return status;
        };
        if matches!(self.abort, Some(Abort::Limit(_))) {
            return status;
        }
        self.abort = None;
        self.status = status;
        if let Ok(script) = super::parse::parse(&action) {
            self.script(&script, io).await;
        }
        match self.abort {
            Some(Abort::Exit(code)) => code,
            Some(Abort::Limit(_)) => status,
            _ => {
                self.abort = Some(Abort::Exit(status));
                status
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
        let failed = status != 0
            && self.condition_depth == 0
            && last_ran == list.rest.len()
            && !last_pipeline.negated
            && self.abort.is_none();
        if failed {
            // The ERR trap runs where `set -e` would act, and not again inside itself.
            if let Some(action) = self.traps.err.take() {
                if let Ok(script) = super::parse::parse(&action) {
                    self.script(&script, io).await;
                }
                self.traps.err.get_or_insert(action);
                self.status = status;
            }
            if self.options.errexit && self.abort.is_none() {
                self.abort = Some(Abort::Exit(status));
            }
        }
    }

    async fn pipeline(&mut self, pipeline: &Pipeline, io: &mut Streams) -> i32 {
        if pipeline.negated {
            self.condition_depth += 1;
        }
        let mut status = if pipeline.commands.len() == 1 {
            let status = self.command(&pipeline.commands[0], io).await;
            self.set_pipestatus(vec![status]);
            status
        } else {
            let mut input: Option<Input> = None;
            let mut statuses = Vec::new();
            let last = pipeline.commands.len() - 1;
            for (index, command) in pipeline.commands.iter().enumerate() {
                let reads_yes = input.as_ref().is_some_and(Input::is_endless);
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
                let (scope, options, traps) = (self.state.save(), self.options, self.traps.clone());
                let yes = match index < last {
                    true => self.yes_before_pipe(command, &mut stage).await,
                    false => None,
                };
                if let Some(yes) = yes {
                    self.state.restore(scope);
                    (self.options, self.traps) = (options, traps);
                    let budget = self.state.limits.max_pipe_bytes;
                    match yes {
                        // Its reader takes what it needs; then `yes` dies of SIGPIPE, as in bash.
                        Ok(line) => {
                            input = Some(Input::endless(line, budget));
                            statuses.push(128 + 13);
                        }
                        Err(status) => {
                            input = Some(Input::new(Vec::new()));
                            statuses.push(status);
                            // A refusal (`yes --help`) ends the script, as a command's does.
                            if status == 2 {
                                self.abort.get_or_insert(Abort::Exit(2));
                            }
                        }
                    }
                    if index == 0 {
                        io.stdin = std::mem::take(&mut stage.stdin);
                    }
                    io.err.append(&mut stage.err);
                    continue;
                }
                let mut status = self.command(command, &mut stage).await;
                if let Some(Abort::Exit(code)) = self.abort {
                    self.abort = None;
                    status = code;
                }
                self.state.restore(scope);
                (self.options, self.traps) = (options, traps);
                if reads_yes && stage.stdin.drained_endless() {
                    // Its reader asked for everything: in bash it would have to stop on its own
                    // (`sed 3q`) or wait forever (`wc -l`); here it ran on nothing.
                    stage.out.clear();
                    status = unsupported(
                        self,
                        &mut stage.err,
                        "`yes` into a command that reads all its input (a pipeline here runs \
                         one command after another; `head -n N` takes what it needs)",
                    );
                }
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
            self.set_pipestatus(statuses.clone());
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

    /// A plain `yes [WORD...]` that writes into a pipe — no function of that name, no
    /// assignment or redirection —, counted as a command, its words expanded and traced as any
    /// command's: its line, or the status of its option error (reported on `io.err`). `None`
    /// for anything else, which runs as usual (an expansion error included, reported there).
    async fn yes_before_pipe(
        &mut self,
        command: &Command,
        io: &mut Streams,
    ) -> Option<Result<Vec<u8>, i32>> {
        let Command::Simple {
            assigns,
            words,
            redirects,
        } = command
        else {
            return None;
        };
        let plain = assigns.is_empty()
            && redirects.is_empty()
            && words.first().and_then(Word::as_literal) == Some("yes")
            && !self.state.functions.contains_key("yes");
        if !plain {
            return None;
        }
        let argv = self.expand_words(words, io).await.ok()?;
        if !self.tick_command() {
            return None;
        }
        if self.options.xtrace {
            io.err
                .extend_from_slice(format!("+ {}\n", argv.join(" ")).as_bytes());
        }
        Some(
            crate::commands::yes_line(&argv[1..]).map_err(|(message, status)| {
                io.err.extend_from_slice(message.as_bytes());
                io.err.push(b'\n');
                status
            }),
        )
    }

    fn command<'a>(&'a mut self, command: &'a Command, io: &'a mut Streams) -> Local<'a, i32> {
        Box::pin(async move {
            let mark = self.substituted.len();
            let status = match command {
                Command::Simple {
                    assigns,
                    words,
                    redirects,
                } => self.simple(assigns, words, redirects, io).await,
                Command::Compound { body, redirects } => 'compound: {
                    let (stdin, sinks) = match self.redirects(redirects, io).await {
                        Ok(setup) => setup,
                        Err(message) => break 'compound fail(&mut io.err, message),
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
                    std::rc::Rc::make_mut(&mut self.state.functions)
                        .insert(name.clone(), std::rc::Rc::new((**body).clone()));
                    0
                }
            };
            if self.substituted.len() > mark {
                self.close_substitutions(mark, io).await;
            }
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
        let scope = self.state.save();
        let options = self.options;
        let traps = std::mem::take(&mut self.traps);
        self.script(script, io).await;
        let status = self.finish(io).await;
        // `exit`, `return`, `break` and `continue` end only the subshell, as in bash; a limit
        // ends the call.
        if !matches!(self.abort, Some(Abort::Limit(_))) {
            self.abort = None;
        }
        self.state.restore(scope);
        self.options = options;
        self.traps = traps;
        self.leave();
        status
    }

    async fn simple(
        &mut self,
        assigns: &[Assign],
        words: &[Word],
        redirects: &[Redirect],
        io: &mut Streams,
    ) -> i32 {
        if !self.tick_command() {
            return self.status;
        }
        self.substitution_status = None;
        let declaration = words
            .first()
            .and_then(Word::as_literal)
            .filter(|name| is_declaration(name) && !self.state.functions.contains_key(*name));
        let (argv, declared) = match declaration {
            Some(name) => match self.declaration_args(&words[1..], io).await {
                Ok(args) => (vec![name.to_string()], Some(args)),
                Err(e) => return self.expansion_failed(e, io),
            },
            None => match self.expand_words(words, io).await {
                Ok(argv) => (argv, None),
                Err(e) => return self.expansion_failed(e, io),
            },
        };
        if argv.is_empty() {
            // Alone, assignments happen one after another (`IFS=, a=($x)` splits on commas).
            for assign in assigns {
                let value = match self.evaluate_assign(assign, io).await {
                    Ok(value) => value,
                    Err(e) => return self.expansion_failed(e, io),
                };
                if let Err(e) = self.store(value) {
                    report(&mut io.err, e);
                    self.abort.get_or_insert(Abort::Exit(1));
                    return 1;
                }
            }
            if self.abort.is_some() {
                return self.status;
            }
            return match self.redirects(redirects, io).await {
                Ok(_) => self.substitution_status.unwrap_or(0),
                Err(message) => fail(&mut io.err, message),
            };
        }
        let mut values = Vec::new();
        for assign in assigns {
            match self.evaluate_assign(assign, io).await {
                Ok(value) => values.push(value),
                Err(e) => return self.expansion_failed(e, io),
            }
        }
        if self.abort.is_some() {
            return self.status;
        }
        if argv.len() == 1 && argv[0] == "exec" && !redirects.is_empty() {
            return unsupported(
                self,
                &mut io.err,
                "exec with redirections (persistent descriptors)",
            );
        }
        if self.options.xtrace {
            io.err
                .extend_from_slice(format!("+ {}\n", argv.join(" ")).as_bytes());
        }
        let (stdin, sinks) = match self.redirects(redirects, io).await {
            Ok(setup) => setup,
            Err(message) => return fail(&mut io.err, message),
        };
        // A substitution in a redirection may have hit a limit: the command does not run.
        if self.abort.is_some() {
            return self.status;
        }
        let saved: Vec<(String, SavedVar)> = values
            .iter()
            .map(|value| (value.name.clone(), self.save_var(&value.name)))
            .collect();
        for value in values {
            if let Err(e) = self.store(value) {
                report(&mut io.err, e);
            }
        }
        let redirected = stdin.is_some();
        let mut own = Streams {
            stdin: stdin.unwrap_or_else(|| std::mem::take(&mut io.stdin)),
            out: Vec::new(),
            err: Vec::new(),
        };
        let status = match declared {
            Some(args) => self.declaration(&argv[0], args, &mut own),
            None => self.invoke(&argv, &mut own).await,
        };
        if !redirected {
            io.stdin = std::mem::take(&mut own.stdin);
        }
        for (name, old) in saved.into_iter().rev() {
            self.restore_var(&name, old);
        }
        let delivered = self.route(&sinks, own.out, own.err, io);
        if delivered { status } else { status.max(1) }
    }

    /// Reports an expansion error. Most end the shell, as in a non-interactive bash: bad
    /// arithmetic, a bad substitution, an unset variable under `set -u`, an unsupported
    /// construct.
    pub(super) fn expansion_failed(&mut self, error: ExpandError, io: &mut Streams) -> i32 {
        if let ExpandError::Limit = error {
            return self.status;
        }
        report(&mut io.err, &error);
        let status = error.exit_status();
        self.abort.get_or_insert(Abort::Exit(status));
        status
    }

    /// Runs one command. The arms that await (functions, `node`, nested scripts, `xargs`,
    /// `find -exec`, `env CMD`) stay here; everything synchronous is in [`Shell::builtin`], which
    /// keeps this function's frame small — it sits on the stack once per level of recursion.
    async fn invoke(&mut self, argv: &[String], io: &mut Streams) -> i32 {
        let name = argv[0].as_str();
        let args = &argv[1..];
        if let Some(body) = self.state.functions.get(name).cloned() {
            return Box::pin(self.call_function(name, &body, args, io)).await;
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
            "command" => match args.first().map(String::as_str) {
                Some(flag @ ("-v" | "-V")) => self.command_lookup(flag == "-V", &args[1..], io),
                Some(_) if self.state.functions.contains_key(&args[0]) => {
                    Box::pin(self.not_a_function(&args[0], &args[1..], io)).await
                }
                Some(_) => Box::pin(self.run_argv(Vec::new(), args, io)).await,
                None => 0,
            },
            "exec" if !args.is_empty() => {
                let status = Box::pin(self.run_argv(Vec::new(), args, io)).await;
                self.abort.get_or_insert(Abort::Exit(status));
                status
            }
            // Boxed: only a first use of an on-demand command awaits, and this frame stays small.
            _ if commands::pending(name) => Box::pin(self.not_a_function(name, args, io)).await,
            _ => self.builtin(name, args, io),
        }
    }

    /// Runs a builtin or a command of the table (what `command NAME` runs even when a function
    /// is called NAME). A command whose code the host supplies on first use (a split build's awk
    /// and jq) is loaded here, then run like the rest.
    async fn not_a_function(&mut self, name: &str, args: &[String], io: &mut Streams) -> i32 {
        if commands::pending(name)
            && let Err(why) = commands::load(name).await
        {
            report(
                &mut io.err,
                format!("{name}: cannot load the command: {why}"),
            );
            return 127;
        }
        self.builtin(name, args, io)
    }

    /// Calls a shell function: `$1…` become its arguments, `local` variables are restored and
    /// `return` ends it.
    async fn call_function(
        &mut self,
        name: &str,
        body: &Command,
        args: &[String],
        io: &mut Streams,
    ) -> i32 {
        if !self.enter() {
            return self.status;
        }
        let outer = std::mem::replace(&mut self.positional, args.to_vec());
        // `FUNCNAME`: this function, then its callers; restored with the locals.
        let mut funcname = vec![name.to_string()];
        funcname.extend(
            self.state
                .arrays
                .get("FUNCNAME")
                .map(|a| a.values())
                .unwrap_or_default(),
        );
        self.locals
            .push(vec![("FUNCNAME".to_string(), self.save_var("FUNCNAME"))]);
        self.state.env.remove("FUNCNAME");
        self.state
            .arrays
            .insert("FUNCNAME".into(), super::vars::Array::indexed(funcname));
        let mut status = self.command(body, io).await;
        if let Some(Abort::Return(code)) = self.abort {
            self.abort = None;
            status = code;
        }
        for (name, saved) in self.locals.pop().unwrap_or_default().into_iter().rev() {
            self.restore_var(&name, saved);
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
                .map(|(name, value)| Assign {
                    name,
                    subscript: None,
                    append: false,
                    value: AssignValue::Scalar(Word::literal(&value)),
                })
                .collect(),
            words: argv.iter().map(|a| Word::literal(a)).collect(),
            redirects: Vec::new(),
        };
        let stdin = std::mem::take(&mut io.stdin);
        let status = self.command(&command, io).await;
        io.stdin = stdin;
        status
    }

    /// `PIPESTATUS`: the statuses of the last pipeline's commands.
    fn set_pipestatus(&mut self, statuses: Vec<i32>) {
        self.state.env.remove("PIPESTATUS");
        self.state.arrays.insert(
            "PIPESTATUS".into(),
            super::vars::Array::indexed(statuses.into_iter().map(|s| s.to_string())),
        );
    }

    /// Runs a command from the table directly (no expansion, no redirection).
    pub(super) fn invoke_command(&mut self, name: &str, args: &[String], io: &mut Streams) -> i32 {
        let Some(command) = commands::lookup(name) else {
            return 127;
        };
        let max_output = self.state.limits.max_pipe_bytes;
        let err_before = io.err.len();
        // A command this one runs (awk's `system`, pipes, `getline`) is counted and timed as
        // [`Shell::tick_command`] counts one typed here; the limit that stops it ends the call.
        let mut limits = CallLimits {
            commands: &mut self.commands,
            abort: &mut self.abort,
            max: self.state.limits.max_commands,
            clock: &*self.state.clock,
            started_ms: self.started_ms,
            wall_clock_ms: self.wall_clock_ms,
        };
        let mut ctx = Ctx {
            vfs: &mut self.state.vfs,
            cwd: &self.state.cwd,
            env: &self.state.env,
            stdin: &mut io.stdin,
            out: std::mem::take(&mut io.out),
            err: std::mem::take(&mut io.err),
            max_output,
            overflowed: false,
            limits: &mut limits,
        };
        let status = command(&mut ctx, args);
        let overflowed = ctx.overflowed;
        io.out = ctx.out;
        io.err = ctx.err;
        if overflowed {
            self.pipe_overflow();
        }
        // A command that refused what it was asked (its own stderr says so) ends the script
        // like the shell's own refusals ([`unsupported`]): later commands would run on a
        // different answer (`sort -V f; echo $?`).
        let refused = String::from_utf8_lossy(&io.err[err_before.min(io.err.len())..])
            .contains(commands::REFUSAL);
        if status != 0 && refused {
            self.abort.get_or_insert(Abort::Exit(status));
        }
        status
    }

    pub(crate) fn nounset(&self) -> bool {
        self.options.nounset
    }
}

/// The call's limits as a command that runs commands itself (awk) sees them.
struct CallLimits<'l> {
    commands: &'l mut usize,
    abort: &'l mut Option<Abort>,
    max: usize,
    clock: &'l dyn Clock,
    started_ms: f64,
    wall_clock_ms: u64,
}

impl CallLimits<'_> {
    /// `Err` with the message of the limit that ended the call, if one did; `limit` (a limit
    /// just exceeded) ends it unless another limit already had — whatever else was pending, so
    /// that nothing turns the limits off.
    fn stop(&mut self, limit: Option<LimitExceeded>) -> Result<(), String> {
        if let Some(limit) = limit
            && !matches!(self.abort, Some(Abort::Limit(_)))
        {
            *self.abort = Some(Abort::Limit(limit));
        }
        match &self.abort {
            Some(Abort::Limit(limit)) => Err(limit.to_string()),
            _ => Ok(()),
        }
    }
}

impl commands::CallLimits for CallLimits<'_> {
    fn admit(&mut self) -> Result<(), String> {
        let elapsed_ms = self.clock.now_ms() - self.started_ms;
        let limit = count_command(self.commands, self.max, elapsed_ms, self.wall_clock_ms);
        self.stop(limit)
    }

    fn check(&mut self) -> Result<(), String> {
        let elapsed_ms = self.clock.now_ms() - self.started_ms;
        let limit = (elapsed_ms > self.wall_clock_ms as f64)
            .then_some(LimitExceeded::WallClock(self.wall_clock_ms));
        self.stop(limit)
    }
}

/// Counts one command against the call's `max` and checks the wall clock: the limit that now
/// ends the call, if one does.
fn count_command(
    commands: &mut usize,
    max: usize,
    elapsed_ms: f64,
    wall_clock_ms: u64,
) -> Option<LimitExceeded> {
    *commands += 1;
    if *commands > max {
        Some(LimitExceeded::Commands(max))
    } else if elapsed_ms > wall_clock_ms as f64 {
        Some(LimitExceeded::WallClock(wall_clock_ms))
    } else {
        None
    }
}

/// Writes `bash: MESSAGE` and a newline to `err`, as bash reports its own errors.
pub(super) fn report(err: &mut Vec<u8>, message: impl Display) {
    err.extend_from_slice(format!("bash: {message}\n").as_bytes());
}

/// The one form of "this sandbox does not do that": `bash: WHAT: not supported in this
/// sandbox` on stderr; the script ends with status 2, so no later command runs on a wrong
/// premise.
pub(super) fn unsupported(shell: &mut Shell<'_>, err: &mut Vec<u8>, what: impl Display) -> i32 {
    report(err, format!("{what}: not supported in this sandbox"));
    shell.abort.get_or_insert(Abort::Exit(2));
    2
}

/// [`report`]s `message` and returns 1, the status of a command that failed before it ran.
pub(super) fn fail(err: &mut Vec<u8>, message: impl Display) -> i32 {
    report(err, message);
    1
}
