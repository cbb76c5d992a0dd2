//! One `response.create` on a lane, to its end: what it continues checked out of the connection
//! cache (the previous response, referenced items, the route), the pipeline run, and the new
//! response checked in for the next turn — or an error frame on the lane, the previous response
//! checked in as refused (evicted) so a failed continuation is not retried against the same
//! state. One checkout and one checkin a turn.
//!
//! A response may run longer than one engine call. On a connection in the v1 beta
//! (`responses_websockets=2026-02-04`) a response that calls client tools pauses with
//! `response.done` and resumes on `response.append`; with the multi-agent beta and
//! `multi_agent.enabled`, it waits for `response.inject`. A steered response ends at a safe
//! boundary (`response.incomplete`, reason `steered`) and an automatic successor continues it
//! with the steer's input; one that ended with client tool calls keeps the steer for the next
//! request (`response.steer.pending`).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether_protocol::{
    ApiError, ErrorFrame, Input, Item, ResponseCreate, ResponseStatus, ServerEvent, Steer,
    StreamEvent,
};
use tokio::sync::mpsc;

use super::control::{Control, Resume};
use super::queue::Jobs;
use crate::AppState;
use crate::cache::{Checkin, SharedCache};
use crate::error::{ApiFailure, ErrorKind};
use crate::metrics::{CacheLookup, Transport};
use crate::pipeline::{self, Disconnected, End, Origin, RequestOptions, Running, Sampled};
use crate::transport::trace_context;

/// How long a response waits for `response.inject` before it completes as it stands (as it
/// would over HTTP).
pub const INJECT_WAIT: Duration = Duration::from_secs(600);

/// What a connection's lanes share.
#[derive(Debug)]
pub struct Connection {
    pub cache: SharedCache,
    pub control: Control,
}

impl Connection {
    pub fn new(state: &AppState) -> Self {
        Connection {
            cache: SharedCache::new(state.cache_limits, &state.cache_budget),
            control: Control::default(),
        }
    }
}

/// Serves `request` and, when it is steered, its successors. Returns a request that arrived on
/// the lane while a v1 response was paused (which ended the pause), for the lane to serve next.
pub async fn serve(
    state: &AppState,
    request: ResponseCreate,
    connection: &Connection,
    out: &mpsc::Sender<Box<ServerEvent>>,
    options: &RequestOptions,
    jobs: &mut Jobs,
) -> Result<Option<ResponseCreate>, Disconnected> {
    let mut next = Some(request);
    while let Some(request) = next.take() {
        state.metrics.response_served(Transport::Ws);
        let lane = request.stream_id.clone();
        let Some(prepared) = prepare(state, request, connection, out, options).await? else {
            return Ok(None);
        };
        let mut running = Running::start(prepared, out).await?;
        let id = running.id().to_string();
        let mut resumes = connection
            .control
            .register(&id, lane.clone(), running.steering.clone());
        let outcome = run(
            state,
            &mut running,
            connection,
            out,
            options,
            jobs,
            &mut resumes,
        )
        .await;
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(disconnected) => {
                connection.control.finish(&id, 0);
                return Err(disconnected);
            }
        };
        let generated = running.finish(state, out, outcome.end).await;
        let next_sequence = generated.as_ref().map_or(0, |g| g.next_sequence);
        connection.control.finish(&id, next_sequence);
        // Input that came for the response after it stopped taking any: handed back.
        refuse_late_resumes(&mut resumes, &id, &connection.control, out).await?;
        let mut generated = generated?;
        let steers = std::mem::take(&mut generated.steers);
        // The request is moved, not copied: its settings are a successor's if it was steered.
        let settings = generated.request.take().expect("the request it answered");
        let replica = generated.replica;
        // A failed response cannot be continued; the one it continued stays evicted.
        let continuable = matches!(
            generated.response.status,
            ResponseStatus::Completed | ResponseStatus::Incomplete
        );
        // The terminal event is out: rendering the output for the next turn is off the critical
        // path.
        let entry = continuable.then(|| Box::new(generated.into_cached()));
        connection.cache.checkin(Checkin::Served {
            model: &settings.model,
            replica,
            entry,
            lane: lane.as_deref(),
            awaits_outputs: outcome.calls.is_some(),
        });
        if steers.is_empty() {
            return Ok(outcome.next_job);
        }
        match (outcome.calls, continuable) {
            // It ended with client tool calls: the steer waits for the request that answers
            // them.
            (Some(calls), true) => {
                let required: Vec<Value> = calls.iter().map(required_input).collect();
                // After `response.completed`, still in its sequence.
                for steer in &steers {
                    let pending = StreamEvent::SteerPending {
                        reason: "waiting_for_required_input".into(),
                        required_input: required.clone(),
                        steer: Steer {
                            id: steer.id.clone(),
                            previous_response_id: id.clone(),
                        },
                    };
                    send_late(out, &connection.control, &id, pending).await?;
                }
                connection.control.keep_steers(&id, steers);
                return Ok(outcome.next_job);
            }
            // An automatic successor continues it with the steers' input and its settings.
            (_, true) => {
                let mut successor = settings;
                successor.input = Input::Items(steers.into_iter().flat_map(|s| s.input).collect());
                successor.previous_response_id = Some(id.clone());
                successor.generate = None;
                next = Some(successor);
                if outcome.next_job.is_some() {
                    return Ok(outcome.next_job);
                }
            }
            (_, false) => {
                for steer in steers {
                    let failed = steer_failed(
                        "successor_creation_failed",
                        "The steered response failed; no successor was started.",
                        &id,
                        Some(steer.id),
                        Value::Array(steer.input.into_iter().map(|i| json!(i)).collect()),
                    );
                    send_late(out, &connection.control, &id, failed).await?;
                }
                return Ok(outcome.next_job);
            }
        }
    }
    Ok(None)
}

