//! Part 4 of the rollout benchmark: Tether in front of an upstream engine. Each turn of the
//! 40-turn rollout is played twice, back to back: by a client calling the engine's Chat
//! Completions directly with the whole conversation, and by a client of Tether's WebSocket mode
//! (`--engine`, `previous_response_id` and only the new input), which sends the engine the same
//! conversation. The difference of the two, turn by turn, is what Tether adds — its stages, the
//! engine request it builds, the stream it reads and re-frames — to the time to the first text
//! delta and to the whole turn.
//!
//! Two engines, each answering every request at once with the same 22-word text (25 tokens), streamed a
//! word or a space a chunk as llmsim does: (a) a minimal one in this process (it reads and
//! parses the request, then writes the prepared stream), so that what the engine itself costs
//! stays small and steady beside the difference measured; (b) llmsim 0.6, an engine nobody here
//! wrote (`cargo xtask setup` installs it), whose own work per request — it counts the prompt's
//! tokens with tiktoken — grows with the conversation and varies by tens of milliseconds, more
//! than the difference it is meant to show (so its rollouts are few).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use serde_json::{Value, json};
use tether_client::{Endpoint, SseFrames, WebSocket};
use tether_harness::load::turn::ws_frame_turn;
use tether_server::Config;
use tether_server::engine::quick_ack::QuickAck;
use tokio::net::TcpStream;

use crate::play::{instructions, median, ms, start};
use crate::{REPORTED_TURNS, TURNS};

/// Rollouts played against each engine; each turn's samples are one per rollout.
const ROLLOUTS_MINIMAL: usize = 100;
const ROLLOUTS_LLMSIM: usize = 5;
/// llmsim's answer every turn (llmsim streams it a word or a space a chunk: 43 chunks).
const ANSWER: &str = "The build log shows the failing assertion in the pagination helper; the \
                      next step reads its callers and checks the boundary case.";

/// llmsim on a free port, answering `ANSWER` at once; killed when dropped.
struct Llmsim {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Drop for Llmsim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn llmsim_binary() -> PathBuf {
    std::env::var_os("TETHER_LLMSIM_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/tools/llmsim/bin/llmsim"),
        PathBuf::from,
    )
}

fn start_llmsim() -> Option<Llmsim> {
    let binary = llmsim_binary();
    if !binary.is_file() {
        return None;
    }
    let dir = std::env::temp_dir().join(format!("tether-bench-llmsim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("script.json");
    std::fs::write(
        &script,
        json!({"turns": [{"type": "assistant", "text": ANSWER}], "on_exhausted": "repeat_last"})
            .to_string(),
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = dir.join("llmsim.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\nport = {port}\nhost = \"127.0.0.1\"\n[latency]\nprofile = \"instant\"\n\
             [response]\nscript_path = {:?}\n",
            script.to_str().unwrap()
        ),
    )
    .unwrap();
    let child = Command::new(&binary)
        .args(["serve", "--config"])
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("llmsim starts");
    let llmsim = Llmsim { child, port, dir };
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "llmsim did not listen within 20 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(llmsim)
}

/// The minimal engine's answer to every request: `ANSWER` a word or a space a chunk, the
/// finish, the usage, `[DONE]`.
fn prepared_stream() -> Bytes {
    let mut out = String::new();
    let chunk = |delta: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
                   "model": "gpt-5", "choices": [{"index": 0, "delta": delta}]})
        )
    };
    out.push_str(&chunk(json!({"role": "assistant"})));
    for piece in ANSWER.split_inclusive(' ') {
        let word = piece.trim_end_matches(' ');
        out.push_str(&chunk(json!({"content": word})));
        if word.len() < piece.len() {
            out.push_str(&chunk(json!({"content": " "})));
        }
    }
    out.push_str(&format!(
        "data: {}\n\n",
        json!({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0,
               "model": "gpt-5", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 1, "completion_tokens": 25, "total_tokens": 26}})
    ));
    out.push_str("data: [DONE]\n\n");
    Bytes::from(out)
}

