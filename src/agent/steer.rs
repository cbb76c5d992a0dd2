//! Steering a running response (docs/protocol.md §9, "Steering"): while a run streams over a
//! WebSocket transport, the page can send `response.steer` with user input for the response
//! under way. The server answers in the response's own stream:
//!
//! - `response.steer.accepted {steer: {id, …}}` — it owns the input; the response then ends at
//!   its next safe boundary (`response.incomplete`, reason `steered`) and an **automatic
//!   successor** starts with the input (the loop reads it as the next turn, sending nothing);
//! - `response.steer.pending` — the response ended with client tool calls: the input waits and
//!   the server prepends it to the loop's next `response.create`;
//! - `response.steer.failed {error: {code, …}}` — refused (`response_not_found`,
//!   `response_already_completed`, `too_many_pending_steers`, `invalid_input`, …).
//!
//! Here: whether the page can steer now and which response ([`steer_target`]), the frame
//! ([`steer_frame`]), and the record of each steer and its outcome ([`SteerRecord`]) that the
//! loop keeps up to date from those events ([`apply_event`]). Plain Rust, tested natively.

use tether_protocol::frames::ResponseSteer;
use tether_protocol::{ClientFrame, Input, StreamEvent};

use crate::agent::{AgentRun, ContinuationMode, Entry, RunStatus};

/// What became of a steer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SteerOutcome {
    /// Sent; the server has not answered yet.
    Sent,
    /// `response.steer.accepted`: the server owns the input.
    Accepted { id: String },
    /// `response.steer.pending`: the response ended with client tool calls; the input goes
    /// with the next request. `required` names the calls it waits for.
    Pending {
        id: String,
        reason: String,
        required: Vec<String>,
    },
    /// `response.steer.failed`: refused, the input handed back.
    Failed { code: String, message: String },
    /// An automatic successor started with the input, as turn `turn`.
    Applied { id: String, turn: usize },
}

impl SteerOutcome {
    /// A stable name for CSS classes and tests.
    pub fn as_str(&self) -> &'static str {
        match self {
            SteerOutcome::Sent => "sent",
            SteerOutcome::Accepted { .. } => "accepted",
            SteerOutcome::Pending { .. } => "pending",
            SteerOutcome::Failed { .. } => "failed",
            SteerOutcome::Applied { .. } => "applied",
        }
    }

    /// In words: `accepted (steer_1)`, `failed: response_not_found — No response …`.
    pub fn describe(&self) -> String {
        match self {
            SteerOutcome::Sent => "sent, no answer yet".to_string(),
            SteerOutcome::Accepted { id } => format!("accepted ({id})"),
            SteerOutcome::Pending {
                id,
                reason,
                required,
            } => {
                let calls = if required.is_empty() {
                    String::new()
                } else {
                    format!("; waits for {}", required.join(", "))
                };
                format!("pending: {reason} ({id}{calls}) — it goes with the next request")
            }
            SteerOutcome::Failed { code, message } => format!("failed: {code} — {message}"),
            SteerOutcome::Applied { id, turn } => {
                format!("accepted ({id}), applied: turn {turn} is its automatic successor")
            }
        }
    }
}

/// One steer the page sent.
#[derive(Debug, Clone, PartialEq)]
pub struct SteerRecord {
    /// The turn under way when it was sent.
    pub turn: usize,
    pub text: String,
    /// The response it steers (`previous_response_id`).
    pub target: String,
    pub sent_at: f64,
    /// When the latest answer about it came.
    pub answered_at: Option<f64>,
    pub outcome: SteerOutcome,
}

/// The response the Steer box would steer now, or why it cannot: only a single run over a
/// WebSocket transport, while it runs, once its current response has started.
pub fn steer_target(run: &AgentRun, mode: Option<ContinuationMode>) -> Result<String, String> {
    let Some(mode) = mode else {
        return Err(
            "Steering is for a single run: a comparison's legs must stay alike.".to_string(),
        );
    };
    if mode.transport_kind() != crate::transport::TransportKind::WebSocket {
        return Err(format!(
            "Steering needs a WebSocket transport: response.steer is a WebSocket frame, and {} \
             has no connection to send it on.",
            mode.as_str()
        ));
    }
    if run.status != RunStatus::Running {
        return Err("No response is running: start a run, then steer it while it streams.".into());
    }
    run.turns
        .iter()
        .rev()
        .find_map(|turn| turn.response_id.clone())
        .ok_or_else(|| "The run's first response has not started yet.".to_string())
}

/// The `response.steer` frame steering `target` with `text`.
pub fn steer_frame(target: &str, text: &str) -> String {
    ClientFrame::ResponseSteer(ResponseSteer {
        previous_response_id: target.to_string(),
        input: Input::Text(text.to_string()),
    })
    .to_json()
}

