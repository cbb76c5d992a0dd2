//! Pacing benchmark of the simulator through real sockets: 100 concurrent WebSocket streams at
//! 1,000 and at 4,000 tokens/s, each measured by its client. Ignored by default (it takes real
//! time and wants a release build and an otherwise idle machine):
//!
//! ```text
//! cargo test -p tether-server --release --test sim_bench -- --ignored --nocapture
//! ```
//!
//! Method: the `spark` and `burst` profiles are set (admin endpoint) to a constant TTFT of
//! 50 ms, no jitter and no load slow-down, so every token has an exact due time: first token at
//! send + 50 ms, token i at first + i / rate. Each client records the arrival of every
//! `response.output_text.delta` and counts its tokens (o200k; a stream sends at most one delta
//! per millisecond, so at 4,000 tokens/s a delta carries about four, each of them arriving with
//! it). Reported per run: the client-measured rate (tokens after the first / time from first to
//! last), the p99 of |gap − 1/rate| over all inter-token gaps, and the mean TTFT (with the mean
//! time to `response.created`, the server's work before the model starts); the thresholds
//! are ±5 % rate, ≤ 2 ms p99 inter-token error, ±10 % TTFT.
//!
//! Before the first measurement one short response per profile warms the server up (what it
//! initialises on first use is not measured). Each rate runs twice: with all 100 requests sent in the same instant (the worst case for
//! TTFT: 100 requests' API work lands on 2 cores at once), then with the requests 1 ms apart
//! (a 100 ms ramp; each 2,000- or 4,000-token stream lasts 2 s or 1 s, so 100 streams run
//! together for most of it). All of it runs on the server's precise clock, then on tokio's
//! millisecond timer (`--sim-clock runtime`) for comparison; the thresholds apply to the first.
//! `TETHER_BENCH_STREAMS=N` runs N streams instead of 100. `TETHER_BENCH_ADDR=HOST:PORT` measures
//! a server started separately (with `--admin-key bench`; its own `--sim-clock`) instead of the
//! two in-process ones: the clients then run in this process only, for instance pinned to other
//! CPUs or on another machine.

use std::time::{Duration, Instant};

use serde_json::json;
use tether_server::sim::Clock;

mod common;

