//! One server event as it arrived — a WebSocket text frame, or an SSE event's `data` — kept as
//! its text and decoded only when asked.
//!
//! Most of a streamed response is deltas, and most callers look at them only to count them or
//! to notice the first token. So a [`Frame`] answers its `type` without decoding the rest (the
//! server writes `type` first, so a prefix match almost always answers; anything else falls
//! back to a partial decode), and [`Frame::decode`] gives the typed [`ServerEvent`] —
//! `tether-protocol`'s one definition of every event — when the caller wants it. A turn read to
//! its end decodes only its terminal event ([`crate::TurnReader`]), so a client's work per turn
//! stays small and constant.

use std::borrow::Cow;

use serde::Deserialize;
use tether_protocol::ServerEvent;
use tether_protocol::sse::SseMessage;

use crate::error::Error;

/// A frame's text. Natively tungstenite's own shared buffer, so that a frame is never copied:
/// a response's `created`, `in_progress` and `completed` events each carry the whole response,
/// instructions and tools included, and copying them was most of a client's cost per turn
/// (the `turn_cost` bench counts it). In a browser, the string the page's `WebSocket` gave.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type Text = tokio_tungstenite::tungstenite::Utf8Bytes;
#[cfg(target_arch = "wasm32")]
pub(crate) type Text = String;

/// A server event, undecoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    text: Text,
    /// The SSE `event:` field, when the event arrived over SSE with one.
    sse_event: Option<String>,
}

impl Frame {
    /// A frame of `text` (a WebSocket text frame, or JSON a test made).
    pub fn new(text: impl Into<String>) -> Frame {
        Frame::of(Text::from(text.into()))
    }

    pub(crate) fn of(text: Text) -> Frame {
        Frame {
            text,
            sse_event: None,
        }
    }

    pub(crate) fn from_sse(message: SseMessage) -> Frame {
        Frame {
            text: Text::from(message.data),
            sse_event: message.event,
        }
    }

    /// The JSON text, as it arrived.
    pub fn text(&self) -> &str {
        self.text.as_str()
    }

    /// The JSON text as a `String` of its own.
    pub fn into_text(self) -> String {
        #[cfg(not(target_arch = "wasm32"))]
        return self.text.as_str().to_owned();
        #[cfg(target_arch = "wasm32")]
        return self.text;
    }

    /// The event's type (`response.output_text.delta`, …): the SSE `event:` name when there is
    /// one, else the JSON's `type`; empty when the text has none.
    pub fn kind(&self) -> Cow<'_, str> {
        match &self.sse_event {
            Some(name) => Cow::Borrowed(name),
            None => event_type(self.text()),
        }
    }

    /// The typed event, by the protocol's decoder ([`ServerEvent::from_json`]: a delta
    /// straight from its text).
    pub fn decode(&self) -> Result<ServerEvent, Error> {
        ServerEvent::from_json(self.text()).map_err(|error| {
            Error::Protocol(format!(
                "an event that does not decode ({error}): {}",
                preview(self.text())
            ))
        })
    }

    /// The lane (`stream_id`) the event belongs to; `None` for the default lane.
    pub fn lane(&self) -> Option<String> {
        #[derive(Deserialize)]
        struct LaneOnly<'a> {
            #[serde(borrow, default)]
            stream_id: Option<Cow<'a, str>>,
        }
        serde_json::from_str::<LaneOnly>(self.text())
            .ok()
            .and_then(|lane| lane.stream_id)
            .map(Cow::into_owned)
    }

    /// Whether the event carries generated tokens: a text, tool-arguments, custom tool input or
    /// reasoning summary delta (the first one is a response's time to first token).
    pub fn carries_tokens(&self) -> bool {
        matches!(
            &*self.kind(),
            "response.output_text.delta"
                | "response.function_call_arguments.delta"
                | "response.custom_tool_call_input.delta"
                | "response.reasoning_summary_text.delta"
        )
    }

    /// Whether the event ends a response for the request that started it: `completed`,
    /// `failed`, `incomplete`, or v1's pause `response.done`.
    pub fn is_terminal(&self) -> bool {
        is_terminal(&self.kind())
    }
}

pub(crate) fn is_terminal(kind: &str) -> bool {
    matches!(
        kind,
        "response.completed" | "response.failed" | "response.incomplete" | "response.done"
    )
}

/// The top-level `type` of an event's JSON text, without decoding the rest.
fn event_type(text: &str) -> Cow<'_, str> {
    if let Some(rest) = text.strip_prefix(r#"{"type":""#)
        && let Some(end) = rest.find('"')
        && !rest[..end].contains('\\')
    {
        return Cow::Borrowed(&rest[..end]);
    }
    #[derive(Deserialize)]
    struct TypeOnly<'a> {
        #[serde(borrow, rename = "type")]
        kind: Cow<'a, str>,
    }
    match serde_json::from_str::<TypeOnly>(text) {
        Ok(TypeOnly { kind }) => kind,
        Err(_) => Cow::Borrowed(""),
    }
}

/// The start of `text`, for an error message.
pub(crate) fn preview(text: &str) -> String {
    const SHOWN: usize = 200;
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::StreamEvent;

    #[test]
    fn the_type_comes_from_the_prefix_or_the_json() {
        let delta = Frame::new(r#"{"type":"response.output_text.delta","delta":"x"}"#);
        assert_eq!(delta.kind(), "response.output_text.delta");
        assert!(delta.carries_tokens());
        assert!(!delta.is_terminal());
        let later = Frame::new(r#"{"sequence_number":1, "type":"response.completed"}"#);
        assert_eq!(later.kind(), "response.completed");
        assert!(later.is_terminal());
        let escaped = Frame::new(r#"{"type":"a\u002eb"}"#);
        assert_eq!(escaped.kind(), "a.b");
        assert_eq!(Frame::new("not json").kind(), "");
    }

    #[test]
    fn an_sse_event_name_is_its_type() {
        let frame = Frame::from_sse(SseMessage {
            event: Some("response.done".into()),
            data: "{}".into(),
        });
        assert_eq!(frame.kind(), "response.done");
        assert!(frame.is_terminal());
        assert_eq!(frame.text(), "{}");
    }

    #[test]
    fn the_lane_is_the_top_level_stream_id_only() {
        let on_lane = Frame::new(
            r#"{"type":"response.created","response":{"metadata":{"stream_id":"no"}},"sequence_number":0,"stream_id":"b"}"#,
        );
        assert_eq!(on_lane.lane().as_deref(), Some("b"));
        let default =
            Frame::new(r#"{"type":"response.created","response":{"metadata":{"stream_id":"no"}}}"#);
        assert_eq!(default.lane(), None);
    }

    #[test]
    fn decoding_gives_the_protocols_event_or_names_the_frame() {
        let event = Frame::new(
            r#"{"type":"response.inject.created","response_id":"resp_1","sequence_number":4}"#,
        )
        .decode()
        .unwrap();
        assert_eq!(event.sequence_number, Some(4));
        assert!(
            matches!(event.event, StreamEvent::InjectCreated { response_id } if response_id == "resp_1")
        );
        let bad = Frame::new(r#"{"type":"response.output_text.delta","delta":7}"#)
            .decode()
            .unwrap_err()
            .to_string();
        assert!(bad.starts_with("an event that does not decode"), "{bad}");
        assert!(bad.contains("\"delta\":7"), "{bad}");
        let long = "x".repeat(1000);
        assert_eq!(preview(&long).chars().count(), 201);
    }
}
