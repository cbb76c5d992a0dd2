//! What an agent run shows and measures: the conversation (task, assistant text, tool calls with
//! their output) and one [`TurnRecord`] per request. The loop in [`super::run`] fills it; the
//! components render it.

use std::sync::Arc;

use tether_protocol::{Item, ResponseCreate};

use crate::agent::RunStatus;
use crate::agent::files::{ChangeLog, FileSnapshot};
use crate::agent::frames::FrameLog;
use crate::agent::steer::SteerRecord;
use crate::agent::timing::ServerTimings;

/// How a turn was resent after its connection dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// The previous response was stored: the same request, `previous_response_id` and all.
    PreviousResponse,
    /// Nothing to continue from on the new connection: the full conversation was resent.
    FullContext,
    /// Sending it again failed too (the server is gone): the turn ended there.
    Failed,
}

/// How a turn's response was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SentAs {
    /// A `response.create` (over HTTP, the request body).
    #[default]
    Create,
    /// A `response.append` resuming the long-running response (v1 beta).
    Append,
    /// Nothing: the server started it, the automatic successor of a steered response.
    Successor,
}

impl SentAs {
    /// A stable name for storage and tests.
    pub fn as_str(self) -> &'static str {
        match self {
            SentAs::Create => "create",
            SentAs::Append => "append",
            SentAs::Successor => "successor",
        }
    }

    pub fn parse(name: &str) -> Option<SentAs> {
        [SentAs::Create, SentAs::Append, SentAs::Successor]
            .into_iter()
            .find(|s| s.as_str() == name)
    }
}

/// The timings and token counts of one request. Times are milliseconds on the run's clock.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnRecord {
    /// 1-based.
    pub number: usize,
    pub response_id: Option<String>,
    pub previous_response_id: Option<String>,
    pub store: bool,
    /// Items in the request's `input`: just the new ones when chained, everything when not.
    pub input_items: usize,
    pub sent_at: f64,
    pub first_event_at: Option<f64>,
    pub first_token_at: Option<f64>,
    pub last_token_at: Option<f64>,
    pub completed_at: Option<f64>,
    /// Time spent running this turn's tool calls in the sandbox.
    pub tool_ms: f64,
    /// How many of its tool calls ran (a call can take less than the clock's resolution).
    pub tool_runs: u32,
    /// Deltas received (text, function arguments, custom tool input).
    pub deltas: u64,
    /// Events received, of any kind.
    pub events: u64,
    /// The page's own work on this turn, measured: encoding the request, then decoding and
    /// applying each event it received (from the moment the event's data was there to the
    /// moment the run's state had it). Drawing the page, once per animation frame, is not in it.
    pub client_ms: f64,
    /// The part of `client_ms` spent on deltas (decoding and applying each one): with
    /// `deltas`, the page's cost per delta, apart from the few large frames a turn ends with
    /// (the whole answer again in `output_item.done`, `response.completed`, …).
    pub delta_client_ms: f64,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    /// Bytes of JSON the page sent for this turn (the request body, or the frame) and received
    /// (each event's JSON; HTTP's `event:`/`data:` lines and WebSocket's frame headers aside).
    pub sent_bytes: u64,
    pub received_bytes: u64,
    /// Set when the connection dropped during this turn and the turn was sent again.
    pub resumed: Option<Resume>,
    /// The time lost before `sent_at` when the connection dropped during this turn: from its
    /// first sending to the last (0 when it was sent once). It is this turn's, not the page's
    /// handling between turns.
    pub lost_ms: f64,
    /// The server's per-stage timings of this response, when it sent them.
    pub server: Option<ServerTimings>,
    /// How the response was asked for.
    pub sent_as: SentAs,
    /// The long-running response paused here (`response.done`) for the tools' outputs; its
    /// server timings come once, with its end.
    pub paused: bool,
    /// The response ended here because a steer was taken (`response.incomplete`, `steered`); an
    /// automatic successor is the next turn.
    pub steered: bool,
}

impl TurnRecord {
    pub fn new(number: usize, request: &ResponseCreate, sent_at: f64) -> Self {
        TurnRecord {
            number,
            response_id: None,
            previous_response_id: request.previous_response_id.clone(),
            store: request.stores(),
            input_items: input_len(request),
            sent_at,
            first_event_at: None,
            first_token_at: None,
            last_token_at: None,
            completed_at: None,
            tool_ms: 0.0,
            tool_runs: 0,
            deltas: 0,
            events: 0,
            client_ms: 0.0,
            delta_client_ms: 0.0,
            input_tokens: 0,
            cached_tokens: 0,
            output_tokens: 0,
            sent_bytes: 0,
            received_bytes: 0,
            resumed: None,
            lost_ms: 0.0,
            server: None,
            sent_as: SentAs::Create,
            paused: false,
            steered: false,
        }
    }

    /// Starts the measurements again for a resend of the turn at `sent_at`; the time since it
    /// was first sent is lost.
    pub(crate) fn restart(&mut self, request: &ResponseCreate, sent_at: f64, resume: Resume) {
        *self = TurnRecord {
            resumed: Some(resume),
            lost_ms: self.lost_ms + (sent_at - self.sent_at).max(0.0),
            ..TurnRecord::new(self.number, request, sent_at)
        };
    }

    /// The time its tools took, if any ran: 0.0 ms when they took less than the clock can
    /// tell, `None` when none ran.
    pub fn tools_ms(&self) -> Option<f64> {
        (self.tool_runs > 0 || self.tool_ms > 0.0).then_some(self.tool_ms)
    }

    /// When the turn was first sent: before any attempt the connection lost.
    pub fn first_sent_at(&self) -> f64 {
        self.sent_at - self.lost_ms
    }

