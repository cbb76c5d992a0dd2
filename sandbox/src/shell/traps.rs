//! `trap`: an `EXIT` action runs when the shell (or the subshell that set it) ends, an `ERR`
//! action after a command fails where `set -e` would act. Signals never reach the sandbox,
//! so actions for `INT`, `TERM`, `HUP` and the like are accepted and never run — exactly
//! what bash does when no signal comes. `DEBUG` and `RETURN` are refused by name.

use super::exec::{Shell, Streams, report, unsupported};

#[derive(Debug, Clone, Default)]
pub(crate) struct Traps {
    pub exit: Option<String>,
    pub err: Option<String>,
    /// Actions for signals, kept only for `trap -p`.
    pub signals: Vec<(String, String)>,
}

/// Signal names (without `SIG`) and numbers accepted for actions that never run.
const SIGNALS: [(&str, u8); 12] = [
    ("HUP", 1),
    ("INT", 2),
    ("QUIT", 3),
    ("ABRT", 6),
    ("KILL", 9),
    ("USR1", 10),
    ("USR2", 12),
    ("PIPE", 13),
    ("ALRM", 14),
    ("TERM", 15),
    ("CHLD", 17),
    ("WINCH", 28),
];

enum Condition {
    Exit,
    Err,
    Signal(&'static str),
}

fn condition(spec: &str) -> Result<Condition, String> {
    let upper = spec.to_ascii_uppercase();
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    match name {
        "EXIT" | "0" => return Ok(Condition::Exit),
        "ERR" => return Ok(Condition::Err),
        "DEBUG" | "RETURN" => {
            return Err(format!("trap: {name}"));
        }
        _ => {}
    }
    SIGNALS
        .iter()
        .find(|(n, number)| *n == name || number.to_string() == name)
        .map(|(n, _)| Condition::Signal(n))
        .ok_or_else(|| format!("trap: {spec}: invalid signal specification"))
}

impl Shell<'_> {
    /// `trap [-p] [ACTION CONDITION…]`; ACTION `-` resets, `''` ignores.
    pub(super) fn trap(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let args: Vec<&String> = args.iter().filter(|a| *a != "--").collect();
        if args.is_empty() || args[0] == "-p" {
            self.print_traps(io);
            return 0;
        }
        let (action, specs) = if args.len() == 1 {
            (None, &args[..])
        } else {
            let action = (args[0] != "-").then(|| args[0].clone());
            (action, &args[1..])
        };
        let mut status = 0;
        for spec in specs {
            match condition(spec) {
                Ok(Condition::Exit) => self.traps.exit = action.clone(),
                Ok(Condition::Err) => self.traps.err = action.clone(),
                Ok(Condition::Signal(name)) => {
                    self.traps.signals.retain(|(n, _)| n != name);
                    if let Some(action) = &action {
                        self.traps.signals.push((name.to_string(), action.clone()));
                    }
                }
                Err(message) if message_is_unsupported(spec) => {
                    return unsupported(self, &mut io.err, message);
                }
                Err(message) => {
                    report(&mut io.err, message);
                    status = 1;
                }
            }
        }
        status
    }

    fn print_traps(&self, io: &mut Streams) {
        let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
        if let Some(action) = &self.traps.exit {
            io.out
                .extend_from_slice(format!("trap -- {} EXIT\n", quote(action)).as_bytes());
        }
        for (name, action) in &self.traps.signals {
            io.out
                .extend_from_slice(format!("trap -- {} SIG{name}\n", quote(action)).as_bytes());
        }
        if let Some(action) = &self.traps.err {
            io.out
                .extend_from_slice(format!("trap -- {} ERR\n", quote(action)).as_bytes());
        }
    }
}

fn message_is_unsupported(spec: &str) -> bool {
    matches!(
        spec.to_ascii_uppercase().trim_start_matches("SIG"),
        "DEBUG" | "RETURN"
    )
}
