//! The client's trace context, when the server exports traces (`--otlp-endpoint`): over HTTP
//! the W3C `traceparent` and `tracestate` headers; in WebSocket mode each `response.create`'s
//! `client_metadata.ws_request_header_traceparent` and `ws_request_header_tracestate` — a
//! `ws_request_header_<name>` key stands for that header of the request, which a frame cannot
//! carry (Codex sends them) — else the upgrade request's headers. With traces off nothing is
//! read.

use axum::http::HeaderMap;
use serde_json::Value;

use crate::AppState;
use crate::traces::Parent;

/// The `client_metadata` keys that stand for the trace headers of a WebSocket request.
const TRACEPARENT_KEY: &str = "ws_request_header_traceparent";
const TRACESTATE_KEY: &str = "ws_request_header_tracestate";

/// The parent the request `headers` name (an HTTP request, or an upgrade for its connection);
/// `None` when traces are off. A request without a usable `traceparent` over HTTP may still
/// name one in its `client_metadata` the WebSocket way.
pub fn from_headers(
    state: &AppState,
    headers: &HeaderMap,
    client_metadata: Option<&Value>,
) -> Option<Parent> {
    let traces = state.traces.as_ref()?;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let parent = traces.parent(header("traceparent"), header("tracestate"));
    if parent.trace_id().is_some() {
        return Some(parent);
    }
    Some(from_metadata(state, client_metadata).unwrap_or(parent))
}

/// The parent of one `response.create`: its `client_metadata`'s, else the connection's (the
/// upgrade's headers'); `None` when traces are off.
pub fn for_frame(
    state: &AppState,
    connection: Option<&Parent>,
    client_metadata: Option<&Value>,
) -> Option<Parent> {
    state.traces.as_ref()?;
    from_metadata(state, client_metadata)
        .or_else(|| connection.cloned())
        .or_else(|| Some(Parent::default()))
}

/// The parent `client_metadata`'s trace keys name, if they name a valid one.
fn from_metadata(state: &AppState, client_metadata: Option<&Value>) -> Option<Parent> {
    let traces = state.traces.as_ref()?;
    let metadata = client_metadata?;
    let key = |name: &str| metadata.get(name).and_then(Value::as_str);
    let parent = traces.parent(key(TRACEPARENT_KEY), key(TRACESTATE_KEY));
    parent.trace_id().is_some().then_some(parent)
}