/// Records a steer sent at `now` during the run's current turn.
pub(crate) fn record_sent(run: &mut AgentRun, target: &str, text: &str, now: f64) {
    let turn = run.turns.last().map_or(0, |t| t.number);
    run.steers.push(SteerRecord {
        turn,
        text: text.to_string(),
        target: target.to_string(),
        sent_at: now,
        answered_at: None,
        outcome: SteerOutcome::Sent,
    });
}

/// Applies a steer event to the run's steers; `false` for any other event. The server answers
/// steers in the order it got them, so an answer without an id is the oldest unanswered one.
pub(crate) fn apply_event(run: &mut AgentRun, event: &StreamEvent, now: f64) -> bool {
    match event {
        StreamEvent::SteerAccepted { steer } => {
            let outcome = SteerOutcome::Accepted {
                id: steer.id.clone(),
            };
            // The server owns it: the conversation shows it where the model will read it.
            if let Some(text) = answer(run, None, &steer.previous_response_id, outcome, now) {
                run.entries.push(Entry::Steer(text));
            }
        }
        StreamEvent::SteerPending {
            reason,
            required_input,
            steer,
        } => {
            let required = required_input
                .iter()
                .filter_map(|stub| stub.get("call_id")?.as_str().map(str::to_string))
                .collect();
            let outcome = SteerOutcome::Pending {
                id: steer.id.clone(),
                reason: reason.clone(),
                required,
            };
            answer(
                run,
                Some(&steer.id),
                &steer.previous_response_id,
                outcome,
                now,
            );
        }
        StreamEvent::SteerFailed { error, steer } => {
            let outcome = SteerOutcome::Failed {
                code: error
                    .code
                    .clone()
                    .or_else(|| error.kind.clone())
                    .unwrap_or_else(|| "unknown".to_string()),
                message: error.message.clone(),
            };
            answer(
                run,
                steer.id.as_deref(),
                &steer.previous_response_id,
                outcome,
                now,
            );
        }
        _ => return false,
    }
    true
}

/// Whether steers of `response` were accepted and not applied yet: when it completes, an
/// automatic successor takes them.
pub(crate) fn awaits_successor(run: &AgentRun, response: &str) -> bool {
    run.steers.iter().any(|record| {
        matches!(record.outcome, SteerOutcome::Accepted { .. }) && record.target == response
    })
}

/// The accepted steers of `steered` (the response that ended `steered`) become the input of its
/// successor, turn `turn`; returns their texts, in order.
pub(crate) fn apply_to_successor(run: &mut AgentRun, steered: &str, turn: usize) -> Vec<String> {
    let mut texts = Vec::new();
    for record in &mut run.steers {
        if let SteerOutcome::Accepted { id } = &record.outcome
            && record.target == steered
        {
            let id = id.clone();
            record.outcome = SteerOutcome::Applied { id, turn };
            texts.push(record.text.clone());
        }
    }
    texts
}

