//! Reading one response to its end: frames in, the outcome out. Plain Rust — both backends and
//! both transports feed it the same way, and its tests feed it by hand.
//!
//! The rules it follows are the protocol's (docs/protocol.md §3–§4):
//! - an `error` without a sequence number is a refusal before the response began: the request
//!   failed, and nothing else will come for it;
//! - an `error` with a sequence number belongs to a running response, and `response.failed`
//!   follows — the error is kept and reported with it;
//! - `response.completed`, `response.incomplete` and (v1 beta) `response.done` end it;
//! - every other event — deltas, items, steer and inject answers, a timing event — is passed by.
//!
//! Only the terminal and `error` events are decoded.

use tether_protocol::{ApiError, Response, StreamEvent};

use crate::error::Error;
use crate::frame::Frame;

/// How a response ended, for the request (or append) that ran it.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// The response as its terminal event carried it.
    pub response: Response,
    pub ending: Ending,
    /// The server's timing summary (`tether_timing`), when the endpoint asked for it.
    pub timing: Option<serde_json::Value>,
    /// Events read for this response, the terminal one included.
    pub events: u64,
}

/// Which terminal event ended the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `response.completed`.
    Completed,
    /// `response.incomplete`: `response.incomplete_details.reason` says why (`max_output_tokens`,
    /// `steered`, …).
    Incomplete,
    /// `response.done` (v1 beta): the response paused at client tool calls; `response.append`
    /// resumes it.
    Paused,
}

impl Finished {
    /// The calls of client tools in the output, in order: what the caller runs next.
    pub fn tool_calls(&self) -> impl Iterator<Item = &tether_protocol::Item> {
        self.response.output.iter().filter(|item| {
            matches!(
                item,
                tether_protocol::Item::FunctionCall(_) | tether_protocol::Item::CustomToolCall(_)
            )
        })
    }

    /// Why the response ended incomplete, if it did.
    pub fn incomplete_reason(&self) -> Option<&str> {
        match self.ending {
            Ending::Incomplete => Some(
                self.response
                    .incomplete_details
                    .as_ref()
                    .map_or("unknown", |details| details.reason.as_str()),
            ),
            _ => None,
        }
    }
}

/// The state of one response being read.
#[derive(Debug, Default)]
pub struct TurnReader {
    /// An `error` event of the running response, reported with the `response.failed` after it.
    pending: Option<ApiError>,
    events: u64,
    /// Whether `response.created` (or any event of a running response) was seen: from then on
    /// the request reached the server, and resending it would run it twice.
    started: bool,
}

