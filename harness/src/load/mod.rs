//! The load generator behind `tether-load`: [`run`] takes [`LoadArgs`] and returns a
//! [`Report`].
//!
//! A run has three phases: **connect** (idle connections first, then one connection per
//! agent, at most `--connect-concurrency` at a time; the server's RSS is read before and
//! after), **load** (closed loop: every agent plays its turns back to back, with the tool time
//! between; or open loop with `--rate`: a scheduler starts turns on free agents at the target
//! rate), and **close**. Times, rates and CPU use in the report are over the load phase.

mod agent;
pub mod config;
pub mod report;
pub mod text;
pub mod turn;

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use agent::{Agent, RequestTemplate, TurnResult};
pub use config::{Arrivals, LoadArgs, Transport};
pub use report::Report;
use report::{GeneratorReport, IdleReport, OpenLoop, RunConfig, ServerReport, TokenTotals};
use tether_client::{Endpoint, WebSocket};
use turn::{TurnDone, TurnError};

use crate::procfs;
use crate::stats::Histogram;

/// How long after the last connection opens the server's RSS is read.
const SETTLE: Duration = Duration::from_millis(500);
/// How often the server's RSS is sampled during the load phase.
const RSS_SAMPLE_EVERY: Duration = Duration::from_millis(200);
/// How an idle run holds its connections without --duration.
const DEFAULT_IDLE_HOLD: Duration = Duration::from_secs(10);

/// How the per-turn overhead is derived from a turn's measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OverheadBasis {
    /// Model `instant` has no model time: the round trip is all overhead.
    RoundTrip,
    /// The round trip minus the server-reported `generate` stage.
    MinusGenerate,
    /// No server timings asked for: the round trip, model time included.
    RoundTripWithModel,
}

impl OverheadBasis {
    /// How `args`' turns are measured: `instant` has no model time; without the server's
    /// timings the model's time cannot be taken out.
    fn of(args: &LoadArgs) -> OverheadBasis {
        if args.model == "instant" {
            OverheadBasis::RoundTrip
        } else if args.no_timing {
            OverheadBasis::RoundTripWithModel
        } else {
            OverheadBasis::MinusGenerate
        }
    }

    fn name(self) -> &'static str {
        match self {
            OverheadBasis::RoundTrip => "round_trip",
            OverheadBasis::MinusGenerate => "round_trip_minus_server_generate",
            OverheadBasis::RoundTripWithModel => "round_trip_includes_model_time",
        }
    }
}

/// Counters shared by every task of a run.
pub(crate) struct Stats {
    round_trip: Histogram,
    overhead: Histogram,
    first_event: Histogram,
    generate: Histogram,
    other_stages: Histogram,
    pub(crate) connect: Histogram,
    idle_connect: Histogram,
    dispatch_lag: Histogram,
    turns_ok: AtomicU64,
    turns_failed: AtomicU64,
    events: AtomicU64,
    overhead_fallbacks: AtomicU64,
    input_tokens: AtomicU64,
    cached_tokens: AtomicU64,
    output_tokens: AtomicU64,
    errors: Mutex<BTreeMap<String, u64>>,
    basis: OverheadBasis,
}

impl Stats {
    fn new(basis: OverheadBasis) -> Stats {
        Stats {
            round_trip: Histogram::default(),
            overhead: Histogram::default(),
            first_event: Histogram::default(),
            generate: Histogram::default(),
            other_stages: Histogram::default(),
            connect: Histogram::default(),
            idle_connect: Histogram::default(),
            dispatch_lag: Histogram::default(),
            turns_ok: AtomicU64::new(0),
            turns_failed: AtomicU64::new(0),
            events: AtomicU64::new(0),
            overhead_fallbacks: AtomicU64::new(0),
            input_tokens: AtomicU64::new(0),
            cached_tokens: AtomicU64::new(0),
            output_tokens: AtomicU64::new(0),
            errors: Mutex::new(BTreeMap::new()),
            basis,
        }
    }

