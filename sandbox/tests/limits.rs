//! Every limit ends the call with a clear message and exit code 124, and the file system stays
//! consistent. The wall clock is a `ManualClock` so the budget test is deterministic.

#![cfg(not(target_arch = "wasm32"))]

use tether_sandbox::native::block_on;
use tether_sandbox::{LIMIT_EXIT_CODE, Limits, ManualClock, Sandbox, Vfs};

fn run(limits: Limits, line: &str) -> (tether_sandbox::ShellOutput, Sandbox) {
    let mut sandbox = Sandbox::new(Vfs::new()).with_limits(limits);
    let output = block_on(sandbox.run_shell(line));
    (output, sandbox)
}

#[test]
fn command_limit() {
    let limits = Limits {
        max_commands: 50,
        max_loop_iterations: 1_000_000,
        ..Limits::default()
    };
    let (output, _) = run(limits, "while true; do echo x; done; echo never");
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE);
    assert!(
        output
            .stderr
            .ends_with("tether-sandbox: limit exceeded: more than 50 commands in one call\n")
    );
    assert!(!output.stdout.contains("never"));
}

#[test]
fn loop_iteration_limit() {
    let limits = Limits {
        max_commands: 1_000_000,
        ..Limits::default()
    };
    let (output, _) = run(limits, "for i in $(seq 1 20000); do :; done");
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE);
    assert!(output.stderr.contains("more than 10000 loop iterations"));
}

#[test]
fn wall_clock_budget_uses_the_injected_clock() {
    let mut sandbox = Sandbox::new(Vfs::new())
        .with_limits(Limits {
            wall_clock_ms: 100,
            ..Limits::default()
        })
        .with_clock(Box::new(ManualClock::stepping(1.0)));
    let output = block_on(sandbox.run_shell("while true; do true; done"));
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE);
    assert!(
        output
            .stderr
            .contains("wall-clock budget of 100 ms used up")
    );
}

/// Commands awk runs (`system`, pipes, `getline`) are the call's commands too: counted, and
/// stopped by the wall clock. The call's end says which limit, once.
#[test]
fn commands_run_from_awk_are_counted_and_timed() {
    let limits = Limits {
        max_commands: 50,
        ..Limits::default()
    };
    let (output, _) = run(
        limits,
        "awk 'BEGIN { while (1) system(\"true\") }'; echo never",
    );
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE);
    assert_eq!(
        output.stderr,
        "tether-sandbox: limit exceeded: more than 50 commands in one call\n"
    );
    assert!(!output.stdout.contains("never"));
    let output =
        on_a_stepping_clock("echo x | awk '{ while (1) { \"true\" | getline; close(\"true\") } }'");
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE);
    assert_eq!(
        output.stderr,
        "tether-sandbox: limit exceeded: wall-clock budget of 100 ms used up\n"
    );
}

/// awk's own long work stops when the call's time is up, checked every few thousand
/// statements — also in an awk that ran awk, once the inner one is refused: the chain does not
/// spend every level's own budget on its way back (found in review: `p.awk` running itself
/// first, then looping, built a chain of thousands of levels each then running 2 million
/// steps).
#[test]
fn awk_stops_when_the_calls_time_is_up() {
    let output = on_a_stepping_clock("awk 'BEGIN { while (1) x++ }'; echo never");
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE);
    assert_eq!(
        output.stderr,
        "tether-sandbox: limit exceeded: wall-clock budget of 100 ms used up\n"
    );
    let output = on_a_stepping_clock(
        "echo 'BEGIN { system(\"awk -f /p.awk\"); while (1) x++ }' > /p.awk; awk -f /p.awk",
    );
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE);
    assert!(
        output
            .stderr
            .ends_with("tether-sandbox: limit exceeded: wall-clock budget of 100 ms used up\n"),
        "{}",
        output.stderr
    );
}

/// A `return` in a command substitution ended only the substitution in bash, but here it was
/// left pending for the call, and a pending `return` turned off the limits of the commands awk
/// runs: `$(return)` in a redirection of an awk looping on `system` let it run on (found in
/// review). A subshell now ends its own `return`, `break` and `continue`, and a limit ends the
/// call whatever was pending.
#[test]
fn nothing_pending_turns_the_limits_off() {
    let limits = Limits {
        max_commands: 50,
        ..Limits::default()
    };
    let (output, _) = run(
        limits,
        "f() { awk 'BEGIN { while (1) system(\"true\") }' 2>\"$(return)/dev/null\"; }; f; echo never",
    );
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE, "{}", output.stderr);
    assert!(
        output
            .stderr
            .ends_with("limit exceeded: more than 50 commands in one call\n"),
        "{}",
        output.stderr
    );
    assert!(!output.stdout.contains("never"));
}

