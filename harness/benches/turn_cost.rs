//! The instruction count of one turn: what a WebSocket continuation costs at ~6k and at ~125k
//! tokens of context with the same new input, counted by callgrind — instructions, not time, so
//! the check cannot be fooled by a noisy machine.
//!
//! One process, one thread: a server (the real router, SQLite store in a temporary directory,
//! model `instant`, whose engine takes no time) and its client on a current-thread runtime. The
//! client plays a tool loop over WebSocket mode — every request carrying ~3,000 tokens of
//! instructions and answering the previous tool call with a ~3,000-token output — and, at two
//! points of the conversation, counts one more turn with the same new input: callgrind's counters
//! are zeroed before the request is written and dumped once the server has finished with it (its
//! cache entry written). The same two points are counted for HTTP stateless, which re-sends the
//! whole conversation (it grows with the context by design: it is printed for contrast, not
//! checked). A count includes the client's share of the turn (encoding the request, reading the
//! events), which does not depend on the context; for the WebSocket turn it is also printed apart
//! — what the client's future cost, read from the dump's call graph — and the rest is the
//! server's share, a gateway's cost.
//!
//! The check: the WebSocket turn at ~125k tokens may cost at most [`MAX_GROWTH`] times the turn
//! at ~6k (the engine's bookkeeping included, since it runs in the server's process), and
//! neither — nor the server's share of either — may exceed the committed baseline
//! (`turn_cost.baseline`) by more than [`MAX_REGRESSION`]. `TETHER_TURN_COST_BLESS=1` rewrites
//! the baseline.
//!
//! Run: `cargo xtask turn-cost` (or `cargo bench -p tether-harness --bench turn_cost`): the
//! binary runs itself under `valgrind --tool=callgrind` and exits non-zero if a check fails.

#[path = "common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use tether_client::{Endpoint, Http, WebSocket};
use tether_harness::load::turn::{TurnDone, http_body_turn, ws_frame_turn};

use common::{machine, seeded_config, start_plain};

/// The allocator `tether-server`'s binary runs with, so the counts are the server's.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The WebSocket turn at the long context may cost at most this many times the short one's.
const MAX_GROWTH: f64 = 1.10;
/// A count may exceed its baseline by at most this fraction.
const MAX_REGRESSION: f64 = 0.15;
/// Turns before the long measurement: the context grows by ~3,000 tokens a turn.
const GROWTH_TURNS: usize = 39;
const OUTPUT_TOKENS: usize = 3_000;
const INSTRUCTION_TOKENS: usize = 3_000;
/// Set when the binary runs under callgrind (the parent sets it for the child).
const CHILD: &str = "TETHER_TURN_COST_CHILD";
const BASELINE: &str = "turn_cost.baseline";

/// The counted turns, in the order they are dumped.
const MEASURED: [&str; 4] = ["ws-short", "http-short", "ws-long", "http-long"];

fn main() {
    if std::env::var_os(CHILD).is_some() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(play());
    } else {
        std::process::exit(measure());
    }
}

/// Runs this binary under callgrind, reads its dumps, prints the report and checks it.
fn measure() -> i32 {
    let dir = std::env::temp_dir().join(format!("tether-turn-cost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let out = dir.join("callgrind.out");
    let exe = std::env::current_exe().expect("the binary's path");
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg("--dump-instr=no")
        .arg("--compress-strings=no")
        .arg(&exe)
        .env(CHILD, "1")
        .env("TETHER_TURN_COST_DIR", &dir)
        .status();
    match status {
        Ok(status) if status.success() => {}
        Ok(status) => {
            eprintln!("turn-cost: the run under callgrind failed ({status})");
            return 1;
        }
        Err(error) => {
            eprintln!(
                "turn-cost: cannot start valgrind ({error}); install Debian's valgrind \
                 (`cargo xtask setup` does)"
            );
            return 1;
        }
    }
    let counts = match read_dumps(&dir) {
        Ok(counts) => counts,
        Err(error) => {
            eprintln!("turn-cost: {error}");
            return 1;
        }
    };
    let _ = std::fs::remove_dir_all(&dir);
    report(&counts)
}

/// The instructions of each counted turn, by name, from callgrind's dump files.
fn read_dumps(dir: &Path) -> Result<Vec<Count>, String> {
    let mut counts = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("callgrind.out."))
        })
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let trigger = text
            .lines()
            .find_map(|l| l.strip_prefix("desc: Trigger: Client Request: "))
            .map(str::trim);
        let summary = text
            .lines()
            .find_map(|l| l.strip_prefix("summary: "))
            .and_then(|s| s.trim().parse::<u64>().ok());
        if let (Some(name), Some(summary)) = (trigger, summary)
            && MEASURED.contains(&name)
        {
            let client = calls_to(&text, CLIENT_TURN)?;
            if name.starts_with("ws-") && client == 0 {
                return Err(format!(
                    "the dump of '{name}' has no call to {CLIENT_TURN}: the client's share \
                     cannot be told apart"
                ));
            }
            counts.push(Count {
                name: name.to_string(),
                total: summary,
                client,
            });
        }
    }
    for name in MEASURED {
        if !counts.iter().any(|c| c.name == name) {
            return Err(format!("callgrind wrote no count for '{name}'"));
        }
    }
    Ok(counts)
}

