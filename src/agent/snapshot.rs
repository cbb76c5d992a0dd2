//! A finished run as the page keeps it in `localStorage`: status, error, conversation and the
//! per-turn timings, in a format of its own so the in-memory records can grow without breaking
//! what an older page stored. What the snapshot does not carry comes back empty.

use serde::{Deserialize, Serialize};
use tether_protocol::ResponseCreate;

use crate::agent::steer::{SteerOutcome, SteerRecord};
use crate::agent::{
    AgentRun, CallKind, ContinuationMode, Entry, RunStatus, SentAs, ServerTimings, ToolCallEntry,
    TurnRecord,
};

/// The storage format version of [`LastRun`].
pub const LAST_RUN_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum SnapshotEntry {
    Task {
        text: String,
    },
    Assistant {
        text: String,
    },
    Steer {
        text: String,
    },
    ToolCall {
        call_id: String,
        name: String,
        custom: bool,
        arguments: String,
        output: Option<String>,
        success: Option<bool>,
        changes: Vec<String>,
        tool_ms: Option<f64>,
        #[serde(default)]
        stopped: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SnapshotTurn {
    number: usize,
    response_id: Option<String>,
    previous_response_id: Option<String>,
    store: bool,
    input_items: usize,
    sent_at: f64,
    first_event_at: Option<f64>,
    first_token_at: Option<f64>,
    last_token_at: Option<f64>,
    completed_at: Option<f64>,
    tool_ms: f64,
    deltas: u64,
    input_tokens: u64,
    cached_tokens: u64,
    output_tokens: u64,
    // Kept since the timing breakdown; a run stored before has none.
    #[serde(default)]
    events: u64,
    #[serde(default)]
    client_ms: f64,
    // Kept since the per-delta cost; a run stored before has none.
    #[serde(default)]
    delta_client_ms: f64,
    // Kept since the per-turn chart; a run stored before has none.
    #[serde(default)]
    sent_bytes: u64,
    #[serde(default)]
    received_bytes: u64,
    // Kept since a resent turn's lost time is its own; a run stored before has none.
    #[serde(default)]
    lost_ms: f64,
    // Kept since a tool faster than the clock shows as 0.0 ms; a run stored before has none.
    #[serde(default)]
    tool_runs: u32,
    /// The server's timing summary, in its own shape ([`ServerTimings::to_summary`]).
    #[serde(default)]
    server: Option<serde_json::Value>,
    // Kept since the long-running transport and steering; a run stored before has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sent_as: Option<String>,
    #[serde(default)]
    paused: bool,
    #[serde(default)]
    steered: bool,
}

/// One steer the page sent, and what became of it: `outcome` is [`SteerOutcome::as_str`], and
/// the fields that outcome has are set. (A flat struct rather than a tagged enum: serde's
/// decoder for one costs the agent chunk several KiB.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SnapshotSteer {
    turn: usize,
    text: String,
    target: String,
    sent_at: f64,
    answered_at: Option<f64>,
    outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    /// Pending: why, and the calls it waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    required: Vec<String>,
    /// Failed: the server's code and message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    /// Applied: the turn that is its automatic successor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    successor: Option<usize>,
}

impl SnapshotSteer {
    fn of(steer: &SteerRecord) -> Self {
        let mut stored = SnapshotSteer {
            turn: steer.turn,
            text: steer.text.clone(),
            target: steer.target.clone(),
            sent_at: steer.sent_at,
            answered_at: steer.answered_at,
            outcome: steer.outcome.as_str().to_string(),
            id: None,
            reason: None,
            required: Vec::new(),
            code: None,
            message: None,
            successor: None,
        };
        match steer.outcome.clone() {
            SteerOutcome::Sent => {}
            SteerOutcome::Accepted { id } => stored.id = Some(id),
            SteerOutcome::Pending {
                id,
                reason,
                required,
            } => (stored.id, stored.reason, stored.required) = (Some(id), Some(reason), required),
            SteerOutcome::Failed { code, message } => {
                (stored.code, stored.message) = (Some(code), Some(message))
            }
            SteerOutcome::Applied { id, turn } => {
                (stored.id, stored.successor) = (Some(id), Some(turn))
            }
        }
        stored
    }

    /// The steer again. A stored run is over, so a steer still `sent` will never be answered:
    /// it comes back as failed, saying so.
    fn restore(&self) -> SteerRecord {
        let id = || self.id.clone().unwrap_or_default();
        let outcome = match self.outcome.as_str() {
            "accepted" => SteerOutcome::Accepted { id: id() },
            "pending" => SteerOutcome::Pending {
                id: id(),
                reason: self.reason.clone().unwrap_or_default(),
                required: self.required.clone(),
            },
            "failed" => SteerOutcome::Failed {
                code: self.code.clone().unwrap_or_default(),
                message: self.message.clone().unwrap_or_default(),
            },
            "applied" => SteerOutcome::Applied {
                id: id(),
                turn: self.successor.unwrap_or(self.turn),
            },
            _ => SteerOutcome::Failed {
                code: "unanswered".into(),
                message: "the run ended before the server answered this steer".into(),
            },
        };
        SteerRecord {
            turn: self.turn,
            text: self.text.clone(),
            target: self.target.clone(),
            sent_at: self.sent_at,
            answered_at: self.answered_at,
            outcome,
        }
    }
}

/// One run, serializable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSnapshot {
    status: String,
    error: Option<String>,
    entries: Vec<SnapshotEntry>,
    turns: Vec<SnapshotTurn>,
    // Kept since steering; a run stored before has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    steers: Vec<SnapshotSteer>,
}

