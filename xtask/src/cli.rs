//! The command line of `cargo xtask`, declared with clap: every command, its flags and its
//! help in one place. `cargo xtask help` (or `--help`, or nothing) lists them; `cargo xtask
//! help COMMAND` explains one. Arguments after `--` pass through untouched: to the server
//! (`run`, `deploy`), to tether-load or tether-link (`load`, `link`), to libFuzzer (`fuzz`).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::deploy;
use crate::suites::{FUZZ_TARGETS, FuzzOptions};

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Set up, build, run and test Tether.",
    disable_version_flag = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Task>,
}

#[derive(Debug, Subcommand)]
pub enum Task {
    /// Set up, build the playground, start tether-server (http://127.0.0.1:8080).
    Run {
        /// Passed to tether-server (`cargo xtask run -- --help` lists them).
        #[arg(last = true, value_name = "SERVER ARGS")]
        server_args: Vec<String>,
    },
    /// Set up (including headless Chromium) and run every test suite.
    Test,
    /// Install whatever is missing (wasm32 target, wasm-bindgen-cli, npm tools), nothing else.
    Setup {
        /// Headless Chromium and its driver too, for the browser suites.
        #[arg(long)]
        browsers: bool,
    },
    /// Build the playground into dist/ (release, wasm-opt) and print its sizes.
    Dist,
    /// The agent-rollout benchmark: per-turn overhead over HTTP and WebSocket, the playground's
    /// long task as its Compare runs it, and what Tether adds in front of an upstream engine
    /// (TETHER_BENCH_PARTS=1 or 4: that part alone).
    Bench {
        /// Passed to the benchmark: `--task triage-ci-log --profile spark --rtt-ms 40
        /// --up-mbit 20 --down-mbit 100 --api-costs hosted --repetitions 5` runs only the long
        /// task (Part 3) under those conditions.
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARGS"
        )]
        args: Vec<String>,
    },
    /// Instructions of one WebSocket turn at ~6k and ~125k tokens (release, callgrind); fails
    /// if the long one costs over 1.1x the short one or a count regresses past its baseline.
    TurnCost,
    /// The load generator (tether-load, release): N agents against a running server.
    Load {
        /// Passed to tether-load (`cargo xtask load -- --help` lists them).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARGS"
        )]
        args: Vec<String>,
    },
    /// The link emulator (tether-link, release): a TCP proxy adding RTT and bandwidth.
    Link {
        /// Passed to tether-link (`cargo xtask link -- --help` lists them).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARGS"
        )]
        args: Vec<String>,
    },
    /// Run every fuzz target (or TARGET) for SECONDS each; see fuzz/README.md.
    Fuzz(FuzzArgs),
    /// PostgreSQL + N replicas + nginx on 127.0.0.1:8080; see docs/deployment.md.
    Deploy(DeployArgs),
    /// The sandbox beside its peers (just-bash, rust-bash) and bash: agreement on the agent
    /// corpus and time on 100k-line pipelines (`-- --part 1|2 --runs N`).
    BenchSandbox {
        /// Passed to the benchmark (`sandbox/benches/peers.rs`).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "ARGS"
        )]
        args: Vec<String>,
    },
    /// The store benchmark: SQLite against PostgreSQL, 1-3 replicas behind nginx.
    BenchStore {
        /// How long each run lasts.
        #[arg(value_name = "SECONDS per run", default_value_t = 8)]
        seconds: u64,
    },
}

#[derive(Debug, clap::Args)]
pub struct FuzzArgs {
    /// One target, or `all` (the default); a number alone is taken as SECONDS.
    #[arg(value_name = "TARGET")]
    target: Option<String>,
    /// How long each target runs.
    #[arg(value_name = "SECONDS")]
    seconds: Option<u64>,
    /// Start from the committed seeds alone, in a scratch corpus, with a random seed.
    #[arg(long)]
    seeds_only: bool,
    /// What the test suite runs: the seeds alone, a fixed seed and input count per target.
    #[arg(long)]
    suite: bool,
    /// Passed to libFuzzer, e.g. `-- -max_len=512 -only_ascii=1`.
    #[arg(last = true, value_name = "LIBFUZZER FLAGS")]
    libfuzzer: Vec<String>,
}

