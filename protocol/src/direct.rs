//! A `response.create` frame decoded straight from its text into [`ResponseCreate`], without the
//! JSON tree the general path builds first: a continuation's frame is mostly its new input (a
//! tool output of thousands of tokens), its instructions and its tool list, and building every
//! string and map of them as a `Value` only to move them into the request again was most of
//! what decoding cost. One pass: the request's own decoding reads the text, and the top-level
//! keys (for `unknown_fields`) and `type` are noted on the way.
//!
//! Only a frame that decodes this way without error, whose `type` is `response.create`, takes
//! this path; any other frame, and every failure, goes the general way ([`crate::frames`]), so
//! errors, leniencies (a nested body, the connection's default model) and the fields listed
//! as unknown are that path's, by construction. Tested against it below and by the
//! `client_frame` fuzz target.

use std::fmt;

use serde::Deserialize;
use serde::de::value::StrDeserializer;
use serde::de::{DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};

use crate::request::ResponseCreate;

const CREATE: &str = "response.create";

/// `text` decoded as `response.create` if it is one and decodes cleanly; `None` sends it the
/// general way.
pub fn response_create(text: &str) -> Option<ResponseCreate> {
    let mut noted = Noted::default();
    let mut json = serde_json::Deserializer::from_str(text);
    let mut request = ResponseCreate::deserialize(Tap {
        inner: &mut json,
        noted: &mut noted,
    })
    .ok()?;
    json.end().ok()?;
    if noted.kind.as_deref() != Some(CREATE) {
        return None;
    }
    // As the general path lists them: its map's keys (sorted, each once), `type` being the
    // frame's.
    let mut keys = noted.keys;
    keys.sort_unstable();
    keys.dedup();
    keys.retain(|key| key != "type" && !ResponseCreate::FIELDS.contains(&key.as_str()));
    request.unknown_fields = keys;
    Some(request)
}

/// What the request's decoding passed on the way: its top-level keys and the last `type`.
#[derive(Default)]
struct Noted {
    keys: Vec<String>,
    kind: Option<String>,
}

/// A deserializer that reads a struct as the map it is, noting its keys and `type`.
struct Tap<'n, D> {
    inner: D,
    noted: &'n mut Noted,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Tap<'_, D> {
    type Error = D::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.inner.deserialize_map(TapVisitor {
            visitor,
            noted: self.noted,
        })
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

struct TapVisitor<'n, V> {
    visitor: V,
    noted: &'n mut Noted,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for TapVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(TapMap {
            inner: map,
            noted: self.noted,
            at_type: false,
        })
    }
}

struct TapMap<'n, A> {
    inner: A,
    noted: &'n mut Noted,
    /// The key just read was `type`.
    at_type: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for TapMap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(key) = self.inner.next_key::<String>()? else {
            return Ok(None);
        };
        let field = seed.deserialize(StrDeserializer::<A::Error>::new(&key))?;
        self.at_type = key == "type";
        self.noted.keys.push(key);
        Ok(Some(field))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        if !std::mem::take(&mut self.at_type) {
            return self.inner.next_value_seed(seed);
        }
        // The frame's `type` (not a field of the request): kept, and passed on as it was.
        // Another frame's stops here, to go the general way without reading the rest.
        let kind: String = self.inner.next_value()?;
        if kind != CREATE {
            return Err(serde::de::Error::custom("not a response.create frame"));
        }
        let value = seed.deserialize(kind.as_str().into_deserializer())?;
        self.noted.kind = Some(kind);
        Ok(value)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::{ClientFrame, decode_by_value, decode_client_frame_with};

    /// What the general path makes of `text`, as a request (the frame must be one).
    fn general(text: &str) -> ResponseCreate {
        match decode_by_value(text, None) {
            Ok(ClientFrame::ResponseCreate(request)) => *request,
            other => panic!("not a response.create: {other:?}"),
        }
    }

    #[test]
    fn a_request_decodes_as_the_general_path_decodes_it() {
        let frames = [
            r#"{"type":"response.create","model":"m","input":"hi"}"#,
            r#"{"model":"m","type":"response.create","input":[{"type":"function_call_output",
               "call_id":"c1","output":"line one\nline \"two\" \u00e9"}],
               "previous_response_id":"resp_1","store":false,"tools":[{"type":"function",
               "name":"shell","parameters":{"type":"object","properties":{"cmd":{"type":
               "string"}}},"strict":false}],"tool_choice":"auto","zeta":1,"alpha":[2],
               "response":{"model":"nested"},"temperature":1,"metadata":{"k":"v"}}"#,
            r#"{"type":"response.create","model":"m","input":null,"tools":null,
               "conversation":{"id":"conv_1"},"instructions":"be brief"}"#,
            // Escaped keys and type, a repeated unknown key, a repeated type.
            r#"{"type":"response.cr\u0065ate","mod\u0065l":"m","x":1,"x":2}"#,
            r#"{"type":"response.create","type":"response.create","model":"m"}"#,
        ];
        for text in frames {
            let direct = response_create(text).expect("a request");
            assert_eq!(direct, general(text), "{text}");
        }
        let listed = response_create(frames[1]).unwrap().unknown_fields;
        assert_eq!(
            listed,
            ["alpha", "response", "zeta"],
            "sorted, as the map was"
        );
        assert_eq!(response_create(frames[3]).unwrap().unknown_fields, ["x"]);
    }

    #[test]
    fn every_other_frame_goes_the_general_way() {
        for text in [
            // No model: the connection's default, or the nested body, is the general path's.
            r#"{"type":"response.create","response":{"model":"m","input":"hi"}}"#,
            r#"{"type":"response.create","input":"hi"}"#,
            // A repeated field: the general path keeps the last.
            r#"{"type":"response.create","model":"a","model":"b"}"#,
            // Another frame, or none; a repeated type whose first is another frame's (the
            // general path keeps the last).
            r#"{"type":"response.append","model":"m","input":[]}"#,
            r#"{"type":"response.append","type":"response.create","model":"m"}"#,
            r#"{"type":"response.create ","model":"m"}"#,
            r#"{"model":"m"}"#,
            r#"{"type":1,"model":"m"}"#,
            // Errors: the general path names the field.
            r#"{"type":"response.create","model":"m","store":"yes"}"#,
            r#"{"type":"response.create","model":7}"#,
            r#"{"type":"response.create","model":"m"} trailing"#,
            r#"["response.create","m"]"#,
            "",
        ] {
            assert!(response_create(text).is_none(), "{text}");
            assert_eq!(
                decode_client_frame_with(text, Some("default")),
                decode_by_value(text, Some("default")),
                "{text}"
            );
        }
        let repeated = r#"{"type":"response.create","model":"a","model":"b"}"#;
        assert_eq!(general(repeated).model, "b");
        let bad = r#"{"type":"response.create","model":"m","store":"yes"}"#;
        let error = decode_client_frame_with(bad, None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid value for 'store': invalid type: string \"yes\", expected a boolean"
        );
    }
}
