//! One turn: a `response.create` sent, the events it streams back, and its timings.
//!
//! Time comes in as arguments (milliseconds on any monotonic clock) so the same code runs in the
//! browser with `performance.now()` and in native tests with made-up instants.

use tether_protocol::{ServerEvent, StreamEvent};

use crate::transport::ws::Incoming;

/// Where a turn is; its text is what `data-testid="run-status"` shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RunStatus {
    #[default]
    Idle,
    Running,
    Done,
    Failed,
    /// The user stopped an agent run.
    Stopped,
}

impl RunStatus {
    /// The stable name tests and embedders read.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Idle => "idle",
            RunStatus::Running => "running",
            RunStatus::Done => "done",
            RunStatus::Failed => "failed",
            RunStatus::Stopped => "stopped",
        }
    }
}

/// The state of one turn.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turn {
    pub status: RunStatus,
    pub response_id: Option<String>,
    /// The answer as streamed so far.
    pub text: String,
    pub error: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub deltas: u64,
    sent_at: Option<f64>,
    first_token_at: Option<f64>,
    last_token_at: Option<f64>,
    completed_at: Option<f64>,
}

impl Turn {
    /// A turn whose request was sent at `now`.
    pub fn start(now: f64) -> Self {
        Turn {
            status: RunStatus::Running,
            sent_at: Some(now),
            ..Turn::default()
        }
    }

    /// A turn that failed before it started.
    pub fn failed(error: impl Into<String>) -> Self {
        Turn {
            status: RunStatus::Failed,
            error: Some(error.into()),
            ..Turn::default()
        }
    }

    /// Ends the turn with an error (kept: the first error is the cause).
    pub fn fail(&mut self, error: impl Into<String>) {
        self.status = RunStatus::Failed;
        self.error.get_or_insert_with(|| error.into());
    }

    /// Advances the turn by whatever the transport delivered at `now`.
    pub fn on_incoming(&mut self, incoming: Incoming, now: f64) {
        match incoming {
            Incoming::Event(event) => self.apply(&event, now),
            Incoming::Undecodable(reason) => self.fail(format!("undecodable frame: {reason}")),
            Incoming::Closed(reason) => {
                if self.status == RunStatus::Running {
                    self.fail(format!("the connection closed mid-turn: {reason}"));
                }
            }
            Incoming::NotOpened(reason) => {
                if self.status == RunStatus::Running {
                    self.fail(format!("cannot open the WebSocket: {reason}"));
                }
            }
        }
    }

    /// Advances the turn by one server event received at `now`.
    pub fn apply(&mut self, event: &ServerEvent, now: f64) {
        if self.status != RunStatus::Running {
            return;
        }
        match &event.event {
            StreamEvent::Created { response } => self.response_id = Some(response.id.clone()),
            StreamEvent::OutputTextDelta { delta, .. } => {
                self.first_token_at.get_or_insert(now);
                self.last_token_at = Some(now);
                self.deltas += 1;
                self.text.push_str(delta);
            }
            StreamEvent::Completed { response } => {
                self.status = RunStatus::Done;
                self.completed_at = Some(now);
                if let Some(usage) = &response.usage {
                    self.input_tokens = usage.input_tokens;
                    self.output_tokens = usage.output_tokens;
                }
            }
            StreamEvent::Incomplete { response } => {
                let reason = response
                    .incomplete_details
                    .as_ref()
                    .map_or("unknown reason", |d| d.reason.as_str());
                self.fail(format!("the response ended incomplete: {reason}"));
            }
            StreamEvent::Failed { response } => {
                let message = response
                    .error
                    .as_ref()
                    .map_or("no details", |e| e.message.as_str());
                self.fail(format!("the response failed: {message}"));
            }
            StreamEvent::Error(frame) => {
                let error = frame.api_error();
                let status = frame.status.map(|s| format!(" ({s})")).unwrap_or_default();
                self.fail(format!("server error{status}: {}", error.message));
            }
            _ => {}
        }
    }

