//! What a model emits while it generates: the events of its output items in stream order, and
//! the text they carry cut at token boundaries.

use std::pin::Pin;
use std::time::Duration;

use futures_util::Stream;
use tether_protocol::ApiError;

/// A stream of model events.
pub type ModelStream = Pin<Box<dyn Stream<Item = ModelEvent> + Send>>;

/// How a request was admitted: after how long in the queue, on which replica, and what the
/// engine's prompt cache supplied and kept of its prompt.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Admission {
    pub queue_time: Duration,
    /// The engine replica serving it (0 with one replica).
    pub replica: usize,
    pub cache: PromptCacheUse,
}

/// The prompt cache's part in one request: tokens read from it, tokens written to it (by
/// retention when the request chose breakpoints), and the diagnostics a request asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptCacheUse {
    pub cached_tokens: u64,
    pub written_tokens: u64,
    /// `(ttl_30m_tokens, ttl_12h_tokens)`, when the request used breakpoints.
    pub written_by_ttl: Option<(u64, u64)>,
    /// `prompt_cache_diagnostics`, when `prompt_cache_options.comparison_response_id` asked.
    pub diagnostics: Option<serde_json::Value>,
}

/// One step of generation, in stream order.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// The request got a decoding slot; prefill starts.
    Started(Admission),
    /// A reasoning item; its summary streams as [`ModelEvent::ReasoningDelta`]s.
    BeginReasoning,
    ReasoningDelta(Delta),
    BeginMessage,
    TextDelta(Delta),
    /// A function tool call; `namespace` names the namespace tool it belongs to, if any;
    /// `call_id` is the id the engine gave the call (kept on the wire), `None` to have the API
    /// mint one.
    BeginFunctionCall {
        name: String,
        namespace: Option<String>,
        call_id: Option<String>,
    },
    /// A custom (freeform) tool call.
    BeginCustomToolCall {
        name: String,
        call_id: Option<String>,
    },
    /// A piece of the open call's arguments (function) or input (custom).
    ArgumentsDelta(Delta),
    EndItem,
    /// The engine stopped at the output limit it was given (`max_output_tokens`): the response
    /// ends `incomplete`. Only [`ModelEvent::Usage`] may follow.
    CutShort,
    /// What the engine itself counted for this call (a real engine reports it as its stream
    /// ends): it replaces the API's own count of the prompt and the output in `usage`.
    Usage(EngineUsage),
    /// The response fails: `error` (with `status` on WebSocket) then `response.failed`. Nothing
    /// follows.
    Fail {
        status: u16,
        error: ApiError,
    },
}

/// An engine's own count of one call, in its tokenizer's tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EngineUsage {
    pub input_tokens: u64,
    /// Prompt tokens its prefix cache supplied (`cached_tokens`).
    pub cached_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_tokens: u64,
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