impl FuzzArgs {
    pub fn options(self) -> anyhow::Result<FuzzOptions> {
        let (target, seconds) = match (self.target, self.seconds) {
            // `cargo xtask fuzz 600`: every target, 600 s each.
            (Some(word), None) if word.parse::<u64>().is_ok() => (None, word.parse().ok()),
            other => other,
        };
        let names: Vec<&'static str> = FUZZ_TARGETS.iter().map(|(name, _)| *name).collect();
        let targets = match target.as_deref() {
            None | Some("all") => names,
            Some(name) => match names.iter().find(|n| **n == name) {
                Some(found) => vec![*found],
                None => anyhow::bail!("no fuzz target '{name}'; the targets: {}", names.join(", ")),
            },
        };
        Ok(FuzzOptions {
            targets,
            seconds: seconds.unwrap_or(60),
            seeds_only: self.seeds_only,
            suite: self.suite,
            extra: self.libfuzzer,
        })
    }
}

#[derive(Debug, clap::Args)]
pub struct DeployArgs {
    /// How many tether-server replicas.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=8))]
    replicas: u8,
    /// nginx's port on 127.0.0.1 (default 8080; with --test, a free one).
    #[arg(long)]
    port: Option<u16>,
    /// The tether-server binary to run (default: build it, release, or debug with --test).
    #[arg(long)]
    binary: Option<PathBuf>,
    /// Run the deployment suite against it, then stop everything.
    #[arg(long)]
    test: bool,
    /// Passed to every replica.
    #[arg(last = true, value_name = "SERVER ARGS")]
    server_args: Vec<String>,
}