/// Connections the minimal engine accepted.
static CONNECTIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The minimal engine, on 127.0.0.1: `POST /v1/chat/completions` reads and parses its body, then
/// writes the prepared stream; `GET /v1/models` for Tether's probe.
async fn start_minimal() -> (SocketAddr, tokio::task::JoinHandle<()>) {
    use axum::routing::{get, post};
    let stream = prepared_stream();
    let app = axum::Router::new()
        .route(
            "/v1/chat/completions",
            post(move |body: axum::body::Bytes| {
                let stream = stream.clone();
                async move {
                    let parsed: Result<serde::de::IgnoredAny, _> = serde_json::from_slice(&body);
                    assert!(parsed.is_ok(), "the engine request is JSON");
                    ([("content-type", "text/event-stream")], stream)
                }
            }),
        )
        .route(
            "/v1/models",
            get(|| async { axum::Json(json!({"object": "list", "data": [{"id": "gpt-5"}]})) }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        CONNECTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let _ = tcp.set_nodelay(true);
    });
    let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, task)
}

/// A keep-alive HTTP/1.1 connection to the engine, as an SDK's pool would hold.
struct Direct {
    sender: SendRequest<Full<Bytes>>,
    authority: String,
    /// `/v1/chat/completions`, or llmsim's `/openai/v1/chat/completions`.
    path: &'static str,
}

impl Direct {
    async fn connect(addr: SocketAddr, path: &'static str) -> Direct {
        let stream = TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        // Acknowledged as Tether's engine connection is, so that an engine holding its writes
        // for an ACK (llmsim) stalls neither path and the difference stays Tether's own work.
        let (sender, connection) = hyper::client::conn::http1::handshake(QuickAck::from(stream))
            .await
            .unwrap();
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Direct {
            sender,
            authority: addr.to_string(),
            path,
        }
    }

    /// One streamed Chat Completions request: (time to the first content delta, to `[DONE]`),
    /// from just before the request is written.
    async fn turn(&mut self, body: Vec<u8>) -> (Duration, Duration, String) {
        let started = Instant::now();
        self.sender.ready().await.unwrap();
        let request = hyper::Request::post(self.path)
            .header("host", self.authority.as_str())
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        let response = self.sender.send_request(request).await.unwrap();
        assert_eq!(response.status(), 200);
        let mut body = response.into_body();
        let mut sse = SseFrames::new();
        let (mut first, mut text, mut done) = (None, String::new(), false);
        while !done {
            let frame = body.frame().await.expect("a frame").unwrap();
            let Ok(data) = frame.into_data() else {
                continue;
            };
            sse.push(&data);
            while let Some(frame) = sse.next_frame() {
                if frame.text() == "[DONE]" {
                    done = true;
                    break;
                }
                let chunk: Value = serde_json::from_str(frame.text()).unwrap();
                if let Some(content) = chunk
                    .pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
                    .filter(|c| !c.is_empty())
                {
                    first.get_or_insert_with(|| started.elapsed());
                    text.push_str(content);
                }
            }
        }
        let total = started.elapsed();
        // The body's end, so the connection is reused.
        while let Some(Ok(_)) = body.frame().await {}
        (first.expect("a content delta"), total, text)
    }
}

/// One turn of one rollout, both ways.
#[derive(Debug, Clone, Copy)]
struct Sample {
    direct_ttft: Duration,
    direct_total: Duration,
    tether_ttft: Duration,
    tether_total: Duration,
    /// Tether's own account of the turn (`x-tether-timing`): its API time, its render,
    /// validate and classify stages, and the engine call to its first chunk.
    api: Duration,
    render: Duration,
    validate: Duration,
    classify: Duration,
    engine_ttft: Duration,
    /// From the engine's answer (its response head) to its first chunk with text.
    engine_prefill: Duration,
}

impl Sample {
    fn ttft_added(&self) -> f64 {
        ms(self.tether_ttft) - ms(self.direct_ttft)
    }

    fn total_added(&self) -> f64 {
        ms(self.tether_total) - ms(self.direct_total)
    }
}

/// The message a turn adds: the tool output of the other parts, as the user's.
fn user_turn(outputs: &[String], turn: usize) -> Value {
    json!({"role": "user", "content": outputs[turn]})
}

/// Where an engine serves Chat Completions.
#[derive(Clone, Copy)]
struct Engine {
    addr: SocketAddr,
    /// Its base path (`--engine http://ADDR{base}`).
    base: &'static str,
    chat: &'static str,
}

