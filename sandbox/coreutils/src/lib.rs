//! The command table: every program the shell can run besides the interpreter's own builtins
//! (`cd`, `export`, `read`, `node`, …). A command gets a [`Ctx`] — the VFS, the working
//! directory, the environment and its streams — and returns its exit status. Each file holds one
//! family: files and directories, `cat`, `find`, `du`, line filters, `sort`, columns, `tr`, printers, search, `sed`,
//! `awk`, `jq`, `diff`, `expr`, `test`, `apply_patch`. The crate knows nothing of the shell that calls
//! it: no I/O, no clock, no processes — it compiles for wasm32 and native alike.

mod apply_patch;
mod awk;
mod cat;
mod cformat;
mod clock;
mod columns;
mod diff;
mod du;
mod encoding;
mod expr;
mod files;
mod find;
mod input;
mod jq;
mod on_demand;
mod print;
pub mod search;
mod sed;
mod sort;
mod test;
mod text;
mod tr;

use std::collections::{BTreeMap, BTreeSet};

pub use input::Input;
pub use on_demand::{Loader, ON_DEMAND, load, pending, set_loader};
pub use print::yes_line;

use tether_vfs::{self as vfs, Vfs};

/// What a running command can touch.
pub struct Ctx<'a> {
    pub vfs: &'a mut Vfs,
    pub cwd: &'a str,
    pub env: &'a BTreeMap<String, String>,
    pub stdin: &'a mut Input,
    pub out: Vec<u8>,
    pub err: Vec<u8>,
    /// Most bytes the command may write to stdout; past it, output is dropped and
    /// `overflowed` set, and the interpreter ends the call.
    pub max_output: usize,
    pub overflowed: bool,
    /// The limits of the call the command runs in, for a command that runs others itself
    /// (awk) or works long: the shell's count of commands and its wall clock.
    pub limits: &'a mut dyn CallLimits,
}

/// What a command asks of the call it runs in (the shell's limits), so that a command run from
/// awk costs what the same command typed at the prompt does, and awk's own long work stops
/// when the call's time is up. `Err` carries the limit's message; the shell reports it once,
/// at the call's end.
pub trait CallLimits {
    /// Before each command this one runs itself (awk's `system`, `print | "cmd"`,
    /// `"cmd" | getline`): counts it as one of the call's; `Err` once the call's limits are
    /// used up.
    fn admit(&mut self) -> Result<(), String>;
    /// Now and then during long work, counting nothing: `Err` once the call has been stopped (a
    /// limit refused a command, a nested one's included) or its time is up.
    fn check(&mut self) -> Result<(), String>;
}

/// No call around the command: every command admitted, no time limit (a command's own budgets
/// still bound it). For tests, and for a command run on its own.
pub struct Unlimited;

impl CallLimits for Unlimited {
    fn admit(&mut self) -> Result<(), String> {
        Ok(())
    }

    fn check(&mut self) -> Result<(), String> {
        Ok(())
    }
}

pub type Command = fn(&mut Ctx, &[String]) -> i32;

/// How a refusal ends: a command that meets a construct or option it lacks exits non-zero
/// with `NAME: CONSTRUCT: not supported in this sandbox` on stderr, and the shell then ends the
/// script (`sandbox/README.md`, "Refusals").
pub const REFUSAL: &str = ": not supported in this sandbox";

const TABLE: &[(&str, Command)] = &[
    ("apply_patch", apply_patch::apply_patch),
    #[cfg(not(tether_split_commands))]
    ("awk", awk::awk),
    ("applypatch", apply_patch::apply_patch),
    ("basename", files::basename),
    ("cat", cat::cat),
    ("comm", columns::comm),
    ("cp", files::cp),
    ("cut", columns::cut),
    ("diff", diff::diff),
    ("du", du::du),
    ("dirname", files::dirname),
    ("echo", print::echo),
    ("egrep", search::egrep),
    ("expr", expr::expr),
    ("false", |_, _| 1),
    ("fgrep", search::fgrep),
    ("find", find::find),
    ("grep", search::grep),
    ("head", text::head),
    #[cfg(not(tether_split_commands))]
    ("jq", jq::jq),
    ("ls", files::ls),
    ("mkdir", files::mkdir),
    ("mv", files::mv),
    ("nl", text::nl),
    ("paste", columns::paste),
    ("printf", print::printf),
    ("pwd", files::pwd),
    ("rev", text::rev),
    ("rg", search::rg),
    ("rm", files::rm),
    ("sed", sed::sed),
    ("seq", print::seq),
    ("sort", sort::sort),
    ("tac", text::tac),
    ("tail", text::tail),
    ("tee", files::tee),
    ("test", test::test),
    ("[", test::bracket),
    ("touch", files::touch),
    ("tr", tr::tr),
    ("tree", files::tree),
    ("true", |_, _| 0),
    (":", |_, _| 0),
    ("uniq", text::uniq),
    ("wc", text::wc),
    ("which", which),
    ("yes", print::yes),
];

