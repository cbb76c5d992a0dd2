//! `cargo xtask bench-store`: the store's cost, SQLite against PostgreSQL, and stored responses
//! per second through nginx with 1, 2 and 3 replicas. Release builds of tether-server and
//! tether-load; prints the tables BENCHMARKS.md keeps.
//!
//! Each measurement is one tether-load run (`--json`), read back as the load generator's own
//! [`Report`] type; the CPU of each component (replicas, nginx, PostgreSQL, every process under
//! each) comes from the harness's `/proc` reader, so neither is parsed a second way here.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tether_harness::load::Report;
use tether_harness::procfs;

use crate::deploy::{Deployment, spawn_replica, wait_for};
use crate::step;

/// One kind of load: tether-load's arguments.
struct Load {
    name: &'static str,
    args: &'static [&'static str],
}

/// The loads each store is measured under.
const LOADS: [Load; 3] = [
    Load {
        name: "HTTP chained rollout (store:true, previous_response_id, 20 turns)",
        args: &[
            "--transport",
            "http-chained",
            "--clients",
            "8",
            "--turns",
            "20",
        ],
    },
    Load {
        name: "WebSocket reconnect every turn (store:true, hydrates from the store)",
        args: &[
            "--transport",
            "ws",
            "--store",
            "--churn",
            "1",
            "--clients",
            "8",
            "--turns",
            "20",
        ],
    },
    Load {
        name: "WebSocket chained, cache hits (store:true)",
        args: &[
            "--transport",
            "ws",
            "--store",
            "--clients",
            "8",
            "--turns",
            "20",
        ],
    },
];

/// Stored responses per second through nginx.
const THROUGH_NGINX: Load = Load {
    name: "WebSocket chained through nginx (store:true, durable)",
    args: &[
        "--transport",
        "ws",
        "--store",
        "--clients",
        "32",
        "--turns",
        "20",
    ],
};

/// A store the first table measures, on one replica reached directly.
struct Store {
    label: &'static str,
    postgres: bool,
    /// Flags for the replica.
    flags: &'static [&'static str],
    /// Measured under the WebSocket-chained load only (a variant of another row).
    chained_only: bool,
}

const STORES: [Store; 3] = [
    Store {
        label: "SQLite (file, WAL), ws writes behind",
        postgres: false,
        flags: &[],
        chained_only: false,
    },
    Store {
        label: "PostgreSQL, ws writes durable",
        postgres: true,
        flags: &[],
        chained_only: false,
    },
    Store {
        label: "PostgreSQL, ws writes behind",
        postgres: true,
        flags: &["--ws-writes", "behind"],
        chained_only: true,
    },
];

impl Store {
    fn runs(&self, load: &Load) -> bool {
        !self.chained_only || load.name.starts_with("WebSocket chained")
    }
}

/// The release binaries a run needs.
struct Binaries {
    server: PathBuf,
    load: PathBuf,
}

/// One row of the scaling table: a deployment of `replicas`, and each component's CPU seconds
/// over the load.
struct Scaled {
    replicas: usize,
    report: Report,
    replicas_cpu: f64,
    nginx_cpu: f64,
    postgres_cpu: f64,
}