impl TurnReader {
    pub fn new() -> TurnReader {
        TurnReader::default()
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Whether the response began (any event of it arrived): a request that failed before
    /// that is safe to send again.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Reads one frame: `Ok(None)` to go on, `Ok(Some(..))` at the terminal event, `Err` when
    /// the request failed.
    pub fn read(&mut self, frame: &Frame) -> Result<Option<Finished>, Error> {
        self.events += 1;
        let kind = frame.kind();
        if kind == "error" {
            let event = frame.decode()?;
            let StreamEvent::Error(error) = event.event else {
                return Err(Error::Protocol(format!(
                    "an `error` event that is not one: {}",
                    crate::frame::preview(frame.text())
                )));
            };
            let api = error.api_error();
            if event.sequence_number.is_some() {
                self.started = true;
                self.pending = Some(api);
                return Ok(None);
            }
            return Err(Error::Api {
                status: error.status,
                error: api,
            });
        }
        if !crate::frame::is_terminal(&kind) {
            // A frame about another, earlier response (a late steer answer) carries a sequence
            // number too; any of them means the server has the request in hand.
            self.started |= kind.starts_with("response.");
            return Ok(None);
        }
        self.started = true;
        let event = frame.decode()?;
        let (response, ending) = match event.event {
            StreamEvent::Completed { response } => (response, Ending::Completed),
            StreamEvent::Incomplete { response } => (response, Ending::Incomplete),
            StreamEvent::Done { response } => (response, Ending::Paused),
            StreamEvent::Failed { response } => {
                let error = self.pending.take().unwrap_or_else(|| {
                    response.error.clone().unwrap_or_else(|| ApiError {
                        kind: None,
                        code: None,
                        message: "the response failed and said no more".into(),
                        param: None,
                    })
                });
                return Err(Error::Failed {
                    response: Box::new(response),
                    error,
                });
            }
            _ => unreachable!("is_terminal covers exactly these"),
        };
        Ok(Some(Finished {
            response,
            ending,
            timing: event.tether_timing,
            events: self.events,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::{ResponseCreate, ResponseStreamBuilder, Usage};

    fn frames(events: &[tether_protocol::ServerEvent]) -> Vec<Frame> {
        events.iter().map(|e| Frame::new(e.to_json())).collect()
    }

    fn answer() -> Vec<tether_protocol::ServerEvent> {
        let request = ResponseCreate::new("m", "hi");
        let mut b = ResponseStreamBuilder::new(Response::in_progress("resp_1", 1, &request), None);
        let mut events = b.start();
        events.extend(b.begin_message("msg_1"));
        events.push(b.text_delta("hello"));
        events.extend(b.complete(Usage::new(3, 0, 1, 0), 1));
        events
    }

    #[test]
    fn a_response_ends_at_its_terminal_event() {
        let events = answer();
        let mut reader = TurnReader::new();
        let mut finished = None;
        for frame in frames(&events) {
            assert!(finished.is_none(), "nothing after the terminal event");
            finished = reader.read(&frame).unwrap();
        }
        let finished = finished.expect("completed");
        assert_eq!(finished.ending, Ending::Completed);
        assert_eq!(finished.response.id, "resp_1");
        assert_eq!(finished.response.output_text(), "hello");
        assert_eq!(finished.events, events.len() as u64);
        assert!(reader.started());
        assert_eq!(finished.incomplete_reason(), None);
    }

    #[test]
    fn a_refusal_ends_the_request_and_a_running_error_waits_for_failed() {
        let mut reader = TurnReader::new();
        let refusal = Frame::new(
            r#"{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"previous_response_not_found","message":"m","param":null}}"#,
        );
        let error = reader.read(&refusal).unwrap_err();
        assert_eq!(error.code(), Some("previous_response_not_found"));
        assert_eq!(error.status(), Some(400));
        assert!(!reader.started(), "a refused request is safe to resend");

        let mut reader = TurnReader::new();
        let running = Frame::new(
            r#"{"type":"error","sequence_number":3,"status":500,"error":{"type":"server_error","code":"server_error","message":"boom"}}"#,
        );
        assert_eq!(reader.read(&running).unwrap(), None);
        let request = ResponseCreate::new("m", "hi");
        let mut failed = Response::in_progress("resp_2", 1, &request);
        failed.status = tether_protocol::ResponseStatus::Failed;
        let event = tether_protocol::ServerEvent {
            event: StreamEvent::Failed { response: failed },
            sequence_number: Some(4),
            stream_id: None,
            tether_timing: None,
        };
        match reader.read(&Frame::new(event.to_json())).unwrap_err() {
            Error::Failed { response, error } => {
                assert_eq!(response.id, "resp_2");
                assert_eq!(error.code.as_deref(), Some("server_error"));
                assert_eq!(error.message, "boom");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_paused_or_steered_response_says_so() {
        let request = ResponseCreate::new("m", "hi");
        let mut response = Response::in_progress("resp_3", 1, &request);
        let done = tether_protocol::ServerEvent {
            event: StreamEvent::Done {
                response: response.clone(),
            },
            sequence_number: Some(9),
            stream_id: None,
            tether_timing: Some(serde_json::json!({"api_us": 5})),
        };
        let finished = TurnReader::new()
            .read(&Frame::new(done.to_json()))
            .unwrap()
            .unwrap();
        assert_eq!(finished.ending, Ending::Paused);
        assert_eq!(finished.timing, Some(serde_json::json!({"api_us": 5})));
        response.incomplete_details = Some(tether_protocol::response::IncompleteDetails {
            reason: "steered".into(),
        });
        let steered = tether_protocol::ServerEvent {
            event: StreamEvent::Incomplete { response },
            sequence_number: Some(9),
            stream_id: None,
            tether_timing: None,
        };
        let finished = TurnReader::new()
            .read(&Frame::new(steered.to_json()))
            .unwrap()
            .unwrap();
        assert_eq!(finished.incomplete_reason(), Some("steered"));
    }

    #[test]
    fn an_undecodable_terminal_event_is_a_protocol_error() {
        let error = TurnReader::new()
            .read(&Frame::new(r#"{"type":"response.completed","response":7}"#))
            .unwrap_err();
        assert!(matches!(error, Error::Protocol(_)), "{error:?}");
    }
}