    /// Time to first token: request sent → first text delta, in milliseconds.
    pub fn ttft_ms(&self) -> Option<f64> {
        Some(self.first_token_at? - self.sent_at?)
    }

    /// Decoding speed in tokens per second, between the first and the last text delta.
    ///
    /// `n` tokens span `n - 1` intervals; with a single token there is no rate to measure.
    pub fn tokens_per_second(&self) -> Option<f64> {
        let span_ms = self.last_token_at? - self.first_token_at?;
        let tokens = if self.output_tokens > 0 {
            self.output_tokens
        } else {
            self.deltas
        };
        crate::agent::decoding_rate(tokens, span_ms)
    }

    /// Request sent → `response.completed`, in milliseconds.
    pub fn total_ms(&self) -> Option<f64> {
        Some(self.completed_at? - self.sent_at?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::{ApiError, Response, ResponseCreate, ResponseStreamBuilder, Usage};

    fn builder() -> ResponseStreamBuilder {
        let request = ResponseCreate::new("m", "hi");
        ResponseStreamBuilder::new(Response::in_progress("resp_1", 1, &request), None)
    }

    #[test]
    fn a_streamed_answer_accumulates_and_measures() {
        let mut turn = Turn::start(100.0);
        let mut b = builder();
        for event in b.start().iter().chain(&b.begin_message("msg_1")) {
            turn.apply(event, 110.0);
        }
        assert_eq!(turn.response_id.as_deref(), Some("resp_1"));
        for (i, piece) in ["Hello", ",", " world"].iter().enumerate() {
            turn.apply(&b.text_delta(piece), 150.0 + i as f64 * 10.0);
        }
        assert_eq!(turn.status, RunStatus::Running);
        for event in b.complete(Usage::new(4, 0, 3, 0), 2) {
            turn.apply(&event, 200.0);
        }
        assert_eq!(turn.status, RunStatus::Done);
        assert_eq!(turn.text, "Hello, world");
        assert_eq!(turn.ttft_ms(), Some(50.0));
        assert_eq!(turn.tokens_per_second(), Some(100.0));
        assert_eq!(turn.total_ms(), Some(100.0));
        assert_eq!((turn.input_tokens, turn.output_tokens), (4, 3));
    }

    #[test]
    fn errors_and_closed_connections_fail_the_turn() {
        let mut turn = Turn::start(0.0);
        let mut b = builder();
        for event in b.fail(Some(500), ApiError::server("boom")) {
            turn.apply(&event, 1.0);
        }
        assert_eq!(turn.status, RunStatus::Failed);
        assert_eq!(turn.error.as_deref(), Some("server error (500): boom"));

        let mut turn = Turn::start(0.0);
        turn.on_incoming(Incoming::Closed("going away".into()), 5.0);
        assert_eq!(turn.status, RunStatus::Failed);
        assert!(turn.error.unwrap().contains("going away"));

        let mut done = Turn {
            status: RunStatus::Done,
            ..Turn::default()
        };
        done.on_incoming(Incoming::Closed("later".into()), 5.0);
        assert_eq!(
            done.status,
            RunStatus::Done,
            "a close after the turn is not a failure"
        );

        let mut turn = Turn::start(0.0);
        turn.on_incoming(
            Incoming::NotOpened("nothing listens at ws://h:1/v1/responses: …".into()),
            1.0,
        );
        assert_eq!(
            turn.error.as_deref(),
            Some("cannot open the WebSocket: nothing listens at ws://h:1/v1/responses: …")
        );
    }

    #[test]
    fn no_rate_without_two_tokens() {
        let mut turn = Turn::start(0.0);
        let mut b = builder();
        b.start();
        b.begin_message("m");
        turn.apply(&b.text_delta("x"), 3.0);
        assert_eq!(turn.ttft_ms(), Some(3.0));
        assert_eq!(turn.tokens_per_second(), None);
    }
}
