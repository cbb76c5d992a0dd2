//! The load generator's report: a struct (serialized as-is by `--json`) and its text form.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::stats::Summary;

/// What a run measured. Times are milliseconds, memory bytes, CPU seconds.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub config: RunConfig,
    /// Length of the load phase (first turn started → last turn ended), seconds. For an idle
    /// run: how long the connections were held.
    pub wall_seconds: f64,
    pub turns_ok: u64,
    pub turns_failed: u64,
    /// Completed turns per second of the load phase.
    pub turns_per_second: f64,
    /// Events received (every WebSocket text frame / SSE event, terminal included).
    pub events: u64,
    pub events_per_second: f64,
    /// Request sent → terminal event received, per completed turn.
    pub round_trip: Summary,
    /// Per-turn overhead (see `overhead_basis`).
    pub overhead: Summary,
    /// How `overhead` is computed: `round_trip` (model `instant`: no model time) or
    /// `round_trip_minus_server_generate`, or `round_trip_includes_model_time` when the server
    /// reported no timings.
    pub overhead_basis: String,
    /// Completed turns whose overhead fell back to the round trip (no server timing on them).
    pub overhead_fallback_turns: u64,
    /// Request sent → first event (`response.created`) received.
    pub first_event: Summary,
    /// The server's `generate` stage (model time plus building the events), when reported.
    pub server_generate: Option<Summary>,
    /// The server's other pipeline stages added up (load, resolve, render, validate, classify,
    /// persist, bill), when reported.
    pub server_other_stages: Option<Summary>,
    /// TCP connect + handshake/upgrade of the agents' connections (reconnects included).
    pub connect: Summary,
    /// Token usage the server reported, added up over the completed turns.
    pub tokens: TokenTotals,
    pub open_loop: Option<OpenLoop>,
    pub idle: Option<IdleReport>,
    /// Failures by kind: `error:CODE` (error events, failed responses), `http_STATUS[:CODE]`,
    /// `upgrade_STATUS`, `connect:KIND`, `connection_closed`, `timeout`, `incomplete:REASON`,
    /// `protocol:WHAT`.
    pub errors: BTreeMap<String, u64>,
    pub server: Option<ServerReport>,
    pub generator: GeneratorReport,
}

/// The options that shaped the run.
#[derive(Debug, Clone, Serialize)]
pub struct RunConfig {
    pub url: String,
    pub transport: String,
    pub clients: usize,
    pub turns: usize,
    pub conversations: usize,
    pub model: String,
    pub output_tokens: Option<usize>,
    pub reasoning_tokens: Option<usize>,
    pub tool_output_tokens: usize,
    pub instructions_tokens: usize,
    pub tool_time_ms: u64,
    pub churn: Option<usize>,
    pub store: bool,
    pub duration_seconds: Option<f64>,
    pub rate: Option<f64>,
    pub arrivals: Option<String>,
    pub idle: Option<usize>,
}

/// `usage` of the completed turns, added up.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TokenTotals {
    pub input: u64,
    /// `input_tokens_details.cached_tokens`: the part of the input the server reused.
    pub cached: u64,
    pub output: u64,
}

/// Open-loop arrivals: scheduled, started on a free agent, or missed (no agent free).
#[derive(Debug, Clone, Serialize)]
pub struct OpenLoop {
    pub target_rate: f64,
    pub arrivals: String,
    pub scheduled: u64,
    pub dispatched: u64,
    /// Arrivals that found every agent busy (overload).
    pub missed: u64,
    pub missed_fraction: f64,
    /// Scheduled instant → the agent starting the turn (the generator's own lateness).
    pub dispatch_lag: Summary,
}

/// Idle connections held.
#[derive(Debug, Clone, Serialize)]
pub struct IdleReport {
    pub requested: usize,
    pub connected: u64,
    pub failed: u64,
    /// Connections the server closed while they were held.
    pub closed_by_server: u64,
    pub held_seconds: f64,
    /// TCP connect + upgrade of each idle connection.
    pub connect: Summary,
    /// Server RSS growth per idle connection (after all upgrades, before the agents).
    pub rss_per_connection_bytes: Option<f64>,
}

