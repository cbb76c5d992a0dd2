//! What a name is to the shell — `command -v`/`-V`, `type` — and the builtins that move
//! through the directory stack, `pushd`, `popd`, `dirs`.

use super::exec::{Shell, Streams, report, unsupported};
use crate::vfs;

/// Bash's own builtins among the names this shell runs (`type` says "shell builtin" of them;
/// the others are programs, shown under `/usr/bin` as `which` shows them).
const BASH_BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "break",
    "cd",
    "command",
    "continue",
    "declare",
    "dirs",
    "echo",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "getopts",
    "let",
    "local",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "test",
    "trap",
    "true",
    "type",
    "typeset",
    "unset",
];

const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do", "done",
    "function", "in", "{", "}", "!", "[[", "]]", "time", "select", "coproc",
];

/// What a name stands for.
enum Kind {
    Keyword,
    Function,
    Builtin,
    File,
}

impl Shell<'_> {
    fn kind(&self, name: &str) -> Option<Kind> {
        if KEYWORDS.contains(&name) {
            Some(Kind::Keyword)
        } else if self.state.functions.contains_key(name) {
            Some(Kind::Function)
        } else if BASH_BUILTINS.contains(&name) {
            Some(Kind::Builtin)
        } else if crate::commands::names().any(|n| n == name) {
            Some(Kind::File)
        } else {
            None
        }
    }

    /// `command -v NAME…` / `command -V NAME…`.
    pub(super) fn command_lookup(
        &mut self,
        verbose: bool,
        names: &[String],
        io: &mut Streams,
    ) -> i32 {
        let mut status = 0;
        for name in names {
            let line = match (self.kind(name), verbose) {
                (Some(Kind::File), false) => format!("/usr/bin/{name}"),
                (Some(_), false) => name.clone(),
                (Some(kind), true) => describe(name, &kind),
                (None, _) => {
                    if verbose {
                        report(&mut io.err, format!("command: {name}: not found"));
                    }
                    status = 1;
                    continue;
                }
            };
            io.out.extend_from_slice(line.as_bytes());
            io.out.push(b'\n');
        }
        status
    }

    /// `type [-t] NAME…`.
    pub(super) fn type_(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let terse = args.iter().any(|a| a == "-t");
        let mut status = 0;
        for name in args.iter().filter(|a| !a.starts_with('-')) {
            let Some(kind) = self.kind(name) else {
                if !terse {
                    report(&mut io.err, format!("type: {name}: not found"));
                }
                status = 1;
                continue;
            };
            let line = match (terse, &kind) {
                (true, Kind::Keyword) => "keyword".to_string(),
                (true, Kind::Function) => "function".to_string(),
                (true, Kind::Builtin) => "builtin".to_string(),
                (true, Kind::File) => "file".to_string(),
                (false, Kind::Function) => {
                    return unsupported(self, &mut io.err, "type: printing a function's body");
                }
                (false, kind) => describe(name, kind),
            };
            io.out.extend_from_slice(line.as_bytes());
            io.out.push(b'\n');
        }
        status
    }

    /// `pushd DIR`: onto the stack, then into DIR; prints the stack.
    pub(super) fn pushd(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let Some(dir) = args.iter().find(|a| !a.starts_with('-') || *a == "-") else {
            return unsupported(self, &mut io.err, "pushd without a directory");
        };
        let previous = self.state.cwd.clone();
        let status = self.builtin("cd", std::slice::from_ref(dir), io);
        if status == 0 {
            self.state.dir_stack.push(previous);
            self.print_stack(io);
        }
        status
    }

    /// `popd`: back to the directory on top of the stack; prints the stack.
    pub(super) fn popd(&mut self, io: &mut Streams) -> i32 {
        let Some(dir) = self.state.dir_stack.pop() else {
            report(&mut io.err, "popd: directory stack empty");
            return 1;
        };
        let status = self.builtin("cd", &[dir], io);
        if status == 0 {
            self.print_stack(io);
        }
        status
    }

    /// `dirs`: the working directory, then the stack from its top.
    pub(super) fn print_stack(&self, io: &mut Streams) {
        let mut line = self.state.cwd.clone();
        for dir in self.state.dir_stack.iter().rev() {
            line.push(' ');
            line.push_str(&vfs::normalize("/", dir));
        }
        line.push('\n');
        io.out.extend_from_slice(line.as_bytes());
    }
}

fn describe(name: &str, kind: &Kind) -> String {
    match kind {
        Kind::Keyword => format!("{name} is a shell keyword"),
        Kind::Function => format!("{name} is a function"),
        Kind::Builtin => format!("{name} is a shell builtin"),
        Kind::File => format!("{name} is /usr/bin/{name}"),
    }
}
