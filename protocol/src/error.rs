//! Errors on the wire: the object inside HTTP error bodies and WebSocket error frames.

use serde::{Deserialize, Serialize};

/// The `error` object: what went wrong, in the API's vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// The error class, e.g. `invalid_request_error`, `server_error`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default)]
    pub code: Option<String>,
    pub message: String,
    #[serde(default)]
    pub param: Option<String>,
}

impl ApiError {
    /// An `invalid_request_error` with an optional machine-readable code and parameter.
    pub fn invalid_request(
        code: Option<&str>,
        message: impl Into<String>,
        param: Option<&str>,
    ) -> Self {
        ApiError {
            kind: Some("invalid_request_error".into()),
            code: code.map(str::to_string),
            message: message.into(),
            param: param.map(str::to_string),
        }
    }

    /// A `server_error`.
    pub fn server(message: impl Into<String>) -> Self {
        ApiError {
            kind: Some("server_error".into()),
            code: Some("server_error".into()),
            message: message.into(),
            param: None,
        }
    }

    /// This error with a `type` and a string `code` whatever it had: a missing type is taken
    /// from `status` (`server_error` from 500 up, else `invalid_request_error`), a missing code
    /// is the type. Error events, WebSocket error frames and `response.error` carry it so, as
    /// Open Responses requires (docs/protocol.md §4); the codes a failure has are kept.
    pub fn with_code(mut self, status: Option<u16>) -> Self {
        let kind = self.kind.get_or_insert_with(|| {
            match status {
                Some(status) if status >= 500 => "server_error",
                _ => "invalid_request_error",
            }
            .to_string()
        });
        if self.code.is_none() {
            self.code = Some(kind.clone());
        }
        self
    }
}

/// The body of an HTTP error response: `{"error": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ApiError,
}

/// The payload of an `error` event.
///
/// On WebSocket it is `{"type":"error","status":400,"error":{…}}` — Codex ignores error frames
/// without `status`. On SSE openai-python reads the fields flat (`code`, `message`, `param`)
/// while Open Responses nests them under `error`, so SSE sends both. Every shape decodes into
/// this one type and [`ErrorFrame::api_error`] reads any of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorFrame {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param: Option<String>,
}

impl ErrorFrame {
    /// The WebSocket shape: an HTTP-like status and the nested error object, whose `type` and
    /// `code` are always strings ([`ApiError::with_code`]).
    pub fn websocket(status: u16, error: ApiError) -> Self {
        ErrorFrame {
            status: Some(status),
            error: Some(error.with_code(Some(status))),
            code: None,
            message: None,
            param: None,
        }
    }

    /// The SSE shape: the error's fields flat, as openai-python reads them, and the same error
    /// nested under `error` with its `type`, as Open Responses' `ErrorStreamingEvent` has it.
    pub fn sse(error: ApiError) -> Self {
        let error = error.with_code(None);
        ErrorFrame {
            status: None,
            code: error.code.clone(),
            message: Some(error.message.clone()),
            param: error.param.clone(),
            error: Some(error),
        }
    }

    /// The error, from whichever shape the frame has.
    pub fn api_error(&self) -> ApiError {
        match &self.error {
            Some(error) => error.clone(),
            None => ApiError {
                kind: None,
                code: self.code.clone(),
                message: self.message.clone().unwrap_or_default(),
                param: self.param.clone(),
            },
        }
    }
}
