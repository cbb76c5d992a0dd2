//! WebSocket mode on `GET /v1/responses`: one task per connection.
//!
//! The connection is split three ways so a slow response never blocks reading: a reader decodes
//! frames and answers bad ones at once, a worker runs queued `response.create`s one at a time
//! (a second request while one runs is queued, not rejected — PROTOCOL.md §2) and owns the
//! connection cache, and a writer owns the socket's sending half. When the client goes away the
//! reader ends, the worker is aborted (generation stops) and everything the connection held —
//! its cache included — is dropped.

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::{IntoResponse, Response as HttpResponse};
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use tether_protocol::{
    ApiError, ClientFrame, ErrorFrame, ResponseCreate, ServerEvent, StreamEvent,
    decode_client_frame,
};
use tokio::sync::mpsc;

use crate::AppState;
use crate::cache::ConnectionCache;
use crate::metrics::{CacheLookup, Transport};
use crate::pipeline::{self, Refusal};

/// Requests waiting behind the running one; beyond this a `response.create` is refused.
const MAX_QUEUED: usize = 64;

/// Upgrades the request to a WebSocket connection.
pub async fn upgrade(State(state): State<AppState>, ws: WebSocketUpgrade) -> HttpResponse {
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
    let max = state.max_frame_bytes;
    ws.max_message_size(max)
        .max_frame_size(max)
        .on_upgrade(move |socket: WebSocket| handle_socket(socket, state))
}

/// Serves one connection until the client closes it.
///
/// Generic over the socket so a test can drive it with channels instead of a network.
pub async fn handle_socket<S, E>(socket: S, state: AppState)
where
    S: Stream<Item = Result<Message, E>> + Sink<Message> + Send + 'static,
    E: std::fmt::Display,
{
    state.metrics.ws_connected();
    let (mut sink, mut stream) = socket.split();
    let (out_tx, mut out_rx) = mpsc::channel::<ServerEvent>(256);
    let writer = tokio::spawn(async move {
        while let Some(event) = out_rx.recv().await {
            if sink
                .send(Message::Text(event.to_json().into()))
                .await
                .is_err()
            {
                break;
            }
        }
        let _ = sink.close().await;
    });

    let (job_tx, mut job_rx) = mpsc::channel::<ResponseCreate>(MAX_QUEUED);
    let worker_out = out_tx.clone();
    let worker_state = state.clone();
    let worker = tokio::spawn(async move {
        let mut cache = ConnectionCache::default();
        while let Some(request) = job_rx.recv().await {
            if serve_request(&worker_state, request, &mut cache, &worker_out)
                .await
                .is_err()
            {
                break;
            }
        }
    });

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
        let text = match message {
            Ok(Message::Text(text)) => text,
            Ok(Message::Binary(_)) => {
                let error = ApiError::invalid_request(
                    None,
                    "binary frames are not supported; send JSON text frames",
                    None,
                );
                if send_error(&out_tx, 400, error).await.is_err() {
                    break;
                }
                continue;
            }
            Ok(Message::Close(_)) => break,
            Ok(Message::Ping(_) | Message::Pong(_)) => continue,
            Err(err) => {
                tracing::debug!("websocket read failed: {err}");
                break;
            }
        };
        match decode_client_frame(text.as_str()) {
            Ok(ClientFrame::ResponseCreate(request)) => {
                if let Err(mpsc::error::TrySendError::Full(_)) = job_tx.try_send(*request) {
                    let error = ApiError::invalid_request(
                        Some("too_many_queued_requests"),
                        format!("at most {MAX_QUEUED} responses may wait on one connection"),
                        None,
                    );
                    if send_error(&out_tx, 429, error).await.is_err() {
                        break;
                    }
                }
            }
            Err(decode_error) => {
                if send_error(&out_tx, 400, decode_error.to_api_error())
                    .await
                    .is_err()
                {
                    break;
                }
            }
        }
    }
    if expired {
        // Let queued work finish, then tell the client why the connection ends: it reconnects
        // and continues with `previous_response_id` (stored) or the full context.
        drop(job_tx);
        let _ = worker.await;
        let minutes = state.ws_lifetime.as_secs_f64() / 60.0;
        let error = ApiError::invalid_request(
            Some("websocket_connection_limit_reached"),
            format!(
                "This WebSocket connection reached its {minutes:.0}-minute limit. Open a new connection to continue."
            ),
            None,
        );
        let _ = send_error(&out_tx, 400, error).await;
    } else {
        worker.abort();
    }
    drop(out_tx);
    let _ = writer.await;
    state.metrics.ws_disconnected();
}

async fn send_error(
    out: &mpsc::Sender<ServerEvent>,
    status: u16,
    error: ApiError,
) -> Result<(), pipeline::Disconnected> {
    let event = ServerEvent {
        event: StreamEvent::Error(ErrorFrame::websocket(status, error)),
        sequence_number: None,
        stream_id: None,
    };
    out.send(event).await.map_err(|_| pipeline::Disconnected)
}

/// Runs one `response.create` against the connection cache.
async fn serve_request(
    state: &AppState,
    request: ResponseCreate,
    cache: &mut ConnectionCache,
    out: &mpsc::Sender<ServerEvent>,
) -> Result<(), pipeline::Disconnected> {
    state.metrics.response_served(Transport::Ws);
    if request.background == Some(true) {
        let refusal = Refusal::bad_request(
            None,
            "background responses are not supported in WebSocket mode",
            Some("background"),
        );
        return send_error(out, refusal.status, refusal.error).await;
    }
    let previous = request.previous_response_id.clone();
    match pipeline::prepare(state, request, Some(cache)).await {
        Ok(prepared) => {
            if let Some(lookup) = prepared.lookup {
                state.metrics.cache_lookup(lookup);
            }
            let generated = pipeline::generate(state, prepared, out).await?;
            cache.put(generated.into_cached());
            Ok(())
        }
        Err(refusal) => {
            if refusal.error.code.as_deref() == Some("previous_response_not_found") {
                state.metrics.cache_lookup(CacheLookup::Miss);
            }
            // A failed continuation must not be retried against the same cached state.
            if let Some(previous) = previous {
                cache.evict(&previous);
            }
            send_error(out, refusal.status, refusal.error).await
        }
    }
}
