//! Why a request, a turn or a connection failed: one error type for both backends and all three
//! ways of asking (HTTP JSON, SSE, WebSocket mode), each variant saying what was wrong and where.
//!
//! [`Error::code`] gives the API's machine-readable code when the server said one
//! (`previous_response_not_found`, `websocket_connection_limit_reached`, …): the recovery rules
//! of [`crate::Session`] decide on it, and so can any caller.

use tether_protocol::{ApiError, ErrorBody, Response};

/// What went wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The URL given to [`crate::Endpoint::new`] does not name a server.
    #[error("invalid URL '{url}': {reason}")]
    InvalidUrl { url: String, reason: String },

    /// This backend cannot do what was asked (the native backend speaks no TLS).
    #[error("{0}")]
    Unsupported(String),

    /// Nothing answered at `url`: no connection, no handshake. `io` is the operating system's
    /// reason when there is one (natively).
    #[error("nothing answered at {url}: {detail}")]
    Connect {
        url: String,
        detail: String,
        io: Option<std::io::ErrorKind>,
    },

    /// The server answered the WebSocket upgrade, but not with `101 Switching Protocols`: 426
    /// when WebSocket mode is off, 401 for a missing or wrong key, 503 when the server is full
    /// or draining. A browser never sees the status (`status: None`); `detail` then says what
    /// an HTTP probe of the same server found.
    #[error("the WebSocket upgrade to {url} was refused{}: {detail}", status_text(*.status))]
    UpgradeRefused {
        url: String,
        status: Option<u16>,
        error: Option<Box<ApiError>>,
        detail: String,
    },

    /// An HTTP request was answered with an error status; `error` is the API's error object
    /// when the body held one.
    #[error("HTTP {status} from {url}: {}", http_message(.error.as_deref(), .body))]
    Http {
        url: String,
        status: u16,
        error: Option<Box<ApiError>>,
        body: String,
    },

    /// The server refused a request before its response began: a WebSocket error frame or an
    /// SSE `error` event without a sequence number (docs/protocol.md §4).
    #[error("the server refused the request{}: {}", status_text(*.status), api_message(.error))]
    Api {
        status: Option<u16>,
        error: ApiError,
    },

    /// The response began, then failed (`response.failed`); `error` is the `error` event that
    /// preceded it, else the response's own `error`.
    #[error("response {} failed: {}", .response.id, api_message(.error))]
    Failed {
        response: Box<Response>,
        error: ApiError,
    },

    /// The connection ended (or the body broke off) before the response did.
    #[error("the connection closed: {0}")]
    Closed(String),

    /// Something arrived that is not what the protocol says: an event that does not decode, a
    /// binary frame, a body that is not JSON.
    #[error("{0}")]
    Protocol(String),
}

fn status_text(status: Option<u16>) -> String {
    status.map_or_else(String::new, |status| format!(" ({status})"))
}

fn api_message(error: &ApiError) -> String {
    match error.code.as_deref().or(error.kind.as_deref()) {
        Some(code) => format!("{} [{code}]", error.message),
        None => error.message.clone(),
    }
}

fn http_message(error: Option<&ApiError>, body: &str) -> String {
    match error {
        Some(error) => api_message(error),
        None if body.trim().is_empty() => "no details".to_string(),
        None => body.trim().chars().take(300).collect(),
    }
}

impl Error {
    /// The API's error code, when the server gave one.
    pub fn code(&self) -> Option<&str> {
        self.api_error().and_then(|error| error.code.as_deref())
    }

    /// The API's error object, when the server gave one.
    pub fn api_error(&self) -> Option<&ApiError> {
        match self {
            Error::Api { error, .. } | Error::Failed { error, .. } => Some(error),
            Error::Http { error, .. } | Error::UpgradeRefused { error, .. } => error.as_deref(),
            _ => None,
        }
    }