    pub(crate) fn turn_done(&self, done: &TurnDone) {
        self.turns_ok.fetch_add(1, Relaxed);
        self.events.fetch_add(done.events, Relaxed);
        self.round_trip.record(done.round_trip);
        self.first_event.record(done.first_event);
        if let Some(usage) = &done.response.usage {
            self.input_tokens.fetch_add(usage.input_tokens, Relaxed);
            self.cached_tokens
                .fetch_add(usage.input_tokens_details.cached_tokens, Relaxed);
            self.output_tokens.fetch_add(usage.output_tokens, Relaxed);
        }
        if let Some(generate) = done.generate {
            self.generate.record(generate);
        }
        if let Some(other) = done.other_stages {
            self.other_stages.record(other);
        }
        let overhead = match (self.basis, done.generate) {
            (OverheadBasis::MinusGenerate, Some(generate)) => {
                done.round_trip.saturating_sub(generate)
            }
            (OverheadBasis::MinusGenerate, None) => {
                self.overhead_fallbacks.fetch_add(1, Relaxed);
                done.round_trip
            }
            _ => done.round_trip,
        };
        self.overhead.record(overhead);
    }

    pub(crate) fn turn_failed(&self) {
        self.turns_failed.fetch_add(1, Relaxed);
    }

    pub(crate) fn error(&self, error: &TurnError) {
        *self
            .errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(error.key())
            .or_insert(0) += 1;
    }
}

/// What every agent shares.
pub(crate) struct Shared {
    pub(crate) args: LoadArgs,
    pub(crate) endpoint: Endpoint,
    pub(crate) template: RequestTemplate,
    pub(crate) stats: Stats,
}

/// Idle connections being held.
struct IdleSet {
    stop: tokio::sync::watch::Sender<bool>,
    holders: Vec<tokio::task::JoinHandle<bool>>,
    failed: u64,
    opened_at: Instant,
}

/// Runs the load described by `args` against the server at `args.url` and reports.
pub async fn run(args: LoadArgs) -> anyhow::Result<Report> {
    let mut run = Run::prepare(args).await?;
    run.connect().await;
    run.load().await;
    run.close().await;
    Ok(run.report())
}

/// One run's state, carried through its phases: [`Run::prepare`], [`Run::connect`],
/// [`Run::load`], [`Run::close`], then [`Run::report`].
struct Run {
    shared: Arc<Shared>,
    /// The server's process, when it is local and readable.
    server_pid: Option<u32>,
    clients: usize,
    nofile_limit: Option<u64>,
    /// This process's CPU time when the run began.
    cpu_at_start: Duration,
    memory: ServerMemory,
    idle: Option<IdleSet>,
    agents: Vec<Agent>,
    phase: LoadPhase,
    idle_report: Option<IdleReport>,
    /// This process's CPU time over the whole run, once it is over.
    cpu_total: Duration,
}

/// The server's RSS at the points a run reads it.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct ServerMemory {
    before: Option<u64>,
    /// After the idle connections opened (`before` without any).
    idle: Option<u64>,
    /// After every agent connected.
    connected: Option<u64>,
    /// The highest sample of the load phase (0: none taken).
    peak: u64,
    end: Option<u64>,
}

impl ServerMemory {
    /// Growth per connection from `before` to `after`, over `connections`.
    fn per_connection(&self, after: Option<u64>, connections: u64) -> Option<f64> {
        let (before, after) = (self.before?, after?);
        (connections > 0).then(|| (after as f64 - before as f64) / connections as f64)
    }

    fn peak(&self) -> Option<u64> {
        (self.peak > 0).then_some(self.peak)
    }
}

/// What the load phase measured.
#[derive(Debug, Default)]
struct LoadPhase {
    wall: Duration,
    /// This process's CPU time over the phase.
    cpu: Duration,
    server_cpu: Option<Duration>,
    open_loop: Option<OpenLoop>,
}

/// The server process behind `addr`: the one given, else the local process listening on its
/// port (a loopback address only).
fn local_server_pid(explicit: Option<u32>, addr: Option<std::net::SocketAddr>) -> Option<u32> {
    explicit.or_else(|| {
        let addr = addr?;
        addr.ip()
            .is_loopback()
            .then(|| procfs::pid_listening_on(addr.port()))
            .flatten()
    })
}

