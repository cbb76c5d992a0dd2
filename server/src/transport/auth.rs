//! Optional API-key authentication of the `/v1` routes, the WebSocket upgrade included (a bad
//! key gets a plain HTTP 401 before any upgrade). With no keys configured everything is open.
//!
//! An accepted key's project (`crate::tenancy`) goes with the request to the handlers: what it
//! stores belongs to that project, and it sees only that project's responses.
//!
//! The key comes as `Authorization: Bearer <key>`. A browser cannot set headers on a WebSocket
//! upgrade, so the upgrade (`GET /v1/responses` with `Upgrade: websocket`), and only the
//! upgrade, may carry it two more ways, which the server takes in this order:
//!
//! - as a subprotocol, `Sec-WebSocket-Protocol: openai-insecure-api-key.<key>`, the convention
//!   of OpenAI's browser clients (`new WebSocket(url, ["responses",
//!   "openai-insecure-api-key." + key])`). Browsers fail a handshake whose answer selects none
//!   of the subprotocols they offered (WHATWG WebSockets), so the client also offers
//!   [`SUBPROTOCOL`] and the server selects that one, never the key's; an upgrade that offers a
//!   key but not `responses` is refused with 400 saying so;
//! - as the `api_key` query parameter, the weakest: URLs end up in proxies' logs and browser
//!   history (the server itself logs no request lines).
//!
//! On the upgrade, a client secret (`ek_…`, `crate::tenancy::secrets`, minted by
//! `POST /v1/responses/client_secrets`) stands for its project as a key does, however it is
//! carried. Everywhere else only API keys are accepted, and a client secret gets a 401 that
//! says so.

use std::collections::HashMap;

use axum::extract::{Query, Request, State};
use axum::http::header::{AUTHORIZATION, SEC_WEBSOCKET_PROTOCOL, UPGRADE};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::error::ApiFailure;
use crate::tenancy::Project;
use crate::tenancy::secrets;

/// The subprotocol the server selects on an upgrade that offers it.
pub const SUBPROTOCOL: &str = "responses";
/// The prefix of a subprotocol that carries an API key or client secret.
pub const KEY_SUBPROTOCOL_PREFIX: &str = "openai-insecure-api-key.";

/// Lets the request through when auth is off or its key is accepted, with the key's
/// [`Project`] as a request extension (`default` when auth is off); selects [`SUBPROTOCOL`] on
/// an upgrade that offered it.
pub async fn require_api_key(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let upgrade = is_upgrade(&request);
    let offered = if upgrade {
        offered_subprotocols(request.headers())
    } else {
        Vec::new()
    };
    let offers_marker = offered.iter().any(|protocol| protocol == SUBPROTOCOL);
    let subprotocol_key = offered
        .iter()
        .find_map(|protocol| protocol.strip_prefix(KEY_SUBPROTOCOL_PREFIX))
        .map(str::to_string);
    if subprotocol_key.is_some() && !offers_marker {
        return ApiFailure::bad_request(
            None,
            format!(
                "A WebSocket upgrade that carries its key as the '{KEY_SUBPROTOCOL_PREFIX}<key>' \
                 subprotocol must also offer the '{SUBPROTOCOL}' subprotocol, which the server \
                 selects: browsers fail a handshake that selects none of the offered ones."
            ),
            None,
        )
        .into_response();
    }
    let project = if state.keys.is_empty() {
        Project::open()
    } else {
        let presented = bearer(request.headers())
            .or(subprotocol_key)
            .or_else(|| upgrade.then(|| query_key(&request)).flatten());
        match accept(&state, presented.as_deref(), upgrade) {
            Ok(project) => project,
            Err(message) => {
                return ApiFailure::unauthorized("invalid_api_key", message).into_response();
            }
        }
    };
    request.extensions_mut().insert(project);
    let mut response = next.run(request).await;
    if offers_marker && response.status() == StatusCode::SWITCHING_PROTOCOLS {
        response.headers_mut().insert(
            SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_static(SUBPROTOCOL),
        );
    }
    response
}

/// The project `presented` stands for: an API key's anywhere, a client secret's on the upgrade;
/// else why it is refused (401 `invalid_api_key`).
fn accept(
    state: &AppState,
    presented: Option<&str>,
    upgrade: bool,
) -> Result<Project, &'static str> {
    let Some(presented) = presented else {
        return Err(
            "Missing bearer authentication in header: send 'Authorization: Bearer <key>' (on a \
             WebSocket upgrade, the 'openai-insecure-api-key.<key>' subprotocol or the api_key \
             query parameter also work).",
        );
    };
    if let Some(project) = state.keys.project_of(presented) {
        return Ok(project);
    }
    let is_secret = presented.starts_with(secrets::PREFIX);
    if upgrade && let Some(project) = state.client_secrets.project_of(presented) {
        return Ok(project);
    }
    Err(match (is_secret, upgrade) {
        (true, true) => {
            "The client secret is unknown or expired (or signed under another server secret, or for a project with no keys here); mint a new one with \
             POST /v1/responses/client_secrets."
        }
        (true, false) => {
            "Client secrets (ek_...) are accepted only on the WebSocket upgrade of \
             /v1/responses; authenticate this request with an API key."
        }
        (false, _) => "Incorrect API key provided.",
    })
}

/// Whether `request` is the WebSocket upgrade of `/v1/responses`.
fn is_upgrade(request: &Request) -> bool {
    request.method() == Method::GET
        && request.uri().path() == "/v1/responses"
        && request
            .headers()
            .get(UPGRADE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| {
                value
                    .split(',')
                    .any(|token| token.trim().eq_ignore_ascii_case("websocket"))
            })
}

/// The key of an `Authorization: Bearer <key>` header.
fn bearer(headers: &HeaderMap) -> Option<String> {
    headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim)
        .map(str::to_string)
}

/// Every subprotocol offered in `Sec-WebSocket-Protocol` headers (comma-separated, possibly
/// repeated).
fn offered_subprotocols(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|protocol| !protocol.is_empty())
        .map(str::to_string)
        .collect()
}

/// The `api_key` query parameter.
fn query_key(request: &Request) -> Option<String> {
    let Query(mut query) = Query::<HashMap<String, String>>::try_from_uri(request.uri()).ok()?;
    query.remove("api_key")
}