/// One counted turn: its instructions, and those of the client's future within them.
struct Count {
    name: String,
    total: u64,
    client: u64,
}

/// The function a WebSocket turn's client runs in: [`ws_turn`]'s future, polled through a box
/// so that it stays a function of its own (were it ever inlined, the dump would hold no call to
/// it, and [`read_dumps`] fails rather than count the client as the server).
const CLIENT_TURN: &str = "turn_cost::ws_turn::{{closure}}";

/// The inclusive cost of every call to `callee` from another function, in a callgrind dump
/// written with `--compress-strings=no`: a `calls=` line after `cfn=callee`, then the line of
/// the call's cost — its positions (as many as the `positions:` header names; one, the line, by
/// default), then the count.
fn calls_to(dump: &str, callee: &str) -> Result<u64, String> {
    let positions = dump
        .lines()
        .find_map(|l| l.strip_prefix("positions:"))
        .map_or(1, |names| names.split_whitespace().count());
    let mut caller = "";
    let mut target = "";
    let mut call = false;
    let mut total = 0;
    for line in dump.lines() {
        if let Some(name) = line.strip_prefix("fn=") {
            caller = name;
        } else if let Some(name) = line.strip_prefix("cfn=") {
            target = name;
        } else if line.starts_with("calls=") {
            call = true;
        } else if call {
            call = false;
            if target == callee && caller != callee {
                let cost = line
                    .split_whitespace()
                    .nth(positions)
                    .and_then(|c| c.parse::<u64>().ok())
                    .ok_or_else(|| format!("a call to {callee} without a count: {line:?}"))?;
                total += cost;
            }
        }
    }
    Ok(total)
}

