//! Streaming a response: the model's events, measured against `max_output_tokens`, turned into
//! the wire's events by the protocol's builder and sent as they come — announcing steers as
//! they are taken, and stopping at the next safe boundary once one is ([`super::steering`]).

use std::time::Instant;

use futures_util::StreamExt;
use tether_protocol::items::{CustomToolCall, FunctionCall};
use tether_protocol::{ApiError, Item, ResponseStreamBuilder, ServerEvent};
use tokio::sync::mpsc;

use super::Disconnected;
use super::limit::{Within, within_limit};
use super::steering::Steering;
use crate::ids::new_id;
use crate::lifecycle::Lifecycle;
use crate::model::{Admission, EngineUsage, ModelEvent, ModelStream};

/// How the model's output went.
#[derive(Debug, Default)]
pub struct Streamed {
    pub output_tokens: u64,
    pub reasoning_tokens: u64,
    /// The model failed: the status and error to end the response with.
    pub failure: Option<(u16, ApiError)>,
    /// The output stopped at `max_output_tokens`.
    pub cut_short: bool,
    /// The output stopped at a safe boundary because the response was steered.
    pub steered: bool,
    /// What the engine itself counted, when it said ([`ModelEvent::Usage`]).
    pub engine_usage: Option<EngineUsage>,
    /// How the engine admitted the request (its queue time, replica and prompt cache use).
    pub admission: Admission,
    /// Time spent waiting for the client to take the events (`out` full).
    pub delivery: std::time::Duration,
    /// When the engine admitted it, and when the first and the last token arrived.
    pub admitted_at: Option<Instant>,
    pub first_token_at: Option<Instant>,
    pub last_token_at: Option<Instant>,
}