/// `ARGC` set huge with nothing in `ARGV` was walked slot by slot without a step counted, so
/// neither the step limit nor the call's clock could end it (found in review).
#[test]
fn a_huge_argc_ends_on_the_limits() {
    let output = on_a_stepping_clock("awk 'BEGIN { ARGC = 1e15 } { print }' < /dev/null");
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE, "{}", output.stderr);
    assert_eq!(
        output.stderr,
        "tether-sandbox: limit exceeded: wall-clock budget of 100 ms used up\n"
    );
}

/// Runs `line` with a 100 ms budget on a clock that moves 1 ms each time it is read.
fn on_a_stepping_clock(line: &str) -> tether_sandbox::ShellOutput {
    let mut sandbox = Sandbox::new(Vfs::new())
        .with_limits(Limits {
            wall_clock_ms: 100,
            ..Limits::default()
        })
        .with_clock(Box::new(ManualClock::stepping(1.0)));
    block_on(sandbox.run_shell(line))
}

#[test]
fn file_system_cap_refuses_writes_and_stays_consistent() {
    let limits = Limits {
        max_fs_bytes: 1000,
        ..Limits::default()
    };
    let (output, sandbox) = run(
        limits,
        "echo small > a.txt; seq 1 1000 > big.txt; echo $?; cat a.txt",
    );
    assert_eq!(output.stdout, "1\nsmall\n");
    assert!(
        output.stderr.contains("No space left on device"),
        "{}",
        output.stderr
    );
    assert!(sandbox.vfs().total_bytes() <= 1000);
    assert_eq!(sandbox.vfs().read("/big.txt").unwrap(), b"");
    let (output, sandbox) = run(
        Limits {
            max_fs_bytes: 10,
            ..Limits::default()
        },
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.txt\n+0123456789abcdef\n*** End Patch\nEOF",
    );
    assert_eq!(output.exit_code, 1);
    assert!(output.stderr.contains("No space left on device"));
    assert!(!sandbox.vfs().exists("/a.txt"));
}

#[test]
fn runaway_output_stops() {
    let limits = Limits {
        max_pipe_bytes: 1 << 20,
        max_stream_bytes: 1 << 20,
        ..Limits::default()
    };
    let (output, _) = run(
        limits.clone(),
        "seq 1 100000 > f; cat f f f f f f f f f f f f f f f f f f f f | wc -l",
    );
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE);
    assert!(
        output
            .stderr
            .contains("command output grew past 1048576 bytes"),
        "{}",
        output.stderr
    );
    let (output, _) = run(limits, "seq 1 100000 > f; while true; do cat f; done");
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE);
    assert!(
        output.stderr.contains("command output grew past"),
        "{}",
        output.stderr
    );
}

#[test]
fn yes_alone_stops_at_the_output_limit() {
    let limits = Limits {
        max_pipe_bytes: 1 << 20,
        ..Limits::default()
    };
    for line in ["yes", "yes > out.txt; echo after", "echo hi | yes"] {
        let (output, sandbox) = run(limits.clone(), line);
        assert_eq!(output.exit_code, LIMIT_EXIT_CODE, "{line}");
        assert!(
            output
                .stderr
                .contains("command output grew past 1048576 bytes"),
            "{line}: {}",
            output.stderr
        );
        assert!(!output.stdout.contains("after"), "{line}");
        // The sandbox stays usable.
        let mut sandbox = sandbox;
        let next = block_on(sandbox.run_shell("yes | head -n 1"));
        assert_eq!((next.stdout.as_str(), next.exit_code), ("y\n", 0), "{line}");
    }
}

#[test]
fn runaway_values_stop() {
    let (output, _) = run(Limits::default(), "x=aaaaaaaa; while true; do x=$x$x; done");
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE);
    assert!(
        output.stderr.contains("a value grew past"),
        "{}",
        output.stderr
    );
}

#[test]
fn stream_output_is_capped_with_a_marker() {
    let limits = Limits {
        max_stream_bytes: 1000,
        ..Limits::default()
    };
    let (output, _) = run(limits, "seq 1 10000");
    assert!(output.stdout.len() < 1100);
    assert!(output.stdout.contains("bytes elided"));
    assert!(output.stdout.ends_with("10000\n"));
}

#[test]
fn deep_nesting_ends_cleanly() {
    let nested = |depth: usize| format!("{}echo deep{}", "( ".repeat(depth), " )".repeat(depth));
    let (output, _) = run(Limits::default(), &nested(99));
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE);
    assert!(
        output.stderr.contains("more than 50 deep"),
        "{}",
        output.stderr
    );
    let (output, _) = run(Limits::default(), &nested(150));
    assert_eq!(output.exit_code, 2);
    assert!(
        output.stderr.contains("nested more than 100 deep"),
        "{}",
        output.stderr
    );
    let substitutions = format!("echo {}x{}", "$(echo ".repeat(80), ")".repeat(80));
    let (output, _) = run(Limits::default(), &substitutions);
    assert_eq!(output.exit_code, LIMIT_EXIT_CODE);
}
