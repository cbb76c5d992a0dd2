//! Errors answered outside the handlers — a body over the size limit (413), a method the route
//! does not have (405), a query that does not parse, a refused upgrade — come as plain text from
//! axum; this middleware of the API routes rewrites them into the API's error shape,
//! `{"error":{"message","type","param","code"}}`, keeping their status and `Allow` header.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response as HttpResponse};

use crate::AppState;
use crate::error::ApiFailure;

/// Rewrites a plain-text error response into the API's error shape.
pub async fn json_errors(
    State(state): State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> HttpResponse {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let allow = response.headers().get(axum::http::header::ALLOW).cloned();
    let body = axum::body::to_bytes(response.into_body(), 64 * 1024)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&body).trim().to_string();
    let message = if status == StatusCode::METHOD_NOT_ALLOWED {
        format!("{method} is not allowed on {path}.")
    } else if status == StatusCode::PAYLOAD_TOO_LARGE {
        format!(
            "The request body is larger than this server accepts ({} bytes, --max-frame-bytes).",
            state.max_frame_bytes
        )
    } else if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_string()
    } else {
        text
    };
    let code = match status {
        StatusCode::PAYLOAD_TOO_LARGE => Some("request_too_large"),
        StatusCode::METHOD_NOT_ALLOWED => Some("method_not_allowed"),
        _ => None,
    };
    let error = if status.is_server_error() {
        tether_protocol::ApiError::server(message)
    } else {
        tether_protocol::ApiError::invalid_request(code, message, None)
    };
    let mut rewritten = ApiFailure::new(status.as_u16(), error).into_response();
    if let Some(allow) = allow {
        rewritten
            .headers_mut()
            .insert(axum::http::header::ALLOW, allow);
    }
    rewritten
}