/// Sends the wire events of `events` to `out` through `builder`, stopping at `limit` output
/// tokens, at a safe boundary once `steering` holds a steer, or at once when the server's
/// shutdown deadline passes (a failure); the terminal event is the caller's.
pub async fn stream(
    mut events: ModelStream,
    builder: &mut ResponseStreamBuilder,
    limit: u64,
    steering: &Steering,
    lifecycle: &Lifecycle,
    out: &mpsc::Sender<Box<ServerEvent>>,
) -> Result<Streamed, Disconnected> {
    let mut streamed = Streamed::default();
    // The server's shutdown deadline ends the output: the response fails.
    let aborted = lifecycle.aborted();
    tokio::pin!(aborted);
    let response_id = builder.response().id.clone();
    // Whether the item being streamed may stop before its end: a message or a reasoning
    // summary may (it closes `incomplete`); a tool call's arguments run to their end.
    let mut open_is_prose = false;
    // Whether an item is open at all: between items a steer stops the output at once, without
    // waiting for the engine's next event (a real engine's request is cancelled then).
    let mut item_open = false;
    loop {
        let model_event = tokio::select! {
            biased;
            () = &mut aborted => {
                streamed.failure = Some((503, shutting_down()));
                break;
            }
            // The client went away: the engine's stream is dropped now, not at its next event.
            () = out.closed() => return Err(Disconnected),
            () = steering.notified() => {
                send_all(out, steering.announcements(builder, &response_id)).await?;
                if !item_open && steering.requested() {
                    streamed.steered = true;
                    break;
                }
                continue;
            }
            next = events.next() => match next {
                Some(event) => event,
                None => break,
            },
        };
        // A safe boundary: before an item begins, or between two deltas of prose.
        let boundary = is_begin(&model_event)
            || (open_is_prose
                && matches!(
                    model_event,
                    ModelEvent::TextDelta(_) | ModelEvent::ReasoningDelta(_)
                ));
        if boundary && steering.requested() {
            streamed.steered = true;
            break;
        }
        match &model_event {
            ModelEvent::BeginMessage | ModelEvent::BeginReasoning => {
                open_is_prose = true;
                item_open = true;
            }
            ModelEvent::BeginFunctionCall { .. } | ModelEvent::BeginCustomToolCall { .. } => {
                open_is_prose = false;
                item_open = true;
            }
            ModelEvent::EndItem => {
                open_is_prose = false;
                item_open = false;
            }
            _ => {}
        }
        let model_event = match within_limit(model_event, streamed.output_tokens, limit) {
            Within::Whole(event) => event,
            Within::Cut(event) => {
                streamed.cut_short = true;
                event
            }
            Within::Nothing => {
                streamed.cut_short = true;
                break;
            }
        };
        if model_event.tokens() > 0 {
            let now = Instant::now();
            streamed.first_token_at.get_or_insert(now);
            streamed.last_token_at = Some(now);
        }
        let wire = match model_event {
            ModelEvent::Started(admission) => {
                tracing::debug!(
                    "admitted after {:?} in the queue, replica {}",
                    admission.queue_time,
                    admission.replica
                );
                streamed.admitted_at = Some(Instant::now());
                streamed.admission = admission;
                Vec::new()
            }
            ModelEvent::Fail { status, error } => {
                streamed.failure = Some((status, error));
                break;
            }
            ModelEvent::BeginReasoning => builder.begin_reasoning(new_id("rs")),
            ModelEvent::ReasoningDelta(delta) => {
                streamed.output_tokens += delta.tokens as u64;
                streamed.reasoning_tokens += delta.tokens as u64;
                vec![builder.reasoning_summary_delta(&delta.text)]
            }
            ModelEvent::BeginMessage => builder.begin_message(new_id("msg")),
            ModelEvent::TextDelta(delta) => {
                streamed.output_tokens += delta.tokens as u64;
                vec![builder.text_delta(&delta.text)]
            }
            ModelEvent::CutShort => {
                // The engine stopped at the limit it was given; its usage may still follow.
                streamed.cut_short = true;
                continue;
            }
            ModelEvent::Usage(usage) => {
                streamed.engine_usage = Some(usage);
                Vec::new()
            }
            ModelEvent::BeginFunctionCall {
                name,
                namespace,
                call_id,
            } => {
                vec![builder.begin_tool_call(Item::FunctionCall(FunctionCall {
                    id: Some(new_id("fc")),
                    call_id: call_id.unwrap_or_else(|| new_id("call")),
                    name,
                    arguments: String::new(),
                    namespace,
                    status: None,
                }))]
            }
            ModelEvent::BeginCustomToolCall { name, call_id } => {
                vec![
                    builder.begin_tool_call(Item::CustomToolCall(CustomToolCall {
                        id: Some(new_id("ctc")),
                        call_id: call_id.unwrap_or_else(|| new_id("call")),
                        name,
                        input: String::new(),
                        status: None,
                    })),
                ]
            }
            ModelEvent::ArgumentsDelta(delta) => {
                streamed.output_tokens += delta.tokens as u64;
                vec![builder.arguments_delta(&delta.text)]
            }
            ModelEvent::EndItem => builder.end_item(),
        };
        let sending = Instant::now();
        send_all(out, wire).await?;
        streamed.delivery += sending.elapsed();
        if streamed.cut_short {
            break;
        }
    }
    send_all(out, steering.announcements(builder, &response_id)).await?;
    Ok(streamed)
}

/// The error of a response the server's shutdown deadline ended.
fn shutting_down() -> ApiError {
    ApiError {
        code: Some("server_shutting_down".into()),
        ..ApiError::server(
            "The server shut down before the response finished (--shutdown-grace-seconds); \
             send it again.",
        )
    }
}

fn is_begin(event: &ModelEvent) -> bool {
    matches!(
        event,
        ModelEvent::BeginReasoning
            | ModelEvent::BeginMessage
            | ModelEvent::BeginFunctionCall { .. }
            | ModelEvent::BeginCustomToolCall { .. }
    )
}

/// Sends `events` in order; the client's going away ends the response.
pub async fn send_all(
    out: &mpsc::Sender<Box<ServerEvent>>,
    events: Vec<ServerEvent>,
) -> Result<(), Disconnected> {
    for event in events {
        out.send(Box::new(event)).await.map_err(|_| Disconnected)?;
    }
    Ok(())
}