fn report(counts: &[Count]) -> i32 {
    let find = |name: &str| counts.iter().find(|c| c.name == name);
    let count = |name: &str| find(name).map_or(0, |c| c.total);
    let client = |name: &str| find(name).map_or(0, |c| c.client);
    // What the baseline holds: the WebSocket turns' whole counts, and their server's shares.
    let baselined = |name: &str| match name.strip_prefix("server-") {
        Some(at) => find(&format!("ws-{at}")).map(|c| c.total - c.client),
        None => name
            .starts_with("ws-")
            .then(|| find(name).map(|c| c.total))?,
    };
    println!("Tether turn cost: instructions per turn, counted by callgrind");
    println!("machine: {}", machine());
    println!(
        "method: one process, one thread (server and client on a current-thread runtime, {} \
         build); a tool loop on model `instant` over WebSocket mode, ~{INSTRUCTION_TOKENS} tokens \
         of instructions a request and a ~{OUTPUT_TOKENS}-token tool output a turn; one turn \
         counted at ~6k and one after {GROWTH_TURNS} more turns (~125k tokens), each with the \
         same new input; a count runs from before the request is written to the server's last \
         work on it, the client's share included (for WebSocket also printed apart: the \
         client's future, from callgrind's call graph; the rest is the server's)",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        }
    );
    println!(
        "{:<24}{:>16}{:>16}{:>10}",
        "turn", "at ~6k", "at ~125k", "ratio"
    );
    let rows = [
        ("WebSocket continuation", "ws-short", "ws-long"),
        ("HTTP stateless", "http-short", "http-long"),
    ];
    for (label, short, long) in rows {
        println!(
            "{label:<24}{:>16}{:>16}{:>9.2}x",
            thousands(count(short)),
            thousands(count(long)),
            count(long) as f64 / count(short).max(1) as f64
        );
        if short.starts_with("ws-") {
            let server = |name: &str| count(name).saturating_sub(client(name));
            for (part, short, long) in [
                ("  the server's share", server(short), server(long)),
                ("  the client's share", client(short), client(long)),
            ] {
                println!(
                    "{part:<24}{:>16}{:>16}{:>9.2}x",
                    thousands(short),
                    thousands(long),
                    long as f64 / short.max(1) as f64
                );
            }
        }
    }
    let mut failed = false;
    let growth = count("ws-long") as f64 / count("ws-short").max(1) as f64;
    if growth > MAX_GROWTH {
        println!(
            "FAIL: the WebSocket turn at ~125k tokens costs {growth:.2}x the turn at ~6k (at most \
             {MAX_GROWTH:.2}x): some per-turn work is proportional to the whole conversation"
        );
        failed = true;
    } else {
        println!(
            "ok: the WebSocket turn grows {growth:.2}x from ~6k to ~125k (at most {MAX_GROWTH:.2}x)"
        );
    }
    let baseline_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches")
        .join(BASELINE);
    if cfg!(debug_assertions) {
        println!("(a debug build: the counts are not compared with the release build's baseline)");
    } else if std::env::var_os("TETHER_TURN_COST_BLESS").is_some() {
        let text = format!(
            "# Instructions per WebSocket continuation (harness/benches/turn_cost.rs); written by\n\
             # TETHER_TURN_COST_BLESS=1 cargo xtask turn-cost\n\
             ws-short {}\nws-long {}\nserver-short {}\nserver-long {}\n",
            count("ws-short"),
            count("ws-long"),
            count("ws-short") - client("ws-short"),
            count("ws-long") - client("ws-long"),
        );
        match std::fs::write(&baseline_path, text) {
            Ok(()) => println!("baseline written to {}", baseline_path.display()),
            Err(error) => {
                println!("FAIL: cannot write {}: {error}", baseline_path.display());
                failed = true;
            }
        }
    } else {
        match std::fs::read_to_string(&baseline_path) {
            Ok(text) => {
                for line in text.lines().filter(|l| !l.starts_with('#')) {
                    let Some((name, value)) = line.split_once(' ') else {
                        continue;
                    };
                    let Ok(baseline) = value.trim().parse::<u64>() else {
                        continue;
                    };
                    let Some(now) = baselined(name) else {
                        println!(
                            "FAIL: the baseline names '{name}', which this bench does not count"
                        );
                        failed = true;
                        continue;
                    };
                    let change = now as f64 / baseline as f64 - 1.0;
                    let verdict = if change > MAX_REGRESSION {
                        failed = true;
                        "FAIL"
                    } else {
                        "ok"
                    };
                    println!(
                        "{verdict}: {name} {} against the baseline's {} ({:+.1} %, at most +{:.0} %)",
                        thousands(now),
                        thousands(baseline),
                        change * 100.0,
                        MAX_REGRESSION * 100.0
                    );
                }
            }
            Err(error) => {
                println!("FAIL: no baseline at {} ({error})", baseline_path.display());
                failed = true;
            }
        }
    }
    i32::from(failed)
}

/// The tool loop, under callgrind: starts the server, plays the turns, counts the measured ones.
async fn play() {
    let dir = PathBuf::from(std::env::var_os("TETHER_TURN_COST_DIR").expect("the parent's dir"));
    let (addr, server) = start_plain(&seeded_config(&dir.join("data"))).await;
    let endpoint = Endpoint::new(&format!("http://{addr}"))
        .expect("the server's URL")
        .with_timing(true);
    let mut ws = WebSocket::connect(&endpoint).await.expect("the upgrade");
    let mut http = Http::new(&endpoint);
    http.connect().await.expect("a connection");

    let instructions = instructions();
    let lines = output_lines();
    let measured_output = tool_output(usize::MAX, lines);
    let mut conversation: Vec<Value> = vec![json!({"role": "user", "content":
        "The tests fail after the refactor; find out why and fix it."})];
    let first = ws_turn(&mut ws, &instructions, &conversation, None).await;
    let (mut previous, mut call_id) = answer(&first, &mut conversation);
    for turn in 0..=GROWTH_TURNS + 1 {
        let counted = match turn {
            0 => Some(("ws-short", "http-short")),
            t if t == GROWTH_TURNS + 1 => Some(("ws-long", "http-long")),
            _ => None,
        };
        let output = match counted {
            Some(_) => measured_output.clone(),
            None => tool_output(turn, lines),
        };
        let new_input =
            json!({"type": "function_call_output", "call_id": call_id, "output": output});
        if let Some((_, http_name)) = counted {
            // The same request over HTTP stateless, counted on its own: the whole conversation
            // (built, and its copy dropped, before the count starts).
            let body = {
                let mut whole = conversation.clone();
                whole.push(new_input.clone());
                request(&instructions, &whole, None, true).to_string()
            };
            settle().await;
            crabgrind::callgrind::zero_stats();
            http_body_turn(&mut http, body.into_bytes(), Duration::from_secs(600))
                .await
                .expect("an HTTP turn");
            settle().await;
            dump(http_name);
            crabgrind::callgrind::zero_stats();
        }
        // Boxed, so the client's future stays a function of its own in the call graph.
        let turn: Pin<Box<dyn Future<Output = TurnDone> + '_>> = Box::pin(ws_turn(
            &mut ws,
            &instructions,
            std::slice::from_ref(&new_input),
            Some(&previous),
        ));
        let done = turn.await;
        if let Some((ws_name, _)) = counted {
            settle().await;
            dump(ws_name);
        }
        conversation.push(new_input);
        (previous, call_id) = answer(&done, &mut conversation);
    }
    ws.close().await;
    server.abort();
}