impl RunSnapshot {
    pub fn of(run: &AgentRun) -> RunSnapshot {
        let entries = run
            .entries
            .iter()
            .filter_map(|entry| match entry {
                Entry::Task(text) => Some(SnapshotEntry::Task { text: text.clone() }),
                Entry::Assistant(text) => Some(SnapshotEntry::Assistant { text: text.clone() }),
                Entry::Steer(text) => Some(SnapshotEntry::Steer { text: text.clone() }),
                Entry::ToolCall(call) => Some(SnapshotEntry::ToolCall {
                    call_id: call.call_id.clone(),
                    name: call.name.clone(),
                    custom: call.kind == CallKind::Custom,
                    arguments: call.arguments.clone(),
                    output: call.output.clone(),
                    success: call.success,
                    changes: call.changes.clone(),
                    tool_ms: call.tool_ms,
                    stopped: call.stopped,
                }),
                #[allow(unreachable_patterns)]
                _ => None,
            })
            .collect();
        let turns = run
            .turns
            .iter()
            .map(|t| SnapshotTurn {
                number: t.number,
                response_id: t.response_id.clone(),
                previous_response_id: t.previous_response_id.clone(),
                store: t.store,
                input_items: t.input_items,
                sent_at: t.sent_at,
                first_event_at: t.first_event_at,
                first_token_at: t.first_token_at,
                last_token_at: t.last_token_at,
                completed_at: t.completed_at,
                tool_ms: t.tool_ms,
                deltas: t.deltas,
                input_tokens: t.input_tokens,
                cached_tokens: t.cached_tokens,
                output_tokens: t.output_tokens,
                events: t.events,
                client_ms: t.client_ms,
                delta_client_ms: t.delta_client_ms,
                sent_bytes: t.sent_bytes,
                received_bytes: t.received_bytes,
                lost_ms: t.lost_ms,
                tool_runs: t.tool_runs,
                server: t.server.as_ref().map(ServerTimings::to_summary),
                sent_as: (t.sent_as != SentAs::Create).then(|| t.sent_as.as_str().to_string()),
                paused: t.paused,
                steered: t.steered,
            })
            .collect();
        let steers = run.steers.iter().map(SnapshotSteer::of).collect();
        RunSnapshot {
            status: run.status.as_str().to_string(),
            error: run.error.clone(),
            entries,
            turns,
            steers,
        }
    }

