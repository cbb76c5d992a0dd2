//! What both dialects' stream readers share: the [`Decoder`] each implements (one SSE message's
//! data in, model events out) and the [`Emitter`] that opens and closes output items as text,
//! reasoning and tool calls arrive, so an item always begins before its deltas and ends before
//! the next one begins.

use crate::model::{Delta, ModelEvent};
use crate::tokenizer;

use super::failure::UpstreamError;

/// Reads one upstream stream, message by message.
pub trait Decoder: Send {
    /// The events of one SSE message's `data` (the event name, when the upstream gives one).
    fn data(&mut self, event: Option<&str>, data: &str) -> Result<Vec<ModelEvent>, UpstreamError>;

    /// The stream ended: the events that close it, or why it ended too soon.
    fn end(&mut self) -> Result<Vec<ModelEvent>, UpstreamError>;

    /// Whether the upstream has said the response is over (nothing more is needed).
    fn finished(&self) -> bool;

    /// Whether any output (a delta, an item) has come out yet.
    fn streamed(&self) -> bool;
}

/// Which item is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    None,
    Reasoning,
    Message,
    /// A tool call, by the upstream's key for it (its index or output position).
    Call(usize),
}

/// Opens and closes items around the deltas it is given.
#[derive(Debug)]
pub struct Emitter {
    open: Open,
    events: Vec<ModelEvent>,
    /// Whether anything was emitted since the stream began.
    any: bool,
}

impl Default for Emitter {
    fn default() -> Self {
        Emitter {
            open: Open::None,
            events: Vec::new(),
            any: false,
        }
    }
}

/// A streamed piece of text, with its length in `o200k_base` tokens (at least one): a real
/// engine's own count arrives with its usage at the end.
pub fn delta(text: &str) -> Delta {
    Delta::new(text, tokenizer::count(text).max(1))
}

impl Emitter {
    /// A piece of reasoning (opens a reasoning item if none is open).
    pub fn reasoning(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.open != Open::Reasoning {
            self.close();
            self.push(ModelEvent::BeginReasoning);
            self.open = Open::Reasoning;
        }
        self.push(ModelEvent::ReasoningDelta(delta(text)));
    }

    /// A piece of the answer (opens a message if none is open).
    pub fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.open != Open::Message {
            self.close();
            self.push(ModelEvent::BeginMessage);
            self.open = Open::Message;
        }
        self.push(ModelEvent::TextDelta(delta(text)));
    }

    /// Opens the tool call the upstream knows as `key`, closing what was open.
    pub fn begin_call(&mut self, key: usize, begin: ModelEvent) {
        self.close();
        self.push(begin);
        self.open = Open::Call(key);
    }

    /// Opens an item of another kind than those above (the Responses dialect names each).
    pub fn begin(&mut self, begin: ModelEvent) {
        self.close();
        self.open = match &begin {
            ModelEvent::BeginReasoning => Open::Reasoning,
            ModelEvent::BeginMessage => Open::Message,
            _ => Open::Call(usize::MAX),
        };
        self.push(begin);
    }

    /// The call open now, by its key.
    pub fn open_call(&self) -> Option<usize> {
        match self.open {
            Open::Call(key) => Some(key),
            _ => None,
        }
    }

    /// Whether an item is open.
    pub fn is_open(&self) -> bool {
        self.open != Open::None
    }

    /// A piece of the open call's arguments.
    pub fn arguments(&mut self, text: &str) {
        if !text.is_empty() {
            self.push(ModelEvent::ArgumentsDelta(delta(text)));
        }
    }

    /// Closes the open item, if any.
    pub fn close(&mut self) {
        if self.open != Open::None {
            self.push(ModelEvent::EndItem);
            self.open = Open::None;
        }
    }

    /// An event that is not an item's (usage, the output limit).
    pub fn push(&mut self, event: ModelEvent) {
        self.any = true;
        self.events.push(event);
    }

    /// The events made since the last call.
    pub fn take(&mut self) -> Vec<ModelEvent> {
        std::mem::take(&mut self.events)
    }

    /// Whether anything was emitted.
    pub fn any(&self) -> bool {
        self.any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_open_before_their_deltas_and_close_before_the_next() {
        let mut out = Emitter::default();
        out.reasoning("thinking");
        out.text("");
        out.text("Hello");
        out.text(" world");
        out.begin_call(
            0,
            ModelEvent::BeginFunctionCall {
                name: "f".into(),
                namespace: None,
                call_id: Some("call_1".into()),
            },
        );
        out.arguments("{}");
        out.close();
        out.close();
        let kinds: Vec<&str> = out
            .take()
            .iter()
            .map(|e| match e {
                ModelEvent::BeginReasoning => "begin_reasoning",
                ModelEvent::ReasoningDelta(_) => "reasoning",
                ModelEvent::BeginMessage => "begin_message",
                ModelEvent::TextDelta(_) => "text",
                ModelEvent::BeginFunctionCall { .. } => "begin_call",
                ModelEvent::ArgumentsDelta(_) => "arguments",
                ModelEvent::EndItem => "end",
                _ => "other",
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "begin_reasoning",
                "reasoning",
                "end",
                "begin_message",
                "text",
                "text",
                "end",
                "begin_call",
                "arguments",
                "end"
            ]
        );
        assert!(out.take().is_empty());
    }
}
