//! Optional API-key authentication of the `/v1` routes, the WebSocket upgrade included (a bad
//! key gets a plain HTTP 401 before any upgrade). With no keys configured everything is open.
//!
//! An accepted key's project (`crate::tenancy`) goes with the request to the handlers: what it
//! stores belongs to that project, and it sees only that project's responses.
//!
//! The key comes as `Authorization: Bearer <key>`. A browser cannot set headers on a WebSocket
//! upgrade, so an upgrade request may carry it as the `api_key` query parameter instead (the
//! playground does); plain HTTP requests must use the header, so keys stay out of URLs there.

use std::collections::HashMap;

use axum::extract::{Query, Request, State};
use axum::http::header::{AUTHORIZATION, UPGRADE};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::error::ApiFailure;
use crate::tenancy::Project;

/// Lets the request through when auth is off or its `Authorization: Bearer` key is accepted,
/// with the key's [`Project`] as a request extension (`default` when auth is off).
pub async fn require_api_key(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    if state.keys.is_empty() {
        request.extensions_mut().insert(Project::open());
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim)
        .map(str::to_string)
        .or_else(|| upgrade_query_key(&request));
    match presented.as_deref().map(|key| state.keys.project_of(key)) {
        Some(Some(project)) => {
            request.extensions_mut().insert(project);
            next.run(request).await
        }
        Some(None) => unauthorized("Incorrect API key provided."),
        None => unauthorized(
            "Missing bearer authentication in header: send 'Authorization: Bearer <key>' \
             (on a WebSocket upgrade, the api_key query parameter also works).",
        ),
    }
}

/// The `api_key` query parameter of a WebSocket upgrade request.
fn upgrade_query_key(request: &Request) -> Option<String> {
    let upgrade = request.headers().get(UPGRADE)?.to_str().ok()?;
    if !upgrade.eq_ignore_ascii_case("websocket") {
        return None;
    }
    let Query(mut query) = Query::<HashMap<String, String>>::try_from_uri(request.uri()).ok()?;
    query.remove("api_key")
}

fn unauthorized(message: &str) -> Response {
    ApiFailure::unauthorized("invalid_api_key", message).into_response()
}