/// How a running response came to its end.
struct Outcome {
    end: End,
    /// The client tool calls it ended with, if it ended with some.
    calls: Option<Vec<Item>>,
    /// A request that arrived on the lane while the response was paused.
    next_job: Option<ResponseCreate>,
}

/// Samples until the response ends: resuming it with appended or injected input as long as it
/// calls client tools and its connection's mode waits for them.
#[allow(clippy::too_many_arguments)]
async fn run(
    state: &AppState,
    running: &mut Running,
    connection: &Connection,
    out: &mpsc::Sender<Box<ServerEvent>>,
    options: &RequestOptions,
    jobs: &mut Jobs,
    resumes: &mut mpsc::UnboundedReceiver<Resume>,
) -> Result<Outcome, Disconnected> {
    let mut closing = connection.control.closing();
    let lane = running.request().stream_id.clone();
    let waits_for_inject = options.multi_agent && multi_agent_enabled(running.request());
    loop {
        let calls = match running.sample(state, out).await? {
            Sampled::Failed(status, error) => return Ok(ended(End::Failed(status, error))),
            Sampled::CutShort => return Ok(ended(End::Incomplete("max_output_tokens"))),
            Sampled::Steered => return Ok(ended(End::Incomplete("steered"))),
            Sampled::Answered => return Ok(ended(End::Completed)),
            Sampled::Called(calls) => calls,
        };
        let completed = |next_job| Outcome {
            end: End::Completed,
            calls: Some(calls.clone()),
            next_job,
        };
        if !(options.append_mode || waits_for_inject) || running.steering.requested() {
            return Ok(completed(None));
        }
        if options.append_mode {
            running.pause(out).await?;
            connection.control.set_paused(running.id(), true);
        }
        let mut waiting = Instant::now();
        loop {
            let deadline = tokio::time::sleep(INJECT_WAIT);
            let resumed = tokio::select! {
                // A steer while it waits is announced now and taken when it samples again.
                () = running.steering.notified() => {
                    running.announce_steers(out).await?;
                    continue;
                }
                resumed = resumes.recv() => resumed,
                // A new request on the lane ends the pause: the paused response completes.
                job = jobs.recv(), if options.append_mode => {
                    running.waited(waiting.elapsed());
                    return Ok(completed(job));
                }
                _ = closing.changed() => None,
                () = deadline, if waits_for_inject => None,
            };
            let input = match resumed {
                Some(Resume::Append(input)) if options.append_mode => input,
                Some(Resume::Inject(input)) if waits_for_inject => input,
                Some(Resume::Append(input) | Resume::Inject(input)) => {
                    let refused = not_waiting(running.id(), input);
                    running.announce(refused, out).await?;
                    continue;
                }
                None => {
                    running.waited(waiting.elapsed());
                    return Ok(completed(None));
                }
            };
            // The client's time ends here; taking its input is the API's work.
            running.waited(waiting.elapsed());
            match running.extend(state, input.clone()).await {
                Ok(()) => break,
                // Unusable input (a tool output for no call, …) is refused and the response
                // keeps waiting: for an inject, handed back with the reason.
                Err(failure) if waits_for_inject => {
                    let failed = StreamEvent::InjectFailed {
                        error: failure.error,
                        input,
                        response_id: running.id().to_string(),
                    };
                    running.announce(failed, out).await?;
                }
                Err(failure) => send_error(out, failure, lane.clone()).await?,
            }
            waiting = Instant::now();
        }
        connection.control.set_paused(running.id(), false);
        if waits_for_inject {
            let created = StreamEvent::InjectCreated {
                response_id: running.id().to_string(),
            };
            running.announce(created, out).await?;
        }
    }
}

