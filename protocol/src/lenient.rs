//! Shared decoding helpers for the lenient parts of the wire format.
//!
//! Several unions on the wire are tagged by a `type` field whose set of values grows over time
//! (item types, tool types, content parts). Real clients send values we do not model — Codex
//! replays `web_search_call` items and offers `web_search` tools — and failing on them would break
//! the client, so unknown tags are kept verbatim. Known tags are decoded strictly, and a mistake
//! inside them reports the path of the bad field.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Outcome of [`decode_tagged`]: a known, typed value or the raw JSON of an unknown tag.
pub(crate) enum Tagged<K> {
    Known(K),
    Unknown(Value),
}

/// Decodes `value` as `K` when its `type` is one of `known`; otherwise returns it raw.
///
/// `default_tag` fills in a missing `type` (the AI SDK omits it on input messages).
pub(crate) fn decode_tagged<K: DeserializeOwned, E: serde::de::Error>(
    mut value: Value,
    known: &[&str],
    default_tag: Option<&str>,
) -> Result<Tagged<K>, E> {
    let Some(object) = value.as_object_mut() else {
        return Err(E::custom(format!(
            "expected an object, found {}",
            kind_of(&value)
        )));
    };
    let tag = match object.get("type") {
        Some(Value::String(tag)) => tag.clone(),
        Some(other) => {
            return Err(E::custom(format!(
                "type: expected a string, found {}",
                kind_of(other)
            )));
        }
        None => match default_tag {
            Some(tag) => {
                object.insert("type".into(), Value::String(tag.into()));
                tag.to_string()
            }
            None => return Err(E::missing_field("type")),
        },
    };
    if !known.contains(&tag.as_str()) {
        return Ok(Tagged::Unknown(value));
    }
    serde_path_to_error::deserialize(value)
        .map(Tagged::Known)
        .map_err(|err| {
            let path = err.path().to_string();
            if path == "." {
                E::custom(err.into_inner())
            } else {
                E::custom(format!("{path}: {}", err.into_inner()))
            }
        })
}

/// A short name for the JSON kind of `value`, for error messages.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Treats an explicit `null` like an absent field (clients send `"tools": null`).
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de> + Default,
{
    Ok(<Option<T> as serde::Deserialize>::deserialize(deserializer)?.unwrap_or_default())
}