    /// The run again. A run stored while it was running (the page closed mid-run) comes back
    /// stopped.
    pub fn restore(&self) -> AgentRun {
        let status = match self.status.as_str() {
            "done" => RunStatus::Done,
            "failed" => RunStatus::Failed,
            "idle" => RunStatus::Idle,
            _ => RunStatus::Stopped,
        };
        let entries = self
            .entries
            .iter()
            .map(|entry| match entry {
                SnapshotEntry::Task { text } => Entry::Task(text.clone()),
                SnapshotEntry::Assistant { text } => Entry::Assistant(text.clone()),
                SnapshotEntry::Steer { text } => Entry::Steer(text.clone()),
                SnapshotEntry::ToolCall {
                    call_id,
                    name,
                    custom,
                    arguments,
                    output,
                    success,
                    changes,
                    tool_ms,
                    stopped,
                } => Entry::ToolCall(ToolCallEntry {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    kind: if *custom {
                        CallKind::Custom
                    } else {
                        CallKind::Function
                    },
                    arguments: arguments.clone(),
                    output: output.clone(),
                    success: *success,
                    changes: changes.clone(),
                    tool_ms: *tool_ms,
                    // A call that had not run when the run was cut off never will.
                    stopped: *stopped || (status == RunStatus::Stopped && output.is_none()),
                }),
            })
            .collect();
        // The stored fields over a blank record: fields the snapshot does not know stay empty.
        let blank = ResponseCreate::new("", "");
        let turns = self
            .turns
            .iter()
            .map(|t| {
                let mut record = TurnRecord::new(t.number, &blank, t.sent_at);
                record.response_id = t.response_id.clone();
                record.previous_response_id = t.previous_response_id.clone();
                record.store = t.store;
                record.input_items = t.input_items;
                record.first_event_at = t.first_event_at;
                record.first_token_at = t.first_token_at;
                record.last_token_at = t.last_token_at;
                record.completed_at = t.completed_at;
                record.tool_ms = t.tool_ms;
                record.deltas = t.deltas;
                record.input_tokens = t.input_tokens;
                record.cached_tokens = t.cached_tokens;
                record.output_tokens = t.output_tokens;
                record.events = t.events;
                record.client_ms = t.client_ms;
                record.delta_client_ms = t.delta_client_ms;
                record.sent_bytes = t.sent_bytes;
                record.received_bytes = t.received_bytes;
                record.lost_ms = t.lost_ms;
                record.tool_runs = t.tool_runs;
                record.server = t.server.as_ref().and_then(ServerTimings::parse);
                record.sent_as = t
                    .sent_as
                    .as_deref()
                    .and_then(SentAs::parse)
                    .unwrap_or_default();
                record.paused = t.paused;
                record.steered = t.steered;
                record
            })
            .collect();
        let steers = self.steers.iter().map(SnapshotSteer::restore).collect();
        // Fields the snapshot does not know (the record may grow) stay at their defaults.
        #[allow(clippy::needless_update)]
        AgentRun {
            status,
            entries,
            turns,
            steers,
            error: self.error.clone(),
            ..AgentRun::default()
        }
    }
}

/// What the page remembers of its last run: a single run, or a comparison — the latest run of
/// each leg and the timings of every leg.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LastRun {
    Single {
        run: RunSnapshot,
    },
    Compare {
        ws: RunSnapshot,
        http: RunSnapshot,
        /// The long-running leg's latest run, when the comparison had that leg.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        long_running: Option<Box<RunSnapshot>>,
        /// Repetitions planned; a comparison stored before repetitions has none (then the two
        /// runs are its one repetition).
        #[serde(default)]
        repetitions: Option<usize>,
        /// Every leg that started, in order, without its conversation.
        #[serde(default)]
        legs: Vec<StoredLeg>,
        /// A sweep's profiles, one per repetition ([`crate::agent::Comparison::sweep`]); kept
        /// since the sweep, so a comparison stored before has none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        sweep: Vec<String>,
    },
}

/// One leg of a comparison as the page keeps it: its mode (`ws`, `http-stateless`), its
/// repetition, and its run's status and timings (the conversation is kept for the latest run of
/// each leg only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredLeg {
    mode: String,
    repetition: usize,
    run: RunSnapshot,
}

