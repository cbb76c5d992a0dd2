//! What a WebSocket connection holds in the server's memory: the heap bytes of an idle
//! connection, of an agent's connection after each turn of its conversation, and after several
//! conversations — counted by the allocator, so the figures do not depend on the machine's load.
//!
//! One process: the server (the real router, SQLite store in a temporary directory, model
//! `instant`) on its own multi-thread runtime, and the clients on another. The global allocator
//! is jemalloc, as `tether-server`'s, with a count of the bytes the server's threads hold: every
//! allocation made on a thread that is not a client's adds its size class (jemalloc's usable
//! size, so rounding is counted), every free on such a thread takes it off. Nothing crosses from
//! one side to the other but bytes on loopback sockets, so the count is the server's heap.
//!
//! The agents play the conversation `cargo xtask load` plays (harness/src/load/agent.rs): a task,
//! then a `shell` call answered by a ~1,000-token tool output, ten turns, the last one
//! answered with text; then a new conversation on the same connection. After each step the
//! server is given time to finish its work behind the turn (the cache entry, the ledger's
//! write) before the count is read.
//!
//! Run: `cargo bench -p tether-harness --bench connection_memory` (release build);
//! `TETHER_MEMORY_AGENTS=N` for another number of connections (default 200).

#[path = "common/mod.rs"]
mod common;

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::{Value, json};
use tether_client::{Endpoint, WebSocket};
use tether_harness::load::text::filler;
use tether_harness::load::turn::{TurnDone, ws_frame_turn};
use tether_protocol::Item;
use tikv_jemallocator::Jemalloc;

/// jemalloc, counting what the server's threads hold.
struct Counting;

thread_local! {
    /// Whether this thread is one of the clients' (its allocations are not counted).
    static CLIENT: Cell<bool> = const { Cell::new(false) };
}

/// Bytes (size classes) the server's threads hold.
static SERVER_BYTES: AtomicIsize = AtomicIsize::new(0);

fn counted() -> bool {
    !CLIENT.try_with(Cell::get).unwrap_or(false)
}

/// # Safety
/// `ptr` was allocated by jemalloc.
unsafe fn size_class(ptr: *mut u8) -> isize {
    // SAFETY: the caller's promise.
    unsafe { tikv_jemallocator::usable_size(ptr) as isize }
}