fn ended(end: End) -> Outcome {
    Outcome {
        end,
        calls: None,
        next_job: None,
    }
}

/// Whether the request turned the multi-agent beta's waiting on: `multi_agent.enabled`.
fn multi_agent_enabled(request: &ResponseCreate) -> bool {
    request
        .multi_agent
        .as_ref()
        .and_then(|m| m.get("enabled"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// The stub of the output a client tool call needs, for `response.steer.pending`.
fn required_input(call: &Item) -> Value {
    match call {
        Item::FunctionCall(call) => {
            json!({"type": "function_call_output", "call_id": call.call_id, "name": call.name})
        }
        Item::CustomToolCall(call) => {
            json!({"type": "custom_tool_call_output", "call_id": call.call_id, "name": call.name})
        }
        other => json!({"type": format!("{}_output", other.type_name())}),
    }
}

/// `response.inject.failed` handing back input for a response that does not wait for it (it
/// did not turn `multi_agent` on, or waits for an append).
fn not_waiting(id: &str, input: Vec<Item>) -> StreamEvent {
    StreamEvent::InjectFailed {
        error: ApiError::invalid_request(
            Some("response_not_active"),
            format!("Response '{id}' is not waiting for input."),
            Some("response_id"),
        ),
        input,
        response_id: id.to_string(),
    }
}

/// Input that reached a response after it stopped taking input: `response.inject.failed`
/// with `response_already_completed`, its input handed back.
async fn refuse_late_resumes(
    resumes: &mut mpsc::UnboundedReceiver<Resume>,
    id: &str,
    control: &Control,
    out: &mpsc::Sender<Box<ServerEvent>>,
) -> Result<(), Disconnected> {
    resumes.close();
    while let Ok(resume) = resumes.try_recv() {
        let input = match resume {
            Resume::Append(input) | Resume::Inject(input) => input,
        };
        send_late(out, control, id, inject_failed_completed(id, input)).await?;
    }
    Ok(())
}

/// `response.inject.failed` for a response that completed.
pub fn inject_failed_completed(id: &str, input: Vec<Item>) -> StreamEvent {
    StreamEvent::InjectFailed {
        error: ApiError::invalid_request(
            Some("response_already_completed"),
            format!(
                "Response '{id}' has completed; send the input with response.create and \
                 previous_response_id."
            ),
            Some("response_id"),
        ),
        input,
        response_id: id.to_string(),
    }
}

/// `response.steer.failed` with `code`, handing the input back.
pub fn steer_failed(
    code: &str,
    message: &str,
    previous_response_id: &str,
    id: Option<String>,
    input: Value,
) -> StreamEvent {
    StreamEvent::SteerFailed {
        error: ApiError::invalid_request(Some(code), message, Some("previous_response_id")),
        steer: tether_protocol::FailedSteer {
            input,
            previous_response_id: previous_response_id.to_string(),
            id,
        },
    }
}

/// The pipeline's preparation of `request` on this connection: the previous response taken from
/// the cache, steers kept for it prepended to the input. `None` when it was refused (the error
/// frame is sent).
async fn prepare(
    state: &AppState,
    mut request: ResponseCreate,
    connection: &Connection,
    out: &mpsc::Sender<Box<ServerEvent>>,
    options: &RequestOptions,
) -> Result<Option<pipeline::Prepared>, Disconnected> {
    let lane = request.stream_id.clone();
    if let Err(failure) = pipeline::supported(&request, pipeline::Via::WebSocket) {
        send_error(out, failure, lane).await?;
        return Ok(None);
    }
    let previous = request.previous_response_id.clone();
    if let Some(previous) = &previous {
        let steers = connection.control.take_steers(previous);
        if !steers.is_empty() {
            // The steers a response that ended with client tool calls kept come first.
            let mut input: Vec<Item> = steers.into_iter().flat_map(|s| s.input).collect();
            input.extend(std::mem::take(&mut request.input).into_items());
            request.input = Input::Items(input);
        }
    }
    // The previous response, the items the input references by id (from any response this
    // connection still holds), the replica this connection's earlier responses of the model
    // went to: taken under one lock, never held across an await.
    let checkout = connection.cache.checkout(&request);
    let mut options = options.clone();
    options.trace = trace_context::for_frame(
        state,
        options.trace.as_ref(),
        request.client_metadata.as_ref(),
    );
    match pipeline::prepare(state, request, Origin::WebSocket(checkout), options).await {
        Ok(prepared) => {
            if let Some(lookup) = prepared.lookup {
                state.metrics.cache_lookup(lookup);
            }
            Ok(Some(prepared))
        }
        Err(failure) => {
            if failure.kind == ErrorKind::PreviousResponseNotFound {
                state.metrics.cache_lookup(CacheLookup::Miss);
            }
            // A failed continuation must not be retried against the same cached state.
            connection.cache.checkin(Checkin::Refused {
                previous: previous.as_deref(),
            });
            send_error(out, failure, lane).await?;
            Ok(None)
        }
    }
}

/// Sends `event` about response `id` after its end, continuing its sequence on its lane
/// ([`Control::late`]).
pub async fn send_late(
    out: &mpsc::Sender<Box<ServerEvent>>,
    control: &Control,
    id: &str,
    event: StreamEvent,
) -> Result<(), Disconnected> {
    let (sequence, stream_id) = control.late(id);
    let event = ServerEvent {
        event,
        sequence_number: Some(sequence),
        stream_id,
        tether_timing: None,
    };
    out.send(Box::new(event)).await.map_err(|_| Disconnected)
}

/// Sends `event` without a sequence number, on `lane`.
pub async fn send(
    out: &mpsc::Sender<Box<ServerEvent>>,
    event: StreamEvent,
    stream_id: Option<String>,
) -> Result<(), Disconnected> {
    let event = ServerEvent {
        event,
        sequence_number: None,
        stream_id,
        tether_timing: None,
    };
    out.send(Box::new(event)).await.map_err(|_| Disconnected)
}

/// Sends `failure` as an error frame (with its `status`), on `stream_id`'s lane if it names one.
pub async fn send_error(
    out: &mpsc::Sender<Box<ServerEvent>>,
    failure: ApiFailure,
    stream_id: Option<String>,
) -> Result<(), Disconnected> {
    send(
        out,
        StreamEvent::Error(ErrorFrame::websocket(failure.status, failure.error)),
        stream_id,
    )
    .await
}
