//! What a model emits while it generates: the events of its output items in stream order, and
//! the text they carry cut at token boundaries.

use std::pin::Pin;
use std::time::Duration;

use futures_util::Stream;
use tether_protocol::ApiError;

/// A stream of model events.
pub type ModelStream = Pin<Box<dyn Stream<Item = ModelEvent> + Send>>;

/// One step of generation, in stream order.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// The request got a decoding slot after waiting `queue_time` for one.
    Started {
        queue_time: Duration,
    },
    /// A reasoning item; its summary streams as [`ModelEvent::ReasoningDelta`]s.
    BeginReasoning,
    ReasoningDelta(Delta),
    BeginMessage,
    TextDelta(Delta),
    /// A function tool call; `namespace` names the namespace tool it belongs to, if any.
    BeginFunctionCall {
        name: String,
        namespace: Option<String>,
    },
    /// A custom (freeform) tool call.
    BeginCustomToolCall {
        name: String,
    },
    /// A piece of the open call's arguments (function) or input (custom).
    ArgumentsDelta(Delta),
    EndItem,
    /// The response fails: `error` (with `status` on WebSocket) then `response.failed`. Nothing
    /// follows.
    Fail {
        status: u16,
        error: ApiError,
    },
}

/// Decoded text: whole tokens, cut at a token boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delta {
    pub text: String,
    /// How many tokens `text` is (one, unless a character spans tokens or deltas were merged).
    pub tokens: usize,
}

impl Delta {
    /// One streamed piece of text: `tokens` tokens.
    pub fn new(text: impl Into<String>, tokens: usize) -> Self {
        Delta {
            text: text.into(),
            tokens,
        }
    }

    /// Appends the next piece of the same stream.
    pub fn push(&mut self, next: &Delta) {
        self.text.push_str(&next.text);
        self.tokens += next.tokens;
    }
}

impl ModelEvent {
    /// The tokens the event carries (each costs decoding time); 0 for structure events.
    pub fn tokens(&self) -> usize {
        match self {
            ModelEvent::TextDelta(d)
            | ModelEvent::ArgumentsDelta(d)
            | ModelEvent::ReasoningDelta(d) => d.tokens,
            _ => 0,
        }
    }

    /// Appends `next` to this delta when both stream text into the same item (one frame
    /// instead of two); false, and nothing changed, otherwise.
    pub fn absorb(&mut self, next: &ModelEvent) -> bool {
        match (self, next) {
            (ModelEvent::TextDelta(a), ModelEvent::TextDelta(b))
            | (ModelEvent::ArgumentsDelta(a), ModelEvent::ArgumentsDelta(b))
            | (ModelEvent::ReasoningDelta(a), ModelEvent::ReasoningDelta(b)) => {
                a.push(b);
                true
            }
            _ => false,
        }
    }
}