fn rss(pid: Option<u32>) -> Option<u64> {
    pid.and_then(procfs::rss_bytes)
}

impl Run {
    /// Checks the options, raises the open-files limit, resolves the server and finds its
    /// process.
    async fn prepare(args: LoadArgs) -> anyhow::Result<Run> {
        args.validate()?;
        let nofile_limit = procfs::raise_nofile_limit();
        let endpoint = endpoint_of(&args).await?;
        let server_pid = local_server_pid(args.server_pid, endpoint.addr());
        let basis = OverheadBasis::of(&args);
        let clients = args.client_count();
        let shared = Arc::new(Shared {
            template: RequestTemplate::new(&args),
            endpoint,
            stats: Stats::new(basis),
            args,
        });
        Ok(Run {
            shared,
            server_pid,
            clients,
            nofile_limit,
            cpu_at_start: procfs::own_cpu_time().unwrap_or_default(),
            memory: ServerMemory {
                before: rss(server_pid),
                ..ServerMemory::default()
            },
            idle: None,
            agents: Vec::new(),
            phase: LoadPhase::default(),
            idle_report: None,
            cpu_total: Duration::ZERO,
        })
    }

    /// Opens the idle connections, then one connection per agent (at most
    /// `--connect-concurrency` at a time), reading the server's RSS after each group settles.
    async fn connect(&mut self) {
        let shared = &self.shared;
        let args = &shared.args;
        self.idle = match args.idle {
            Some(n) if n > 0 => Some(open_idle(n, shared).await),
            _ => None,
        };
        self.memory.idle = match &self.idle {
            Some(_) if self.server_pid.is_some() => {
                tokio::time::sleep(SETTLE).await;
                rss(self.server_pid)
            }
            _ => self.memory.before,
        };
        let mut agents: Vec<Agent> = futures_util::stream::iter(0..self.clients)
            .map(|id| {
                let shared = shared.clone();
                async move {
                    let mut agent = Agent::new(id, shared);
                    agent.connect().await;
                    agent
                }
            })
            .buffer_unordered(args.connect_concurrency)
            .collect()
            .await;
        agents.sort_by_key(Agent::id);
        self.agents = agents;
        self.memory.connected = if self.clients > 0 && self.server_pid.is_some() {
            tokio::time::sleep(SETTLE).await;
            rss(self.server_pid)
        } else {
            self.memory.idle
        };
    }

