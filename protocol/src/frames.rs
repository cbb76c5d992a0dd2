//! Client → server WebSocket frames and their decoding.
//!
//! The one standard frame is `response.create`, whose body sits flat next to `type`. A nested
//! `response` object is accepted as a leniency (docs/protocol.md §2) but is never what we send.
//! Decoding never panics and never gives up silently: every failure is a [`DecodeError`] that
//! says what was wrong and, for a wrong field, which one — the server turns it into an error
//! frame and keeps the connection open.

use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::lenient::kind_of;
use crate::request::ResponseCreate;

/// A decoded client frame.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientFrame {
    ResponseCreate(Box<ResponseCreate>),
}

impl ClientFrame {
    /// Encodes the frame as the JSON text a client sends (body flat next to `type`).
    pub fn to_json(&self) -> String {
        match self {
            ClientFrame::ResponseCreate(request) => {
                let mut value = serde_json::to_value(request).expect("requests always serialize");
                if let Value::Object(map) = &mut value {
                    map.insert("type".into(), Value::String("response.create".into()));
                }
                value.to_string()
            }
        }
    }
}

/// Why a frame could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("the frame is not valid JSON: {0}")]
    NotJson(String),
    #[error("the frame must be a JSON object, found {0}")]
    NotAnObject(&'static str),
    #[error("the frame has no `type` field")]
    MissingType,
    #[error("unknown event type '{0}'; the supported type is 'response.create'")]
    UnknownType(String),
    /// A field is missing or has the wrong type; `field` is its path, e.g. `input[0].content`.
    #[error("invalid value for '{field}': {message}")]
    InvalidField { field: String, message: String },
}

impl DecodeError {
    /// The API error this failure is reported as (always HTTP status 400).
    pub fn to_api_error(&self) -> ApiError {
        let param = match self {
            DecodeError::UnknownType(_) | DecodeError::MissingType => Some("type"),
            DecodeError::InvalidField { field, .. } => Some(field.as_str()),
            _ => None,
        };
        ApiError::invalid_request(None, self.to_string(), param)
    }
}

/// Decodes one text frame sent by a client.
pub fn decode_client_frame(text: &str) -> Result<ClientFrame, DecodeError> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| DecodeError::NotJson(e.to_string()))?;
    let Value::Object(mut map) = value else {
        return Err(DecodeError::NotAnObject(kind_of(&value)));
    };
    let kind = match map.remove("type") {
        Some(Value::String(kind)) => kind,
        Some(other) => {
            return Err(DecodeError::InvalidField {
                field: "type".into(),
                message: format!("expected a string, found {}", kind_of(&other)),
            });
        }
        None => return Err(DecodeError::MissingType),
    };
    match kind.as_str() {
        "response.create" => {
            let body = unnest_body(map);
            decode_request(Value::Object(body)).map(|r| ClientFrame::ResponseCreate(Box::new(r)))
        }
        _ => Err(DecodeError::UnknownType(kind)),
    }
}

/// Decodes a request body (an HTTP body, or a frame without its `type`), naming the bad field.
pub fn decode_request(body: Value) -> Result<ResponseCreate, DecodeError> {
    serde_path_to_error::deserialize(body).map_err(|err| {
        let field = err.path().to_string();
        let inner = err.into_inner().to_string();
        // serde reports a missing field at the parent's path; name the field itself.
        match inner
            .strip_prefix("missing field `")
            .and_then(|r| r.strip_suffix('`'))
        {
            Some(missing) if field == "." => DecodeError::InvalidField {
                field: missing.to_string(),
                message: "this field is required".into(),
            },
            Some(missing) => DecodeError::InvalidField {
                field: format!("{field}.{missing}"),
                message: "this field is required".into(),
            },
            None => DecodeError::InvalidField {
                field,
                message: inner,
            },
        }
    })
}

/// Accepts `{"type":"response.create","response":{…}}` (and `body`) by lifting the nested object.
fn unnest_body(mut map: Map<String, Value>) -> Map<String, Value> {
    if map.contains_key("model") {
        return map;
    }
    for key in ["response", "body"] {
        if let Some(Value::Object(nested)) = map.get(key) {
            let mut nested = nested.clone();
            map.remove(key);
            for (k, v) in map {
                nested.entry(k).or_insert(v);
            }
            return nested;
        }
    }
    map
}
