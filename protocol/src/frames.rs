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
use serde::{Deserialize, Serialize};

use crate::request::{Input, ResponseCreate};

/// A decoded client frame.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientFrame {
    ResponseCreate(Box<ResponseCreate>),
    /// `response.append` (v1 beta): resume the response paused on this lane with more input.
    ResponseAppend(ResponseAppend),
    /// `response.inject` (multi-agent beta): input, such as a tool output, for a response that
    /// waits for it.
    ResponseInject(ResponseInject),
    /// `response.steer`: user input for a running response.
    ResponseSteer(ResponseSteer),
}

/// `{"type":"response.append","input":[…]}`; it carries no settings (the paused response's
/// hold).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseAppend {
    #[serde(default, deserialize_with = "crate::lenient::null_as_default")]
    pub input: Input,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata: Option<Value>,
    /// The lane whose paused response this resumes (the default lane when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_id: Option<String>,
}

/// `{"type":"response.inject","response_id":"resp_…","input":[…]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseInject {
    pub response_id: String,
    #[serde(default, deserialize_with = "crate::lenient::null_as_default")]
    pub input: Input,
}

/// `{"type":"response.steer","previous_response_id":"resp_…","input":…}`: only these fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseSteer {
    pub previous_response_id: String,
    #[serde(default, deserialize_with = "crate::lenient::null_as_default")]
    pub input: Input,
}

impl ClientFrame {
    /// The frame's wire type.
    pub fn type_name(&self) -> &'static str {
        match self {
            ClientFrame::ResponseCreate(_) => "response.create",
            ClientFrame::ResponseAppend(_) => "response.append",
            ClientFrame::ResponseInject(_) => "response.inject",
            ClientFrame::ResponseSteer(_) => "response.steer",
        }
    }

    /// Encodes the frame as the JSON text a client sends (body flat next to `type`).
    pub fn to_json(&self) -> String {
        let mut value = match self {
            ClientFrame::ResponseCreate(request) => serde_json::to_value(request),
            ClientFrame::ResponseAppend(append) => serde_json::to_value(append),
            ClientFrame::ResponseInject(inject) => serde_json::to_value(inject),
            ClientFrame::ResponseSteer(steer) => serde_json::to_value(steer),
        }
        .expect("frames always serialize");
        if let Value::Object(map) = &mut value {
            map.insert("type".into(), Value::String(self.type_name().into()));
        }
        value.to_string()
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
    #[error(
        "unknown event type '{0}'; the supported types are 'response.create', \
         'response.append', 'response.inject' and 'response.steer'"
    )]
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
    decode_client_frame_with(text, None)
}

/// Decodes one text frame; a `response.create` without `model` gets `default_model` (a
/// connection's `?model=`), if there is one.
pub fn decode_client_frame_with(
    text: &str,
    default_model: Option<&str>,
) -> Result<ClientFrame, DecodeError> {
    // The shape every client sends, straight into the request; anything else, and every
    // error, the general way (`crate::direct`).
    if let Some(request) = crate::direct::response_create(text) {
        return Ok(ClientFrame::ResponseCreate(Box::new(request)));
    }
    decode_by_value(text, default_model)
}

/// [`decode_client_frame_with`] by way of a JSON tree: every shape, and every error named. The
/// same result as that function for every text, slower; public so the `client_frame` fuzz
/// target can hold the two to it.
#[doc(hidden)]
pub fn decode_by_value(
    text: &str,
    default_model: Option<&str>,
) -> Result<ClientFrame, DecodeError> {
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
            let mut body = unnest_body(map);
            if let Some(model) = default_model
                && !body.contains_key("model")
            {
                body.insert("model".into(), Value::String(model.to_string()));
            }
            decode_request(Value::Object(body)).map(|r| ClientFrame::ResponseCreate(Box::new(r)))
        }
        "response.append" => decode_body(map).map(ClientFrame::ResponseAppend),
        "response.inject" => decode_body(map).map(ClientFrame::ResponseInject),
        "response.steer" => {
            // It "accepts only `type`, `previous_response_id`, and `input`".
            if let Some(extra) = map
                .keys()
                .find(|k| *k != "previous_response_id" && *k != "input")
            {
                return Err(DecodeError::InvalidField {
                    field: extra.clone(),
                    message: "response.steer accepts only previous_response_id and input".into(),
                });
            }
            decode_body(map).map(ClientFrame::ResponseSteer)
        }
        _ => Err(DecodeError::UnknownType(kind)),
    }
}

/// Decodes a frame's body as `T`, naming the bad field as [`decode_request`] does.
fn decode_body<T: serde::de::DeserializeOwned>(map: Map<String, Value>) -> Result<T, DecodeError> {
    serde_path_to_error::deserialize(Value::Object(map)).map_err(|err| {
        let field = err.path().to_string();
        let inner = err.into_inner().to_string();
        match inner
            .strip_prefix("missing field `")
            .and_then(|r| r.strip_suffix('`'))
        {
            Some(missing) => DecodeError::InvalidField {
                field: missing.to_string(),
                message: "this field is required".into(),
            },
            None => DecodeError::InvalidField {
                field,
                message: inner,
            },
        }
    })
}

/// Decodes a request body (an HTTP body, or a frame without its `type`), naming the bad field.
/// Top-level fields [`ResponseCreate`] does not model are listed in its `unknown_fields`.
pub fn decode_request(body: Value) -> Result<ResponseCreate, DecodeError> {
    let unknown: Vec<String> = match &body {
        Value::Object(map) => map
            .keys()
            .filter(|key| !ResponseCreate::FIELDS.contains(&key.as_str()))
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    let mut request: ResponseCreate = serde_path_to_error::deserialize(body).map_err(|err| {
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
    })?;
    request.unknown_fields = unknown;
    Ok(request)
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
