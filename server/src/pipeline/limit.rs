//! `max_output_tokens` (reasoning included): the output stops at that many tokens — a delta that
//! would pass the limit is cut at a token boundary — and the response ends `incomplete`.

use crate::model::{Delta, ModelEvent};
use crate::tokenizer;

/// A model event measured against `max_output_tokens`.
pub enum Within {
    /// It fits (or carries no tokens).
    Whole(ModelEvent),
    /// A delta cut to the tokens that still fit (at a token boundary); the output ends with it.
    Cut(ModelEvent),
    /// The limit was reached before it: the output ends.
    Nothing,
}

/// Measures `event` against `limit` tokens of output, `spent` of them already streamed: a delta
/// that does not fit is cut at a token boundary (nothing of it may fit), and once the limit is
/// reached a new item cannot begin; an item's end always passes, so an answer exactly as long as
/// the limit still completes.
pub fn within_limit(event: ModelEvent, spent: u64, limit: u64) -> Within {
    let left = limit.saturating_sub(spent);
    let (delta, rewrap): (Delta, fn(Delta) -> ModelEvent) = match event {
        ModelEvent::ReasoningDelta(d) => (d, ModelEvent::ReasoningDelta),
        ModelEvent::TextDelta(d) => (d, ModelEvent::TextDelta),
        ModelEvent::ArgumentsDelta(d) => (d, ModelEvent::ArgumentsDelta),
        ModelEvent::BeginReasoning
        | ModelEvent::BeginMessage
        | ModelEvent::BeginFunctionCall { .. }
        | ModelEvent::BeginCustomToolCall { .. }
            if left == 0 =>
        {
            return Within::Nothing;
        }
        other => return Within::Whole(other),
    };
    if delta.tokens as u64 <= left {
        return Within::Whole(rewrap(delta));
    }
    // Whole pieces (a piece is the fewest tokens that make whole characters) while they fit.
    let mut text = String::new();
    let mut tokens = 0usize;
    for (piece, n) in tokenizer::pieces(&delta.text) {
        if (tokens + n) as u64 > left {
            break;
        }
        text.push_str(piece);
        tokens += n;
    }
    if tokens == 0 {
        Within::Nothing
    } else {
        Within::Cut(rewrap(Delta::new(text, tokens)))
    }
}
