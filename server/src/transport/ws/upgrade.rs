//! The upgrade of `GET /v1/responses` to a WebSocket connection: whether this server takes one
//! (WebSocket mode on, a place among `--max-connections`), the options and conditions every
//! response of the connection gets, what the answer says about the server — then the socket is
//! [`super::handle_socket`]'s.

use axum::Extension;
use axum::extract::ws::{WebSocket, WebSocketUpgrade};
use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response as HttpResponse};
use tether_protocol::ApiError;

use super::handle_socket;
use crate::AppState;
use crate::conditions::Conditions;
use crate::error::ApiFailure;
use crate::tenancy::Project;
use crate::transport::{options, server_headers, trace_context};

/// Bytes tungstenite reads at most per system call. It zeroes that much of its buffer before
/// every read attempt, so its default (128 KiB) cost several microseconds per frame received;
/// and every connection, idle or not, keeps the buffer: 16 KiB made an idle connection 5 KiB
/// heavier than 4 KiB does (BENCHMARKS.md, "Load"). A larger frame takes a few more reads.
const READ_BUFFER_BYTES: usize = 4 * 1024;

/// Upgrades the request to a WebSocket connection. The upgrade request's options
/// (`x-tether-fail`, `x-tether-timing: 1`, `?tether_timing=1`) and conditions (`?tether_rtt_ms`,
/// …: the link `transport/link.rs` set for the socket) apply to every response of the
/// connection.
pub async fn upgrade(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Extension(conditions): Extension<Conditions>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    ws: WebSocketUpgrade,
) -> HttpResponse {
    if !state.websocket_enabled {
        // 426 is the refusal Codex understands: it switches the whole session to HTTP.
        return ApiFailure::new(
            426,
            ApiError::invalid_request(
                Some("websocket_disabled"),
                "WebSocket mode is disabled on this server; use HTTP (POST /v1/responses).",
                None,
            ),
        )
        .into_response();
    }
    let mut options = match options::for_upgrade(&headers, query.as_deref(), project, conditions) {
        Ok(options) => options,
        Err(failure) => return failure.into_response(),
    };
    // The connection's trace parent (each frame may name its own).
    options.trace = trace_context::from_headers(&state, &headers, None);
    // A place among `--max-connections` (none while the server shuts down): else 503, and
    // HTTP is still served.
    let Some(place) = state.lifecycle.connect() else {
        return connection_refused(&state).into_response();
    };
    let max = state.max_frame_bytes;
    let announced = server_headers::for_upgrade(&state, &headers, options.default_model.as_deref());
    let mut answer = ws
        .max_message_size(max)
        .max_frame_size(max)
        .read_buffer_size(READ_BUFFER_BYTES)
        .on_upgrade(move |socket: WebSocket| handle_socket(socket, state, options, place));
    answer.headers_mut().extend(announced);
    answer
}

/// Why an upgrade found no place: the server drains, or `--max-connections` are open.
fn connection_refused(state: &AppState) -> ApiFailure {
    let error = if state.lifecycle.is_draining() {
        ApiError {
            code: Some("server_shutting_down".into()),
            ..ApiError::server(
                "The server is shutting down; connect again (to another replica) in a moment.",
            )
        }
    } else {
        ApiError {
            code: Some("too_many_connections".into()),
            ..ApiError::server(format!(
                "The server holds as many WebSocket connections as it allows ({}, \
                 --max-connections); retry later, or use HTTP (POST /v1/responses).",
                state.lifecycle.max_connections()
            ))
        }
    };
    ApiFailure::new(503, error)
}
