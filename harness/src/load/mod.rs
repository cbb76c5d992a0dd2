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
    args.validate()?;
    let nofile_limit = procfs::raise_nofile_limit();
    let endpoint = endpoint_of(&args).await?;
    let server_pid = args.server_pid.or_else(|| {
        let addr = endpoint.addr()?;
        addr.ip()
            .is_loopback()
            .then(|| procfs::pid_listening_on(addr.port()))
            .flatten()
    });
    let basis = if args.model == "instant" {
        OverheadBasis::RoundTrip
    } else if args.no_timing {
        OverheadBasis::RoundTripWithModel
    } else {
        OverheadBasis::MinusGenerate
    };
    let clients = args.client_count();
    let shared = Arc::new(Shared {
        template: RequestTemplate::new(&args),
        endpoint,
        stats: Stats::new(basis),
        args,
    });
    let args = &shared.args;
    let run_cpu_start = procfs::own_cpu_time().unwrap_or_default();
    let rss = |pid: Option<u32>| pid.and_then(procfs::rss_bytes);
    let rss_before = rss(server_pid);

    // Connect: idle connections, then the agents'.
    let idle = match args.idle {
        Some(n) if n > 0 => Some(open_idle(n, &shared).await),
        _ => None,
    };
    let rss_idle = match &idle {
        Some(_) if server_pid.is_some() => {
            tokio::time::sleep(SETTLE).await;
            rss(server_pid)
        }
        _ => rss_before,
    };
    let agents: Vec<Agent> = futures_util::stream::iter(0..clients)
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
    let mut agents = agents;
    agents.sort_by_key(Agent::id);
    let rss_connected = if clients > 0 && server_pid.is_some() {
        tokio::time::sleep(SETTLE).await;
        rss(server_pid)
    } else {
        rss_idle
    };

    // Load.
    let peak = Arc::new(AtomicU64::new(rss_connected.unwrap_or(0)));
    let sampler = server_pid.map(|pid| {
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
    let server_cpu_start = server_pid.and_then(procfs::cpu_time);
    let cpu_start = procfs::own_cpu_time().unwrap_or_default();
    let started = Instant::now();
    let (agents, open_loop) = if clients == 0 {
        let hold = args.duration.unwrap_or(DEFAULT_IDLE_HOLD);
        tokio::time::sleep(hold).await;
        (agents, None)
    } else if let Some(rate) = args.rate {
        let (agents, open_loop) = open_loop(agents, &shared, rate, started).await;
        (agents, Some(open_loop))
    } else {
        (closed_loop(agents, &shared, started).await, None)
    };
    let wall = started.elapsed();
    let cpu = procfs::own_cpu_time().unwrap_or_default() - cpu_start;
    let server_cpu = server_pid
        .and_then(procfs::cpu_time)
        .zip(server_cpu_start)
        .map(|(end, start)| end.saturating_sub(start));
    if let Some(sampler) = sampler {
        sampler.abort();
    }
    let rss_end = rss(server_pid);
    if let Some(rss) = rss_end {
        peak.fetch_max(rss, Relaxed);
    }

    // Close.
    let idle_report = match idle {
        Some(set) => Some(close_idle(set, &shared, rss_before, rss_idle).await),
        None => None,
    };
    futures_util::stream::iter(agents)
        .for_each_concurrent(args.connect_concurrency, |mut agent| async move {
            agent.disconnect().await;
        })
        .await;
    let cpu_total = procfs::own_cpu_time().unwrap_or_default() - run_cpu_start;

    let stats = &shared.stats;
    let connections = idle_report.as_ref().map_or(0, |i| i.connected) + clients as u64;
    let per_connection = |after: Option<u64>| {
        let (before, after) = (rss_before?, after?);
        (connections > 0).then(|| (after as f64 - before as f64) / connections as f64)
    };
    let peak = peak.load(Relaxed);
    let server = server_pid.map(|pid| ServerReport {
        pid,
        rss_before_bytes: rss_before,
        rss_connected_bytes: rss_connected,
        rss_peak_bytes: (peak > 0).then_some(peak),
        rss_end_bytes: rss_end,
        connections,
        rss_per_connection_bytes: per_connection(rss_connected),
        rss_per_connection_loaded_bytes: per_connection((peak > 0).then_some(peak)),
        cpu_seconds: server_cpu.map(|c| c.as_secs_f64()),
        cpu_percent_of_one_core: server_cpu.map(|c| c.as_secs_f64() / wall.as_secs_f64() * 100.0),
    });
    let seconds = wall.as_secs_f64().max(1e-9);
    let turns_ok = stats.turns_ok.load(Relaxed);
    let events = stats.events.load(Relaxed);
    let timed = stats.generate.count() > 0;
    Ok(Report {
        config: RunConfig {
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
        },
        wall_seconds: wall.as_secs_f64(),
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
        idle: idle_report,
        errors: stats
            .errors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone(),
        server,
        generator: GeneratorReport {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            worker_threads: tokio::runtime::Handle::current().metrics().num_workers(),
            cpu_seconds: cpu.as_secs_f64(),
            cpu_percent_of_one_core: cpu.as_secs_f64() / seconds * 100.0,
            cpu_seconds_total: cpu_total.as_secs_f64(),
            nofile_limit,
        },
    })
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
