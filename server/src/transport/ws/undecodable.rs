//! What the reader takes from a text frame that did not decode as a client frame: its type (a
//! malformed `response.steer` or `response.inject` is answered its own way), the lane it names
//! and, for a steer, the response it targets and the input to hand back. The text is read once,
//! as JSON, for all of them; a text that is not a JSON object names nothing.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::lanes::valid_stream_id;

/// The fields of an undecodable frame the reader answers by. A field that is absent, or not a
/// string where a string is read, is `None`; every other key is skipped unread.
#[derive(Debug, Default, PartialEq)]
pub struct Undecodable<'a> {
    /// `type`.
    pub kind: Option<Cow<'a, str>>,
    /// `stream_id`, as sent (valid or not).
    pub stream_id: Option<Cow<'a, str>>,
    /// `previous_response_id` (a steer's target).
    pub previous_response_id: Option<Cow<'a, str>>,
    /// `input`, whatever it is.
    pub input: Option<Value>,
}

impl<'a> Undecodable<'a> {
    /// Reads `text` once; a text that is not a JSON object gives no fields at all.
    pub fn read(text: &'a str) -> Self {
        serde_json::from_str(text).unwrap_or_default()
    }

    /// The frame's `type`, when it names one.
    pub fn frame_type(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    /// The lane the frame names, when its `stream_id` is a valid one (an invalid name is not
    /// echoed back).
    pub fn lane(&self) -> Option<String> {
        let id = self.stream_id.as_deref()?;
        valid_stream_id(id).then(|| id.to_string())
    }
}

/// A JSON object's fields by hand rather than derived: a derived struct would also read a JSON
/// array (its elements taken as the fields in order) and refuse a repeated key, where the frame
/// is an object and its last value of a key is the one that counts.
impl<'de> Deserialize<'de> for Undecodable<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(Fields)
    }
}

struct Fields;

impl<'de> Visitor<'de> for Fields {
    type Value = Undecodable<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut frame = Undecodable::default();
        while let Some(key) = map.next_key::<Text>()? {
            let field = match key.text().as_deref() {
                Some("type") => &mut frame.kind,
                Some("stream_id") => &mut frame.stream_id,
                Some("previous_response_id") => &mut frame.previous_response_id,
                Some("input") => {
                    frame.input = Some(map.next_value()?);
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *field = map.next_value::<Text>()?.text();
        }
        Ok(frame)
    }
}

/// A value read where a string is wanted: the string (borrowed from the frame when it has no
/// escapes), or anything else — a number or an object there does not make the frame unreadable.
#[derive(Deserialize)]
#[serde(untagged)]
enum Text<'a> {
    String(#[serde(borrow)] Cow<'a, str>),
    Other(IgnoredAny),
}

impl<'a> Text<'a> {
    fn text(self) -> Option<Cow<'a, str>> {
        match self {
            Text::String(text) => Some(text),
            Text::Other(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_frame_is_read_once_for_its_type_lane_target_and_input() {
        let text = json!({"type": "response.steer", "previous_response_id": "resp_1",
            "input": [{"role": "user"}], "stream_id": "L1", "extra": {"deep": [1, 2]}})
        .to_string();
        let frame = Undecodable::read(&text);
        assert_eq!(frame.frame_type(), Some("response.steer"));
        assert_eq!(frame.lane().as_deref(), Some("L1"));
        assert_eq!(frame.previous_response_id.as_deref(), Some("resp_1"));
        assert_eq!(frame.input, Some(json!([{"role": "user"}])));
        // Strings without escapes are borrowed from the frame.
        assert!(matches!(frame.kind, Some(Cow::Borrowed(_))));
        let escaped = Undecodable::read(r#"{"type": "response.st\u0065er"}"#);
        assert_eq!(escaped.frame_type(), Some("response.steer"));
    }

    #[test]
    fn a_field_of_another_kind_names_nothing_but_spoils_no_other() {
        let frame = Undecodable::read(r#"{"type": 5, "stream_id": "L1", "input": null}"#);
        assert_eq!(frame.frame_type(), None);
        assert_eq!(frame.lane().as_deref(), Some("L1"));
        assert_eq!(frame.input, Some(Value::Null));
        let frame = Undecodable::read(r#"{"type": "x", "stream_id": {"a": [1]}}"#);
        assert_eq!(frame.frame_type(), Some("x"));
        assert_eq!(frame.lane(), None);
        // An invalid lane name is kept but not taken as a lane.
        let frame = Undecodable::read(r#"{"stream_id": "bad id"}"#);
        assert_eq!(frame.stream_id.as_deref(), Some("bad id"));
        assert_eq!(frame.lane(), None);
    }

    #[test]
    fn only_a_json_object_has_fields() {
        for text in [
            "",
            "not json",
            r#"["response.steer", "L1"]"#,
            r#""response.steer""#,
            r#"{"type": "response.steer""#,
            r#"{"type": "response.steer"} trailing"#,
        ] {
            assert_eq!(Undecodable::read(text), Undecodable::default(), "{text}");
        }
        // The last of a repeated key counts, as in a `serde_json::Value`.
        let frame = Undecodable::read(r#"{"type": "a", "type": "response.inject"}"#);
        assert_eq!(frame.frame_type(), Some("response.inject"));
    }
}