/// The server process, when local and readable.
#[derive(Debug, Clone, Serialize)]
pub struct ServerReport {
    pub pid: u32,
    /// VmRSS before any connection was opened.
    pub rss_before_bytes: Option<u64>,
    /// VmRSS once every connection was open (0.5 s after), before the first turn.
    pub rss_connected_bytes: Option<u64>,
    /// Highest VmRSS sampled (every 200 ms) during the load phase.
    pub rss_peak_bytes: Option<u64>,
    /// VmRSS at the end of the load phase, connections still open.
    pub rss_end_bytes: Option<u64>,
    /// Connections open: idle ones plus one per agent.
    pub connections: u64,
    /// (rss_connected − rss_before) / connections.
    pub rss_per_connection_bytes: Option<f64>,
    /// (rss_peak − rss_before) / connections: memory per connection under load.
    pub rss_per_connection_loaded_bytes: Option<f64>,
    /// Server CPU time over the load phase, and as a share of one core.
    pub cpu_seconds: Option<f64>,
    pub cpu_percent_of_one_core: Option<f64>,
}

/// The load generator's own cost, to show it was not the bottleneck.
#[derive(Debug, Clone, Serialize)]
pub struct GeneratorReport {
    pub cores: usize,
    pub worker_threads: usize,
    /// CPU time (user + system, all threads) over the load phase.
    pub cpu_seconds: f64,
    /// cpu_seconds / wall_seconds × 100: 100 is one core busy.
    pub cpu_percent_of_one_core: f64,
    /// CPU time over the whole run (connecting and closing included).
    pub cpu_seconds_total: f64,
    /// The soft open-files limit after raising it to the hard limit.
    pub nofile_limit: Option<u64>,
}

fn ms(s: &crate::stats::Summary) -> String {
    format!(
        "p50 {:>8.3}  p90 {:>8.3}  p99 {:>8.3}  max {:>8.3}  mean {:>8.3} ms  (n={})",
        s.p50_ms, s.p90_ms, s.p99_ms, s.max_ms, s.mean_ms, s.count
    )
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn opt_mib(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "n/a".into(), mib)
}

fn kib(bytes: Option<f64>) -> String {
    bytes.map_or_else(|| "n/a".into(), |b| format!("{:.1} KiB", b / 1024.0))
}

