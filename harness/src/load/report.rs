//! The load generator's report: a struct (serialized as-is by `--json`, and read back by
//! `cargo xtask bench-store`) and its text form.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use crate::stats::Summary;

/// What a run measured. Times are milliseconds, memory bytes, CPU seconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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

impl RunConfig {
    /// The options of `args` that shaped a run of `clients` agents.
    pub fn of(args: &crate::load::LoadArgs, clients: usize) -> RunConfig {
        RunConfig {
            url: args.url.clone(),
            transport: args.transport.name().into(),
            clients,
            turns: args.turns,
            conversations: args.conversations,
            model: args.model.clone(),
            output_tokens: args.output_tokens,
            reasoning_tokens: args.reasoning_tokens,
            tool_output_tokens: args.tool_output_tokens,
            instructions_tokens: args.instructions_tokens,
            tool_time_ms: args.tool_time_ms,
            churn: args.churn,
            store: args.store,
            duration_seconds: args.duration.map(|d| d.as_secs_f64()),
            rate: args.rate,
            arrivals: args
                .rate
                .map(|_| format!("{:?}", args.arrivals).to_lowercase()),
            idle: args.idle,
        }
    }
}

/// `usage` of the completed turns, added up.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct TokenTotals {
    pub input: u64,
    /// `input_tokens_details.cached_tokens`: the part of the input the server reused.
    pub cached: u64,
    pub output: u64,
}

/// Open-loop arrivals: scheduled, started on a free agent, or missed (no agent free).
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// The report as text, for people: each part of the run in its own lines.
    pub fn to_text(&self) -> String {
        let mut text = Text {
            report: self,
            out: String::new(),
        };
        text.header();
        if self.config.clients > 0 {
            text.turns();
        }
        text.open_loop();
        text.idle();
        text.errors();
        text.server();
        text.generator();
        text.out
    }
}

/// The report being written out as text: each method writes one part of it.
struct Text<'a> {
    report: &'a Report,
    out: String,
}