async fn rollout(
    engine: Engine,
    tether: SocketAddr,
    outputs: &[String],
    order: usize,
) -> Vec<Sample> {
    let endpoint = Endpoint::new(&format!("http://{tether}"))
        .unwrap()
        .with_timing(true);
    let mut ws = WebSocket::connect(&endpoint).await.unwrap();
    let mut direct = Direct::connect(engine.addr, engine.chat).await;
    let mut messages = vec![json!({"role": "system", "content": instructions()})];
    let mut previous: Option<String> = None;
    let mut samples = Vec::with_capacity(TURNS);
    for turn in 0..TURNS {
        messages.push(user_turn(outputs, turn));
        let body = serde_json::to_vec(&json!({"model": "gpt-5", "messages": messages,
            "stream": true, "stream_options": {"include_usage": true}}))
        .unwrap();
        let mut create = json!({"type": "response.create", "model": "gpt-5", "store": false,
            "instructions": instructions(), "input": [user_turn(outputs, turn)]});
        if let Some(id) = &previous {
            create["previous_response_id"] = json!(id);
        }
        let frame = create.to_string();
        // Which of the two goes first alternates, turn by turn and rollout by rollout.
        let (direct_result, tether_result) = if (turn + order).is_multiple_of(2) {
            let d = direct.turn(body).await;
            let t = ws_frame_turn(&mut ws, frame, Duration::from_secs(60))
                .await
                .unwrap();
            (d, t)
        } else {
            let t = ws_frame_turn(&mut ws, frame, Duration::from_secs(60))
                .await
                .unwrap();
            let d = direct.turn(body).await;
            (d, t)
        };
        let (direct_ttft, direct_total, text) = direct_result;
        assert_eq!(text, ANSWER);
        let response = serde_json::to_value(&tether_result.response).unwrap();
        let answer = response["output"][0]["content"][0]["text"]
            .as_str()
            .unwrap();
        assert_eq!(answer, ANSWER, "Tether relayed llmsim's answer");
        let timing = tether_result.timing.clone().unwrap_or_default();
        let us = |value: &Value| Duration::from_micros(value.as_u64().unwrap_or(0));
        samples.push(Sample {
            direct_ttft,
            direct_total,
            tether_ttft: tether_result.first_token.expect("a text delta"),
            tether_total: tether_result.round_trip,
            api: us(&timing["api_us"]),
            render: us(&timing["stages"]["render_us"]),
            validate: us(&timing["stages"]["validate_us"]),
            classify: us(&timing["stages"]["classify_us"]),
            engine_ttft: us(&timing["engine"]["iapi_ttft_us"]),
            engine_prefill: us(&timing["engine"]["prefill_us"]),
        });
        messages.push(json!({"role": "assistant", "content": ANSWER}));
        previous = Some(tether_result.response.id.clone());
    }
    ws.close().await;
    samples
}

