//! The shell: parsing a command line (`tether_sandbox::shell::parse`), then running it in a
//! sandbox over the bash-compatibility tree (`sandbox/tests/bash_compat/tree`, the tree the
//! seeds from `cases.sh` were written for) with tight limits, so the interpreter and every command it
//! reaches (`sed`, `grep`, `awk`, `apply_patch`, redirections, loops, functions…) are fuzzed
//! too. The clock moves 1 ms per reading, or as fast as real time when that is faster, so the
//! wall-clock budget ends a quick run deterministically (its artifact replays the same way) and
//! a slow one (many commands that each take long, as a sandbox allows) in real time, as in
//! production; the command, loop, file-system and output limits bound everything else.
//!
//! Checks: neither step panics; no run outgrows its limits — the file system stays within its
//! byte limit and each stream within its cap (a hang past the budget is a libFuzzer timeout).

#![no_main]

use std::cell::Cell;
use std::time::Instant;

use libfuzzer_sys::fuzz_target;
use tether_sandbox::native::block_on;
use tether_sandbox::{Clock, Limits, Sandbox, Vfs};

const LIMITS: Limits = Limits {
    max_output_bytes: 4096,
    max_stream_bytes: 16 * 1024,
    max_commands: 300,
    max_loop_iterations: 300,
    max_fs_bytes: 256 * 1024,
    max_pipe_bytes: 64 * 1024,
    wall_clock_ms: 1000,
};

macro_rules! tree {
    ($($path:literal),*) => {
        [$(($path, include_bytes!(concat!("../../sandbox/tests/bash_compat/tree/", $path)) as &[u8])),*]
    };
}

const TREE: [(&str, &[u8]); 9] = tree!(
    ".hidden",
    "README.md",
    "notes.txt",
    "data/names.csv",
    "data/numbers.txt",
    "docs/guide.txt",
    "src/app.js",
    "src/util.js",
    "src/lib/math.js"
);

/// 1 ms per reading, or real time when that has gone further.
struct FuzzClock {
    origin: Instant,
    reads: Cell<u32>,
}

impl Clock for FuzzClock {
    fn now_ms(&self) -> f64 {
        self.reads.set(self.reads.get() + 1);
        let real = self.origin.elapsed().as_secs_f64() * 1000.0;
        real.max(f64::from(self.reads.get()))
    }
}

fuzz_target!(|data: &[u8]| {
    let line = String::from_utf8_lossy(data);
    let parsed = tether_sandbox::shell::parse(&line);
    let mut sandbox = Sandbox::new(Vfs::from_files(TREE))
        .with_limits(LIMITS)
        .with_clock(Box::new(FuzzClock {
            origin: Instant::now(),
            reads: Cell::new(0),
        }));
    let output = block_on(sandbox.run_shell(&line));
    if parsed.is_err() {
        assert_eq!(output.exit_code, 2, "a line that does not parse exits 2");
    }
    assert!(
        sandbox.vfs().total_bytes() <= LIMITS.max_fs_bytes,
        "the file system grew to {} bytes",
        sandbox.vfs().total_bytes()
    );
    // `truncate_middle`'s marker adds a few bytes to a cut stream.
    for stream in [&output.stdout, &output.stderr] {
        assert!(
            stream.len() <= LIMITS.max_stream_bytes + 64,
            "{} bytes",
            stream.len()
        );
    }
});
