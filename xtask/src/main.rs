//! `cargo xtask …`: everything it takes to set up, build, run and test Tether, in Rust, so the
//! README's two commands work on a fresh machine with nothing but rustup, node and python.
//!
//! ```text
//! cargo xtask run [-- SERVER ARGS]  set up, build the playground, start the server on :8080
//! cargo xtask test                  set up (with headless Chromium), run every test suite
//! cargo xtask setup [--browsers]    install what is missing, nothing else
//! cargo xtask dist                  build the playground into dist/ (release, wasm-opt)
//! cargo xtask bench                 the agent-rollout benchmark (results go in BENCHMARKS.md)
//! cargo xtask fuzz [TARGET] [SECS]  run the fuzz targets of fuzz/ (see fuzz/README.md)
//! cargo xtask deploy [--test]       PostgreSQL, replicas and nginx (see docs/deployment.md)
//! ```
//!
//! The playground is built directly — cargo → wasm-bindgen → wasm-opt → copy `index.html` and
//! `style/` — rather than with Trunk: it is fully offline, takes seconds, and the newest Trunk
//! needs a newer rustc than ours.

mod deploy;
mod disk;
mod dist;
mod setup;
mod suites;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("xtask: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode> {
    let root = workspace_root();
    std::env::set_current_dir(&root).context("cannot enter the workspace root")?;
    let (command, rest) = args
        .split_first()
        .map_or(("help", &[][..]), |(c, r)| (c.as_str(), r));
    match command {
        "setup" => {
            let browsers = rest.iter().any(|a| a == "--browsers");
            setup::ensure(&root, browsers)?;
            setup::ensure_fuzzing()?;
            setup::ensure_deployment()?;
            Ok(ExitCode::SUCCESS)
        }
        "dist" => {
            let tools = setup::ensure(&root, false)?;
            dist::build(&root, &tools)?;
            Ok(ExitCode::SUCCESS)
        }
        "run" => {
            let tools = setup::ensure(&root, false)?;
            dist::build(&root, &tools)?;
            let server_args = rest.strip_prefix(&["--".to_string()]).unwrap_or(rest);
            serve(&root, server_args)
        }
        "test" => {
            let tools = setup::ensure(&root, true)?;
            setup::ensure_fuzzing()?;
            setup::ensure_deployment()?;
            suites::run_all(&root, &tools)
        }
        "fuzz" => {
            let options = suites::fuzz_arguments(rest)?;
            setup::ensure_fuzzing()?;
            suites::fuzz(&root, &options)
        }
        "deploy" => {
            let options = deploy::arguments(rest)?;
            setup::ensure_deployment()?;
            deploy::run(&root, &options)
        }
        "bench-store" => {
            setup::ensure_deployment()?;
            deploy::bench_store(&root, rest)
        }
        "bench" => {
            step("benchmark: the 40-turn agent rollout over HTTP and WebSocket (release build)");
            cargo(&["bench", "-p", "tether-harness", "--bench", "rollout"])?;
            Ok(ExitCode::SUCCESS)
        }
        "load" | "link" => {
            // `cargo xtask load -- ARGS`: tether-load (or tether-link) built in release mode.
            let binary = format!("tether-{command}");
            let args = rest.strip_prefix(&["--".to_string()]).unwrap_or(rest);
            let mut cargo_args = vec!["run", "--release", "--quiet", "-p", "tether-harness"];
            cargo_args.extend(["--bin", binary.as_str(), "--"]);
            cargo_args.extend(args.iter().map(String::as_str));
            cargo(&cargo_args)?;
            Ok(ExitCode::SUCCESS)
        }
        "help" | "--help" | "-h" => {
            println!("{}", HELP.trim());
            Ok(ExitCode::SUCCESS)
        }
        other => bail!("unknown command '{other}'\n\n{}", HELP.trim()),
    }
}

const HELP: &str = "
usage: cargo xtask <command>

  run [-- SERVER ARGS]   set up, build the playground, start tether-server (http://127.0.0.1:8080)
  test                   set up (including headless Chromium) and run every test suite
  setup [--browsers]     install whatever is missing (wasm32 target, wasm-bindgen-cli, npm tools)
  dist                   build the playground into dist/
  bench                  the agent-rollout benchmark: per-turn overhead over HTTP and WebSocket
  load [-- ARGS]         load generator (tether-load, release): N agents against a running server
  link [-- ARGS]         link emulator (tether-link, release): a TCP proxy adding RTT and bandwidth
  fuzz [TARGET] [SECONDS] [--seeds-only|--suite] [-- LIBFUZZER FLAGS]
                         run every fuzz target (or TARGET) for SECONDS each (60), see fuzz/README.md;
                         --suite: the test suite's fixed seed and input counts
  deploy [--replicas N] [--port P] [--binary PATH] [--test] [-- SERVER ARGS]
                         PostgreSQL + N replicas (3) + nginx on :8080, see docs/deployment.md
  bench-store [SECONDS]  the store benchmark: SQLite against PostgreSQL, 1-3 replicas behind nginx
";

/// Builds the server in release mode and runs it in the foreground with the built playground.
fn serve(root: &Path, server_args: &[String]) -> Result<ExitCode> {
    step("building tether-server (release)");
    cargo(&["build", "--release", "-p", "tether-server"])?;
    let binary = root.join("target/release/tether-server");
    step("starting tether-server (Ctrl-C stops it)");
    let status = Command::new(&binary)
        .arg("--static-dir")
        .arg(root.join("dist"))
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