/// Names the interpreter handles itself (listed so `which` knows them).
const BUILTINS: &[&str] = &[
    "cd",
    "export",
    "unset",
    "set",
    "read",
    "exit",
    "node",
    "bash",
    "sh",
    "eval",
    "source",
    ".",
    "break",
    "continue",
    "xargs",
    "env",
    "return",
    "local",
    "shift",
    "declare",
    "typeset",
    "readonly",
    "let",
    "trap",
    "mapfile",
    "readarray",
    "shopt",
    "command",
    "type",
    "getopts",
    "pushd",
    "popd",
    "dirs",
    "exec",
];

/// The command called `name`: from the table, or one supplied on first use (`on_demand.rs`).
pub fn lookup(name: &str) -> Option<Command> {
    TABLE
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, c)| *c)
        .or_else(|| on_demand::supplied(name))
}

/// The entry points of the commands a split build loads on first use, for the host to put
/// behind its loader ([`set_loader`]). Only a split build exports them: elsewhere they are in
/// the table.
#[cfg(tether_split_commands)]
pub mod split {
    pub use crate::awk::awk;
    pub use crate::jq::jq;
}

/// Every command name the shell knows, for documentation and `which` (the ones a split build
/// loads on first use included).
pub fn names() -> impl Iterator<Item = &'static str> {
    let on_demand: &[&str] = if cfg!(tether_split_commands) {
        &ON_DEMAND
    } else {
        &[]
    };
    TABLE
        .iter()
        .map(|(n, _)| *n)
        .chain(on_demand.iter().copied())
        .chain(BUILTINS.iter().copied())
}

fn which(ctx: &mut Ctx, args: &[String]) -> i32 {
    let mut status = 0;
    for name in args.iter().filter(|a| !a.starts_with('-')) {
        if names().any(|n| n == name) {
            ctx.print(&format!("/usr/bin/{name}\n"));
        } else {
            status = 1;
        }
    }
    status
}

impl Ctx<'_> {
    pub fn resolve(&self, path: &str) -> String {
        vfs::normalize(self.cwd, path)
    }

    pub fn print(&mut self, text: &str) {
        self.write(text.as_bytes());
    }

    pub fn write(&mut self, bytes: &[u8]) {
        if self.out.len() + bytes.len() > self.max_output {
            self.overflowed = true;
        } else {
            self.out.extend_from_slice(bytes);
        }
    }

    pub fn warn(&mut self, text: &str) {
        self.err.extend_from_slice(text.as_bytes());
        self.err.push(b'\n');
    }

    /// The bytes of a file operand, or of stdin for `-`.
    pub fn read_operand(&mut self, name: &str) -> Result<Vec<u8>, vfs::VfsError> {
        if name == "-" {
            return Ok(self.stdin.take_all());
        }
        let path = self.resolve(name);
        self.vfs.read(&path).map(<[u8]>::to_vec)
    }

    /// The inputs of a filter: each file operand, or stdin when there are none. Errors are
    /// reported as `cmd: name: reason`; the returned flag says whether any occurred.
    pub fn inputs(&mut self, cmd: &str, files: &[String]) -> (Vec<(String, Vec<u8>)>, bool) {
        if files.is_empty() {
            return (vec![("-".into(), self.stdin.take_all())], false);
        }
        let mut failed = false;
        let mut inputs = Vec::new();
        for name in files {
            match self.read_operand(name) {
                Ok(data) => inputs.push((name.clone(), data)),
                Err(e) => {
                    self.warn(&format!("{cmd}: {name}: {e}"));
                    failed = true;
                }
            }
        }
        (inputs, failed)
    }
}

