//! The tokenizing stream: a generator's [`Output`]s turned into model events as they are
//! consumed — each item opens, streams its text a token at a time, and closes; a failure ends the
//! stream (the item it interrupts stays open). The text is tokenized one pre-tokenized word at a
//! time as the stream goes, so a long answer's tokenization is spread over its decoding instead
//! of added to its time to first token (the tokens are the same as a whole-text tokenization:
//! see `crate::tokenizer`).

use std::collections::VecDeque;

use super::output::Output;
use crate::model::{Delta, ModelEvent};
use crate::tokenizer;

/// The events of a response's outputs, produced as they are consumed.
pub struct Events {
    outputs: std::vec::IntoIter<Output>,
    ready: VecDeque<ModelEvent>,
    streaming: Option<Streaming>,
}

/// The item whose text is streaming.
struct Streaming {
    text: String,
    /// Byte offset of the next word.
    at: usize,
    delta: fn(Delta) -> ModelEvent,
    /// Whether the item closes (not when a mid-stream failure interrupts it).
    closes: bool,
}

impl Events {
    pub fn new(outputs: Vec<Output>) -> Self {
        Events {
            outputs: outputs.into_iter(),
            ready: VecDeque::new(),
            streaming: None,
        }
    }

    /// The next event, without consuming it.
    pub fn front(&mut self) -> Option<&ModelEvent> {
        self.fill();
        self.ready.front()
    }

    pub fn pop_front(&mut self) -> Option<ModelEvent> {
        self.fill();
        self.ready.pop_front()
    }

    /// Makes at least one event ready, unless the stream is over.
    fn fill(&mut self) {
        while self.ready.is_empty() {
            if let Some(item) = &mut self.streaming {
                match tokenizer::first_word(&item.text[item.at..]) {
                    Some(word) => {
                        let delta = item.delta;
                        self.ready.extend(
                            tokenizer::word_pieces(word)
                                .into_iter()
                                .map(|(piece, n)| delta(Delta::new(piece, n))),
                        );
                        item.at += word.len();
                    }
                    None => {
                        if item.closes {
                            self.ready.push_back(ModelEvent::EndItem);
                        }
                        self.streaming = None;
                    }
                }
                continue;
            }
            let Some(output) = self.outputs.next() else {
                return;
            };
            let (begin, text, delta): (_, _, fn(Delta) -> ModelEvent) = match output {
                Output::Reasoning(text) => {
                    (ModelEvent::BeginReasoning, text, ModelEvent::ReasoningDelta)
                }
                Output::Message(text) => (ModelEvent::BeginMessage, text, ModelEvent::TextDelta),
                Output::Call(call) => (call.begin, call.input, ModelEvent::ArgumentsDelta),
                Output::Fail(kind) => {
                    let (status, error) = kind.error();
                    self.ready.push_back(ModelEvent::Fail { status, error });
                    // Nothing follows a failure.
                    self.outputs = Vec::new().into_iter();
                    return;
                }
            };
            self.ready.push_back(begin);
            let closes = !matches!(
                self.outputs.as_slice().first(),
                Some(Output::Fail(kind)) if kind.is_mid_stream()
            );
            self.streaming = Some(Streaming {
                text,
                at: 0,
                delta,
                closes,
            });
        }
    }
}