    pub(crate) fn token(&mut self, now: f64) {
        self.first_token_at.get_or_insert(now);
        self.last_token_at = Some(now);
        self.deltas += 1;
    }

    /// Request sent → first token.
    pub fn ttft_ms(&self) -> Option<f64> {
        Some(self.first_token_at? - self.sent_at)
    }

    /// Request sent → first event of any kind (`response.created`).
    pub fn first_event_ms(&self) -> Option<f64> {
        Some(self.first_event_at? - self.sent_at)
    }

    /// First token → last token.
    pub fn streaming_ms(&self) -> Option<f64> {
        Some(self.last_token_at? - self.first_token_at?)
    }

    /// Request sent → terminal event.
    pub fn response_ms(&self) -> Option<f64> {
        Some(self.completed_at? - self.sent_at)
    }

    /// The rendered tokens the WebSocket connection's cache supplied, as the timing summary
    /// reports them (`None` from a server that does not).
    pub fn reused_by_connection(&self) -> Option<u64> {
        Some(self.server.as_ref()?.tokens?.reused_by_connection)
    }
}

fn input_len(request: &ResponseCreate) -> usize {
    match &request.input {
        tether_protocol::Input::Text(_) => 1,
        tether_protocol::Input::Items(items) => items.len(),
    }
}

/// Which kind of tool call a conversation entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    Function,
    Custom,
}

/// A tool call as the conversation shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallEntry {
    pub call_id: String,
    pub name: String,
    pub kind: CallKind,
    /// JSON arguments (function) or raw input (custom), as streamed so far.
    pub arguments: String,
    /// What the sandbox answered, once it ran.
    pub output: Option<String>,
    pub success: Option<bool>,
    /// Files the call changed, e.g. `modified /src/paginate.js`.
    pub changes: Vec<String>,
    pub tool_ms: Option<f64>,
    /// The run was stopped before this call ran: it never will, and it is not counted.
    pub stopped: bool,
}

impl ToolCallEntry {
    /// `running` until the sandbox answers, then `ok` or `failed`; `stopped` if the run ended
    /// first.
    pub fn state(&self) -> &'static str {
        match (self.success, self.stopped) {
            (Some(true), _) => "ok",
            (Some(false), _) => "failed",
            (None, true) => "stopped",
            (None, false) => "running",
        }
    }
}

/// One line of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Task(String),
    Assistant(String),
    ToolCall(ToolCallEntry),
    /// User input the page steered the run with, once the server accepted it.
    Steer(String),
}

impl Entry {
    /// The entry an output item opens, if it is one the conversation shows.
    pub(crate) fn from_item(item: &Item) -> Option<Entry> {
        match item {
            Item::Message(message) => Some(Entry::Assistant(message.content.text())),
            Item::FunctionCall(call) => Some(Entry::ToolCall(ToolCallEntry {
                call_id: call.call_id.clone(),
                name: call.name.clone(),
                kind: CallKind::Function,
                arguments: call.arguments.clone(),
                output: None,
                success: None,
                changes: Vec::new(),
                tool_ms: None,
                stopped: false,
            })),
            Item::CustomToolCall(call) => Some(Entry::ToolCall(ToolCallEntry {
                call_id: call.call_id.clone(),
                name: call.name.clone(),
                kind: CallKind::Custom,
                arguments: call.input.clone(),
                output: None,
                success: None,
                changes: Vec::new(),
                tool_ms: None,
                stopped: false,
            })),
            _ => None,
        }
    }

    /// Appends a streamed delta (text or arguments).
    pub(crate) fn push_delta(&mut self, delta: &str) {
        match self {
            Entry::Task(text) | Entry::Assistant(text) | Entry::Steer(text) => text.push_str(delta),
            Entry::ToolCall(call) => call.arguments.push_str(delta),
        }
    }
}

/// The whole observable state of an agent run. Cloned once per animation frame while a run
/// streams, so what only grows is shared rather than copied: the frame and change logs (every
/// clone sees the same log) and the file tree (replaced, never changed, after a tool call).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentRun {
    pub status: RunStatus,
    pub entries: Vec<Entry>,
    pub turns: Vec<TurnRecord>,
    pub error: Option<String>,
    /// Every frame sent and received, in order.
    pub frames: FrameLog,
    /// The sandbox's files after the latest tool call.
    pub files: Arc<FileSnapshot>,
    /// Every file a tool call changed, with its diff, in order.
    pub changes: ChangeLog,
    /// Every steer sent during the run and what became of it.
    pub steers: Vec<SteerRecord>,
}

impl AgentRun {
    /// The final assistant text of the run (the last assistant entry).
    pub fn answer(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| match e {
            Entry::Assistant(text) => Some(text.as_str()),
            _ => None,
        })
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCallEntry> {
        self.entries.iter().filter_map(|e| match e {
            Entry::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// The tool calls that ran or are running: a call the run was stopped before is not one.
    pub fn tool_call_count(&self) -> usize {
        self.tool_calls().filter(|call| !call.stopped).count()
    }

    /// Marks every call that has not run as stopped: the run ended before it.
    pub(crate) fn stop_pending_calls(&mut self) {
        for entry in &mut self.entries {
            if let Entry::ToolCall(call) = entry
                && call.output.is_none()
            {
                call.stopped = true;
            }
        }
    }

    /// How many turns had to be resent after a dropped connection.
    pub fn resumed_turns(&self) -> usize {
        self.turns.iter().filter(|t| t.resumed.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_faster_than_the_clock_still_ran() {
        let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        assert_eq!(turn.tools_ms(), None, "no tool ran");
        turn.tool_runs = 1;
        assert_eq!(
            turn.tools_ms(),
            Some(0.0),
            "one ran in less than the clock's tick"
        );
    }
}