/// Parsed command-line options: flags, options with values (last wins, all kept), operands.
#[derive(Debug, Default)]
pub struct Opts {
    pub flags: BTreeSet<char>,
    pub values: Vec<(char, String)>,
    pub operands: Vec<String>,
}

impl Opts {
    pub fn has(&self, flag: char) -> bool {
        self.flags.contains(&flag)
    }

    pub fn value(&self, flag: char) -> Option<&str> {
        self.values
            .iter()
            .rev()
            .find(|(f, _)| *f == flag)
            .map(|(_, v)| v.as_str())
    }

    pub fn all(&self, flag: char) -> impl Iterator<Item = &str> {
        self.values
            .iter()
            .filter(move |(f, _)| *f == flag)
            .map(|(_, v)| v.as_str())
    }

    /// The refusal for the first option given that is not in `known` (flags and options with
    /// values alike), for a command that would otherwise run as if it had not been given:
    /// `sort: -V: not supported in this sandbox`.
    pub fn refuse_unknown(&self, cmd: &str, known: &str) -> Result<(), String> {
        let given = self.flags.iter().chain(self.values.iter().map(|(f, _)| f));
        match given.into_iter().find(|flag| !known.contains(**flag)) {
            Some(flag) => Err(format!("{cmd}: -{flag}{REFUSAL}")),
            None => Ok(()),
        }
    }
}

/// Parses `args` getopt-style. `with_value` lists the short options that take a value;
/// `long` maps long options (`--name` or `--name=value`) to short ones. `-NUM` becomes the value
/// of `numeric`, if given (`head -5`). Options may follow operands, as GNU allows.
pub fn parse_opts(
    cmd: &str,
    args: &[String],
    with_value: &str,
    long: &[(&str, char)],
    numeric: Option<char>,
) -> Result<Opts, String> {
    let mut opts = Opts::default();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--" {
            opts.operands.extend(iter.by_ref().cloned());
            break;
        }
        if let Some(name) = arg.strip_prefix("--") {
            let (name, inline) = match name.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (name, None),
            };
            let Some((_, short)) = long.iter().find(|(l, _)| *l == name) else {
                return Err(format!("{cmd}: unrecognized option '--{name}'"));
            };
            if with_value.contains(*short) {
                let value = match inline {
                    Some(v) => v,
                    None => iter
                        .next()
                        .cloned()
                        .ok_or_else(|| format!("{cmd}: option '--{name}' requires an argument"))?,
                };
                opts.values.push((*short, value));
            } else {
                opts.flags.insert(*short);
            }
            continue;
        }
        let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.is_empty()) else {
            opts.operands.push(arg.clone());
            continue;
        };
        if let Some(n) = numeric
            && cluster.chars().all(|c| c.is_ascii_digit())
        {
            opts.values.push((n, cluster.to_string()));
            continue;
        }
        let chars: Vec<char> = cluster.chars().collect();
        for (i, c) in chars.iter().enumerate() {
            if with_value.contains(*c) {
                let rest: String = chars[i + 1..].iter().collect();
                let value = if rest.is_empty() {
                    iter.next()
                        .cloned()
                        .ok_or_else(|| format!("{cmd}: option requires an argument -- '{c}'"))?
                } else {
                    rest
                };
                opts.values.push((*c, value));
                break;
            }
            opts.flags.insert(*c);
        }
    }
    Ok(opts)
}

/// Splits text into lines, each without its `\n`; a final line without newline is kept.
pub fn lines(data: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = data.split(|b| *b == b'\n').collect();
    if data.ends_with(b"\n") || data.is_empty() {
        lines.pop();
    }
    lines
}

/// Reports an option error the way GNU tools do and returns their usage exit status.
pub fn usage_error(ctx: &mut Ctx, message: &str, status: i32) -> i32 {
    ctx.warn(message);
    status
}

/// Whether `text` is a variable name, as the shell and awk spell one: a letter or `_`, then
/// letters, digits and `_`.
pub fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}