impl DeployArgs {
    pub fn options(self) -> deploy::Options {
        deploy::Options {
            replicas: usize::from(self.replicas),
            port: self.port.unwrap_or(if self.test { 0 } else { 8080 }),
            binary: self.binary,
            test: self.test,
            server_args: self.server_args,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::{Cli, Task};
    use crate::suites::{FUZZ_TARGETS, FuzzOptions, SUITE_RUNS};

    fn parse(line: &[&str]) -> Result<Option<Task>, clap::Error> {
        Cli::try_parse_from(std::iter::once("xtask").chain(line.iter().copied())).map(|c| c.command)
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_command_parses() {
        assert!(parse(&[]).unwrap().is_none());
        assert!(matches!(parse(&["test"]).unwrap(), Some(Task::Test)));
        assert!(matches!(
            parse(&["setup", "--browsers"]).unwrap(),
            Some(Task::Setup { browsers: true })
        ));
        assert!(matches!(parse(&["dist"]).unwrap(), Some(Task::Dist)));
        assert!(matches!(
            parse(&["bench"]).unwrap(),
            Some(Task::Bench { args }) if args.is_empty()
        ));
        let Some(Task::Bench { args }) =
            parse(&["bench", "--", "--task", "triage-ci-log", "--rtt-ms", "40"]).unwrap()
        else {
            panic!("bench");
        };
        assert_eq!(
            args,
            strings(&["--task", "triage-ci-log", "--rtt-ms", "40"])
        );
        assert!(matches!(
            parse(&["turn-cost"]).unwrap(),
            Some(Task::TurnCost)
        ));
        let Some(Task::BenchSandbox { args }) =
            parse(&["bench-sandbox", "--", "--part", "2", "--runs", "3"]).unwrap()
        else {
            panic!("bench-sandbox");
        };
        assert_eq!(args, strings(&["--part", "2", "--runs", "3"]));
        assert!(matches!(
            parse(&["bench-store"]).unwrap(),
            Some(Task::BenchStore { seconds: 8 })
        ));
        assert!(matches!(
            parse(&["bench-store", "30"]).unwrap(),
            Some(Task::BenchStore { seconds: 30 })
        ));
        assert!(parse(&["bench-store", "soon"]).is_err());
        assert!(parse(&["nope"]).is_err());
    }

    #[test]
    fn pass_through_arguments_reach_the_program() {
        let Some(Task::Run { server_args }) = parse(&["run", "--", "--help"]).unwrap() else {
            panic!("run");
        };
        assert_eq!(server_args, strings(&["--help"]));
        for line in [
            &["load", "--", "--clients", "50", "--turns", "20"][..],
            &["load", "--clients", "50", "--turns", "20"],
        ] {
            let Some(Task::Load { args }) = parse(line).unwrap() else {
                panic!("{line:?}");
            };
            assert_eq!(
                args,
                strings(&["--clients", "50", "--turns", "20"]),
                "{line:?}"
            );
        }
        let Some(Task::Link { args }) = parse(&["link", "--", "--rtt-ms", "40"]).unwrap() else {
            panic!("link");
        };
        assert_eq!(args, strings(&["--rtt-ms", "40"]));
    }

    fn fuzz(line: &[&str]) -> anyhow::Result<FuzzOptions> {
        let mut full = vec!["fuzz"];
        full.extend_from_slice(line);
        match parse(&full)? {
            Some(Task::Fuzz(args)) => args.options(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fuzz_arguments_name_targets_and_seconds() {
        let all = fuzz(&[]).unwrap();
        assert_eq!(all.targets.len(), FUZZ_TARGETS.len());
        assert_eq!(
            (all.seconds, all.seeds_only, all.extra.len()),
            (60, false, 0)
        );
        assert_eq!(
            fuzz(&["shell", "600", "--", "-jobs=2"]).unwrap(),
            FuzzOptions {
                targets: vec!["shell"],
                seconds: 600,
                seeds_only: false,
                suite: false,
                extra: strings(&["-jobs=2"]),
            }
        );
        let seeds = fuzz(&["all", "10", "--seeds-only"]).unwrap();
        assert_eq!(
            (seeds.targets.len(), seeds.seconds, seeds.seeds_only),
            (FUZZ_TARGETS.len(), 10, true)
        );
        let minutes = fuzz(&["600"]).unwrap();
        assert_eq!(
            (minutes.targets.len(), minutes.seconds),
            (FUZZ_TARGETS.len(), 600)
        );
        let suite = fuzz(&["all", "--suite"]).unwrap();
        assert!(suite.suite && suite.targets.len() == FUZZ_TARGETS.len());
        for (target, _) in FUZZ_TARGETS {
            assert!(
                SUITE_RUNS.iter().any(|(name, _)| *name == target),
                "{target}"
            );
        }
        assert!(fuzz(&["nope"]).is_err());
        assert!(fuzz(&["shell", "long"]).is_err());
    }

    #[test]
    fn deploy_arguments() {
        let deploy = |line: &[&str]| {
            let mut full = vec!["deploy"];
            full.extend_from_slice(line);
            match parse(&full) {
                Ok(Some(Task::Deploy(args))) => Ok(args.options()),
                Ok(other) => panic!("{other:?}"),
                Err(e) => Err(e),
            }
        };
        let default = deploy(&[]).unwrap();
        assert_eq!(
            (default.replicas, default.port, default.test),
            (3, 8080, false)
        );
        let test = deploy(&["--test", "--replicas", "2", "--", "--seed", "1"]).unwrap();
        assert_eq!((test.replicas, test.port, test.test), (2, 0, true));
        assert_eq!(test.server_args, strings(&["--seed", "1"]));
        let port = deploy(&["--test", "--port", "9000"]).unwrap();
        assert_eq!(port.port, 9000);
        assert!(deploy(&["--replicas", "0"]).is_err());
        assert!(deploy(&["--replicas", "9"]).is_err());
        assert!(deploy(&["--nope"]).is_err());
    }
}