    /// The load phase: closed loop, open loop, or (no agents) holding the idle connections;
    /// the server's RSS sampled throughout, CPU times read around it.
    async fn load(&mut self) {
        let peak = Arc::new(AtomicU64::new(self.memory.connected.unwrap_or(0)));
        let sampler = self.server_pid.map(|pid| {
            let peak = peak.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(RSS_SAMPLE_EVERY).await;
                    if let Some(rss) = procfs::rss_bytes(pid) {
                        peak.fetch_max(rss, Relaxed);
                    }
                }
            })
        });
        let server_cpu_start = self.server_pid.and_then(procfs::cpu_time);
        let cpu_start = procfs::own_cpu_time().unwrap_or_default();
        let started = Instant::now();
        let agents = std::mem::take(&mut self.agents);
        let args = &self.shared.args;
        let (agents, open_loop) = if self.clients == 0 {
            tokio::time::sleep(args.duration.unwrap_or(DEFAULT_IDLE_HOLD)).await;
            (agents, None)
        } else if let Some(rate) = args.rate {
            let (agents, open_loop) = open_loop(agents, &self.shared, rate, started).await;
            (agents, Some(open_loop))
        } else {
            (closed_loop(agents, &self.shared, started).await, None)
        };
        self.agents = agents;
        self.phase = LoadPhase {
            wall: started.elapsed(),
            cpu: procfs::own_cpu_time().unwrap_or_default() - cpu_start,
            server_cpu: self
                .server_pid
                .and_then(procfs::cpu_time)
                .zip(server_cpu_start)
                .map(|(end, start)| end.saturating_sub(start)),
            open_loop,
        };
        if let Some(sampler) = sampler {
            sampler.abort();
        }
        self.memory.end = rss(self.server_pid);
        if let Some(rss) = self.memory.end {
            peak.fetch_max(rss, Relaxed);
        }
        self.memory.peak = peak.load(Relaxed);
    }

    /// Closes the idle connections (reporting on them) and the agents'.
    async fn close(&mut self) {
        if let Some(set) = self.idle.take() {
            let memory = self.memory;
            self.idle_report =
                Some(close_idle(set, &self.shared, memory.before, memory.idle).await);
        }
        futures_util::stream::iter(std::mem::take(&mut self.agents))
            .for_each_concurrent(
                self.shared.args.connect_concurrency,
                |mut agent| async move {
                    agent.disconnect().await;
                },
            )
            .await;
        self.cpu_total = procfs::own_cpu_time().unwrap_or_default() - self.cpu_at_start;
    }

    /// Everything measured, as the report.
    fn report(mut self) -> Report {
        let open_loop = self.phase.open_loop.take();
        let stats = &self.shared.stats;
        let args = &self.shared.args;
        let phase = &self.phase;
        let wall = phase.wall.as_secs_f64();
        let seconds = wall.max(1e-9);
        let connections =
            self.idle_report.as_ref().map_or(0, |i| i.connected) + self.clients as u64;
        let memory = self.memory;
        let server = self.server_pid.map(|pid| ServerReport {
            pid,
            rss_before_bytes: memory.before,
            rss_connected_bytes: memory.connected,
            rss_peak_bytes: memory.peak(),
            rss_end_bytes: memory.end,
            connections,
            rss_per_connection_bytes: memory.per_connection(memory.connected, connections),
            rss_per_connection_loaded_bytes: memory.per_connection(memory.peak(), connections),
            cpu_seconds: phase.server_cpu.map(|c| c.as_secs_f64()),
            cpu_percent_of_one_core: phase.server_cpu.map(|c| c.as_secs_f64() / wall * 100.0),
        });
        let turns_ok = stats.turns_ok.load(Relaxed);
        let events = stats.events.load(Relaxed);
        let timed = stats.generate.count() > 0;
        Report {
            config: RunConfig::of(args, self.clients),
            wall_seconds: wall,
            turns_ok,
            turns_failed: stats.turns_failed.load(Relaxed),
            turns_per_second: turns_ok as f64 / seconds,
            events,
            events_per_second: events as f64 / seconds,
            round_trip: stats.round_trip.summary(),
            overhead: stats.overhead.summary(),
            overhead_basis: stats.basis.name().into(),
            overhead_fallback_turns: stats.overhead_fallbacks.load(Relaxed),
            first_event: stats.first_event.summary(),
            server_generate: timed.then(|| stats.generate.summary()),
            server_other_stages: timed.then(|| stats.other_stages.summary()),
            connect: stats.connect.summary(),
            tokens: TokenTotals {
                input: stats.input_tokens.load(Relaxed),
                cached: stats.cached_tokens.load(Relaxed),
                output: stats.output_tokens.load(Relaxed),
            },
            open_loop,
            idle: self.idle_report,
            errors: stats
                .errors
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            server,
            generator: GeneratorReport {
                cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
                worker_threads: tokio::runtime::Handle::current().metrics().num_workers(),
                cpu_seconds: phase.cpu.as_secs_f64(),
                cpu_percent_of_one_core: phase.cpu.as_secs_f64() / seconds * 100.0,
                cpu_seconds_total: self.cpu_total.as_secs_f64(),
                nofile_limit: self.nofile_limit,
            },
        }
    }
}

/// The endpoint `--url` names, with the key and the timing opt-in, resolved once for every
/// connection of the run.
async fn endpoint_of(args: &LoadArgs) -> anyhow::Result<Endpoint> {
    let mut endpoint = Endpoint::new(&args.url)?.with_timing(!args.no_timing);
    if let Some(key) = &args.api_key {
        endpoint = endpoint.with_api_key(key);
    }
    anyhow::ensure!(
        !endpoint.is_secure(),
        "TLS is not supported: use http:// (got '{}')",
        args.url
    );
    Ok(endpoint.resolve().await?)
}

