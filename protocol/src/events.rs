//! Server → client stream events: the SSE `data:` payloads and, identically, the WebSocket
//! text frames (docs/protocol.md §3).
//!
//! [`ServerEvent`] wraps an event with the fields every event may carry: its `sequence_number`
//! (absent only on connection-level error frames) and, on a named WebSocket lane, its
//! `stream_id`. Event types this crate does not know decode to [`StreamEvent::Unknown`] so a
//! client built on these types keeps working when the server grows new events.

use serde::{Deserialize, Serialize};

use crate::error::ErrorFrame;
use crate::items::{Item, OutputText, SummaryText};
use crate::response::Response;

/// One event on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerEvent {
    #[serde(flatten)]
    pub event: StreamEvent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_number: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_id: Option<String>,
    /// Tether's per-stage timing summary, on the terminal event of a request that opted in
    /// with the header `x-tether-timing: 1` (never sent otherwise, so strict clients never see
    /// it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tether_timing: Option<serde_json::Value>,
}

impl ServerEvent {
    /// The wire name of the event's type, e.g. `response.output_text.delta`.
    pub fn type_name(&self) -> &'static str {
        self.event.type_name()
    }

    /// Decodes an event from the JSON text it arrived as (a WebSocket frame, an SSE event's
    /// `data`): the one decoder of events for every client. The deltas that are most of a
    /// stream are read straight from their text ([`crate::deltas`]), every other event as a JSON
    /// tree taken apart by its `type` ([`crate::event_tree`], far less wasm than serde's derive
    /// of this enum). The error names the event and the field.
    pub fn from_json(text: &str) -> Result<ServerEvent, serde_json::Error> {
        let maybe_delta = match crate::deltas::leading_type(text) {
            Some(kind) => crate::deltas::is_delta(kind),
            // Every delta type ends in `.delta`: a text without it names none.
            None => text.contains(".delta\""),
        };
        if maybe_delta && let Some(event) = crate::deltas::delta(text) {
            return Ok(event);
        }
        crate::event_tree::from_tree(serde_json::from_str(text)?)
            .map_err(<serde_json::Error as serde::de::Error>::custom)
    }

    /// Encodes the event as the JSON text of one frame or one SSE `data:` line.
    pub fn to_json(&self) -> String {
        // Sized up front, so that the text of an event carrying a response (whose instructions
        // are most of it) is not copied again and again as it grows.
        let mut json = Vec::with_capacity(self.json_capacity());
        // A response's instructions from their JSON kept from an earlier event (escaped.rs).
        crate::escaped::encoding(|| serde_json::to_writer(&mut json, self))
            .expect("events always serialize");
        // SAFETY: serde_json writes UTF-8 only (its own `to_string` skips the check too), and the
        // kept instructions it copies in are its own output. Checking again cost ~3 instructions
        // a byte: 36,788 of a turn whose events echo ~12 KB of instructions three times.
        debug_assert!(std::str::from_utf8(&json).is_ok(), "serde_json wrote UTF-8");
        unsafe { String::from_utf8_unchecked(json) }
    }

    /// Room for the event's JSON: serde_json's own start for most events; for one carrying a
    /// response, its instructions with room for their escapes, and a kilobyte for the rest.
    fn json_capacity(&self) -> usize {
        match &self.event {
            StreamEvent::Created { response }
            | StreamEvent::Queued { response }
            | StreamEvent::InProgress { response }
            | StreamEvent::Completed { response }
            | StreamEvent::Failed { response }
            | StreamEvent::Incomplete { response }
            | StreamEvent::Done { response } => {
                let instructions = response.instructions.as_deref().map_or(0, str::len);
                1024 + instructions + instructions / 8
            }
            _ => 128,
        }
    }
}