/// Concurrent streams: 100, or `TETHER_BENCH_STREAMS`.
static STREAMS: std::sync::LazyLock<usize> = std::sync::LazyLock::new(|| {
    std::env::var("TETHER_BENCH_STREAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100)
});
const TTFT: Duration = Duration::from_millis(50);

struct Measured {
    ttft: Duration,
    /// From the send to `response.created`: the server's work before the model starts (the
    /// simulator's TTFT begins when the request is admitted, just after it sends that event).
    to_created: Duration,
    /// Delta frames received.
    frames: usize,
    /// The arrival of every token.
    arrivals: Vec<Instant>,
}

async fn one_stream(
    addr: std::net::SocketAddr,
    model: &str,
    tokens: usize,
    connected: &tokio::sync::Barrier,
    delay: Duration,
) -> Received {
    let mut client = common::connect(addr).await;
    // Every client connects before any sends: TTFT measures the model, not the handshakes of
    // the other 99 connections.
    connected.wait().await;
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let request = json!({"type": "response.create", "model": model, "input": "bench",
        "store": false, "metadata": {"sim_output_tokens": tokens.to_string()}});
    let sent = Instant::now();
    client.send(&request.to_string()).await;
    let mut frames = Vec::with_capacity(tokens);
    let mut created = None;
    // The client reads a frame's type from its first field (a prefix test): its cost per frame
    // stays small while streaming, so the numbers measure the server; frames are parsed after.
    while let Ok(frame) = client.ws.next().await {
        match &*frame.kind() {
            "response.output_text.delta" => frames.push((Instant::now(), frame.into_text())),
            "response.created" => created = Some(Instant::now()),
            "response.completed" => break,
            "response.failed" | "error" => panic!("{}", frame.text()),
            _ => {}
        }
    }
    Received {
        sent,
        created: created.expect("no response.created"),
        frames,
    }
}

/// What one client received: parsed only once every stream is over, so no client's parsing
/// delays another stream's last tokens.
struct Received {
    sent: Instant,
    created: Instant,
    frames: Vec<(Instant, String)>,
}

/// A delta holds the tokens that fell due in the same timer tick: each of its tokens arrived
/// with it.
fn measure(
    Received {
        sent,
        created,
        frames,
    }: Received,
    tokens: usize,
) -> Measured {
    let mut arrivals = Vec::with_capacity(tokens);
    for (at, frame) in &frames {
        let event: serde_json::Value = serde_json::from_str(frame).unwrap();
        let delta = event["delta"].as_str().unwrap();
        arrivals.extend(std::iter::repeat_n(
            *at,
            tether_server::tokenizer::count(delta),
        ));
    }
    Measured {
        ttft: arrivals[0] - sent,
        to_created: created - sent,
        frames: frames.len(),
        arrivals,
    }
}

/// How the requests are sent once every client is connected.
#[derive(Clone, Copy)]
enum Arrivals {
    /// All in the same instant.
    Together,
    /// One after another, this far apart.
    Spaced(Duration),
}

async fn bench(
    server_addr: std::net::SocketAddr,
    model: &str,
    rate: f64,
    tokens: usize,
    arrivals: Arrivals,
) -> bool {
    // Each client is its own task, so clients spread over the runtime's threads like the
    // server's connections do.
    let connected = std::sync::Arc::new(tokio::sync::Barrier::new(*STREAMS));
    let clients: Vec<_> = (0..*STREAMS)
        .map(|i| {
            let addr = server_addr;
            let model = model.to_string();
            let connected = connected.clone();
            let delay = match arrivals {
                Arrivals::Together => Duration::ZERO,
                Arrivals::Spaced(gap) => gap * i as u32,
            };
            tokio::spawn(async move { one_stream(addr, &model, tokens, &connected, delay).await })
        })
        .collect();
    let mut received = Vec::with_capacity(*STREAMS);
    for client in clients {
        received.push(client.await.expect("a client panicked"));
    }
    let runs: Vec<Measured> = received.into_iter().map(|r| measure(r, tokens)).collect();
    let interval = 1.0 / rate;
    let mut rates = Vec::new();
    let mut errors = Vec::new();
    let mut ttfts = Vec::new();
    let mut to_created = Vec::new();
    let frames: usize = runs.iter().map(|run| run.frames).sum();
    for run in &runs {
        assert_eq!(run.arrivals.len(), tokens);
        let span = (run.arrivals[tokens - 1] - run.arrivals[0]).as_secs_f64();
        rates.push((tokens - 1) as f64 / span);
        errors.extend(
            run.arrivals
                .windows(2)
                .map(|w| ((w[1] - w[0]).as_secs_f64() - interval).abs()),
        );
        ttfts.push(run.ttft.as_secs_f64());
        to_created.push(run.to_created.as_secs_f64());
    }
    errors.sort_by(f64::total_cmp);
    rates.sort_by(f64::total_cmp);
    let p99 = errors[errors.len() * 99 / 100];
    let mean_rate = rates.iter().sum::<f64>() / rates.len() as f64;
    let mean_ttft = ttfts.iter().sum::<f64>() / ttfts.len() as f64;
    let mean_to_created = to_created.iter().sum::<f64>() / to_created.len() as f64;
    let rate_ok = rates.iter().all(|r| (r / rate - 1.0).abs() <= 0.05);
    let itl_ok = p99 <= 0.002;
    let ttft_ok = (mean_ttft / TTFT.as_secs_f64() - 1.0).abs() <= 0.10;
    let pattern = match arrivals {
        Arrivals::Together => "sent together".to_string(),
        Arrivals::Spaced(gap) => format!("sent {} ms apart", gap.as_secs_f64() * 1e3),
    };
    println!(
        "{model}: {} streams × {tokens} tokens at {rate} tok/s, {pattern} — rate mean {mean_rate:.1} \
         (min {:.1}, max {:.1}) {}; inter-token |error| p99 {:.3} ms {}; TTFT mean {:.1} ms {} \
         (to response.created {:.1} ms); {:.2} tokens per delta frame",
        *STREAMS,
        rates[0],
        rates[rates.len() - 1],
        if rate_ok { "ok" } else { "OUT OF ±5%" },
        p99 * 1e3,
        if itl_ok { "ok" } else { "ABOVE 2 ms" },
        mean_ttft * 1e3,
        if ttft_ok { "ok" } else { "OUT OF ±10%" },
        mean_to_created * 1e3,
        (*STREAMS * tokens) as f64 / frames as f64,
    );
    rate_ok && itl_ok && ttft_ok
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "benchmark: real time, wants --release and an idle machine"]
async fn hundred_streams_keep_their_pace() {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    if let Ok(addr) = std::env::var("TETHER_BENCH_ADDR") {
        let addr = addr
            .parse()
            .expect("TETHER_BENCH_ADDR must be an address such as 127.0.0.1:8080");
        println!("machine: {cpus} CPUs; clients here, the server at {addr} (its own clock)");
        assert!(run_all(addr).await, "a threshold was missed (see above)");
        return;
    }
    println!("machine: {cpus} CPUs; client and server in one process");
    let mut met = true;
    // The server's clock, then tokio's timer for comparison, in the same run.
    for clock in [Clock::Precise, Clock::Runtime] {
        let mut config = common::config(":memory:");
        config.admin_key = Some("bench".into());
        config.sim_clock = clock;
        let server = common::TestServer::start_with(config).await;
        println!("clock: {clock:?}");
        let clock_met = run_all(server.addr).await;
        // The thresholds apply to the server's default clock.
        met &= clock != Clock::Precise || clock_met;
        server.stop().await;
    }
    assert!(met, "a threshold was missed (see above)");
}

/// Sets `spark` and `burst` to the exact profiles (admin key `bench`), then runs both rates in
/// both arrival patterns against the server at `addr`; whether every threshold was met.
async fn run_all(addr: std::net::SocketAddr) -> bool {
    let exact = json!({"prefill_overhead_seconds": TTFT.as_secs_f64(),
        "prefill_seconds_per_token": 0.0, "jitter": 0.0, "jitter_clamp": 0.0,
        "load_slowdown": 0.0});
    let change = json!({"profiles": {"spark": exact, "burst": exact}});
    let response = patch_admin(addr, &change).await;
    assert_eq!(response.status, 200, "{}", response.text());
    warm_up(addr).await;
    let mut met = true;
    for arrivals in [
        Arrivals::Together,
        Arrivals::Spaced(Duration::from_millis(1)),
    ] {
        met &= bench(addr, "spark", 1_000.0, 2_000, arrivals).await;
        met &= bench(addr, "burst", 4_000.0, 4_000, arrivals).await;
    }
    met
}

/// The API work of requests sent together: 100 clients send a `response.create` each (the
/// `instant` profile, two-token answers, so the requests' own frames and pipeline dominate),
/// wait for all 100 to complete, and repeat; prints the wall time per request. Ignored: real
/// time, release build (`-- --ignored --nocapture request_bursts`).
#[tokio::test(flavor = "multi_thread")]
#[ignore = "benchmark: real time, wants --release and an idle machine"]
async fn request_bursts() {
    const CLIENTS: usize = 100;
    const ROUNDS: u32 = 200;
    let server = common::TestServer::start_with(common::config(":memory:")).await;
    let mut clients = Vec::with_capacity(CLIENTS);
    for _ in 0..CLIENTS {
        clients.push(common::connect(server.addr).await);
    }
    let request = json!({"type": "response.create", "model": "instant", "input": "bench",
        "store": false, "metadata": {"sim_output_tokens": "2"}})
    .to_string();
    let started = Instant::now();
    for _ in 0..ROUNDS {
        let round: Vec<_> = clients
            .drain(..)
            .map(|mut client| {
                let request = request.clone();
                tokio::spawn(async move {
                    client.send(&request).await;
                    // The type by a prefix test, not a parse: the clients' cost stays small, as
                    // in the pacing bench.
                    while let Ok(frame) = client.ws.next().await {
                        match &*frame.kind() {
                            "response.completed" => break,
                            "error" => panic!("{}", frame.text()),
                            _ => {}
                        }
                    }
                    client
                })
            })
            .collect();
        for client in round {
            clients.push(client.await.expect("a client panicked"));
        }
    }
    let per_request = started.elapsed() / (ROUNDS * CLIENTS as u32);
    println!(
        "{CLIENTS} clients × {ROUNDS} rounds of requests sent together: {per_request:?} per request"
    );
    server.stop().await;
}

/// One short response per profile on one connection, so what a server initialises on first use
/// is not in the first measurement.
async fn warm_up(addr: std::net::SocketAddr) {
    let mut client = common::connect(addr).await;
    for model in ["spark", "burst"] {
        let request = json!({"type": "response.create", "model": model, "input": "bench",
            "store": false, "metadata": {"sim_output_tokens": "20"}});
        client.send(&request.to_string()).await;
        let events = client.response_events().await;
        assert_eq!(events.last().unwrap()["type"], "response.completed");
    }
}

/// `PATCH /admin/simulator` with the admin key `bench`; the reply.
async fn patch_admin(addr: std::net::SocketAddr, body: &serde_json::Value) -> tether_client::Reply {
    let admin = common::endpoint(addr).with_api_key("bench");
    common::request(&admin, "PATCH", "/admin/simulator", Some(body)).await
}