// SAFETY: every call is jemalloc's; the count only reads the size of a live allocation.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as given.
        let ptr = unsafe { Jemalloc.alloc(layout) };
        if !ptr.is_null() && counted() {
            // SAFETY: just allocated by jemalloc.
            SERVER_BYTES.fetch_add(unsafe { size_class(ptr) }, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as given.
        let ptr = unsafe { Jemalloc.alloc_zeroed(layout) };
        if !ptr.is_null() && counted() {
            // SAFETY: just allocated by jemalloc.
            SERVER_BYTES.fetch_add(unsafe { size_class(ptr) }, Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if counted() {
            // SAFETY: a live jemalloc allocation.
            SERVER_BYTES.fetch_sub(unsafe { size_class(ptr) }, Ordering::Relaxed);
        }
        // SAFETY: forwarded as given.
        unsafe { Jemalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let count = counted();
        // SAFETY: a live jemalloc allocation.
        let before = if count { unsafe { size_class(ptr) } } else { 0 };
        // SAFETY: forwarded as given.
        let moved = unsafe { Jemalloc.realloc(ptr, layout, new_size) };
        if !moved.is_null() && count {
            // SAFETY: just (re)allocated by jemalloc.
            let after = unsafe { size_class(moved) };
            SERVER_BYTES.fetch_add(after - before, Ordering::Relaxed);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Turns of a conversation, tool outputs' size, conversations in all (at 2,000 turns/s for 30 s,
/// `cargo xtask load`'s 1,000 agents each play about six).
const TURNS: usize = 10;
const TOOL_OUTPUT_TOKENS: usize = 1_000;
const CONVERSATIONS: usize = 6;
/// How long the server is given to finish a turn's work behind its terminal event.
const SETTLE: Duration = Duration::from_millis(300);

fn main() {
    let agents: usize = std::env::var("TETHER_MEMORY_AGENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let dir = std::env::temp_dir().join(format!("tether-conn-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let data = dir.join("data");
    // The server: its own runtime, on threads whose allocations are counted.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("the server's runtime");
        runtime.block_on(serve(&data, addr_tx));
    });
    let addr = addr_rx.recv().expect("the server's address");
    // The clients: this thread and the runtime's, not counted.
    CLIENT.set(true);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_start(|| CLIENT.set(true))
        .build()
        .expect("the clients' runtime");
    let failed = runtime.block_on(play(addr, agents));
    let _ = std::fs::remove_dir_all(&dir);
    std::process::exit(i32::from(failed));
}

async fn serve(data: &Path, addr_tx: std::sync::mpsc::Sender<std::net::SocketAddr>) {
    let router = common::router(&common::seeded_config(data));
    let listener = common::bind().await;
    addr_tx
        .send(listener.local_addr().expect("its address"))
        .expect("the clients wait");
    common::serve_plain(listener, router).await;
}

/// The server's heap bytes once its work behind the last step is done.
async fn held() -> isize {
    tokio::time::sleep(SETTLE).await;
    SERVER_BYTES.load(Ordering::Relaxed)
}

/// The server's heap bytes once closed connections are released: the count read until it has
/// not fallen for a second (at most 30 s).
async fn released() -> isize {
    let mut last = held().await;
    let mut steady = 0;
    for _ in 0..100 {
        let now = held().await;
        if now < last {
            steady = 0;
        } else {
            steady += 1;
            if steady >= 3 {
                break;
            }
        }
        last = now;
    }
    last
}

/// One agent: its connection and where its conversation is.
struct Agent {
    id: usize,
    ws: WebSocket,
    conversation: usize,
    previous: Option<String>,
    pending: Vec<Value>,
}

impl Agent {
    fn start_conversation(&mut self) {
        self.previous = None;
        self.pending = vec![json!({"role": "user", "content":
            "The tests fail. Find out why and fix it."})];
    }

    /// Turn `turn` (0-based) of the conversation, as `cargo xtask load` plays it.
    async fn turn(&mut self, turn: usize) -> Result<(), String> {
        let last = turn + 1 == TURNS;
        let mut frame = json!({
            "type": "response.create",
            "model": "instant",
            "store": false,
            "tools": [{"type": "function", "name": "shell", "description": "Runs a shell command.",
                "parameters": {"type": "object", "required": ["command"],
                    "properties": {"command": {"type": "array", "items": {"type": "string"}},
                                   "workdir": {"type": "string"},
                                   "timeout_ms": {"type": "integer"}}}}],
            "tool_choice": if last { "auto" } else { "required" },
            "input": std::mem::take(&mut self.pending),
        });
        if let Some(previous) = &self.previous {
            frame["previous_response_id"] = json!(previous);
        }
        let done = ws_frame_turn(&mut self.ws, frame.to_string(), Duration::from_secs(120))
            .await
            .map_err(|e| e.key())?;
        self.answer(done, turn);
        Ok(())
    }

    fn answer(&mut self, done: TurnDone, turn: usize) {
        let calls = done.response.output.iter().filter_map(|item| match item {
            Item::FunctionCall(call) => Some(call.call_id.clone()),
            _ => None,
        });
        let label = format!("[tool output {}/{}/{turn}]", self.id, self.conversation);
        self.pending = calls
            .map(|call_id| {
                json!({"type": "function_call_output", "call_id": call_id,
                       "output": filler(&label, TOOL_OUTPUT_TOKENS)})
            })
            .collect();
        self.previous = Some(done.response.id);
    }
}

/// Every agent plays `turn` at once; the failures' keys.
async fn all_play(agents: &mut [Agent], turn: usize) -> Vec<String> {
    join_all(agents.iter_mut().map(|agent| agent.turn(turn)))
        .await
        .into_iter()
        .filter_map(Result::err)
        .collect()
}

async fn play(addr: std::net::SocketAddr, count: usize) -> bool {
    let endpoint = Endpoint::new(&format!("http://{addr}")).expect("the server's URL");
    let connect = || async {
        WebSocket::connect(&endpoint)
            .await
            .expect("an upgrade (is the server up?)")
    };
    // A warm-up conversation on a connection then closed, so what the server sets up once
    // (its tokenizer's tables, compiled tool schemas, the ledger's statements) is not
    // counted as a connection's.
    let mut warm = Agent {
        id: usize::MAX,
        ws: connect().await,
        conversation: 0,
        previous: None,
        pending: Vec::new(),
    };
    warm.start_conversation();
    for turn in 0..TURNS {
        warm.turn(turn).await.expect("the warm-up conversation");
    }
    warm.ws.close().await;
    let before = held().await;

    let mut agents = Vec::with_capacity(count);
    for id in 0..count {
        let mut agent = Agent {
            id,
            ws: connect().await,
            conversation: 0,
            previous: None,
            pending: Vec::new(),
        };
        agent.start_conversation();
        agents.push(agent);
    }
    let idle = held().await;
    let per = |bytes: isize| bytes as f64 / count as f64 / 1024.0;

    println!("Tether connection memory: the server's heap bytes per WebSocket connection");
    println!(
        "method: one process, the server on its own runtime, {count} client connections on \
         another; jemalloc's size classes of the server threads' live allocations, read {} ms \
         after each step; the agents play `cargo xtask load`'s conversation (model `instant`, \
         {TURNS} turns, a ~{TOOL_OUTPUT_TOKENS}-token tool output a turn, no instructions)",
        SETTLE.as_millis()
    );
    println!("{:<44}{:>14}", "after", "KiB/connection");
    println!(
        "{:<44}{:>14.1}",
        "the upgrade (an idle connection)",
        per(idle - before)
    );
    let mut failures = Vec::new();
    for turn in 0..TURNS {
        failures.extend(all_play(&mut agents, turn).await);
        let bytes = held().await;
        println!(
            "{:<44}{:>14.1}",
            format!("turn {} of the first conversation", turn + 1),
            per(bytes - before)
        );
    }
    for conversation in 1..CONVERSATIONS {
        for agent in agents.iter_mut() {
            agent.conversation = conversation;
            agent.start_conversation();
        }
        for turn in 0..TURNS {
            failures.extend(all_play(&mut agents, turn).await);
        }
        let bytes = held().await;
        println!(
            "{:<44}{:>14.1}",
            format!("{} conversations", conversation + 1),
            per(bytes - before)
        );
    }
    for agent in agents {
        agent.ws.close().await;
    }
    let after = released().await;
    println!(
        "{:<44}{:>14.1}",
        "every connection closed (what stays, total)",
        (after - before) as f64 / 1024.0
    );
    if !failures.is_empty() {
        println!(
            "FAIL: {} turns failed: {:?}",
            failures.len(),
            &failures[..1]
        );
    }
    !failures.is_empty()
}
