//! Commands awk runs (`print | "sort"`, `"cmd" | getline`, `system("cmd")`): the command
//! line is cut into words — quotes honoured, no expansion — and the command comes from the
//! same table the shell uses, run on the same VFS with the given input. A line that needs a
//! shell (pipes, redirections other than `2>/dev/null` and `2>&1`, `$`, globs, `;`, `&&`) or a
//! shell builtin is refused by name rather than run differently.

use tether_vfs::{EntryKind, Vfs, normalize};

use super::error::AwkErrorKind;
use super::eval::{Machine, PIECE_WORK, Run, nested};
use crate::{Ctx, Input, lookup};

/// What happens to the command's stderr.
#[derive(Debug, PartialEq, Eq)]
enum Stderr {
    Keep,
    Null,
    ToStdout,
}

/// Cuts a command line into words; `Err` names the shell syntax it would need.
fn words(line: &str) -> Result<(Vec<String>, Stderr), String> {
    let mut words = Vec::new();
    let mut stderr = Stderr::Keep;
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("an unterminated quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            word.extend(chars.next());
                        }
                        Some('$' | '`') => return Err("expansions (`$', backquotes)".into()),
                        Some(c) => word.push(c),
                        None => return Err("an unterminated quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            '2' if !in_word && chars.peek() == Some(&'>') => {
                let rest: String = chars.clone().collect();
                let (target, used) = if let Some(after) = rest.strip_prefix(">/dev/null") {
                    (Stderr::Null, rest.len() - after.len())
                } else if let Some(after) = rest.strip_prefix(">&1") {
                    (Stderr::ToStdout, rest.len() - after.len())
                } else {
                    return Err("redirections".into());
                };
                stderr = target;
                for _ in 0..used {
                    chars.next();
                }
            }
            '|' | '&' | ';' | '<' | '>' | '(' | ')' => {
                return Err("pipes, lists and redirections".into());
            }
            '$' | '`' | '*' | '?' | '[' | '~' | '{' => {
                return Err("expansions and globs".into());
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok((words, stderr))
}

/// Names the shell itself handles: they need the interpreter, which awk does not have.
const SHELL_ONLY: &[&str] = &[
    "bash", "sh", "cd", "export", "eval", "source", ".", "xargs", "env", "node", "read", "set",
    "unset", "exit",
];

/// Refuses, by name, a command line awk cannot run; the words and what happens to stderr
/// otherwise.
fn runnable(line: &str) -> Run<(Vec<String>, Stderr)> {
    let (argv, stderr) = words(line).map_err(|needs| {
        AwkErrorKind::NotSupported(format!("running `{line}' from awk ({needs})"))
    })?;
    if let Some(name) = argv.first()
        && SHELL_ONLY.contains(&name.as_str())
    {
        return Err(AwkErrorKind::NotSupported(format!("running `{name}' from awk")).into());
    }
    Ok((argv, stderr))
}

/// Checks that awk can run `line` when it is first opened for output, so that the error
/// names the statement rather than the end of the program.
pub fn check(line: &str) -> Run<()> {
    runnable(line).map(drop)
}

/// What a command's operands count against awk's text budget before it runs: the files it
/// names, whole, and for a directory every file beneath it (`grep -r`, `find`), each also a
/// [`PIECE_WORK`] — reading them is the command's work, which awk's own counts never see.
fn operand_work(vfs: &Vfs, cwd: &str, args: &[String]) -> usize {
    let size = |path: &str| vfs.read(path).map_or(0, <[u8]>::len);
    args.iter()
        .map(|arg| {
            let path = normalize(cwd, arg);
            match vfs.kind(&path) {
                Some(EntryKind::File) => size(&path),
                Some(EntryKind::Dir) => vfs
                    .descendants(&path)
                    .iter()
                    .map(|(entry, _)| size(entry) + PIECE_WORK)
                    .sum(),
                _ => 0,
            }
        })
        .sum()
}

impl Machine<'_, '_, '_> {
    /// Runs `line` with `stdin`; its exit status and stdout (its stderr joins awk's).
    pub(super) fn run_command(&mut self, line: &str, stdin: Vec<u8>) -> Run<(i32, Vec<u8>)> {
        self.tick()?;
        self.ctx.limits.admit().map_err(AwkErrorKind::Limit)?;
        let (argv, stderr) = runnable(line)?;
        let Some(name) = argv.first() else {
            return Ok((0, Vec::new()));
        };
        let Some(command) = lookup(name) else {
            self.ctx
                .err
                .extend_from_slice(format!("sh: 1: {name}: not found\n").as_bytes());
            return Ok((127, Vec::new()));
        };
        self.charge(operand_work(self.ctx.vfs, self.ctx.cwd, &argv[1..]))?;
        let mut input = Input::new(stdin);
        let max_output = self.ctx.max_output.saturating_sub(self.ctx.out.len());
        let mut ctx = Ctx {
            vfs: &mut *self.ctx.vfs,
            cwd: self.ctx.cwd,
            env: self.ctx.env,
            stdin: &mut input,
            out: Vec::new(),
            err: Vec::new(),
            max_output,
            overflowed: false,
            limits: &mut *self.ctx.limits,
        };
        // An awk run from awk evaluates on top of this one's stack (see [`nested`]).
        let status = nested(self.nesting, || command(&mut ctx, &argv[1..]));
        let (overflowed, mut out, err) = (ctx.overflowed, ctx.out, ctx.err);
        // The call may have stopped while the command ran (a limit refused one it ran): this
        // run stops too, rather than spend the rest of its own budget.
        self.ctx.limits.check().map_err(AwkErrorKind::Limit)?;
        if overflowed {
            return Err(AwkErrorKind::Output.into());
        }
        match stderr {
            Stderr::Keep => self.ctx.err.extend_from_slice(&err),
            Stderr::Null => {}
            Stderr::ToStdout => out.extend_from_slice(&err),
        }
        self.charge(out.len())?;
        Ok((status, out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_into_words() {
        let (argv, stderr) = words("sort -t: -k2 'a b' \"c\\\"d\" 2>/dev/null").unwrap();
        assert_eq!(argv, ["sort", "-t:", "-k2", "a b", "c\"d"]);
        assert_eq!(stderr, Stderr::Null);
        assert_eq!(words("date 2>&1").unwrap().1, Stderr::ToStdout);
    }

    #[test]
    fn shell_syntax_is_refused_by_name() {
        assert!(words("sort | uniq").unwrap_err().contains("pipes"));
        assert!(words("echo $HOME").unwrap_err().contains("expansions"));
        assert!(words("ls *.txt").unwrap_err().contains("globs"));
        assert!(words("cat > out").unwrap_err().contains("redirections"));
    }
}
