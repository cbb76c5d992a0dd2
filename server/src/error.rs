//! The one error every part of the server returns when a request cannot be served: an HTTP
//! status and the API's error body. Over HTTP it becomes the response
//! (`{"error":{"message","type","param","code"}}` with the status); in WebSocket mode the
//! connection turns it into an error frame carrying `status`.
//!
//! Callers that act on *which* error it is (the connection cache evicts after a missing
//! previous response; metrics count the miss) match on [`ApiFailure::kind`], not on the code's
//! text.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use tether_protocol::{ApiError, ErrorBody};

/// A request refused before or while it ran.
#[derive(Debug, Clone)]
pub struct ApiFailure {
    pub status: u16,
    pub error: ApiError,
    pub kind: ErrorKind,
}

/// The failures the server's behaviour depends on; every other one is [`ErrorKind::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// `previous_response_id` names no response this request may continue.
    PreviousResponseNotFound,
    Other,
}

impl ApiFailure {
    /// A failure with `status` and `error`.
    pub fn new(status: u16, error: ApiError) -> Self {
        ApiFailure {
            status,
            error,
            kind: ErrorKind::Other,
        }
    }

    /// 400 `invalid_request_error`.
    pub fn bad_request(
        code: Option<&str>,
        message: impl Into<String>,
        param: Option<&str>,
    ) -> Self {
        Self::new(400, ApiError::invalid_request(code, message, param))
    }

    /// 404 `invalid_request_error`.
    pub fn not_found(code: Option<&str>, message: impl Into<String>, param: Option<&str>) -> Self {
        Self::new(404, ApiError::invalid_request(code, message, param))
    }

    /// 401 `invalid_request_error` with `code`.
    pub fn unauthorized(code: &str, message: impl Into<String>) -> Self {
        Self::new(401, ApiError::invalid_request(Some(code), message, None))
    }

    /// 500 `server_error`; the message is what the client sees, so it names no internals.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, ApiError::server(message))
    }

    /// 404 for a response id the project does not have.
    pub fn response_not_found(id: &str) -> Self {
        Self::not_found(None, format!("Response with id '{id}' not found."), None)
    }

    /// The error for a `previous_response_id` that names nothing this request may continue.
    pub fn previous_not_found(id: &str) -> Self {
        ApiFailure {
            kind: ErrorKind::PreviousResponseNotFound,
            ..Self::bad_request(
                Some("previous_response_not_found"),
                format!("Previous response with id '{id}' not found."),
                Some("previous_response_id"),
            )
        }
    }
}

impl IntoResponse for ApiFailure {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(ErrorBody { error: self.error })).into_response()
    }
}