/// Closed loop: every agent plays turn after turn (tool time between) until it has played
/// its conversations, or until --duration.
async fn closed_loop(agents: Vec<Agent>, shared: &Arc<Shared>, started: Instant) -> Vec<Agent> {
    let deadline = shared.args.duration.map(|d| started + d);
    let tool_time = Duration::from_millis(shared.args.tool_time_ms);
    let tasks: Vec<_> = agents
        .into_iter()
        .map(|mut agent| {
            tokio::spawn(async move {
                loop {
                    match deadline {
                        Some(deadline) if Instant::now() >= deadline => break,
                        None if agent.finished() => break,
                        _ => {}
                    }
                    if agent.turn().await == TurnResult::ToolCall && !tool_time.is_zero() {
                        tokio::time::sleep(tool_time).await;
                    }
                }
                agent
            })
        })
        .collect();
    let mut agents = Vec::with_capacity(tasks.len());
    for task in tasks {
        agents.push(task.await.expect("an agent task panicked"));
    }
    agents
}

/// Open loop: arrivals at `rate` turns/s (Poisson or fixed spacing), each started on the
/// longest-free agent; an arrival finding none free is missed. Without --duration the schedule
/// has clients × turns × conversations arrivals.
async fn open_loop(
    agents: Vec<Agent>,
    shared: &Arc<Shared>,
    rate: f64,
    started: Instant,
) -> (Vec<Agent>, OpenLoop) {
    let args = &shared.args;
    let tool_time = Duration::from_millis(args.tool_time_ms);
    let free: Arc<Mutex<VecDeque<usize>>> = Arc::new(Mutex::new((0..agents.len()).collect()));
    let mut senders = Vec::with_capacity(agents.len());
    let mut tasks = Vec::with_capacity(agents.len());
    for mut agent in agents {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Instant>(1);
        senders.push(tx);
        let free = free.clone();
        let shared = shared.clone();
        tasks.push(tokio::spawn(async move {
            while let Some(scheduled) = rx.recv().await {
                shared.stats.dispatch_lag.record(scheduled.elapsed());
                if agent.turn().await == TurnResult::ToolCall && !tool_time.is_zero() {
                    tokio::time::sleep(tool_time).await;
                }
                free.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push_back(agent.id());
            }
            agent
        }));
    }
    let deadline = args.duration.map(|d| started + d);
    let limit = match deadline {
        Some(_) => u64::MAX,
        None => (senders.len() * args.turns * args.conversations) as u64,
    };
    // Seeded, so a run's arrival times are reproducible from `--seed`.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(args.seed);
    let (mut scheduled, mut dispatched, mut missed) = (0u64, 0u64, 0u64);
    let mut t = 0.0f64;
    while scheduled < limit {
        let at = started + Duration::from_secs_f64(t);
        if deadline.is_some_and(|d| at >= d) {
            break;
        }
        if at > Instant::now() {
            tokio::time::sleep_until(at.into()).await;
        }
        let agent = free.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
        match agent {
            Some(id) if senders[id].try_send(at).is_ok() => dispatched += 1,
            _ => missed += 1,
        }
        scheduled += 1;
        t += match args.arrivals {
            Arrivals::Fixed => 1.0 / rate,
            Arrivals::Poisson => -(1.0 - rng.random::<f64>()).ln() / rate,
        };
    }
    drop(senders);
    let mut agents = Vec::with_capacity(tasks.len());
    for task in tasks {
        agents.push(task.await.expect("an agent task panicked"));
    }
    let report = OpenLoop {
        target_rate: rate,
        arrivals: format!("{:?}", args.arrivals).to_lowercase(),
        scheduled,
        dispatched,
        missed,
        missed_fraction: if scheduled == 0 {
            0.0
        } else {
            missed as f64 / scheduled as f64
        },
        dispatch_lag: shared.stats.dispatch_lag.summary(),
    };
    (agents, report)
}

