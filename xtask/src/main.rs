//! `cargo xtask …`: everything it takes to set up, build, run and test Tether, in Rust, so the
//! README's two commands work on a fresh machine with nothing but rustup, node and python.
//!
//! ```text
//! cargo xtask run [-- SERVER ARGS]  set up, build the playground, start the server on :8080
//! cargo xtask test                  set up (with headless Chromium), run every test suite
//! cargo xtask setup [--browsers]    install what is missing, nothing else
//! cargo xtask dist                  build the playground into dist/ (release, wasm-opt)
//! cargo xtask bench [-- ARGS]       the agent-rollout benchmark, with Tether in front of
//!                                   llmsim (results go in BENCHMARKS.md)
//! cargo xtask turn-cost             instructions per WebSocket turn at ~6k and ~125k tokens
//! cargo xtask load [-- ARGS]        tether-load (release) against a running server
//! cargo xtask link [-- ARGS]        tether-link (release): a TCP proxy adding RTT, bandwidth
//! cargo xtask fuzz [TARGET] [SECS]  run the fuzz targets of fuzz/ (see fuzz/README.md)
//! cargo xtask deploy [--test]       PostgreSQL, replicas and nginx (see docs/deployment.md)
//! cargo xtask bench-sandbox [-- ARGS] the sandbox beside just-bash, rust-bash and bash
//! cargo xtask bench-store [SECS]    the store benchmark, SQLite against PostgreSQL
//! ```
//!
//! `cargo xtask help COMMAND` shows a command's flags (the command line is in `cli.rs`).
//!
//! The playground is built directly — cargo → wasm-bindgen → wasm-opt → copy `index.html` and
//! `style/` — rather than with Trunk: it is fully offline, takes seconds, and the newest Trunk
//! needs a newer rustc than ours.

mod bench_store;
mod cli;
mod deploy;
mod disk;
mod dist;
mod setup;
mod suites;
mod test_servers;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use clap::{CommandFactory, Parser};