/// `cargo xtask bench-store`.
pub fn bench_store(root: &Path, seconds: u64) -> Result<ExitCode> {
    let binaries = build(root)?;
    let mut rows = Vec::new();
    for store in &STORES {
        for load in LOADS.iter().filter(|load| store.runs(load)) {
            rows.push((
                store.label,
                load.name,
                measure_store(root, &binaries, store, load, seconds)?,
            ));
        }
    }
    println!("\n| store | load | turns/s | round trip p50 ms | p99 ms | failed |");
    println!("|---|---|---:|---:|---:|---:|");
    for (store, load, report) in &rows {
        println!("{}", store_row(store, load, report));
    }
    let mut scaling = Vec::new();
    for replicas in 1..=3 {
        scaling.push(measure_replicas(root, &binaries, replicas, seconds)?);
    }
    println!(
        "\n| replicas | stored responses/s | round trip p50 ms | p99 ms | failed | CPU: replicas | nginx | PostgreSQL | generator |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for scaled in &scaling {
        println!("{}", scaling_row(scaled));
    }
    println!(
        "\n(CPU as a share of one core over the load phase; the machine has {} cores.)",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    Ok(ExitCode::SUCCESS)
}

fn build(root: &Path) -> Result<Binaries> {
    step("building tether-server and tether-load (release)");
    crate::cargo(&[
        "build",
        "--release",
        "-p",
        "tether-server",
        "-p",
        "tether-harness",
    ])?;
    let release = target_dir(root).join("release");
    Ok(Binaries {
        server: release.join("tether-server"),
        load: release.join("tether-load"),
    })
}

/// `load` against one replica on `store`: PostgreSQL in a deployment of one, or SQLite in a
/// temporary directory.
fn measure_store(
    root: &Path,
    binaries: &Binaries,
    store: &Store,
    load: &Load,
    seconds: u64,
) -> Result<Report> {
    if store.postgres {
        let flags: Vec<String> = store.flags.iter().map(|f| f.to_string()).collect();
        let deployment = Deployment::start(root, &binaries.server, 1, 0, &flags)?;
        let url = deployment.replica_urls()[0].clone();
        let measured = run_load(&binaries.load, &url, load, seconds, None);
        deployment.stop();
        return measured;
    }
    let dir = std::env::temp_dir().join(format!("tether-bench-sqlite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let sqlite = format!("sqlite://{}/tether.sqlite3", dir.display());
    let mut args = vec!["--store", sqlite.as_str()];
    args.extend_from_slice(store.flags);
    let (mut child, url) = standalone(&binaries.server, &args)?;
    let measured = run_load(&binaries.load, &url, load, seconds, Some(child.id()));
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    measured
}

/// The load through nginx in front of `replicas` replicas sharing PostgreSQL, with each
/// component's CPU over it: every process under the replicas, under nginx (its worker), and
/// PostgreSQL's (its backends are forked as the pools connect).
fn measure_replicas(
    root: &Path,
    binaries: &Binaries,
    replicas: usize,
    seconds: u64,
) -> Result<Scaled> {
    let deployment = Deployment::start(root, &binaries.server, replicas, 0, &[])?;
    let pids = deployment.started().0;
    let groups = [
        pids[..replicas].to_vec(),
        pids[replicas..].to_vec(),
        procfs::processes_named("postgres"),
    ];
    let before: Vec<Vec<(u32, f64)>> = groups.iter().map(|group| tree_cpu(group)).collect();
    let measured = run_load(
        &binaries.load,
        &deployment.url,
        &THROUGH_NGINX,
        seconds,
        None,
    );
    let after: Vec<Vec<(u32, f64)>> = groups.iter().map(|group| tree_cpu(group)).collect();
    deployment.stop();
    Ok(Scaled {
        replicas,
        report: measured?,
        replicas_cpu: cpu_used(&before[0], &after[0]),
        nginx_cpu: cpu_used(&before[1], &after[1]),
        postgres_cpu: cpu_used(&before[2], &after[2]),
    })
}

/// The CPU seconds of each of `roots` and of every process under them now (reaped children
/// included).
fn tree_cpu(roots: &[u32]) -> Vec<(u32, f64)> {
    procfs::process_tree(roots)
        .into_iter()
        .map(|pid| {
            let cpu = procfs::cpu_time_with_children(pid).unwrap_or_default();
            (pid, cpu.as_secs_f64())
        })
        .collect()
}

/// The CPU seconds used between two readings of a group of processes: a process that started
/// in between counts from zero; one that ended counts no more.
fn cpu_used(before: &[(u32, f64)], after: &[(u32, f64)]) -> f64 {
    after
        .iter()
        .map(|(pid, end)| {
            let start = before
                .iter()
                .find(|(p, _)| p == pid)
                .map_or(0.0, |(_, start)| *start);
            end - start
        })
        .sum()
}

fn store_row(store: &str, load: &str, r: &Report) -> String {
    format!(
        "| {store} | {load} | {:.0} | {:.2} | {:.2} | {} |",
        r.turns_per_second, r.round_trip.p50_ms, r.round_trip.p99_ms, r.turns_failed
    )
}

fn scaling_row(s: &Scaled) -> String {
    let r = &s.report;
    let share = |cpu: f64| format!("{:.0}%", 100.0 * cpu / r.wall_seconds.max(0.001));
    format!(
        "| {} | {:.0} | {:.2} | {:.2} | {} | {} | {} | {} | {:.0}% |",
        s.replicas,
        r.turns_per_second,
        r.round_trip.p50_ms,
        r.round_trip.p99_ms,
        r.turns_failed,
        share(s.replicas_cpu),
        share(s.nginx_cpu),
        share(s.postgres_cpu),
        r.generator.cpu_percent_of_one_core
    )
}

/// `CARGO_TARGET_DIR`, else `target/`.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|dir| {
            if dir.is_absolute() {
                dir
            } else {
                root.join(dir)
            }
        })
        .unwrap_or_else(|| root.join("target"))
}

