//! The builtins: the commands that need the interpreter itself — its variables, functions,
//! options, loops and positional parameters — rather than only the VFS and their streams.
//! The synchronous ones are dispatched by [`Shell::builtin`]; the ones that await (nested
//! scripts, `xargs`, `find -exec`, `node`) are called from [`Shell::invoke`].

use super::assign::DeclArg;
use super::exec::{Abort, Shell, Streams, report, unsupported};
use super::variables::Mode;
use crate::js::{JsEntry, JsRequest, is_script_file};
use crate::limits::LIMIT_EXIT_CODE;
use crate::vfs;

/// Where a nested script comes from and how it runs (see [`Shell::nested`]).
struct Nested {
    /// The script's text, or why it could not be read.
    source: Result<String, String>,
    /// `bash`/`sh` run it in a subshell; `eval` and `source` in this shell.
    subshell: bool,
    /// `bash -e`.
    errexit: bool,
    /// `$1…` for it, if it gets its own.
    positional: Option<Vec<String>>,
    /// `$0` for it, if it gets its own.
    arg0: Option<String>,
}

impl Shell<'_> {
    /// Synchronous builtins, then the command table, then "command not found".
    pub(super) fn builtin(&mut self, name: &str, args: &[String], io: &mut Streams) -> i32 {
        match name {
            "return" => self.return_(args, io),
            "local" | "declare" | "typeset" | "export" | "readonly" => {
                let args = args.iter().cloned().map(DeclArg::Word).collect();
                self.declaration(name, args, io)
            }
            "let" => self.let_(args, io),
            "trap" => self.trap(args, io),
            "mapfile" | "readarray" => self.mapfile(name, args, io),
            "printf" if args.first().is_some_and(|a| a == "-v") => self.printf_to_var(args, io),
            "shopt" => self.shopt(args, io),
            "type" => self.type_(args, io),
            "getopts" => self.getopts(args, io),
            "pushd" => self.pushd(args, io),
            "popd" => self.popd(io),
            "dirs" => {
                self.print_stack(io);
                0
            }
            "exec" => 0,
            "shift" => self.shift(args),
            "cd" => self.cd(args, io),
            "unset" => self.unset(args, io),
            "set" => self.set(args, io),
            "read" => self.read(args, io),
            "exit" => self.exit(args, io),
            "break" | "continue" => self.break_continue(name, args, io),
            "env" => {
                let mut env = self.state.env.clone();
                env.extend(args.iter().filter_map(|a| {
                    a.split_once('=')
                        .map(|(n, v)| (n.to_string(), v.to_string()))
                }));
                for (name, value) in env {
                    io.out
                        .extend_from_slice(format!("{name}={value}\n").as_bytes());
                }
                0
            }
            _ if crate::commands::lookup(name).is_some() => self.invoke_command(name, args, io),
            _ => self.not_found(name, io),
        }
    }

    /// What bash says of a name that is no command: a path to a file it cannot execute (the
    /// VFS has no execute bits), a missing path, or an unknown command.
    fn not_found(&self, name: &str, io: &mut Streams) -> i32 {
        let path = vfs::normalize(&self.state.cwd, name);
        if name.contains('/') && self.state.vfs.is_file(&path) {
            report(&mut io.err, format!("{name}: Permission denied"));
            126
        } else if name.contains('/') {
            report(&mut io.err, format!("{name}: No such file or directory"));
            127
        } else {
            report(&mut io.err, format!("{name}: command not found"));
            127
        }
    }

    fn return_(&mut self, args: &[String], io: &mut Streams) -> i32 {
        if self.locals.is_empty() {
            report(
                &mut io.err,
                "return: can only `return' from a function or sourced script",
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

    fn shift(&mut self, args: &[String]) -> i32 {
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

    fn exit(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let code = match args.first() {
            Some(arg) => arg.parse::<i32>().map(|c| c & 0xff).unwrap_or_else(|_| {
                report(
                    &mut io.err,
                    format!("exit: {arg}: numeric argument required"),
                );
                2
            }),
            None => self.status,
        };
        self.abort = Some(Abort::Exit(code));
        code
    }

    fn break_continue(&mut self, name: &str, args: &[String], io: &mut Streams) -> i32 {
        if self.loop_depth == 0 {
            report(
                &mut io.err,
                format!("{name}: only meaningful in a `for', `while', or `until' loop"),
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

    fn cd(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let target = match args.first().map(String::as_str) {
            None => self
                .state
                .env
                .get("HOME")
                .cloned()
                .unwrap_or_else(|| "/".into()),
            Some("-") => self
                .state
                .env
                .get("OLDPWD")
                .cloned()
                .unwrap_or_else(|| self.state.cwd.clone()),
            Some(dir) => dir.to_string(),
        };
        let path = vfs::normalize(&self.state.cwd, &target);
        match self.state.vfs.kind(&path) {
            Some(vfs::EntryKind::Dir) => {
                let old = std::mem::replace(&mut self.state.cwd, path.clone());
                self.state.env.insert("OLDPWD".into(), old);
                self.state.env.insert("PWD".into(), path);
                0
            }
            Some(vfs::EntryKind::File) => {
                report(&mut io.err, format!("cd: {target}: Not a directory"));
                1
            }
            None => {
                report(
                    &mut io.err,
                    format!("cd: {target}: No such file or directory"),
                );
                1
            }
        }
    }

    /// `set -e`, `-u`, `-o pipefail` (and their long names), `+` to turn one off.
    fn set(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            if arg == "--" || arg == "-" {
                self.positional = args.cloned().collect();
                return 0;
            }
            let (on, flags) = match arg.strip_prefix('-') {
                Some(flags) => (true, flags),
                None => match arg.strip_prefix('+') {
                    Some(flags) => (false, flags),
                    None => {
                        let mut positional = vec![arg.clone()];
                        positional.extend(args.cloned());
                        self.positional = positional;
                        return 0;
                    }
                },
            };
            for flag in flags.chars() {
                match flag {
                    'e' => self.options.errexit = on,
                    'u' => self.options.nounset = on,
                    'x' => self.options.xtrace = on,
                    // Hashing, brace expansion and `!` history are no-ops or always on here, and
                    // every variable is already in the environment (`-a`, allexport).
                    'h' | 'B' | 'H' | 'a' => {}
                    'o' => match args.next().map(String::as_str) {
                        Some("pipefail") => self.options.pipefail = on,
                        Some("errexit") => self.options.errexit = on,
                        Some("nounset") => self.options.nounset = on,
                        Some("xtrace") => self.options.xtrace = on,
                        Some("allexport" | "braceexpand" | "hashall") => {}
                        Some(
                            name @ ("noglob" | "noclobber" | "posix" | "errtrace" | "functrace"
                            | "noexec"),
                        ) => {
                            return unsupported(self, &mut io.err, format!("set: -o {name}"));
                        }
                        other => {
                            report(
                                &mut io.err,
                                format!("set: {}: invalid option name", other.unwrap_or("")),
                            );
                            return 2;
                        }
                    },
                    'f' | 'C' | 'n' | 'E' | 'T' | 'k' | 'm' | 'b' | 'v' | 'p' | 't' => {
                        return unsupported(self, &mut io.err, format!("set: -{flag}"));
                    }
                    other => {
                        report(&mut io.err, format!("set: -{other}: invalid option"));
                        return 2;
                    }
                }
            }
        }
        0
    }

    /// `printf -v NAME FORMAT [ARGS]`: the output goes into NAME.
    fn printf_to_var(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let Some(name) = args.get(1) else {
            report(&mut io.err, "printf: -v: option requires an argument");
            return 2;
        };
        let mut inner = Streams::default();
        let status = self.invoke_command("printf", &args[2..], &mut inner);
        io.err.append(&mut inner.err);
        let value = String::from_utf8_lossy(&inner.out).into_owned();
        let result = match name.split_once('[') {
            Some((array, rest)) if rest.ends_with(']') => {
                self.assign_element(array, &rest[..rest.len() - 1], value, Mode::Set)
            }
            _ if super::parse::is_name(name) => self.assign(name, value, Mode::Set),
            _ => {
                report(
                    &mut io.err,
                    format!("printf: `{name}': not a valid identifier"),
                );
                return 2;
            }
        };
        match result {
            Ok(()) => status,
            Err(e) => {
                report(&mut io.err, format!("printf: {e}"));
                1
            }
        }
    }

    /// `shopt`: the options that change nothing here are accepted; the ones that would change
    /// globbing or expansion are refused by name rather than ignored.
    fn shopt(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let setting = args.iter().any(|a| a == "-s" || a == "-u");
        for option in args.iter().filter(|a| !a.starts_with('-')) {
            let harmless = matches!(
                option.as_str(),
                "checkwinsize"
                    | "expand_aliases"
                    | "histappend"
                    | "cmdhist"
                    | "lithist"
                    | "interactive_comments"
                    | "sourcepath"
                    | "promptvars"
                    | "progcomp"
            );
            if setting && !harmless {
                return unsupported(self, &mut io.err, format!("shopt: {option}"));
            }
        }
        0
    }

    /// `find … -exec CMD {} ;` and `-exec CMD {} +`: the search runs as the `find` command,
    /// then CMD runs once per path (`;`) or once with all paths (`+`).
    pub(super) async fn find_exec(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let exec_at = args.iter().position(|a| a == "-exec").unwrap_or(args.len());
        let Some(end) = args[exec_at..].iter().position(|a| a == ";" || a == "+") else {
            io.err
                .extend_from_slice(b"find: missing argument to `-exec'\n");
            return 1;
        };
        let template = &args[exec_at + 1..exec_at + end];
        let batch = args[exec_at + end] == "+";
        // The search prints where the `-exec` stood, so only its branch of the expression
        // (`-path X -prune -o … -exec`) names the paths.
        let mut search: Vec<String> = args[..exec_at].to_vec();
        search.push("-print".into());
        search.extend(args[exec_at + end + 1..].iter().cloned());
        let out = std::mem::take(&mut io.out);
        let status = self.invoke_command("find", &search, io);
        let listing = std::mem::replace(&mut io.out, out);
        if template.is_empty() {
            io.err
                .extend_from_slice(b"find: missing argument to `-exec'\n");
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
            failed |= self.run_argv(Vec::new(), &argv, io).await != 0;
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

    /// `xargs [-n N] [-I REPLACE] [-0] [-r] [COMMAND [ARGS]]`.
    pub(super) async fn xargs(&mut self, args: &[String], io: &mut Streams) -> i32 {
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
        let input = String::from_utf8_lossy(&io.stdin.take_all()).into_owned();
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
                let code = self.run_argv(Vec::new(), &argv, io).await;
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
                record(self.run_argv(Vec::new(), &command, io).await);
            }
            return status;
        }
        for batch in items.chunks(per_call.min(items.len())) {
            let mut argv = command.clone();
            argv.extend(batch.iter().cloned());
            let code = self.run_argv(Vec::new(), &argv, io).await;
            record(code);
            if self.abort.is_some() {
                break;
            }
        }
        status
    }

    /// `bash -c`, `sh FILE`, `eval`, `source`: a script within the script.
    pub(super) async fn nested(&mut self, name: &str, args: &[String], io: &mut Streams) -> i32 {
        let nested = match self.nested_script(name, args) {
            Ok(nested) => nested,
            Err(message) => {
                io.err.extend_from_slice(message.as_bytes());
                return 2;
            }
        };
        let source = match nested.source {
            Ok(source) => source,
            Err(message) => {
                io.err
                    .extend_from_slice(format!("{name}: {message}\n").as_bytes());
                return 127;
            }
        };
        let script = match super::parse(&source) {
            Ok(script) => script,
            Err(e) => {
                io.err
                    .extend_from_slice(format!("{name}: -c: line 1: {e}\n").as_bytes());
                return 2;
            }
        };
        if !self.enter() {
            return self.status;
        }
        let outer = nested
            .positional
            .map(|p| std::mem::replace(&mut self.positional, p));
        let outer_arg0 = nested.arg0.map(|a| std::mem::replace(&mut self.arg0, a));
        let status = if nested.subshell {
            let options = self.options;
            self.options.errexit |= nested.errexit;
            let status = self.subshell(&script, io).await;
            self.options = options;
            status
        } else {
            self.script(&script, io).await
        };
        if let Some(outer) = outer {
            self.positional = outer;
        }
        if let Some(outer) = outer_arg0 {
            self.arg0 = outer;
        }
        self.leave();
        status
    }

    /// What `name ARGS` runs: from `-c`, a file or `eval`'s words; or the message (with its
    /// newline) when there is nothing to run.
    fn nested_script(&self, name: &str, args: &[String]) -> Result<Nested, String> {
        match name {
            "eval" => Ok(Nested {
                source: Ok(args.join(" ")),
                subshell: false,
                errexit: false,
                positional: None,
                arg0: None,
            }),
            "bash" | "sh" => {
                let mut errexit = false;
                let mut rest = args.iter();
                while let Some(arg) = rest.next() {
                    let (source, arg0) = if let Some(flags) = arg.strip_prefix('-') {
                        errexit |= flags.contains('e');
                        if !flags.contains('c') {
                            continue;
                        }
                        let Some(command) = rest.next() else {
                            break;
                        };
                        (Ok(command.clone()), rest.next().cloned())
                    } else {
                        (self.script_file(arg), Some(arg.clone()))
                    };
                    return Ok(Nested {
                        source,
                        subshell: true,
                        errexit,
                        positional: Some(rest.cloned().collect()),
                        arg0,
                    });
                }
                Err(format!(
                    "{name}: interactive shells are not available in this sandbox\n"
                ))
            }
            _ => match args.split_first() {
                Some((file, rest)) => Ok(Nested {
                    source: self.script_file(file),
                    subshell: false,
                    errexit: false,
                    positional: (!rest.is_empty()).then(|| rest.to_vec()),
                    arg0: None,
                }),
                None => Err(format!("bash: {name}: filename argument required\n")),
            },
        }
    }

    fn script_file(&self, file: &str) -> Result<String, String> {
        let path = vfs::normalize(&self.state.cwd, file);
        self.state
            .vfs
            .read_text(&path)
            .map_err(|e| format!("{file}: {e}"))
    }

    /// `node FILE [ARGS]` and `node -e CODE`, through the attached [`JsRuntime`](crate::JsRuntime).
    pub(super) async fn node(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let cwd = self.state.cwd.clone();
        let (entry_path, code, script_args) = match args.first().map(String::as_str) {
            None => {
                io.err.extend_from_slice(
                    b"node: interactive mode is not available in this sandbox; run `node FILE`\n",
                );
                return 2;
            }
            Some("-e" | "--eval") => match args.get(1) {
                Some(code) => (None, Some(code.clone()), &args[2..]),
                None => {
                    io.err.extend_from_slice(b"node: -e requires an argument\n");
                    return 9;
                }
            },
            Some(file) => {
                let path = vfs::normalize(&cwd, file);
                let path = if self.state.vfs.is_file(&path) {
                    path
                } else if self.state.vfs.is_file(&format!("{path}.js")) {
                    format!("{path}.js")
                } else {
                    io.err.extend_from_slice(
                        format!("Error: Cannot find module '{path}'\n").as_bytes(),
                    );
                    return 1;
                };
                (Some(path), None, &args[1..])
            }
        };
        let remaining = (self.wall_clock_ms as f64 - self.elapsed_ms()).max(0.0) as u64;
        let sandbox = &*self.state;
        let Some(runtime) = sandbox.js.as_deref() else {
            io.err
                .extend_from_slice(b"node: no JavaScript runtime is attached to this sandbox\n");
            return 127;
        };
        let input = io.stdin.take_all();
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
        io.out.extend_from_slice(outcome.stdout.as_bytes());
        io.err.extend_from_slice(outcome.stderr.as_bytes());
        if outcome.timed_out {
            io.err
                .extend_from_slice(format!("node: timed out after {remaining} ms\n").as_bytes());
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

#[cfg(test)]
mod tests {
    use crate::Vfs;
    use crate::shell::ShellState;
    use crate::shell::exec::Shell;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn nested_scripts_take_their_source_name_and_arguments() {
        let mut state = ShellState::new(Vfs::from_files([("/s.sh", b"echo $1".as_slice())]));
        let shell = Shell::new(&mut state, 1000);

        let inline = shell
            .nested_script("bash", &args(&["-e", "-c", "echo hi", "name", "a", "b"]))
            .unwrap();
        assert_eq!(inline.source.as_deref(), Ok("echo hi"));
        assert!(inline.subshell && inline.errexit);
        assert_eq!(inline.arg0.as_deref(), Some("name"));
        assert_eq!(inline.positional, Some(args(&["a", "b"])));

        let file = shell.nested_script("sh", &args(&["s.sh", "x"])).unwrap();
        assert_eq!(file.source.as_deref(), Ok("echo $1"));
        assert_eq!(file.arg0.as_deref(), Some("s.sh"));
        assert_eq!(file.positional, Some(args(&["x"])));

        let sourced = shell.nested_script(".", &args(&["s.sh"])).unwrap();
        assert!(!sourced.subshell && sourced.positional.is_none() && sourced.arg0.is_none());
        let missing = shell.nested_script("source", &args(&["nope.sh"])).unwrap();
        assert_eq!(
            missing.source,
            Err("nope.sh: No such file or directory".to_string())
        );

        assert_eq!(
            shell.nested_script("bash", &args(&["-e"])).err().as_deref(),
            Some("bash: interactive shells are not available in this sandbox\n")
        );
        assert_eq!(
            shell.nested_script("source", &[]).err().as_deref(),
            Some("bash: source: filename argument required\n")
        );
    }
}