use crate::cli::{Cli, Task};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("xtask: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(task: Option<Task>) -> Result<ExitCode> {
    let root = workspace_root();
    std::env::set_current_dir(&root).context("cannot enter the workspace root")?;
    let Some(task) = task else {
        Cli::command().print_help()?;
        return Ok(ExitCode::SUCCESS);
    };
    match task {
        Task::Setup { browsers } => {
            setup::ensure(&root, browsers)?;
            setup::ensure_fuzzing()?;
            setup::ensure_deployment()?;
            setup::ensure_valgrind()?;
            setup::ensure_llmsim(&root)?;
            setup::ensure_shell_tools()?;
            setup::ensure_rust_bash(&root)?;
            Ok(ExitCode::SUCCESS)
        }
        Task::Dist => {
            let tools = setup::ensure(&root, false)?;
            dist::build(&root, &tools)?;
            Ok(ExitCode::SUCCESS)
        }
        Task::Run { server_args } => {
            let tools = setup::ensure(&root, false)?;
            dist::build(&root, &tools)?;
            serve(&root, &server_args)
        }
        Task::Test => {
            let tools = setup::ensure(&root, true)?;
            setup::ensure_fuzzing()?;
            setup::ensure_deployment()?;
            setup::ensure_valgrind()?;
            setup::ensure_llmsim(&root)?;
            setup::ensure_shell_tools()?;
            suites::run_all(&root, &tools)
        }
        Task::Fuzz(args) => {
            let options = args.options()?;
            setup::ensure_fuzzing()?;
            suites::fuzz(&root, &options)
        }
        Task::Deploy(args) => {
            let options = args.options();
            setup::ensure_deployment()?;
            deploy::run(&root, &options)
        }
        Task::BenchSandbox { args } => {
            // The peers: just-bash from package.json (npm ci), rust-bash built into target/tools.
            setup::ensure(&root, false)?;
            setup::ensure_shell_tools()?;
            setup::ensure_rust_bash(&root)?;
            step("benchmark: tether-sandbox beside just-bash, rust-bash and bash (release build)");
            let mut cargo_args = vec![
                "bench",
                "-p",
                "tether-sandbox",
                "--features",
                "native",
                "--bench",
                "peers",
            ];
            if !args.is_empty() {
                cargo_args.push("--");
                cargo_args.extend(args.iter().map(String::as_str));
            }
            cargo(&cargo_args)?;
            Ok(ExitCode::SUCCESS)
        }
        Task::BenchStore { seconds } => {
            setup::ensure_deployment()?;
            bench_store::bench_store(&root, seconds)
        }
        Task::Bench { args } => {
            // Part 4 puts Tether in front of llmsim; `--task` runs only part 3.
            if !args.iter().any(|arg| arg == "--task") {
                setup::ensure_llmsim(&root)?;
            }
            // `cargo xtask bench -- --task triage-ci-log --profile spark --rtt-ms 40 …`: only
            // the long task, under those conditions (harness/benches/rollout/long_task.rs, part 3).
            step("benchmark: the 40-turn agent rollout over HTTP and WebSocket (release build)");
            let mut cargo_args = vec!["bench", "-p", "tether-harness", "--bench", "rollout"];
            if !args.is_empty() {
                cargo_args.push("--");
                cargo_args.extend(args.iter().map(String::as_str));
            }
            cargo(&cargo_args)?;
            Ok(ExitCode::SUCCESS)
        }
        Task::TurnCost => {
            setup::ensure_valgrind()?;
            step("the instruction count of a WebSocket turn (release build, under callgrind)");
            let status = cargo_command()
                .args(["bench", "-p", "tether-harness", "--bench", "turn_cost"])
                .status()
                .context("cannot run cargo")?;
            Ok(if status.success() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Task::Load { args } => harness_binary("tether-load", &args),
        Task::Link { args } => harness_binary("tether-link", &args),
    }
}

/// `cargo xtask load` and `link`: a harness binary, built in release mode, with `args`.
fn harness_binary(binary: &str, args: &[String]) -> Result<ExitCode> {
    let mut cargo_args = vec!["run", "--release", "--quiet", "-p", "tether-harness"];
    cargo_args.extend(["--bin", binary, "--"]);
    cargo_args.extend(args.iter().map(String::as_str));
    cargo(&cargo_args)?;
    Ok(ExitCode::SUCCESS)
}

/// Builds the server in release mode and runs it in the foreground with the built playground.
fn serve(root: &Path, server_args: &[String]) -> Result<ExitCode> {
    step("building tether-server (release)");
    cargo(&["build", "--release", "-p", "tether-server"])?;
    let binary = root.join("target/release/tether-server");
    step("starting tether-server (Ctrl-C stops it)");
    let mut command = Command::new(&binary);
    command.arg("--static-dir").arg(root.join("dist"));
    // The playground lets its user choose the link and the API costs (docs/server.md).
    if !server_args.iter().any(|a| a == "--allow-client-conditions") {
        command.arg("--allow-client-conditions");
    }
    let status = command
        .args(server_args)
        .status()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The workspace root: the parent of this crate's manifest directory.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}

/// Prints a progress line.
fn step(message: &str) {
    eprintln!("\x1b[1mxtask:\x1b[0m {message}");
}

/// Runs cargo (the one that runs us) with `args`, failing on a non-zero exit.
fn cargo(args: &[&str]) -> Result<()> {
    check(cargo_command().args(args))
}

/// The cargo that runs this xtask (`CARGO`), else the one on `PATH`.
fn cargo_command() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// Runs cargo for the wasm32 target with `flags` added to the rustflags the build would use
/// otherwise (see [`rustflags_with`]).
fn cargo_wasm_with_rustflags(flags: &[&str], args: &[&str]) -> Result<()> {
    let mut command = cargo_command();
    let set = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    match rustflags_with(set("CARGO_ENCODED_RUSTFLAGS"), set("RUSTFLAGS"), flags) {
        Rustflags::Env(name, value) => command.env(name, value),
        Rustflags::Config(value) => command.arg("--config").arg(value),
    };
    check(command.args(args))
}

/// How extra rustflags reach a wasm32 build.
#[derive(Debug, PartialEq)]
enum Rustflags {
    /// This environment variable, with the caller's own flags first.
    Env(&'static str, String),
    /// A `--config` value.
    Config(String),
}

/// Appended to `CARGO_ENCODED_RUSTFLAGS` or `RUSTFLAGS` when one is set (cargo then ignores the
/// config files' rustflags); else a `--config` array, which cargo joins with the config files'
/// `target.wasm32-unknown-unknown.rustflags`.
fn rustflags_with(encoded: Option<String>, plain: Option<String>, flags: &[&str]) -> Rustflags {
    if let Some(encoded) = encoded {
        Rustflags::Env(
            "CARGO_ENCODED_RUSTFLAGS",
            format!("{encoded}\u{1f}{}", flags.join("\u{1f}")),
        )
    } else if let Some(plain) = plain {
        Rustflags::Env("RUSTFLAGS", format!("{plain} {}", flags.join(" ")))
    } else {
        let quoted: Vec<String> = flags.iter().map(|f| format!("{f:?}")).collect();
        Rustflags::Config(format!(
            "target.wasm32-unknown-unknown.rustflags=[{}]",
            quoted.join(", ")
        ))
    }
}

/// Runs `command`, failing with its command line on a non-zero exit.
fn check(command: &mut Command) -> Result<()> {
    let status = command
        .status()
        .with_context(|| format!("cannot run {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed ({status})");
    }
    Ok(())
}

/// Runs `command` and returns its trimmed stdout, or `None` if it cannot run or fails.
fn output_of(command: &mut Command) -> Option<String> {
    let output = command.output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::{Rustflags, rustflags_with};

    #[test]
    fn extra_rustflags_join_the_callers_own() {
        let flags = ["-Clink-args=--emit-relocs"];
        assert_eq!(
            rustflags_with(None, None, &flags),
            Rustflags::Config(
                r#"target.wasm32-unknown-unknown.rustflags=["-Clink-args=--emit-relocs"]"#.into()
            )
        );
        assert_eq!(
            rustflags_with(None, Some("--cfg x".into()), &flags),
            Rustflags::Env("RUSTFLAGS", "--cfg x -Clink-args=--emit-relocs".into())
        );
        // The encoded form wins, as it does in cargo.
        assert_eq!(
            rustflags_with(Some("--cfg\u{1f}y".into()), Some("--cfg x".into()), &flags),
            Rustflags::Env(
                "CARGO_ENCODED_RUSTFLAGS",
                "--cfg\u{1f}y\u{1f}-Clink-args=--emit-relocs".into()
            )
        );
    }
}