impl Text<'_> {
    fn line(&mut self, line: std::fmt::Arguments<'_>) {
        let _ = self.out.write_fmt(line);
        self.out.push('\n');
    }

    /// What ran: the load's shape, or the idle connections.
    fn header(&mut self) {
        let c = &self.report.config;
        if c.clients == 0 {
            self.line(format_args!(
                "tether-load: {} idle WebSocket connections ({})",
                c.idle.unwrap_or(0),
                c.url
            ));
            return;
        }
        self.line(format_args!(
            "tether-load: {} clients × {} turns × {} conversations over {} on model {} ({})",
            c.clients, c.turns, c.conversations, c.transport, c.model, c.url
        ));
        let output = c
            .output_tokens
            .map_or_else(|| "default".into(), |n| n.to_string());
        let churn = c
            .churn
            .map_or_else(|| "off".into(), |k| format!("every {k}"));
        let duration = c
            .duration_seconds
            .map_or_else(String::new, |d| format!(", duration {d:.0} s"));
        let rate = c.rate.map_or_else(String::new, |r| {
            format!(
                ", open loop {r} turns/s ({})",
                c.arrivals.as_deref().unwrap_or("")
            )
        });
        self.line(format_args!(
            "  tool output {} tokens, tool time {} ms, output tokens {output}, churn {churn}, store {}{duration}{rate}",
            c.tool_output_tokens, c.tool_time_ms, c.store,
        ));
    }

    /// The turns: counts and rates, the latencies, the tokens.
    fn turns(&mut self) {
        let r = self.report;
        self.line(format_args!(
            "turns:       {} ok, {} failed in {:.2} s = {:.1} turns/s; {} events = {:.0} events/s",
            r.turns_ok,
            r.turns_failed,
            r.wall_seconds,
            r.turns_per_second,
            r.events,
            r.events_per_second
        ));
        self.line(format_args!("round trip:  {}", ms(&r.round_trip)));
        self.line(format_args!(
            "overhead:    {}  [{}]",
            ms(&r.overhead),
            r.overhead_basis
        ));
        if r.overhead_fallback_turns > 0 {
            self.line(format_args!(
                "             ({} turns without server timing counted at their round trip)",
                r.overhead_fallback_turns
            ));
        }
        self.line(format_args!("first event: {}", ms(&r.first_event)));
        if let Some(s) = &r.server_generate {
            self.line(format_args!("server generate stage:     {}", ms(s)));
        }
        if let Some(s) = &r.server_other_stages {
            self.line(format_args!("server other stages (sum): {}", ms(s)));
        }
        self.line(format_args!("connect:     {}", ms(&r.connect)));
        let t = &r.tokens;
        let per_turn = |n: u64| n as f64 / r.turns_ok.max(1) as f64;
        let cached_percent = if t.input == 0 {
            0.0
        } else {
            t.cached as f64 / t.input as f64 * 100.0
        };
        self.line(format_args!(
            "tokens:      input {} ({:.0}/turn, {cached_percent:.0}% cached), output {} ({:.0}/turn)",
            t.input,
            per_turn(t.input),
            t.output,
            per_turn(t.output)
        ));
    }

    /// The open loop's arrivals, if it ran one.
    fn open_loop(&mut self) {
        let Some(o) = &self.report.open_loop else {
            return;
        };
        self.line(format_args!(
            "open loop:   target {:.1} turns/s ({}): {} scheduled, {} started, {} missed ({:.2}%)",
            o.target_rate,
            o.arrivals,
            o.scheduled,
            o.dispatched,
            o.missed,
            o.missed_fraction * 100.0
        ));
        self.line(format_args!("  dispatch lag: {}", ms(&o.dispatch_lag)));
    }

    /// The idle connections, if it held any.
    fn idle(&mut self) {
        let Some(i) = &self.report.idle else {
            return;
        };
        self.line(format_args!(
            "idle:        {} of {} connected ({} failed), held {:.1} s, {} closed by the server",
            i.connected, i.requested, i.failed, i.held_seconds, i.closed_by_server
        ));
        self.line(format_args!("  upgrade:   {}", ms(&i.connect)));
        self.line(format_args!(
            "  server RSS per idle connection: {}",
            kib(i.rss_per_connection_bytes)
        ));
    }

    /// Failures by kind, or `none`.
    fn errors(&mut self) {
        let errors = &self.report.errors;
        if errors.is_empty() {
            self.line(format_args!("errors:      none"));
            return;
        }
        self.line(format_args!("errors:"));
        for (key, count) in errors {
            self.line(format_args!("  {key}: {count}"));
        }
    }

    /// The server's memory and CPU, when it could be read.
    fn server(&mut self) {
        let Some(s) = &self.report.server else {
            self.line(format_args!(
                "server:      not local or not readable (give --server-pid)"
            ));
            return;
        };
        let cpu = s
            .cpu_seconds
            .map_or_else(|| "n/a".into(), |c| format!("{c:.2} s"));
        let share = s
            .cpu_percent_of_one_core
            .map_or_else(|| "n/a".into(), |p| format!("{p:.0}%"));
        self.line(format_args!(
            "server pid {}: RSS before {}, connected {}, peak {}, end {}; {} connections: {} per connection ({} at peak); CPU {cpu} ({share} of one core)",
            s.pid,
            opt_mib(s.rss_before_bytes),
            opt_mib(s.rss_connected_bytes),
            opt_mib(s.rss_peak_bytes),
            opt_mib(s.rss_end_bytes),
            s.connections,
            kib(s.rss_per_connection_bytes),
            kib(s.rss_per_connection_loaded_bytes),
        ));
    }

    /// The generator's own cost.
    fn generator(&mut self) {
        let g = &self.report.generator;
        self.line(format_args!(
            "generator:   CPU {:.2} s over {:.2} s = {:.0}% of one core ({} cores, {} worker threads; {:.2} s in all)",
            g.cpu_seconds,
            self.report.wall_seconds,
            g.cpu_percent_of_one_core,
            g.cores,
            g.worker_threads,
            g.cpu_seconds_total
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(p50_ms: f64) -> Summary {
        Summary {
            count: 4,
            mean_ms: p50_ms,
            min_ms: p50_ms,
            p50_ms,
            p90_ms: p50_ms,
            p99_ms: p50_ms,
            max_ms: p50_ms,
        }
    }

    /// A closed-loop run of 2 agents, 4 turns, one error kind, the server not found.
    fn agents_run() -> Report {
        Report {
            config: RunConfig {
                url: "http://127.0.0.1:1".into(),
                transport: "ws".into(),
                clients: 2,
                turns: 2,
                conversations: 1,
                model: "instant".into(),
                output_tokens: None,
                reasoning_tokens: None,
                tool_output_tokens: 200,
                instructions_tokens: 0,
                tool_time_ms: 0,
                churn: Some(3),
                store: false,
                duration_seconds: None,
                rate: None,
                arrivals: None,
                idle: None,
            },
            wall_seconds: 2.0,
            turns_ok: 4,
            turns_failed: 1,
            turns_per_second: 2.0,
            events: 40,
            events_per_second: 20.0,
            round_trip: summary(1.5),
            overhead: summary(1.5),
            overhead_basis: "round_trip".into(),
            overhead_fallback_turns: 0,
            first_event: summary(0.5),
            server_generate: None,
            server_other_stages: None,
            connect: summary(0.25),
            tokens: TokenTotals {
                input: 1_000,
                cached: 250,
                output: 40,
            },
            open_loop: None,
            idle: None,
            errors: BTreeMap::from([("error:server_error".to_string(), 1)]),
            server: None,
            generator: GeneratorReport {
                cores: 2,
                worker_threads: 2,
                cpu_seconds: 0.5,
                cpu_percent_of_one_core: 25.0,
                cpu_seconds_total: 0.75,
                nofile_limit: Some(1024),
            },
        }
    }

    #[test]
    fn a_report_reads_back_from_its_json() {
        let report = agents_run();
        let json = serde_json::to_string(&report).unwrap();
        let read: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(read.to_text(), report.to_text());
        assert_eq!(read.round_trip, report.round_trip);
    }

    #[test]
    fn an_agents_run_reads_as_before() {
        let text = agents_run().to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "tether-load: 2 clients × 2 turns × 1 conversations over ws on model instant (http://127.0.0.1:1)",
                "  tool output 200 tokens, tool time 0 ms, output tokens default, churn every 3, store false",
                "turns:       4 ok, 1 failed in 2.00 s = 2.0 turns/s; 40 events = 20 events/s",
                "round trip:  p50    1.500  p90    1.500  p99    1.500  max    1.500  mean    1.500 ms  (n=4)",
                "overhead:    p50    1.500  p90    1.500  p99    1.500  max    1.500  mean    1.500 ms  (n=4)  [round_trip]",
                "first event: p50    0.500  p90    0.500  p99    0.500  max    0.500  mean    0.500 ms  (n=4)",
                "connect:     p50    0.250  p90    0.250  p99    0.250  max    0.250  mean    0.250 ms  (n=4)",
                "tokens:      input 1000 (250/turn, 25% cached), output 40 (10/turn)",
                "errors:",
                "  error:server_error: 1",
                "server:      not local or not readable (give --server-pid)",
                "generator:   CPU 0.50 s over 2.00 s = 25% of one core (2 cores, 2 worker threads; 0.75 s in all)",
            ]
        );
    }

    #[test]
    fn optional_parts_appear_only_when_measured() {
        let mut report = agents_run();
        report.overhead_fallback_turns = 2;
        report.server_generate = Some(summary(1.0));
        report.errors.clear();
        report.tokens = TokenTotals {
            input: 0,
            cached: 0,
            output: 0,
        };
        report.config.rate = Some(100.0);
        report.config.arrivals = Some("poisson".into());
        let text = report.to_text();
        assert!(text.contains(", open loop 100 turns/s (poisson)"), "{text}");
        assert!(text.contains("(2 turns without server timing counted at their round trip)"));
        assert!(text.contains("server generate stage:     p50    1.000"));
        assert!(!text.contains("server other stages"));
        assert!(
            text.contains("input 0 (0/turn, 0% cached)"),
            "no NaN: {text}"
        );
        assert!(text.contains("errors:      none"));
    }

    #[test]
    fn an_idle_run_shows_its_connections_not_turns() {
        let mut report = agents_run();
        report.config.clients = 0;
        report.config.idle = Some(3);
        report.idle = Some(IdleReport {
            requested: 3,
            connected: 3,
            failed: 0,
            closed_by_server: 1,
            held_seconds: 10.0,
            connect: summary(2.0),
            rss_per_connection_bytes: Some(14_336.0),
        });
        report.server = Some(ServerReport {
            pid: 7,
            rss_before_bytes: Some(1 << 20),
            rss_connected_bytes: None,
            rss_peak_bytes: None,
            rss_end_bytes: None,
            connections: 3,
            rss_per_connection_bytes: Some(2048.0),
            rss_per_connection_loaded_bytes: None,
            cpu_seconds: None,
            cpu_percent_of_one_core: None,
        });
        let text = report.to_text();
        assert!(
            text.starts_with("tether-load: 3 idle WebSocket connections (http://127.0.0.1:1)\n")
        );
        assert!(!text.contains("turns:"), "{text}");
        assert!(!text.contains("tool output"), "{text}");
        assert!(text.contains(
            "idle:        3 of 3 connected (0 failed), held 10.0 s, 1 closed by the server"
        ));
        assert!(text.contains("  server RSS per idle connection: 14.0 KiB"));
        assert!(text.contains("server pid 7: RSS before 1.0 MiB, connected n/a, peak n/a, end n/a; 3 connections: 2.0 KiB per connection (n/a at peak); CPU n/a (n/a of one core)"), "{text}");
    }
}