    /// The HTTP status the server answered with: of an HTTP error, a refused upgrade or an
    /// error frame.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Http { status, .. } => Some(*status),
            Error::UpgradeRefused { status, .. } | Error::Api { status, .. } => *status,
            _ => None,
        }
    }

    /// Whether the connection is gone, so that only a new one can carry on.
    pub fn is_disconnect(&self) -> bool {
        matches!(self, Error::Closed(_))
            || self.code() == Some("websocket_connection_limit_reached")
    }

    /// An HTTP error answer from `url` with `status` and `body`.
    pub fn http(url: &str, status: u16, body: &[u8]) -> Error {
        Error::Http {
            url: url.to_string(),
            status,
            error: api_error_of(body).map(Box::new),
            body: String::from_utf8_lossy(body).into_owned(),
        }
    }
}

/// The message of an HTTP error answer: the API's `{"error":{"message":…}}`, else the body.
pub fn error_message(body: &str) -> String {
    match serde_json::from_str::<ErrorBody>(body) {
        Ok(parsed) => parsed.error.message,
        Err(_) if body.trim().is_empty() => "no details".to_string(),
        Err(_) => body.trim().to_string(),
    }
}

/// `message` as `: message`, or nothing when it is blank.
pub(crate) fn said(message: &str) -> String {
    let message = message.trim();
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

/// The API's error object in an HTTP error body, if it has one.
pub(crate) fn api_error_of(body: &[u8]) -> Option<ApiError> {
    serde_json::from_slice::<ErrorBody>(body)
        .ok()
        .map(|body| body.error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn not_found() -> ApiError {
        ApiError::invalid_request(
            Some("previous_response_not_found"),
            "Previous response with id 'resp_x' not found.",
            Some("previous_response_id"),
        )
    }

    #[test]
    fn errors_say_what_failed_and_give_the_code() {
        let refused = Error::Api {
            status: Some(400),
            error: not_found(),
        };
        assert_eq!(refused.code(), Some("previous_response_not_found"));
        assert_eq!(refused.status(), Some(400));
        assert_eq!(
            refused.to_string(),
            "the server refused the request (400): Previous response with id 'resp_x' not \
             found. [previous_response_not_found]"
        );
        let body = br#"{"error":{"message":"WebSocket mode is off.","type":"invalid_request_error","code":"websocket_disabled","param":null}}"#;
        let http = Error::http("http://h/v1/responses", 426, body);
        assert_eq!(http.code(), Some("websocket_disabled"));
        assert_eq!(
            http.to_string(),
            "HTTP 426 from http://h/v1/responses: WebSocket mode is off. [websocket_disabled]"
        );
        let plain = Error::http("http://h/x", 502, b"bad gateway\n");
        assert_eq!(plain.code(), None);
        assert_eq!(plain.to_string(), "HTTP 502 from http://h/x: bad gateway");
        assert_eq!(
            Error::http("http://h/x", 500, b"").to_string(),
            "HTTP 500 from http://h/x: no details"
        );
    }

    #[test]
    fn only_a_lost_connection_is_a_disconnect() {
        assert!(Error::Closed("reset".into()).is_disconnect());
        let limit = Error::Api {
            status: Some(400),
            error: ApiError::invalid_request(
                Some("websocket_connection_limit_reached"),
                "limit",
                None,
            ),
        };
        assert!(limit.is_disconnect());
        let refused = Error::Api {
            status: Some(400),
            error: not_found(),
        };
        assert!(!refused.is_disconnect());
        assert!(!Error::Protocol("x".into()).is_disconnect());
    }

    #[test]
    fn error_bodies_give_their_message() {
        let body = r#"{"error":{"message":"Previous response with id 'resp_x' not found.","type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}}"#;
        assert_eq!(
            error_message(body),
            "Previous response with id 'resp_x' not found."
        );
        assert_eq!(error_message("gateway down\n"), "gateway down");
        assert_eq!(error_message(""), "no details");
    }
}
