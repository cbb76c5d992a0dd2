//! WebSocket mode on `GET /v1/responses`: one task per connection.
//!
//! The connection is split three ways so a slow response never blocks reading: a reader decodes
//! frames and answers bad ones at once, a worker runs queued `response.create`s one at a time
//! (a second request while one runs is queued, not rejected — PROTOCOL.md §2), and a writer owns
//! the socket's sending half. When the client goes away the reader ends, the worker is aborted
//! (generation stops) and everything the connection held is dropped.

use axum::extract::State;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::response::Response as HttpResponse;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use tether_protocol::{
    ApiError, ClientFrame, ErrorFrame, Response, ResponseCreate, ResponseStreamBuilder,
    ServerEvent, StreamEvent, Usage, decode_client_frame,
};
use tokio::sync::mpsc;

use crate::AppState;
use crate::ids::{new_id, unix_now};
use crate::sim::{Context, ModelEvent};

/// Requests waiting behind the running one; beyond this a `response.create` is refused.
const MAX_QUEUED: usize = 64;

/// Upgrades the request to a WebSocket connection.
pub async fn upgrade(State(state): State<AppState>, ws: WebSocketUpgrade) -> HttpResponse {
    ws.on_upgrade(move |socket: WebSocket| handle_socket(socket, state))
}

/// Serves one connection until the client closes it.
///
/// Generic over the socket so a test can drive it with channels instead of a network.
pub async fn handle_socket<S, E>(socket: S, state: AppState)
where
    S: Stream<Item = Result<Message, E>> + Sink<Message> + Send + 'static,
    E: std::fmt::Display,
{
    let (mut sink, mut stream) = socket.split();
    let (out_tx, mut out_rx) = mpsc::channel::<Message>(256);
    let writer = tokio::spawn(async move {
        while let Some(message) = out_rx.recv().await {
            if sink.send(message).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });

    let (job_tx, mut job_rx) = mpsc::channel::<ResponseCreate>(MAX_QUEUED);
    let worker_out = out_tx.clone();
    let worker = tokio::spawn(async move {
        while let Some(request) = job_rx.recv().await {
            if run_response(&state, request, &worker_out).await.is_err() {
                break;
            }
        }
    });

    while let Some(message) = stream.next().await {
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
    worker.abort();
    drop(out_tx);
    let _ = writer.await;
}

/// The client has gone away; stop working for it.
#[derive(Debug)]
struct Disconnected;

async fn send_event(out: &mpsc::Sender<Message>, event: &ServerEvent) -> Result<(), Disconnected> {
    out.send(Message::Text(event.to_json().into()))
        .await
        .map_err(|_| Disconnected)
}

async fn send_error(
    out: &mpsc::Sender<Message>,
    status: u16,
    error: ApiError,
) -> Result<(), Disconnected> {
    let event = ServerEvent {
        event: StreamEvent::Error(ErrorFrame::websocket(status, error)),
        sequence_number: None,
        stream_id: None,
    };
    send_event(out, &event).await
}

/// Streams one response: lifecycle events, the model's output, `response.completed`.
async fn run_response(
    state: &AppState,
    request: ResponseCreate,
    out: &mpsc::Sender<Message>,
) -> Result<(), Disconnected> {
    let response = Response::in_progress(new_id("resp"), unix_now(), &request);
    let mut builder = ResponseStreamBuilder::new(response, request.stream_id.clone());
    for event in builder.start() {
        send_event(out, &event).await?;
    }
    let generates = request.generates();
    let context = Context::new(request);
    let mut output_tokens = 0u64;
    if generates {
        let mut events = state.model.generate(&context);
        while let Some(model_event) = events.next().await {
            let wire_events = match model_event {
                ModelEvent::BeginMessage => builder.begin_message(new_id("msg")),
                ModelEvent::TextDelta(delta) => {
                    output_tokens += 1;
                    vec![builder.text_delta(&delta)]
                }
                ModelEvent::EndItem => builder.end_item(),
            };
            for event in &wire_events {
                send_event(out, event).await?;
            }
        }
    }
    let usage = Usage::new(context.input_tokens, 0, output_tokens, 0);
    for event in builder.complete(usage, unix_now()) {
        send_event(out, &event).await?;
    }
    Ok(())
}
