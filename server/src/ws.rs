//! WebSocket mode on `GET /v1/responses`: one task per connection.
//!
//! The connection is split so a slow response never blocks reading: a reader decodes frames and
//! answers bad ones at once; one worker per lane (`stream_id`, or the unnamed default lane) runs
//! that lane's `response.create`s in order (a second request while one runs is queued, not
//! rejected — PROTOCOL.md §2), different lanes concurrently, at most 16 at a time; and a writer
//! owns the socket's sending half. The lanes share the connection cache. When the client goes
//! away the reader ends, the workers are aborted (generation stops) and everything the
//! connection held — its cache included — is dropped.

use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response as HttpResponse};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures_util::{Sink, SinkExt, Stream, StreamExt};
use tether_protocol::{
    ApiError, ClientFrame, ErrorFrame, ResponseCreate, ResponseStatus, ServerEvent, StreamEvent,
    decode_client_frame,
};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

use crate::AppState;
use crate::cache::ConnectionCache;
use crate::metrics::{CacheLookup, Transport};
use crate::pipeline::{self, Origin, Refusal};
use crate::sim::FailureKind;

/// Requests waiting on one lane; beyond this a `response.create` is refused (429).
const MAX_QUEUED: usize = 64;
/// Responses running at once on one connection, across lanes (PROTOCOL.md §2).
const MAX_IN_FLIGHT: usize = 16;
/// Bytes tungstenite reads at most per system call. It zeroes that much of its buffer before
/// every read attempt, so its default (128 KiB) cost several microseconds per frame received.
const READ_BUFFER_BYTES: usize = 16 * 1024;
/// Named lanes (`stream_id`s) one connection may open.
const MAX_LANES: usize = 32;

/// Upgrades the request to a WebSocket connection.
pub async fn upgrade(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    ws: WebSocketUpgrade,
) -> HttpResponse {
    if !state.websocket_enabled {
        // 426 is the refusal Codex understands: it switches the whole session to HTTP.
        let refusal = Refusal {
            status: 426,
            error: ApiError::invalid_request(
                Some("websocket_disabled"),
                "WebSocket mode is disabled on this server; use HTTP (POST /v1/responses).",
                None,
            ),
        };
        return refusal.into_response();
    }
    // `x-tether-fail` on the upgrade forces that failure on every response of the connection;
    // `x-tether-timing: 1` asks for the timing summary on every terminal event, and so does
    // `?tether_timing=1` on the URL, for browsers, which cannot set headers on an upgrade.
    let options = match crate::http::forced_failure(&headers) {
        Ok(forced_failure) => ConnectionOptions {
            forced_failure,
            report_timing: pipeline::wants_timing(&headers)
                || query.as_deref().is_some_and(query_wants_timing),
        },
        Err(refusal) => return refusal.into_response(),
    };
    let max = state.max_frame_bytes;
    ws.max_message_size(max)
        .max_frame_size(max)
        .read_buffer_size(READ_BUFFER_BYTES)
        .on_upgrade(move |socket: WebSocket| handle_socket(socket, state, options))
}

/// Whether an upgrade URL's query opts in to the timing summary: `tether_timing=1` among its
/// `&`-separated pairs.
fn query_wants_timing(query: &str) -> bool {
    query.split('&').any(|pair| pair == "tether_timing=1")
}

/// What the upgrade request asked of every response on its connection.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnectionOptions {
    /// `x-tether-fail`: a failure to force.
    pub forced_failure: Option<FailureKind>,
    /// `x-tether-timing: 1`: attach the timing summary to terminal events.
    pub report_timing: bool,
}