impl Report {
    /// The report as text, for people.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let c = &self.config;
        if c.clients == 0 {
            let _ = writeln!(
                out,
                "tether-load: {} idle WebSocket connections ({})",
                c.idle.unwrap_or(0),
                c.url
            );
        } else {
            let _ = writeln!(
                out,
                "tether-load: {} clients × {} turns × {} conversations over {} on model {} ({})",
                c.clients, c.turns, c.conversations, c.transport, c.model, c.url
            );
        }
        let _ = (c.clients > 0).then(|| writeln!(
            out,
            "  tool output {} tokens, tool time {} ms, output tokens {}, churn {}, store {}{}{}",
            c.tool_output_tokens,
            c.tool_time_ms,
            c.output_tokens
                .map_or_else(|| "default".into(), |n| n.to_string()),
            c.churn.map_or_else(|| "off".into(), |k| format!("every {k}")),
            c.store,
            c.duration_seconds
                .map_or_else(String::new, |d| format!(", duration {d:.0} s")),
            c.rate.map_or_else(String::new, |r| format!(
                ", open loop {r} turns/s ({})",
                c.arrivals.as_deref().unwrap_or("")
            )),
        ));
        if c.clients > 0 {
            let _ = writeln!(
                out,
                "turns:       {} ok, {} failed in {:.2} s = {:.1} turns/s; {} events = {:.0} events/s",
                self.turns_ok,
                self.turns_failed,
                self.wall_seconds,
                self.turns_per_second,
                self.events,
                self.events_per_second
            );
            let _ = writeln!(out, "round trip:  {}", ms(&self.round_trip));
            let _ = writeln!(
                out,
                "overhead:    {}  [{}]",
                ms(&self.overhead),
                self.overhead_basis
            );
            if self.overhead_fallback_turns > 0 {
                let _ = writeln!(
                    out,
                    "             ({} turns without server timing counted at their round trip)",
                    self.overhead_fallback_turns
                );
            }
            let _ = writeln!(out, "first event: {}", ms(&self.first_event));
            if let Some(s) = &self.server_generate {
                let _ = writeln!(out, "server generate stage:     {}", ms(s));
            }
            if let Some(s) = &self.server_other_stages {
                let _ = writeln!(out, "server other stages (sum): {}", ms(s));
            }
            let _ = writeln!(out, "connect:     {}", ms(&self.connect));
            let t = &self.tokens;
            let per_turn = |n: u64| n as f64 / self.turns_ok.max(1) as f64;
            let _ = writeln!(
                out,
                "tokens:      input {} ({:.0}/turn, {:.0}% cached), output {} ({:.0}/turn)",
                t.input,
                per_turn(t.input),
                if t.input == 0 {
                    0.0
                } else {
                    t.cached as f64 / t.input as f64 * 100.0
                },
                t.output,
                per_turn(t.output)
            );
        }
        if let Some(o) = &self.open_loop {
            let _ = writeln!(
                out,
                "open loop:   target {:.1} turns/s ({}): {} scheduled, {} started, {} missed ({:.2}%)",
                o.target_rate,
                o.arrivals,
                o.scheduled,
                o.dispatched,
                o.missed,
                o.missed_fraction * 100.0
            );
            let _ = writeln!(out, "  dispatch lag: {}", ms(&o.dispatch_lag));
        }
        if let Some(i) = &self.idle {
            let _ = writeln!(
                out,
                "idle:        {} of {} connected ({} failed), held {:.1} s, {} closed by the server",
                i.connected, i.requested, i.failed, i.held_seconds, i.closed_by_server
            );
            let _ = writeln!(out, "  upgrade:   {}", ms(&i.connect));
            let _ = writeln!(
                out,
                "  server RSS per idle connection: {}",
                kib(i.rss_per_connection_bytes)
            );
        }
        if self.errors.is_empty() {
            let _ = writeln!(out, "errors:      none");
        } else {
            let _ = writeln!(out, "errors:");
            for (key, count) in &self.errors {
                let _ = writeln!(out, "  {key}: {count}");
            }
        }
        match &self.server {
            Some(s) => {
                let _ = writeln!(
                    out,
                    "server pid {}: RSS before {}, connected {}, peak {}, end {}; {} connections: {} per connection ({} at peak); CPU {} ({} of one core)",
                    s.pid,
                    opt_mib(s.rss_before_bytes),
                    opt_mib(s.rss_connected_bytes),
                    opt_mib(s.rss_peak_bytes),
                    opt_mib(s.rss_end_bytes),
                    s.connections,
                    kib(s.rss_per_connection_bytes),
                    kib(s.rss_per_connection_loaded_bytes),
                    s.cpu_seconds
                        .map_or_else(|| "n/a".into(), |c| format!("{c:.2} s")),
                    s.cpu_percent_of_one_core
                        .map_or_else(|| "n/a".into(), |p| format!("{p:.0}%")),
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "server:      not local or not readable (give --server-pid)"
                );
            }
        }
        let g = &self.generator;
        let _ = writeln!(
            out,
            "generator:   CPU {:.2} s over {:.2} s = {:.0}% of one core ({} cores, {} worker threads; {:.2} s in all)",
            g.cpu_seconds,
            self.wall_seconds,
            g.cpu_percent_of_one_core,
            g.cores,
            g.worker_threads,
            g.cpu_seconds_total
        );
        out
    }
}
