//! The frames that continue a response already running on the connection: `response.append`
//! (the lane's paused response), `response.inject` (a response waiting for client tool
//! outputs) and `response.steer` (user input for a running response). They come on the reader
//! and go straight to the response ([`super::control`]); what cannot be delivered is answered
//! at once, with the reason and the input handed back.

use serde_json::{Value, json};
use tether_protocol::{
    DecodeError, Item, ResponseAppend, ResponseInject, ResponseSteer, Role, ServerEvent,
    StreamEvent,
};
use tokio::sync::mpsc;

use super::control::{Found, Resume};
use super::turn::{Connection, inject_failed_completed, send_error, send_late, steer_failed};
use super::undecodable::Undecodable;
use crate::error::ApiFailure;
use crate::ids::new_id;
use crate::pipeline::{Disconnected, QueuedSteer, Refused};

/// `response.append`: resumes the response paused on the frame's lane.
pub async fn append(
    connection: &Connection,
    frame: ResponseAppend,
    append_mode: bool,
    out: &mpsc::Sender<Box<ServerEvent>>,
) -> Result<(), Disconnected> {
    let lane = frame.stream_id.clone();
    if !append_mode {
        let failure = ApiFailure::bad_request(
            Some("append_not_supported"),
            "response.append needs the v1 WebSocket beta: upgrade with \
             'OpenAI-Beta: responses_websockets=2026-02-04' (this connection uses v2, where \
             a continuation is a response.create with previous_response_id).",
            Some("type"),
        );
        return send_error(out, failure, lane).await;
    }
    let failure = match connection.control.paused_on(&lane) {
        Found::Running(handle) => {
            match handle.resume.send(Resume::Append(frame.input.into_items())) {
                Ok(()) => return Ok(()),
                Err(_) => completed(),
            }
        }
        Found::Finished => completed(),
        Found::Unknown => ApiFailure::bad_request(
            Some("response_not_found"),
            "No response is paused on this stream: response.append resumes a response that \
             ended with response.done.",
            None,
        ),
    };
    send_error(out, failure, lane).await
}

fn completed() -> ApiFailure {
    ApiFailure::bad_request(
        Some("response_already_completed"),
        "The last response on this stream is not paused (response.completed closes a response \
         to appends): send a response.create with previous_response_id.",
        None,
    )
}

/// `response.inject`: the input for a response waiting for its client tool outputs.
pub async fn inject(
    connection: &Connection,
    frame: ResponseInject,
    out: &mpsc::Sender<Box<ServerEvent>>,
) -> Result<(), Disconnected> {
    let id = frame.response_id;
    let input = frame.input.into_items();
    match connection.control.find(&id) {
        Found::Running(handle) => match handle.resume.send(Resume::Inject(input)) {
            Ok(()) => Ok(()),
            Err(returned) => {
                let input = match returned.0 {
                    Resume::Inject(input) | Resume::Append(input) => input,
                };
                send_late(
                    out,
                    &connection.control,
                    &id,
                    inject_failed_completed(&id, input),
                )
                .await
            }
        },
        Found::Finished => {
            send_late(
                out,
                &connection.control,
                &id,
                inject_failed_completed(&id, input),
            )
            .await
        }
        Found::Unknown => {
            let failed = tether_protocol::StreamEvent::InjectFailed {
                error: tether_protocol::ApiError::invalid_request(
                    Some("response_not_found"),
                    format!("No response '{id}' runs on this connection."),
                    Some("response_id"),
                ),
                input,
                response_id: id.clone(),
            };
            send_late(out, &connection.control, &id, failed).await
        }
    }
}

/// `response.steer`: queues user input for a running response.
pub async fn steer(
    connection: &Connection,
    frame: ResponseSteer,
    out: &mpsc::Sender<Box<ServerEvent>>,
) -> Result<(), Disconnected> {
    let target = frame.previous_response_id;
    let handed_back = json!(frame.input);
    let items = frame.input.into_items();
    let refused = |code: &str, message: &str, id: Option<String>| {
        steer_failed(code, message, &target, id, handed_back.clone())
    };
    let failed = match connection.control.find(&target) {
        Found::Running(_) if !user_messages_only(&items) => refused(
            "invalid_input",
            "A steer's input must be one or more user messages.",
            None,
        ),
        Found::Running(handle) => {
            let id = new_id("steer");
            let queued = QueuedSteer {
                id: id.clone(),
                input: items,
            };
            match handle.steering.push(queued) {
                Ok(()) => return Ok(()),
                Err(Refused::TooMany) => refused(
                    "too_many_pending_steers",
                    "This response already has as many pending steers as it takes.",
                    Some(id),
                ),
                Err(Refused::NotSupported) => refused(
                    "steering_not_supported",
                    "Steering is not allowed for responses bound to a conversation or using \
                     auto-compaction.",
                    Some(id),
                ),
                Err(Refused::Closed) => refused(
                    "response_already_completed",
                    "The response completed before the steer reached it.",
                    Some(id),
                ),
            }
        }
        Found::Finished => refused(
            "response_already_completed",
            "The response has completed: send the input with response.create and \
             previous_response_id.",
            None,
        ),
        Found::Unknown => refused(
            "response_not_found",
            "No response with this id runs on this connection.",
            None,
        ),
    };
    steer_refused(connection, &target, failed, out).await
}

/// Sends `failed` (a `response.steer.failed`) in the sequence of the response it targets: the
/// response announces it while it runs; after its end the sequence continues.
pub async fn steer_refused(
    connection: &Connection,
    target: &str,
    failed: StreamEvent,
    out: &mpsc::Sender<Box<ServerEvent>>,
) -> Result<(), Disconnected> {
    let failed = match connection.control.find(target) {
        Found::Running(handle) => match handle.steering.refuse(Box::new(failed)) {
            Ok(()) => return Ok(()),
            Err(failed) => *failed,
        },
        Found::Finished | Found::Unknown => failed,
    };
    send_late(out, &connection.control, target, failed).await
}

/// `response.steer.failed` (`invalid_input`) for a steer that did not decode, handing back
/// what it sent.
pub fn malformed_steer(frame: Undecodable<'_>, error: DecodeError) -> (String, StreamEvent) {
    let target = frame.previous_response_id.unwrap_or_default();
    let input = frame.input.unwrap_or(Value::Null);
    let failed = steer_failed(
        "invalid_input",
        &error.to_api_error().message,
        &target,
        None,
        input,
    );
    (target.into_owned(), failed)
}

/// Whether `items` can steer: one or more user messages, nothing else.
fn user_messages_only(items: &[Item]) -> bool {
    !items.is_empty()
        && items
            .iter()
            .all(|item| matches!(item, Item::Message(m) if m.role == Role::User))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_user_messages_steer() {
        assert!(user_messages_only(
            &tether_protocol::Input::Text("go left".into()).into_items()
        ));
        assert!(!user_messages_only(&[]));
        assert!(!user_messages_only(&[Item::assistant_text(
            "m",
            "I said",
            tether_protocol::ItemStatus::Completed
        )]));
    }
}
