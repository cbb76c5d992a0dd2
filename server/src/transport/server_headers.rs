//! The headers the server's answers carry about itself, as the reference's do, for clients to
//! read (docs/protocol.md §11): on the WebSocket upgrade and on every `POST /v1/responses`
//! answer the turn-state routing token (`x-codex-turn-state`), the models catalog's version
//! (`x-models-etag`, the `ETag` of `GET /v1/models`) and that the reported input tokens already
//! count past reasoning (`x-reasoning-included`); the model that serves (`openai-model`) where
//! it is known — the HTTP request's, the upgrade URL's `?model=` —; and on the upgrade the
//! largest message the connection accepts (`x-codex-websocket-max-message-bytes`, the
//! `--max-frame-bytes` it enforces).

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use sha2::{Digest, Sha256};

use crate::AppState;

/// The turn-state token: answered on the first request of a turn, sent back by the client on
/// its later requests.
pub const TURN_STATE: HeaderName = HeaderName::from_static("x-codex-turn-state");
/// The model that serves the request.
pub const OPENAI_MODEL: HeaderName = HeaderName::from_static("openai-model");
/// The version of the models catalog (`GET /v1/models`).
pub const MODELS_ETAG: HeaderName = HeaderName::from_static("x-models-etag");
/// Present: `usage.input_tokens` already counts the reasoning items of the context.
pub const REASONING_INCLUDED: HeaderName = HeaderName::from_static("x-reasoning-included");
/// On `GET /v1/models`: whether a client may choose an emulated link and the API costs
/// (`allowed`, with `--allow-client-conditions`) or not (`refused`): Tether's own.
pub const CLIENT_CONDITIONS: HeaderName = HeaderName::from_static("x-tether-client-conditions");
/// On `GET /v1/models`: the scenarios `metadata.scenario` may name, comma-separated (absent in
/// front of an engine, which plays none): Tether's own.
pub const SCENARIOS: HeaderName = HeaderName::from_static("x-tether-scenarios");
/// The largest WebSocket message the connection accepts, in bytes.
pub const MAX_MESSAGE_BYTES: HeaderName =
    HeaderName::from_static("x-codex-websocket-max-message-bytes");

/// The headers of a WebSocket upgrade's answer: `request` is the upgrade request,
/// `default_model` its URL's `?model=`.
pub fn for_upgrade(
    state: &AppState,
    request: &HeaderMap,
    default_model: Option<&str>,
) -> HeaderMap {
    let mut headers = common(state, request, default_model);
    headers.insert(MAX_MESSAGE_BYTES, HeaderValue::from(state.max_frame_bytes));
    headers
}

/// The headers of a `POST /v1/responses` answer (JSON or SSE) to `request`, for `model`.
pub fn for_response(state: &AppState, request: &HeaderMap, model: &str) -> HeaderMap {
    common(state, request, Some(model))
}

fn common(state: &AppState, request: &HeaderMap, model: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    let presented = request.get(&TURN_STATE).and_then(|v| v.to_str().ok());
    if let Ok(token) = HeaderValue::try_from(state.turn_states.answer(presented)) {
        headers.insert(TURN_STATE, token);
    }
    // A model name that is no header value (a control character) is left out, not mangled.
    if let Some(model) = model.and_then(|m| HeaderValue::from_str(m).ok()) {
        headers.insert(OPENAI_MODEL, model);
    }
    headers.insert(MODELS_ETAG, models_etag(state));
    headers.insert(REASONING_INCLUDED, HeaderValue::from_static("true"));
    headers
}

/// The models catalog's version: a digest of the model ids `GET /v1/models` lists, quoted as
/// an entity tag. It changes exactly when the list does.
pub fn models_etag(state: &AppState) -> HeaderValue {
    let mut ids = state.model.model_ids();
    ids.sort();
    let mut digest = Sha256::new();
    for id in &ids {
        digest.update(id.as_bytes());
        digest.update([0]);
    }
    let hex: String = digest.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    HeaderValue::try_from(format!("\"{hex}\"")).expect("hex digits are a header value")
}
