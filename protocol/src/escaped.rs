//! A response's instructions escaped once for the events that echo them.
//!
//! Three events of every turn carry the whole response (`response.created`, `in_progress`,
//! `completed`), instructions included — often the largest part of the event, and the same from
//! turn to turn of a conversation. While [`ServerEvent::to_json`](crate::events::ServerEvent)
//! encodes an event, instructions of at least [`SHORTEST_KEPT`] bytes are written from their
//! JSON kept from an earlier event on this thread (the last [`KEPT`] texts), not escaped byte by
//! byte again. The text written is the same: the JSON kept is serde_json's own encoding of the
//! same string.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use serde::Serializer;
use serde::ser::{Error, Serialize};
use serde_json::value::RawValue;

/// How many instructions' JSON a thread keeps (most recently used first).
pub const KEPT: usize = 4;
/// Shorter instructions are escaped each time: keeping them would save nothing.
pub const SHORTEST_KEPT: usize = 512;
/// Longer instructions are escaped each time rather than kept.
pub const LONGEST_KEPT: usize = 1 << 20;

thread_local! {
    /// Whether an event is being encoded by `to_json` on this thread now.
    static ENCODING: Cell<bool> = const { Cell::new(false) };
    /// Instructions and their JSON, most recently used first.
    static JSON: RefCell<Vec<(Arc<str>, Box<RawValue>)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `encode` (one event to JSON text) with instructions written from kept JSON.
pub(crate) fn encoding<T>(encode: impl FnOnce() -> T) -> T {
    /// Ends the encoding even if `encode` panics.
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            ENCODING.set(false);
        }
    }
    ENCODING.set(true);
    let _done = Done;
    encode()
}

/// `Response::instructions`' serializer: its kept JSON while `to_json` encodes, else the string.
pub(crate) fn instructions<S: Serializer>(
    value: &Option<Arc<str>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let text = match value {
        Some(text) if ENCODING.get() && (SHORTEST_KEPT..=LONGEST_KEPT).contains(&text.len()) => {
            text
        }
        _ => return value.serialize(serializer),
    };
    JSON.with_borrow_mut(|kept| {
        // The same instructions are most often the very same text, shared by the request and
        // the events of its response: `Arc`'s equality compares the pointers first.
        match kept.iter().position(|(kept, _)| kept == text) {
            Some(index) => kept[..=index].rotate_right(1),
            None => {
                let json = serde_json::value::to_raw_value(&**text).map_err(S::Error::custom)?;
                kept.truncate(KEPT - 1);
                kept.insert(0, (text.clone(), json));
            }
        }
        serializer.serialize_some(&kept[0].1)
    })
}

/// How many instructions this thread keeps the JSON of.
#[cfg(test)]
fn kept_on_this_thread() -> usize {
    JSON.with_borrow(Vec::len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{ServerEvent, StreamEvent};
    use crate::request::ResponseCreate;
    use crate::response::Response;

    fn event(instructions: &str) -> ServerEvent {
        let mut request = ResponseCreate::new("m", "hi");
        request.instructions = Some(instructions.into());
        ServerEvent {
            event: StreamEvent::Created {
                response: Response::in_progress("resp_1", 1, &request),
            },
            sequence_number: Some(0),
            stream_id: None,
            tether_timing: None,
        }
    }

    #[test]
    fn kept_json_writes_the_same_text_as_escaping_again() {
        // Quotes, backslashes, control characters, non-ASCII, at and around the lengths kept.
        let pieces = [
            "plain ",
            "\"quoted\" ",
            "back\\slash ",
            "tab\tnew\nline\u{1} ",
            "é✓🙂 ",
        ];
        let texts: Vec<String> = (0..12)
            .map(|i| {
                let piece = pieces[i % pieces.len()];
                let len = [SHORTEST_KEPT - 1, SHORTEST_KEPT, 3000][i % 3];
                let mut text = format!("{i}: ");
                while text.len() < len {
                    text.push_str(piece);
                }
                text
            })
            .collect();
        // Every text twice (kept, then from what was kept) and round again once evicted.
        for text in texts.iter().chain(&texts).chain(texts.iter().rev()) {
            for _ in 0..2 {
                let event = event(text);
                let expected = serde_json::to_string(&event).unwrap();
                assert_eq!(event.to_json(), expected, "{} bytes", text.len());
                let back: ServerEvent = serde_json::from_str(&event.to_json()).unwrap();
                assert_eq!(back, event);
            }
        }
        assert!(kept_on_this_thread() <= KEPT);
    }

    #[test]
    fn only_long_instructions_while_encoding_are_kept() {
        let long = "x".repeat(SHORTEST_KEPT);
        std::thread::spawn(move || {
            serde_json::to_string(&event(&long)).unwrap();
            assert_eq!(kept_on_this_thread(), 0, "not while encoding with to_json");
            event("short").to_json();
            assert_eq!(kept_on_this_thread(), 0, "too short to keep");
            event(&long).to_json();
            event(&long).to_json();
            assert_eq!(kept_on_this_thread(), 1, "kept once");
        })
        .join()
        .unwrap();
    }
}