/// Lets the server finish what it does after a terminal event (the cache entry), so a count
/// holds the whole turn and nothing of the next.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(50)).await;
}

fn dump(name: &str) {
    crabgrind::callgrind::dump_stats(Some(name));
}

async fn ws_turn(
    ws: &mut WebSocket,
    instructions: &str,
    input: &[Value],
    previous: Option<&str>,
) -> TurnDone {
    let mut frame = request(instructions, input, previous, false);
    frame["type"] = json!("response.create");
    ws_frame_turn(ws, frame.to_string(), Duration::from_secs(600))
        .await
        .expect("a WebSocket turn")
}

fn request(instructions: &str, input: &[Value], previous: Option<&str>, stream: bool) -> Value {
    let mut body = json!({
        "model": "instant",
        "store": false,
        "instructions": instructions,
        "tools": [{"type": "function", "name": "shell", "description": "Runs a shell command.",
            "parameters": {"type": "object", "required": ["command"],
                "properties": {"command": {"type": "array", "items": {"type": "string"}},
                               "workdir": {"type": "string"}}}}],
        "tool_choice": "required",
        "input": input,
    });
    if let Some(previous) = previous {
        body["previous_response_id"] = json!(previous);
    }
    if stream {
        body["stream"] = json!(true);
    }
    body
}

/// The response's id and its tool call's id; its output joins the conversation.
fn answer(done: &TurnDone, conversation: &mut Vec<Value>) -> (String, String) {
    let mut call_id = None;
    for item in &done.response.output {
        let value = serde_json::to_value(item).expect("an item");
        if value["type"] == "function_call" {
            call_id = value["call_id"].as_str().map(str::to_string);
        }
        conversation.push(value);
    }
    (
        done.response.id.clone(),
        call_id.expect("the model called the tool (tool_choice: required)"),
    )
}

/// `lines` compiler warnings; `turn` varies the text, not its length in tokens.
fn tool_output(turn: usize, lines: usize) -> String {
    (0..lines)
        .map(|line| {
            format!(
                "src/module_{:03}/handler_{line}.rs:{}: warning: unused variable `request_{line}` \
                 in fn handle_{line}(ctx: &Context) -> Result<(), Error>\n",
                turn % 1000,
                line * 7 + 3
            )
        })
        .collect()
}

/// How many warning lines make ~[`OUTPUT_TOKENS`] tokens (counted once).
fn output_lines() -> usize {
    let per_100 = tether_server::tokenizer::tokenizer().count(tool_output(0, 100).as_str());
    OUTPUT_TOKENS * 100 / per_100.max(1)
}

/// At least [`INSTRUCTION_TOKENS`] tokens of instructions: a guide of the kind agents get (the
/// sandbox's README as it was when the baseline was made, frozen beside this file so that editing
/// the live one does not move the count), repeated as needed.
fn instructions() -> String {
    let guide = include_str!("turn_cost_instructions.md");
    let tokenizer = tether_server::tokenizer::tokenizer();
    let per_copy = tokenizer.count(guide).max(1);
    let mut text = String::from("You are a coding agent. Follow the repository's guide.\n\n");
    text.push_str(&guide.repeat(INSTRUCTION_TOKENS.div_ceil(per_copy)));
    text
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