impl StoredLeg {
    /// `run`, the leg of `mode` in `repetition`, without its conversation.
    pub fn of(mode: ContinuationMode, repetition: usize, run: &AgentRun) -> StoredLeg {
        let mut run = RunSnapshot::of(run);
        run.entries.clear();
        StoredLeg {
            mode: mode.as_str().to_string(),
            repetition,
            run,
        }
    }

    /// The leg again; `None` for a mode this page does not know.
    pub fn restore(&self) -> Option<(ContinuationMode, usize, AgentRun)> {
        let mode = ContinuationMode::parse(&self.mode)?;
        Some((mode, self.repetition, self.run.restore()))
    }
}

impl LastRun {
    pub fn to_json(&self) -> String {
        crate::settings::to_stored_json(LAST_RUN_VERSION, self)
    }

    pub fn from_json(json: &str) -> Result<LastRun, String> {
        crate::settings::from_stored_json(LAST_RUN_VERSION, json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_run(status: RunStatus) -> AgentRun {
        let request = ResponseCreate::new("m", "x");
        let mut turn = TurnRecord::new(1, &request, 10.0);
        turn.response_id = Some("resp_1".into());
        turn.first_event_at = Some(12.0);
        turn.first_token_at = Some(15.0);
        turn.last_token_at = Some(40.0);
        turn.completed_at = Some(41.0);
        turn.tool_ms = 3.5;
        turn.deltas = 9;
        (turn.input_tokens, turn.cached_tokens, turn.output_tokens) = (500, 0, 9);
        (turn.events, turn.client_ms, turn.delta_client_ms) = (14, 0.7, 0.4);
        (turn.sent_bytes, turn.received_bytes) = (2_048, 9_000);
        turn.server = ServerTimings::parse(&serde_json::json!({"path": "ws_hit",
            "stages": {"render_us": 20}, "api_us": 80}));
        #[allow(clippy::needless_update)]
        AgentRun {
            status,
            entries: vec![
                Entry::Task("fix it".into()),
                Entry::ToolCall(ToolCallEntry {
                    call_id: "call_1".into(),
                    name: "apply_patch".into(),
                    kind: CallKind::Custom,
                    arguments: "*** Begin Patch".into(),
                    output: Some("Success".into()),
                    success: Some(true),
                    changes: vec!["modified /src/paginate.js".into()],
                    tool_ms: Some(3.5),
                    stopped: false,
                }),
                Entry::Assistant("Fixed.".into()),
            ],
            turns: vec![turn],
            error: None,
            ..AgentRun::default()
        }
    }

    #[test]
    fn a_run_round_trips_through_json() {
        let run = sample_run(RunStatus::Done);
        let last = LastRun::Single {
            run: RunSnapshot::of(&run),
        };
        let restored = LastRun::from_json(&last.to_json()).unwrap();
        let LastRun::Single { run: snapshot } = restored else {
            panic!("a single run")
        };
        assert_eq!(snapshot.restore(), run);
    }

    #[test]
    fn a_steered_run_keeps_every_steer_and_its_outcome() {
        let mut run = sample_run(RunStatus::Done);
        let steer = |text: &str, outcome| SteerRecord {
            turn: 1,
            text: text.into(),
            target: "resp_1".into(),
            sent_at: 20.0,
            answered_at: Some(23.0),
            outcome,
        };
        run.steers = vec![
            steer(
                "use a loop",
                SteerOutcome::Applied {
                    id: "steer_1".into(),
                    turn: 2,
                },
            ),
            steer(
                "and tests",
                SteerOutcome::Pending {
                    id: "steer_2".into(),
                    reason: "client_tool_calls".into(),
                    required: vec!["call_1".into()],
                },
            ),
            steer(
                "too late",
                SteerOutcome::Failed {
                    code: "response_already_completed".into(),
                    message: "It ended.".into(),
                },
            ),
            steer("unanswered", SteerOutcome::Sent),
            steer(
                "owned",
                SteerOutcome::Accepted {
                    id: "steer_3".into(),
                },
            ),
        ];
        let last = LastRun::Single {
            run: RunSnapshot::of(&run),
        };
        let Ok(LastRun::Single { run: snapshot }) = LastRun::from_json(&last.to_json()) else {
            panic!("a single run round-trips")
        };
        let restored = snapshot.restore().steers;
        // Every steer as it was, but the one the server never answered: a stored run is over, so
        // it never will be, and it says so.
        for (n, (restored, sent)) in restored.iter().zip(&run.steers).enumerate() {
            if n != 3 {
                assert_eq!(restored, sent);
            }
        }
        assert_eq!(restored[3].outcome.as_str(), "failed");
        let said = restored[3].outcome.describe();
        assert!(said.contains("ended before the server answered"), "{said}");
        assert_eq!(restored[3].text, "unanswered");
        // A run stored before steering was kept has no steers, and still restores.
        let older = r#"{"status":"done","error":null,"entries":[],"turns":[]}"#;
        let older: RunSnapshot = serde_json::from_str(older).unwrap();
        assert!(older.restore().steers.is_empty());
    }

    #[test]
    fn a_run_stored_mid_flight_comes_back_stopped_with_its_pending_call() {
        let mut run = sample_run(RunStatus::Running);
        if let Entry::ToolCall(call) = &mut run.entries[1] {
            (call.output, call.success) = (None, None);
        }
        let restored = RunSnapshot::of(&run).restore();
        assert_eq!(restored.status, RunStatus::Stopped);
        assert_eq!(restored.tool_call_count(), 0, "the call never ran");
        assert_eq!(restored.tool_calls().next().unwrap().state(), "stopped");
    }

    #[test]
    fn a_comparisons_legs_keep_their_timings_not_their_conversations() {
        let run = sample_run(RunStatus::Done);
        let leg = StoredLeg::of(ContinuationMode::HttpStateless, 2, &run);
        let last = LastRun::Compare {
            ws: RunSnapshot::of(&run),
            http: RunSnapshot::of(&run),
            long_running: None,
            repetitions: Some(3),
            legs: vec![leg],
            sweep: Vec::new(),
        };
        let Ok(LastRun::Compare { legs, .. }) = LastRun::from_json(&last.to_json()) else {
            panic!("a comparison round-trips")
        };
        let (mode, repetition, restored) = legs[0].restore().unwrap();
        assert_eq!((mode, repetition), (ContinuationMode::HttpStateless, 2));
        assert!(restored.entries.is_empty());
        assert_eq!(restored.turns, run.turns, "with the server's timings");
    }

    #[test]
    fn a_run_stored_before_the_breakdown_still_reads() {
        let old = r#"{"version":1,"kind":"compare","ws":{"status":"done","error":null,"entries":[],
            "turns":[{"number":1,"response_id":"r","previous_response_id":null,"store":false,
            "input_items":1,"sent_at":1.0,"first_event_at":2.0,"first_token_at":3.0,
            "last_token_at":4.0,"completed_at":5.0,"tool_ms":0.0,"deltas":2,"input_tokens":10,
            "cached_tokens":0,"output_tokens":2}]},
            "http":{"status":"idle","error":null,"entries":[],"turns":[]}}"#;
        let Ok(LastRun::Compare {
            ws,
            repetitions,
            legs,
            ..
        }) = LastRun::from_json(old)
        else {
            panic!("an old comparison reads")
        };
        assert_eq!((repetitions, legs), (None, vec![]));
        let ws = ws.restore();
        assert_eq!(
            (ws.turns[0].events, ws.turns[0].server.is_none()),
            (0, true)
        );
    }

    #[test]
    fn corrupt_or_old_runs_are_refused() {
        assert!(LastRun::from_json("[]").is_err());
        assert!(
            LastRun::from_json(r#"{"version":1,"kind":"single"}"#)
                .unwrap_err()
                .contains("unreadable")
        );
        assert!(
            LastRun::from_json(r#"{"kind":"single","run":{}}"#)
                .unwrap_err()
                .contains("version")
        );
    }
}