/// Opens `n` WebSocket connections (upgrades complete) and holds each in a task that answers
/// pings until told to close.
async fn open_idle(n: usize, shared: &Arc<Shared>) -> IdleSet {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let results: Vec<Result<tokio::task::JoinHandle<bool>, TurnError>> =
        futures_util::stream::iter(0..n)
            .map(|_| {
                let stopped = stopped.clone();
                async move {
                    let begun = Instant::now();
                    let conn = WebSocket::connect(&shared.endpoint).await?;
                    shared.stats.idle_connect.record(begun.elapsed());
                    Ok(tokio::spawn(turn::hold(conn, stopped)))
                }
            })
            .buffer_unordered(shared.args.connect_concurrency)
            .collect()
            .await;
    let mut holders = Vec::with_capacity(n);
    let mut failed = 0;
    for result in results {
        match result {
            Ok(holder) => holders.push(holder),
            Err(error) => {
                failed += 1;
                shared.stats.error(&error);
            }
        }
    }
    IdleSet {
        stop,
        holders,
        failed,
        opened_at: Instant::now(),
    }
}

/// Closes the idle connections and reports on them.
async fn close_idle(
    set: IdleSet,
    shared: &Arc<Shared>,
    rss_before: Option<u64>,
    rss_idle: Option<u64>,
) -> IdleReport {
    let held = set.opened_at.elapsed();
    let connected = set.holders.len() as u64;
    let _ = set.stop.send(true);
    let mut closed_by_server = 0;
    for holder in set.holders {
        if let Ok(Ok(true)) = tokio::time::timeout(Duration::from_secs(5), holder).await {
            closed_by_server += 1;
        }
    }
    IdleReport {
        requested: shared.args.idle.unwrap_or(0),
        connected,
        failed: set.failed,
        closed_by_server,
        held_seconds: held.as_secs_f64(),
        connect: shared.stats.idle_connect.summary(),
        rss_per_connection_bytes: rss_before
            .zip(rss_idle)
            .filter(|_| connected > 0)
            .map(|(before, after)| (after as f64 - before as f64) / connected as f64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn the_overhead_is_the_round_trip_unless_the_server_times_the_model() {
        let basis = |extra: &[&str]| {
            let mut argv = vec!["tether-load"];
            argv.extend_from_slice(extra);
            OverheadBasis::of(&LoadArgs::parse_from(argv))
        };
        assert_eq!(basis(&["--model", "instant"]), OverheadBasis::RoundTrip);
        assert_eq!(
            basis(&["--model", "instant", "--no-timing"]),
            OverheadBasis::RoundTrip
        );
        assert_eq!(basis(&["--model", "spark"]), OverheadBasis::MinusGenerate);
        assert_eq!(
            basis(&["--model", "spark", "--no-timing"]),
            OverheadBasis::RoundTripWithModel
        );
    }

    #[test]
    fn memory_per_connection_needs_both_readings_and_a_connection() {
        let memory = ServerMemory {
            before: Some(1_000),
            connected: Some(21_000),
            peak: 0,
            ..ServerMemory::default()
        };
        assert_eq!(memory.per_connection(memory.connected, 10), Some(2_000.0));
        assert_eq!(memory.per_connection(memory.connected, 0), None);
        assert_eq!(memory.peak(), None, "no sample taken");
        assert_eq!(memory.per_connection(memory.peak(), 10), None);
        let unread = ServerMemory::default();
        assert_eq!(unread.per_connection(Some(5), 1), None);
    }

    #[test]
    fn only_a_loopback_server_is_looked_for_by_its_port() {
        assert_eq!(local_server_pid(Some(42), None), Some(42));
        let remote = "192.0.2.1:8080".parse().ok();
        assert_eq!(local_server_pid(None, remote), None);
        assert_eq!(local_server_pid(None, None), None);
        // A loopback port nobody listens on has no process.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let free = format!("127.0.0.1:{port}").parse().ok();
        assert_eq!(local_server_pid(None, free), None);
    }
}
