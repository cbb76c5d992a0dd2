//! Optional API-key authentication of the `/v1` routes, the WebSocket upgrade included (a bad
//! key gets a plain HTTP 401 before any upgrade). With no keys configured everything is open.

use axum::extract::{Request, State};
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tether_protocol::ApiError;

use crate::AppState;
use crate::pipeline::Refusal;

/// Lets the request through when auth is off or its `Authorization: Bearer` key is accepted.
pub async fn require_api_key(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if state.api_keys.is_empty() {
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim);
    match presented {
        Some(key) if state.api_keys.iter().any(|accepted| accepted == key) => {
            next.run(request).await
        }
        Some(_) => unauthorized("Incorrect API key provided."),
        None => unauthorized(
            "Missing bearer authentication in header: send 'Authorization: Bearer <key>'.",
        ),
    }
}

fn unauthorized(message: &str) -> Response {
    let error = ApiError {
        kind: Some("invalid_request_error".into()),
        code: Some("invalid_api_key".into()),
        message: message.into(),
        param: None,
    };
    Refusal { status: 401, error }.into_response()
}
