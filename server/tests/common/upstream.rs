//! A scripted upstream engine for the tests of `--engine`: an OpenAI-compatible server on
//! 127.0.0.1 port 0 (axum) that answers each `POST /v1/chat/completions` or `/v1/responses` with
//! the next reply of its script — chunks streamed as SSE, an error status, silence, a stream
//! that never ends or one cut in the middle — records every request it got, and counts the
//! streams its client abandoned (the connection closed before the stream's end), which is how a
//! test sees that Tether cancelled an upstream request.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};

/// One answer of the script.
#[derive(Debug, Clone)]
pub enum Reply {
    /// SSE messages' data, sent at once (a `Value::String` as it is, anything else as JSON).
    Chunks(Vec<Value>),
    /// The same, one every `Duration`.
    Slow(Vec<Value>, Duration),
    /// An error status with a JSON body and an optional `retry-after`.
    Status(u16, Value, Option<&'static str>),
    /// Headers never come.
    Stall,
    /// A content delta every 20 ms, forever.
    Endless,
    /// These chunks (20 ms apart, so they leave before the break), then the connection breaks
    /// (no end of the chunked body).
    Cut(Vec<Value>),
}

/// A request the upstream got.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub body: Value,
    pub authorization: Option<String>,
}

#[derive(Default)]
pub struct Script {
    replies: Mutex<VecDeque<Reply>>,
    pub seen: Mutex<Vec<Seen>>,
    /// Streams whose client went away before their end.
    pub abandoned: AtomicUsize,
    pub abandoned_changed: Notify,
    /// Streams running now.
    pub open: AtomicUsize,
    pub models: Mutex<Vec<String>>,
}

/// A running scripted upstream; dropping it stops it.
pub struct ScriptedUpstream {
    pub addr: SocketAddr,
    pub script: Arc<Script>,
    stop: Option<oneshot::Sender<()>>,
}

impl ScriptedUpstream {
    pub async fn start() -> Self {
        let script = Arc::new(Script::default());
        *script.models.lock() = vec!["scripted".into()];
        let app = Router::new()
            .route("/v1/chat/completions", post(generate))
            .route("/v1/responses", post(generate))
            .route("/v1/models", get(models))
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        ScriptedUpstream {
            addr,
            script,
            stop: Some(stop),
        }
    }

    /// Its base URL, as `--engine` takes it.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Queues replies (after those queued before).
    pub fn then(&self, replies: impl IntoIterator<Item = Reply>) -> &Self {
        self.script.replies.lock().extend(replies);
        self
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.script.seen.lock().clone()
    }

    /// Waits (10 s at most) until `count` streams were abandoned.
    pub async fn wait_abandoned(&self, count: usize) {
        let wait = async {
            loop {
                let changed = self.script.abandoned_changed.notified();
                if self.script.abandoned.load(Ordering::SeqCst) >= count {
                    return;
                }
                changed.await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), wait)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "{count} abandoned upstream streams within 10 s; {} so far",
                    self.script.abandoned.load(Ordering::SeqCst)
                )
            });
    }

    pub fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for ScriptedUpstream {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn models(State(script): State<Arc<Script>>) -> Response {
    let data: Vec<Value> = script
        .models
        .lock()
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "test"}))
        .collect();
    axum::Json(json!({"object": "list", "data": data})).into_response()
}

/// Counts the stream as abandoned when dropped before it ended.
struct Guard {
    script: Arc<Script>,
    ended: bool,
}

impl Guard {
    /// The stream reached its end (or its scripted cut): not abandoned.
    fn end(&mut self) {
        self.ended = true;
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.script.open.fetch_sub(1, Ordering::SeqCst);
        if !self.ended {
            self.script.abandoned.fetch_add(1, Ordering::SeqCst);
            self.script.abandoned_changed.notify_waiters();
        }
    }
}

fn sse(data: &Value) -> Bytes {
    let text = match data {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    Bytes::from(format!("data: {text}\n\n"))
}

/// What a content chunk of the endless stream looks like.
pub fn content(text: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {"content": text}}]})
}

async fn generate(
    State(script): State<Arc<Script>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    script.seen.lock().push(Seen {
        path: uri.path().to_string(),
        body,
        authorization: headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
    });
    let reply = script.replies.lock().pop_front().unwrap_or_else(|| {
        Reply::Chunks(vec![
            content("default answer"),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            json!("[DONE]"),
        ])
    });
    let stream_of =
        |script: Arc<Script>, chunks: Vec<Value>, every: Option<Duration>, cut: bool| {
            script.open.fetch_add(1, Ordering::SeqCst);
            let guard = Guard {
                script,
                ended: false,
            };
            let stream = futures_util::stream::unfold(
                (chunks.into_iter(), guard, true),
                move |(mut chunks, mut guard, first)| async move {
                    if let (Some(every), false) = (every, first) {
                        tokio::time::sleep(every).await;
                    }
                    match chunks.next() {
                        Some(chunk) => {
                            Some((Ok::<_, std::io::Error>(sse(&chunk)), (chunks, guard, false)))
                        }
                        None if cut => {
                            guard.end();
                            Some((Err(std::io::Error::other("cut")), (chunks, guard, false)))
                        }
                        None => {
                            guard.end();
                            None
                        }
                    }
                },
            );
            sse_response(Body::from_stream(stream))
        };
    match reply {
        Reply::Chunks(chunks) => stream_of(script, chunks, None, false),
        Reply::Slow(chunks, every) => stream_of(script, chunks, Some(every), false),
        Reply::Cut(chunks) => stream_of(script, chunks, Some(Duration::from_millis(20)), true),
        Reply::Status(status, body, retry_after) => {
            let mut response =
                (StatusCode::from_u16(status).unwrap(), axum::Json(body)).into_response();
            if let Some(wait) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", wait.parse().unwrap());
            }
            response
        }
        Reply::Stall => {
            std::future::pending::<()>().await;
            unreachable!()
        }
        Reply::Endless => {
            script.open.fetch_add(1, Ordering::SeqCst);
            let guard = Guard {
                script,
                ended: false,
            };
            let stream = futures_util::stream::unfold((guard, 0u64), |(guard, n)| async move {
                if n > 0 {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Some((
                    Ok::<_, std::io::Error>(sse(&content(&format!(" word{n}")))),
                    (guard, n + 1),
                ))
            });
            sse_response(Body::from_stream(stream))
        }
    }
}

fn sse_response(body: Body) -> Response {
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(body)
        .unwrap()
}

/// The chunks of a plain answer: `text` in two deltas, `stop`, the usage, `[DONE]`.
pub fn answer(text: &str, usage: Value) -> Reply {
    let (a, b) = text.split_at(text.len() / 2);
    Reply::Chunks(vec![
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
        content(a),
        content(b),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": usage}),
        json!("[DONE]"),
    ])
}