/// The event kinds, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum StreamEvent {
    #[serde(rename = "response.created")]
    Created { response: Response },
    #[serde(rename = "response.queued")]
    Queued { response: Response },
    #[serde(rename = "response.in_progress")]
    InProgress { response: Response },
    #[serde(rename = "response.completed")]
    Completed { response: Response },
    #[serde(rename = "response.failed")]
    Failed { response: Response },
    #[serde(rename = "response.incomplete")]
    Incomplete { response: Response },
    /// v1 beta (`responses_websockets=2026-02-04`): the response paused at client tool calls;
    /// `response.append` resumes it. Never sent without that beta.
    #[serde(rename = "response.done")]
    Done { response: Response },
    #[serde(rename = "response.steer.accepted")]
    SteerAccepted { steer: Steer },
    /// After `response.completed` of a response that ended with client tool calls: the queued
    /// steer input waits for the next `response.create`, which must answer `required_input`.
    #[serde(rename = "response.steer.pending")]
    SteerPending {
        reason: String,
        required_input: Vec<serde_json::Value>,
        steer: Steer,
    },
    #[serde(rename = "response.steer.failed")]
    SteerFailed {
        error: crate::error::ApiError,
        steer: FailedSteer,
    },
    /// Multi-agent beta (`responses_multi_agent=v1`): the injected input was taken; the
    /// response resumes.
    #[serde(rename = "response.inject.created")]
    InjectCreated { response_id: String },
    #[serde(rename = "response.inject.failed")]
    InjectFailed {
        error: crate::error::ApiError,
        input: Vec<Item>,
        response_id: String,
    },
    #[serde(rename = "response.output_item.added")]
    OutputItemAdded { output_index: usize, item: Item },
    #[serde(rename = "response.output_item.done")]
    OutputItemDone { output_index: usize, item: Item },
    #[serde(rename = "response.content_part.added")]
    ContentPartAdded {
        item_id: String,
        output_index: usize,
        content_index: usize,
        part: Part,
    },
    #[serde(rename = "response.content_part.done")]
    ContentPartDone {
        item_id: String,
        output_index: usize,
        content_index: usize,
        part: Part,
    },
    #[serde(rename = "response.output_text.delta")]
    OutputTextDelta {
        item_id: String,
        output_index: usize,
        content_index: usize,
        delta: String,
        #[serde(default)]
        logprobs: Vec<serde_json::Value>,
    },
    #[serde(rename = "response.output_text.done")]
    OutputTextDone {
        item_id: String,
        output_index: usize,
        content_index: usize,
        text: String,
        #[serde(default)]
        logprobs: Vec<serde_json::Value>,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    FunctionCallArgumentsDelta {
        item_id: String,
        output_index: usize,
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    FunctionCallArgumentsDone {
        item_id: String,
        output_index: usize,
        #[serde(default)]
        name: Option<String>,
        arguments: String,
    },
    #[serde(rename = "response.custom_tool_call_input.delta")]
    CustomToolCallInputDelta {
        item_id: String,
        output_index: usize,
        delta: String,
    },
    #[serde(rename = "response.custom_tool_call_input.done")]
    CustomToolCallInputDone {
        item_id: String,
        output_index: usize,
        input: String,
    },
    #[serde(rename = "response.reasoning_summary_part.added")]
    ReasoningSummaryPartAdded {
        item_id: String,
        output_index: usize,
        summary_index: usize,
        part: SummaryText,
    },
    #[serde(rename = "response.reasoning_summary_part.done")]
    ReasoningSummaryPartDone {
        item_id: String,
        output_index: usize,
        summary_index: usize,
        part: SummaryText,
    },
    #[serde(rename = "response.reasoning_summary_text.delta")]
    ReasoningSummaryTextDelta {
        item_id: String,
        output_index: usize,
        summary_index: usize,
        delta: String,
    },
    #[serde(rename = "response.reasoning_summary_text.done")]
    ReasoningSummaryTextDone {
        item_id: String,
        output_index: usize,
        summary_index: usize,
        text: String,
    },
    #[serde(rename = "error")]
    Error(ErrorFrame),
    /// The reference's split of a WebSocket turn's time (API, engine, time to first token, time
    /// between tokens), sent before the terminal event when the upgrade asked for it with
    /// `x-responsesapi-include-timing-metrics: true`. It names no response: it belongs to the
    /// response whose terminal event follows.
    #[serde(rename = "responsesapi.websocket_timing")]
    WebsocketTiming { timing_metrics: serde_json::Value },
    /// An event type this crate does not know.
    #[serde(other)]
    Unknown,
}

/// A steer the server took: its id and the response it steers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Steer {
    pub id: String,
    pub previous_response_id: String,
}

/// A steer the server refused, with the input it hands back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedSteer {
    pub input: serde_json::Value,
    pub previous_response_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// A content part inside `response.content_part.*` events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    OutputText(OutputText),
    Refusal { refusal: String },
}

impl StreamEvent {
    /// The wire name of the event's type.
    pub fn type_name(&self) -> &'static str {
        match self {
            StreamEvent::Created { .. } => "response.created",
            StreamEvent::Queued { .. } => "response.queued",
            StreamEvent::InProgress { .. } => "response.in_progress",
            StreamEvent::Completed { .. } => "response.completed",
            StreamEvent::Failed { .. } => "response.failed",
            StreamEvent::Incomplete { .. } => "response.incomplete",
            StreamEvent::OutputItemAdded { .. } => "response.output_item.added",
            StreamEvent::OutputItemDone { .. } => "response.output_item.done",
            StreamEvent::ContentPartAdded { .. } => "response.content_part.added",
            StreamEvent::ContentPartDone { .. } => "response.content_part.done",
            StreamEvent::OutputTextDelta { .. } => "response.output_text.delta",
            StreamEvent::OutputTextDone { .. } => "response.output_text.done",
            StreamEvent::FunctionCallArgumentsDelta { .. } => {
                "response.function_call_arguments.delta"
            }
            StreamEvent::FunctionCallArgumentsDone { .. } => {
                "response.function_call_arguments.done"
            }
            StreamEvent::CustomToolCallInputDelta { .. } => "response.custom_tool_call_input.delta",
            StreamEvent::CustomToolCallInputDone { .. } => "response.custom_tool_call_input.done",
            StreamEvent::ReasoningSummaryPartAdded { .. } => {
                "response.reasoning_summary_part.added"
            }
            StreamEvent::ReasoningSummaryPartDone { .. } => "response.reasoning_summary_part.done",
            StreamEvent::ReasoningSummaryTextDelta { .. } => {
                "response.reasoning_summary_text.delta"
            }
            StreamEvent::ReasoningSummaryTextDone { .. } => "response.reasoning_summary_text.done",
            StreamEvent::Error(_) => "error",
            StreamEvent::WebsocketTiming { .. } => "responsesapi.websocket_timing",
            StreamEvent::Done { .. } => "response.done",
            StreamEvent::SteerAccepted { .. } => "response.steer.accepted",
            StreamEvent::SteerPending { .. } => "response.steer.pending",
            StreamEvent::SteerFailed { .. } => "response.steer.failed",
            StreamEvent::InjectCreated { .. } => "response.inject.created",
            StreamEvent::InjectFailed { .. } => "response.inject.failed",
            StreamEvent::Unknown => "unknown",
        }
    }

    /// Whether this event ends a response (`completed`, `failed` or `incomplete`).
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            StreamEvent::Completed { .. }
                | StreamEvent::Failed { .. }
                | StreamEvent::Incomplete { .. }
        )
    }
}