/// A single tether-server on a free port with `args`; its child and URL.
fn standalone(server: &Path, args: &[&str]) -> Result<(std::process::Child, String)> {
    let port = crate::deploy::free_port()?;
    let mut command = Command::new(server);
    command
        .args([
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--static-dir",
            "/nonexistent",
        ])
        .args(args)
        .env("RUST_LOG", "tether_server=warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let child = spawn_replica(&mut command, 0)?;
    let url = format!("http://127.0.0.1:{port}");
    wait_for(&url, "/readyz", Duration::from_secs(20))?;
    Ok((child, url))
}

/// Runs tether-load (`--json`, model `instant`, 200-token tool outputs) against `url` for
/// `seconds`; its report.
fn run_load(
    load: &Path,
    url: &str,
    kind: &Load,
    seconds: u64,
    server_pid: Option<u32>,
) -> Result<Report> {
    step(&format!("{} against {url} for {seconds} s", kind.name));
    let mut command = Command::new(load);
    command
        .args([
            "--url",
            url,
            "--model",
            "instant",
            "--tool-output-tokens",
            "200",
            "--json",
        ])
        .args(["--duration", &format!("{seconds}s")])
        .args(kind.args);
    if let Some(pid) = server_pid {
        command.args(["--server-pid", &pid.to_string()]);
    }
    let output = command
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run tether-load")?;
    if !output.status.success() {
        bail!("tether-load failed ({})", output.status);
    }
    serde_json::from_slice(&output.stdout).context("tether-load's --json report does not decode")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_is_counted_per_process_from_its_first_reading() {
        let before = [(1, 2.0), (2, 5.0), (3, 1.0)];
        // 2 ended; 4 started between the readings.
        let after = [(1, 2.5), (3, 1.0), (4, 0.25)];
        assert_eq!(cpu_used(&before, &after), 0.75);
        assert_eq!(cpu_used(&[], &[]), 0.0);
    }

    #[test]
    fn the_write_behind_variant_runs_only_the_chained_load() {
        let runs: Vec<Vec<bool>> = STORES
            .iter()
            .map(|store| LOADS.iter().map(|load| store.runs(load)).collect())
            .collect();
        assert_eq!(
            runs,
            [[true, true, true], [true, true, true], [false, false, true]]
        );
    }

    #[test]
    fn rows_read_the_load_generators_report() {
        let report: Report = serde_json::from_value(serde_json::json!({
            "config": {"url": "http://h", "transport": "ws", "clients": 8, "turns": 20,
                "conversations": 1, "model": "instant", "output_tokens": null,
                "reasoning_tokens": null, "tool_output_tokens": 200, "instructions_tokens": 0,
                "tool_time_ms": 0, "churn": null, "store": true, "duration_seconds": 8.0,
                "rate": null, "arrivals": null, "idle": null},
            "wall_seconds": 8.0, "turns_ok": 9876, "turns_failed": 1, "turns_per_second": 1234.5,
            "events": 0, "events_per_second": 0.0,
            "round_trip": {"count": 3, "mean_ms": 1.0, "min_ms": 0.5, "p50_ms": 1.25,
                "p90_ms": 2.0, "p99_ms": 9.5, "max_ms": 10.0},
            "overhead": {"count": 0, "mean_ms": 0.0, "min_ms": 0.0, "p50_ms": 0.0, "p90_ms": 0.0,
                "p99_ms": 0.0, "max_ms": 0.0},
            "overhead_basis": "round_trip", "overhead_fallback_turns": 0,
            "first_event": {"count": 0, "mean_ms": 0.0, "min_ms": 0.0, "p50_ms": 0.0,
                "p90_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0},
            "server_generate": null, "server_other_stages": null,
            "connect": {"count": 0, "mean_ms": 0.0, "min_ms": 0.0, "p50_ms": 0.0, "p90_ms": 0.0,
                "p99_ms": 0.0, "max_ms": 0.0},
            "tokens": {"input": 0, "cached": 0, "output": 0},
            "open_loop": null, "idle": null, "errors": {}, "server": null,
            "generator": {"cores": 2, "worker_threads": 2, "cpu_seconds": 1.0,
                "cpu_percent_of_one_core": 42.0, "cpu_seconds_total": 1.5, "nofile_limit": 1024}
        }))
        .unwrap();
        assert_eq!(
            store_row("SQLite", "chained", &report),
            "| SQLite | chained | 1234 | 1.25 | 9.50 | 1 |"
        );
        let scaled = Scaled {
            replicas: 2,
            report,
            replicas_cpu: 8.0,
            nginx_cpu: 0.8,
            postgres_cpu: 4.0,
        };
        assert_eq!(
            scaling_row(&scaled),
            "| 2 | 1234 | 1.25 | 9.50 | 1 | 100% | 10% | 50% | 42% |"
        );
    }
}