/// Records `outcome` on the steer of `id` if the page knows it, else on the oldest unanswered
/// steer of `target`, else on the oldest unanswered one; returns that steer's text.
fn answer(
    run: &mut AgentRun,
    id: Option<&str>,
    target: &str,
    outcome: SteerOutcome,
    now: f64,
) -> Option<String> {
    let known = |record: &SteerRecord| match (&record.outcome, id) {
        (
            SteerOutcome::Accepted { id: known }
            | SteerOutcome::Pending { id: known, .. }
            | SteerOutcome::Applied { id: known, .. },
            Some(id),
        ) => known == id,
        _ => false,
    };
    let position = run
        .steers
        .iter()
        .position(known)
        .or_else(|| {
            run.steers
                .iter()
                .position(|r| r.outcome == SteerOutcome::Sent && r.target == target)
        })
        .or_else(|| {
            run.steers
                .iter()
                .position(|r| r.outcome == SteerOutcome::Sent)
        });
    let record = run.steers.get_mut(position?)?;
    record.outcome = outcome;
    record.answered_at = Some(now);
    Some(record.text.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::TurnRecord;
    use serde_json::json;
    use tether_protocol::{ApiError, FailedSteer, ResponseCreate, Steer};

    fn running(response: Option<&str>) -> AgentRun {
        let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        turn.response_id = response.map(str::to_string);
        AgentRun {
            status: RunStatus::Running,
            turns: vec![turn],
            ..AgentRun::default()
        }
    }

    #[test]
    fn only_a_single_running_websocket_run_with_a_response_can_be_steered() {
        let run = running(Some("resp_1"));
        assert_eq!(
            steer_target(&run, Some(ContinuationMode::WebSocket)),
            Ok("resp_1".into())
        );
        assert_eq!(
            steer_target(&run, Some(ContinuationMode::LongRunning)),
            Ok("resp_1".into())
        );
        let http = steer_target(&run, Some(ContinuationMode::HttpStateless)).unwrap_err();
        assert!(http.contains("needs a WebSocket transport"), "{http}");
        let compare = steer_target(&run, None).unwrap_err();
        assert!(compare.contains("single run"), "{compare}");
        let unstarted = steer_target(&running(None), Some(ContinuationMode::WebSocket));
        assert!(unstarted.unwrap_err().contains("not started yet"));
        let mut done = running(Some("resp_1"));
        done.status = RunStatus::Done;
        let idle = steer_target(&done, Some(ContinuationMode::WebSocket)).unwrap_err();
        assert!(idle.starts_with("No response is running"), "{idle}");
    }

    #[test]
    fn the_frame_is_the_documented_shape() {
        let frame: serde_json::Value =
            serde_json::from_str(&steer_frame("resp_1", "make it about a cat")).unwrap();
        assert_eq!(
            frame,
            json!({"type": "response.steer", "previous_response_id": "resp_1",
                   "input": "make it about a cat"})
        );
    }

    #[test]
    fn each_answer_lands_on_its_steer() {
        let mut run = running(Some("resp_1"));
        record_sent(&mut run, "resp_1", "about a cat", 10.0);
        record_sent(&mut run, "resp_1", "shorter", 11.0);
        record_sent(&mut run, "resp_9", "elsewhere", 12.0);
        assert_eq!(run.steers[0].turn, 1);

        let accepted = StreamEvent::SteerAccepted {
            steer: Steer {
                id: "steer_a".into(),
                previous_response_id: "resp_1".into(),
            },
        };
        assert!(apply_event(&mut run, &accepted, 20.0));
        assert_eq!(
            run.steers[0].outcome,
            SteerOutcome::Accepted {
                id: "steer_a".into()
            }
        );
        assert_eq!(run.steers[0].answered_at, Some(20.0));
        assert_eq!(run.entries, [Entry::Steer("about a cat".into())]);
        assert!(awaits_successor(&run, "resp_1"));

        let pending = StreamEvent::SteerPending {
            reason: "waiting_for_required_input".into(),
            required_input: vec![
                json!({"type": "function_call_output", "call_id": "call_7", "name": "shell"}),
            ],
            steer: Steer {
                id: "steer_a".into(),
                previous_response_id: "resp_1".into(),
            },
        };
        assert!(apply_event(&mut run, &pending, 30.0));
        let described = run.steers[0].outcome.describe();
        assert_eq!(run.steers[0].outcome.as_str(), "pending");
        assert!(
            described.contains("waiting_for_required_input") && described.contains("call_7"),
            "{described}"
        );
        assert!(
            !awaits_successor(&run, "resp_1"),
            "a pending steer waits for the next request"
        );

        let failed = StreamEvent::SteerFailed {
            error: ApiError::invalid_request(
                Some("response_not_found"),
                "No response 'resp_9' on this connection.",
                None,
            ),
            steer: FailedSteer {
                input: json!("elsewhere"),
                previous_response_id: "resp_9".into(),
                id: None,
            },
        };
        assert!(apply_event(&mut run, &failed, 40.0));
        assert_eq!(
            run.steers[1].outcome,
            SteerOutcome::Sent,
            "not the one refused"
        );
        assert_eq!(
            run.steers[2].outcome.describe(),
            "failed: response_not_found — No response 'resp_9' on this connection."
        );
        assert!(!apply_event(
            &mut run,
            &StreamEvent::InjectCreated {
                response_id: "x".into()
            },
            50.0
        ));
    }

    #[test]
    fn a_successor_applies_the_accepted_steers_of_the_steered_response() {
        let mut run = running(Some("resp_1"));
        record_sent(&mut run, "resp_1", "about a cat", 1.0);
        record_sent(&mut run, "resp_1", "not answered", 2.0);
        let accepted = StreamEvent::SteerAccepted {
            steer: Steer {
                id: "steer_a".into(),
                previous_response_id: "resp_1".into(),
            },
        };
        apply_event(&mut run, &accepted, 3.0);
        assert_eq!(apply_to_successor(&mut run, "resp_1", 2), ["about a cat"]);
        assert_eq!(
            run.steers[0].outcome.describe(),
            "accepted (steer_a), applied: turn 2 is its automatic successor"
        );
        assert_eq!(run.steers[1].outcome, SteerOutcome::Sent);
        assert!(
            apply_to_successor(&mut run, "resp_1", 3).is_empty(),
            "applied once"
        );
    }
}