/// The `p`-quantile (0–1) of `values`, nearest rank.
fn quantile(mut values: Vec<f64>, p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let rank = ((p * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

/// Plays `rollouts` rollouts through Tether in front of `engine` and prints what it added.
async fn measure(
    label: &str,
    engine: Engine,
    rollouts: usize,
    dir: &std::path::Path,
    scenarios: &std::path::Path,
    outputs: &[String],
) {
    let mut config =
        <Config as crate::play::BenchConfig>::try_parse_from_args(&dir.join(label), scenarios);
    config.engines = vec![format!("http://{}{}", engine.addr, engine.base)];
    let (tether, server) = start(&config).await;
    // Warm both paths (the tokenizer, the engine's, the connection pool).
    rollout(engine, tether, outputs, 0).await;
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); TURNS];
    for order in 0..rollouts {
        for (turn, sample) in rollout(engine, tether, outputs, order)
            .await
            .into_iter()
            .enumerate()
        {
            samples[turn].push(sample);
        }
    }
    server.abort();
    println!(
        "{:<6}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}{:>12}",
        "turn",
        "TTFT dir",
        "TTFT Teth",
        "+TTFT p50",
        "+TTFT p99",
        "total dir",
        "total Teth",
        "+total p50",
        "+total p99"
    );
    for turn in REPORTED_TURNS {
        let s = &samples[turn - 1];
        let ttft_added: Vec<f64> = s.iter().map(Sample::ttft_added).collect();
        let total_added: Vec<f64> = s.iter().map(Sample::total_added).collect();
        println!(
            "{:<6}{:>12.3}{:>12.3}{:>12.3}{:>12.3}{:>12.3}{:>12.3}{:>12.3}{:>12.3}",
            turn,
            ms(median(s.iter().map(|x| x.direct_ttft).collect())),
            ms(median(s.iter().map(|x| x.tether_ttft).collect())),
            quantile(ttft_added.clone(), 0.5),
            quantile(ttft_added, 0.99),
            ms(median(s.iter().map(|x| x.direct_total).collect())),
            ms(median(s.iter().map(|x| x.tether_total).collect())),
            quantile(total_added.clone(), 0.5),
            quantile(total_added, 0.99),
        );
    }
    let last = &samples[TURNS - 1];
    let spread = |values: Vec<f64>| (quantile(values.clone(), 0.0), quantile(values, 1.0));
    let (ttft_min, ttft_max) = spread(last.iter().map(Sample::ttft_added).collect());
    let (total_min, total_max) = spread(last.iter().map(Sample::total_added).collect());
    let direct: Vec<f64> = last.iter().map(|x| ms(x.direct_total)).collect();
    let (direct_min, direct_max) = spread(direct.clone());
    let (direct_p50, direct_p99) = (quantile(direct.clone(), 0.5), quantile(direct, 0.99));
    let med = |f: fn(&Sample) -> Duration| ms(median(last.iter().map(f).collect()));
    println!(
        "turn {TURNS}, Tether's own account (medians): API time {:.3} ms (render {:.3}, validate \
         {:.3}, classify {:.3}); the engine call to its first chunk {:.3} ms (of which from its \
         answer's head {:.3}), against {:.3} ms for the direct client",
        med(|x| x.api),
        med(|x| x.render),
        med(|x| x.validate),
        med(|x| x.classify),
        med(|x| x.engine_ttft),
        med(|x| x.engine_prefill),
        med(|x| x.direct_ttft),
    );
    println!(
        "turn {TURNS} over {rollouts} rollouts: added TTFT min {ttft_min:.3}, max {ttft_max:.3} ms; \
         added total min {total_min:.3}, max {total_max:.3} ms; the direct call alone \
         {direct_min:.3}–{direct_max:.3} ms, p50 {direct_p50:.3}, p99 {direct_p99:.3} (the \
         machine's own spread); goal: added p99 ≤ 1 ms"
    );
}

/// Part 4, printed; its llmsim half skipped (saying so) without llmsim.
pub async fn part4(dir: &std::path::Path, scenarios: &std::path::Path, outputs: &[String]) {
    println!(
        "\nPart 4 — Tether in front of an upstream engine, on loopback: each of {TURNS} turns \
         played by a direct Chat Completions client (the whole conversation, one keep-alive \
         connection) and by a WebSocket-mode client of `tether-server --engine` \
         (previous_response_id and the new message), back to back, the order alternating; the \
         engine answers at once, the same 22-word text (25 tokens) a word or a space a chunk. Added = Tether \
         − direct, per turn; its median and p99 over the rollouts; ms"
    );
    let (addr, minimal) = start_minimal().await;
    println!(
        "\n(a) a minimal engine in this process (reads and parses the request, writes the \
         prepared stream), {ROLLOUTS_MINIMAL} rollouts"
    );
    let engine = Engine {
        addr,
        base: "/v1",
        chat: "/v1/chat/completions",
    };
    measure("minimal", engine, ROLLOUTS_MINIMAL, dir, scenarios, outputs).await;
    println!(
        "the minimal engine accepted {} connections: one per direct client ({} rollouts and a \
         warm-up), the rest Tether's pool",
        CONNECTIONS.load(std::sync::atomic::Ordering::Relaxed),
        ROLLOUTS_MINIMAL
    );
    minimal.abort();
    println!(
        "\n(b) llmsim 0.6 ({}), `instant` profile, {ROLLOUTS_LLMSIM} rollouts — its own work per \
         request (tiktoken over the prompt) grows with the conversation and varies more than the \
         difference measured",
        llmsim_binary().display()
    );
    let Some(llmsim) = start_llmsim() else {
        println!("skipped: llmsim is not installed — run `cargo xtask setup`");
        return;
    };
    let engine = Engine {
        addr: format!("127.0.0.1:{}", llmsim.port).parse().unwrap(),
        base: "/openai/v1",
        chat: "/openai/v1/chat/completions",
    };
    measure("llmsim", engine, ROLLOUTS_LLMSIM, dir, scenarios, outputs).await;
    drop(llmsim);
}
