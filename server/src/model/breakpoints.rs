//! Where a prompt may be cached at a breakpoint (`prompt_cache_options`): the end of an
//! *eligible* input item — a message from the user, the developer or the system, or a tool's
//! output — and the end of an item carrying an explicit `prompt_cache_breakpoint` marker (on a
//! content part; Tether renders a message as one block, so the marker marks the end of its
//! item). Recorded as the prompt is rendered, item by item, so an engine finds the latest
//! breakpoints without reading the conversation again.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tether_protocol::{ContentPart, Item, MessageContent, Role};

/// The lifetimes an explicit marker asks for.
pub const TTL_30M: Duration = Duration::from_secs(30 * 60);
pub const TTL_12H: Duration = Duration::from_secs(12 * 60 * 60);

/// One place a breakpoint may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// Where the item's block ends, as an offset in the prompt's item tokens.
    pub end: u32,
    /// The lifetime its explicit marker asks for, if it carries one.
    pub explicit: Option<Duration>,
}

/// A prompt's breakpoint candidates, oldest first; extended in place while unshared.
#[derive(Debug, Clone, Default)]
pub struct Breakpoints {
    /// Every eligible or explicitly marked item's end.
    pub marks: Arc<Vec<Mark>>,
    /// Which of `marks` carry an explicit marker (indices into `marks`).
    pub explicit: Arc<Vec<u32>>,
}

impl Breakpoints {
    /// Notes `item`, whose block ends at `end`, if it may hold a breakpoint.
    pub fn push(&mut self, item: &Item, end: u32) {
        let explicit = explicit_marker(item);
        if explicit.is_none() && !eligible(item) {
            return;
        }
        let marks = Arc::make_mut(&mut self.marks);
        if explicit.is_some() {
            Arc::make_mut(&mut self.explicit).push(marks.len() as u32);
        }
        marks.push(Mark { end, explicit });
    }

    /// The candidates of the prompt's first `items_tokens` item tokens (a shorter prompt of
    /// the same conversation).
    pub fn prefix(&self, items_tokens: u32) -> Breakpoints {
        let kept = self.marks.partition_point(|mark| mark.end <= items_tokens);
        Breakpoints {
            marks: Arc::new(self.marks[..kept].to_vec()),
            explicit: Arc::new(
                self.explicit
                    .iter()
                    .copied()
                    .filter(|index| (*index as usize) < kept)
                    .collect(),
            ),
        }
    }
}

/// Whether an input item ends a breakpoint-eligible stretch: a message from the user, the
/// developer or the system, or a tool's output.
fn eligible(item: &Item) -> bool {
    match item {
        Item::Message(message) => message.role != Role::Assistant,
        Item::FunctionCallOutput(_) | Item::CustomToolCallOutput(_) => true,
        _ => false,
    }
}

/// The lifetime an explicit marker on `item` asks for, if it carries one.
fn explicit_marker(item: &Item) -> Option<Duration> {
    let Item::Message(message) = item else {
        return None;
    };
    let MessageContent::Parts(parts) = &message.content else {
        return None;
    };
    parts.iter().rev().find_map(|part| match part {
        ContentPart::InputText {
            prompt_cache_breakpoint: Some(marker),
            ..
        } => Some(ttl_of(marker.get("ttl"))),
        ContentPart::Other(value) => value
            .get("prompt_cache_breakpoint")
            .map(|marker| ttl_of(marker.get("ttl"))),
        _ => None,
    })
}

/// A breakpoint's `ttl` (`"30m"`, the default, or `"12h"`).
pub fn ttl_of(value: Option<&Value>) -> Duration {
    match value.and_then(Value::as_str) {
        Some("12h") => TTL_12H,
        _ => TTL_30M,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_eligible_and_explicit_items_only() {
        let marked: Item = serde_json::from_value(serde_json::json!({"type": "message",
            "role": "user", "content": [{"type": "input_text", "text": "x",
            "prompt_cache_breakpoint": {"mode": "explicit", "ttl": "12h"}}]}))
        .unwrap();
        let mut breakpoints = Breakpoints::default();
        breakpoints.push(&Item::user_text("a"), 10);
        breakpoints.push(
            &Item::assistant_text("m", "b", tether_protocol::ItemStatus::Completed),
            20,
        );
        breakpoints.push(&marked, 30);
        assert_eq!(
            *breakpoints.marks,
            [
                Mark {
                    end: 10,
                    explicit: None
                },
                Mark {
                    end: 30,
                    explicit: Some(TTL_12H)
                }
            ]
        );
        assert_eq!(*breakpoints.explicit, [1]);
        let shorter = breakpoints.prefix(25);
        assert_eq!(shorter.marks.len(), 1);
        assert!(shorter.explicit.is_empty());
    }
}