/// Serves one connection until the client closes it.
///
/// Generic over the socket so a test can drive it with channels instead of a network.
pub async fn handle_socket<S, E>(socket: S, state: AppState, options: ConnectionOptions)
where
    S: Stream<Item = Result<Message, E>> + Sink<Message> + Send + 'static,
    E: std::fmt::Display,
{
    state.metrics.ws_connected();
    let (mut sink, mut stream) = socket.split();
    let (out_tx, mut out_rx) = mpsc::channel::<ServerEvent>(256);
    // The close frame the writer ends with, when the reader chose one (a message over the size
    // limit: 1009); otherwise a close frame without a code.
    let (close_tx, close_rx) = tokio::sync::oneshot::channel::<CloseFrame>();
    // Events already queued behind the first go out in the same flush: at thousands of tokens
    // a second, one write (and one wake-up of the reader) per several frames, not per frame.
    let writer = tokio::spawn(async move {
        'write: while let Some(event) = out_rx.recv().await {
            if sink
                .feed(Message::Text(event.to_json().into()))
                .await
                .is_err()
            {
                break;
            }
            for _ in 1..WRITE_BATCH {
                let Ok(event) = out_rx.try_recv() else { break };
                if sink
                    .feed(Message::Text(event.to_json().into()))
                    .await
                    .is_err()
                {
                    break 'write;
                }
            }
            if sink.flush().await.is_err() {
                break;
            }
        }
        if let Ok(frame) = close_rx.await {
            let _ = sink.send(Message::Close(Some(frame))).await;
        }
        let _ = sink.close().await;
    });
    let mut close_tx = Some(close_tx);

    let mut lanes = Lanes::new(state.clone(), out_tx.clone(), options);
    // The connection's lifetime is checked between frames; a response already running finishes.
    let lifetime = tokio::time::sleep(state.ws_lifetime);
    tokio::pin!(lifetime);
    let mut expired = false;
    loop {
        let message = tokio::select! {
            biased;
            _ = &mut lifetime => {
                expired = true;
                break;
            }
            message = stream.next() => match message {
                Some(message) => message,
                None => break,
            },
        };
        let refused = match message {
            Ok(Message::Text(text)) => match decode_client_frame(text.as_str()) {
                Ok(ClientFrame::ResponseCreate(request)) => lanes.submit(*request).err(),
                Err(decode_error) => Some(Box::new(LaneRefusal {
                    refusal: Refusal {
                        status: 400,
                        error: decode_error.to_api_error(),
                    },
                    // A frame that names a valid lane gets its error on that lane, so a client
                    // with several requests in flight knows which one was refused.
                    stream_id: lane_of_undecodable(text.as_str()),
                })),
            },
            Ok(Message::Binary(_)) => Some(Box::new(LaneRefusal {
                refusal: Refusal::bad_request(
                    None,
                    "binary frames are not supported; send JSON text frames",
                    None,
                ),
                stream_id: None,
            })),
            Ok(Message::Close(_)) => break,
            Ok(Message::Ping(_) | Message::Pong(_)) => None,
            Err(err) => {
                tracing::debug!("websocket read failed: {err}");
                // A message over the size limit cannot be skipped (its bytes are still on the
                // wire): say why, then close with 1009 (message too big).
                if is_too_large(&err.to_string()) {
                    let max = state.max_frame_bytes;
                    let refusal = Refusal::bad_request(
                        Some("message_too_large"),
                        format!(
                            "The WebSocket message is larger than this server accepts ({max} bytes, --max-frame-bytes); the connection closes. Reconnect and send a smaller message."
                        ),
                        None,
                    );
                    let _ = send_error(&out_tx, refusal, None).await;
                    if let Some(close) = close_tx.take() {
                        let _ = close.send(CloseFrame {
                            code: CLOSE_TOO_LARGE,
                            reason: format!("message larger than {max} bytes").into(),
                        });
                    }
                }
                break;
            }
        };
        if let Some(refused) = refused
            && send_error(&out_tx, refused.refusal, refused.stream_id)
                .await
                .is_err()
        {
            break;
        }
    }
    if expired {
        // Let queued work finish, then tell the client why the connection ends: it reconnects
        // and continues with `previous_response_id` (stored) or the full context.
        lanes.finish().await;
        let seconds = state.ws_lifetime.as_secs_f64();
        let limit = if seconds >= 60.0 {
            format!("{:.0}-minute", seconds / 60.0)
        } else if seconds.fract() == 0.0 {
            format!("{seconds:.0}-second")
        } else {
            format!("{seconds:.1}-second")
        };
        let refusal = Refusal::bad_request(
            Some("websocket_connection_limit_reached"),
            format!(
                "This WebSocket connection reached its {limit} limit. Open a new connection to continue."
            ),
            None,
        );
        let _ = send_error(&out_tx, refusal, None).await;
    } else {
        lanes.abort();
    }
    drop(out_tx);
    drop(close_tx);
    let _ = writer.await;
    state.metrics.ws_disconnected();
}

