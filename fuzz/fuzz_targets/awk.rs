//! `awk`: program text and input text. The input is split at NUL bytes: every piece but the
//! last is an argument (the program, or options such as `-F,` and `-v x=1` before it), the last
//! is standard input; the input is also the file `/in.txt`, so `awk PROG /in.txt` works too.
//!
//! Commands awk runs (`system`, pipes, `getline`; awk itself among them) are admitted as the
//! shell admits them: at most [`MAX_COMMANDS`], within [`WALL_CLOCK`] of real time (the shell
//! target's limits), so that a loop running nested interpreters ends as it does in a sandbox.
//!
//! Checks: awk never panics, on any program and any input; it stays within its output cap; and
//! its step limit and the call's clock end every program (a hang is a libFuzzer timeout).

#![no_main]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use tether_sandbox::Vfs;
use tether_sandbox::commands::{CallLimits, Ctx, lookup};
use tether_sandbox::shell::Input;

const MAX_OUTPUT: usize = 64 * 1024;
const MAX_COMMANDS: usize = 300;
const WALL_CLOCK: Duration = Duration::from_secs(1);

/// The shell's limits as awk sees them ([`CallLimits`]): [`MAX_COMMANDS`] commands within
/// [`WALL_CLOCK`], a refusal final.
struct SandboxLimits {
    started: Instant,
    commands: usize,
    stopped: Option<String>,
}

impl SandboxLimits {
    fn stop(&mut self, why: Option<&str>) -> Result<(), String> {
        if let Some(why) = why {
            self.stopped.get_or_insert_with(|| why.to_string());
        }
        self.stopped.clone().map_or(Ok(()), Err)
    }
}

impl CallLimits for SandboxLimits {
    fn admit(&mut self) -> Result<(), String> {
        self.commands += 1;
        if self.commands > MAX_COMMANDS {
            return self.stop(Some("more than 300 commands"));
        }
        self.check()
    }

    fn check(&mut self) -> Result<(), String> {
        let late = self.started.elapsed() > WALL_CLOCK;
        self.stop(late.then_some("out of time"))
    }
}

fuzz_target!(|data: &[u8]| {
    let mut pieces: Vec<&[u8]> = data.split(|b| *b == 0).collect();
    let stdin = pieces.pop().unwrap_or_default();
    let args: Vec<String> = pieces
        .iter()
        .map(|piece| String::from_utf8_lossy(piece).into_owned())
        .collect();
    let mut vfs = Vfs::from_files([("/in.txt", stdin)]);
    let env = BTreeMap::from([("HOME".to_string(), "/".to_string())]);
    let mut input = Input::new(stdin.to_vec());
    let mut limits = SandboxLimits {
        started: Instant::now(),
        commands: 0,
        stopped: None,
    };
    let mut ctx = Ctx {
        vfs: &mut vfs,
        cwd: "/",
        env: &env,
        stdin: &mut input,
        out: Vec::new(),
        err: Vec::new(),
        max_output: MAX_OUTPUT,
        overflowed: false,
        limits: &mut limits,
    };
    let awk = lookup("awk").expect("awk is a command");
    let _status = awk(&mut ctx, &args);
    assert!(ctx.out.len() <= MAX_OUTPUT);
});