/// The close code for a message larger than the server accepts (RFC 6455, 7.4.1).
const CLOSE_TOO_LARGE: u16 = 1009;

/// Whether a read error is tungstenite's refusal of a message or frame over the size limit.
fn is_too_large(error: &str) -> bool {
    error.contains("Message too long") || error.contains("Space limit exceeded")
}

/// The `stream_id` of a frame that did not decode as a request, when it is JSON naming a valid
/// lane.
fn lane_of_undecodable(text: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let id = value.get("stream_id")?.as_str()?;
    valid_stream_id(id).then(|| id.to_string())
}

/// A request refused before it reached a lane, and the lane it named.
struct LaneRefusal {
    refusal: Refusal,
    stream_id: Option<String>,
}

/// Frames written before one flush, at most.
const WRITE_BATCH: usize = 64;

/// The lanes of one connection: a FIFO queue and a worker per `stream_id` (plus the unnamed
/// default lane), at most [`MAX_IN_FLIGHT`] responses running at once across them, and the
/// connection cache they share.
struct Lanes {
    state: AppState,
    out: mpsc::Sender<ServerEvent>,
    queues: HashMap<Option<String>, mpsc::Sender<ResponseCreate>>,
    workers: JoinSet<()>,
    in_flight: Arc<Semaphore>,
    cache: Arc<Mutex<ConnectionCache>>,
    options: ConnectionOptions,
}

impl Lanes {
    fn new(state: AppState, out: mpsc::Sender<ServerEvent>, options: ConnectionOptions) -> Self {
        Lanes {
            state,
            out,
            options,
            queues: HashMap::new(),
            workers: JoinSet::new(),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            cache: Arc::new(Mutex::new(ConnectionCache::default())),
        }
    }

    /// Queues `request` on its lane, opening the lane if needed.
    fn submit(&mut self, request: ResponseCreate) -> Result<(), Box<LaneRefusal>> {
        let lane = request.stream_id.clone();
        if let Some(id) = &lane
            && !valid_stream_id(id)
        {
            let refusal = Refusal::bad_request(
                Some("invalid_stream_id"),
                "stream_id must be 1 to 256 characters of A-Z, a-z, 0-9, '_', '.' or '-'.",
                Some("stream_id"),
            );
            return Err(Box::new(LaneRefusal {
                refusal,
                stream_id: None,
            }));
        }
        if !self.queues.contains_key(&lane) {
            let named = self.queues.keys().filter(|k| k.is_some()).count();
            if lane.is_some() && named >= MAX_LANES {
                let refusal = Refusal::bad_request(
                    Some("websocket_stream_limit_reached"),
                    format!("A connection may open at most {MAX_LANES} named streams."),
                    Some("stream_id"),
                );
                return Err(Box::new(LaneRefusal {
                    refusal,
                    stream_id: lane,
                }));
            }
            let (queue, jobs) = mpsc::channel(MAX_QUEUED);
            self.workers.spawn(run_lane(
                self.state.clone(),
                jobs,
                self.out.clone(),
                self.in_flight.clone(),
                self.cache.clone(),
                self.options,
            ));
            self.queues.insert(lane.clone(), queue);
        }
        match self.queues[&lane].try_send(request) {
            Ok(()) => Ok(()),
            Err(_) => {
                let refusal = Refusal {
                    status: 429,
                    error: ApiError::invalid_request(
                        Some("too_many_queued_requests"),
                        format!("at most {MAX_QUEUED} responses may wait on one stream"),
                        None,
                    ),
                };
                Err(Box::new(LaneRefusal {
                    refusal,
                    stream_id: lane,
                }))
            }
        }
    }

    /// Closes every queue and waits for the queued work to finish.
    async fn finish(mut self) {
        self.queues.clear();
        while self.workers.join_next().await.is_some() {}
    }

    /// Stops all work at once (the client is gone).
    fn abort(mut self) {
        self.workers.abort_all();
    }
}

/// `stream_id`: 1–256 characters of `[A-Za-z0-9_.-]`.
fn valid_stream_id(id: &str) -> bool {
    (1..=256).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// One lane's worker: its requests in order, each once a slot in the connection is free.
async fn run_lane(
    state: AppState,
    mut jobs: mpsc::Receiver<ResponseCreate>,
    out: mpsc::Sender<ServerEvent>,
    in_flight: Arc<Semaphore>,
    cache: Arc<Mutex<ConnectionCache>>,
    options: ConnectionOptions,
) {
    while let Some(request) = jobs.recv().await {
        let Ok(_slot) = in_flight.acquire().await else {
            return;
        };
        if serve_request(&state, request, &cache, &out, options)
            .await
            .is_err()
        {
            return;
        }
    }
}

async fn send_error(
    out: &mpsc::Sender<ServerEvent>,
    refusal: Refusal,
    stream_id: Option<String>,
) -> Result<(), pipeline::Disconnected> {
    let event = ServerEvent {
        event: StreamEvent::Error(ErrorFrame::websocket(refusal.status, refusal.error)),
        sequence_number: None,
        stream_id,
        tether_timing: None,
    };
    out.send(event).await.map_err(|_| pipeline::Disconnected)
}

/// Runs one `response.create` against the connection cache.
async fn serve_request(
    state: &AppState,
    request: ResponseCreate,
    cache: &Mutex<ConnectionCache>,
    out: &mpsc::Sender<ServerEvent>,
    options: ConnectionOptions,
) -> Result<(), pipeline::Disconnected> {
    state.metrics.response_served(Transport::Ws);
    let lane = request.stream_id.clone();
    if request.background == Some(true) {
        let refusal = Refusal::bad_request(
            None,
            "background responses are not supported in WebSocket mode",
            Some("background"),
        );
        return send_error(out, refusal, lane).await;
    }
    let previous = request.previous_response_id.clone();
    let cached = previous
        .as_deref()
        .and_then(|id| lock(cache).take(id))
        .map(Box::new);
    // Items the input references by id, from any response this connection still holds.
    let references = match &request.input {
        tether_protocol::Input::Items(items) => pipeline::reference_ids(items),
        tether_protocol::Input::Text(_) => Vec::new(),
    };
    let referenced = if references.is_empty() {
        Vec::new()
    } else {
        lock(cache).find_items(&references)
    };
    let origin = Origin::WebSocket { cached, referenced };
    match pipeline::prepare(state, request, origin).await {
        Ok(mut prepared) => {
            if let Some(lookup) = prepared.lookup {
                state.metrics.cache_lookup(lookup);
            }
            prepared.context.forced_failure = options.forced_failure;
            prepared.report_timing = options.report_timing;
            let reuse = prepared.reusable();
            let generated = pipeline::generate(state, prepared, out).await?;
            // A failed response cannot be continued; the one it continued stays evicted. (An
            // incomplete one, cut at `max_output_tokens`, can.)
            if matches!(
                generated.response.status,
                ResponseStatus::Completed | ResponseStatus::Incomplete
            ) {
                // `response.completed` is out: rendering the output for the next turn is off
                // the critical path.
                let entry = generated.into_cached(reuse);
                lock(cache).put(entry);
            }
            Ok(())
        }
        Err(refusal) => {
            if refusal.error.code.as_deref() == Some("previous_response_not_found") {
                state.metrics.cache_lookup(CacheLookup::Miss);
            }
            // A failed continuation must not be retried against the same cached state.
            if let Some(previous) = previous {
                lock(cache).evict(&previous);
            }
            send_error(out, refusal, lane).await
        }
    }
}

/// The cache's lock is only held for a lookup or an insert, never across an await, so a
/// `std::sync::Mutex` is right; a panic mid-insert cannot leave it half-written.
fn lock(cache: &Mutex<ConnectionCache>) -> std::sync::MutexGuard<'_, ConnectionCache> {
    cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
