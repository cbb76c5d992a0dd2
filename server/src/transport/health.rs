//! The endpoints a load balancer or an orchestrator asks: `GET /healthz`, liveness (the process
//! answers: restart it if not), and `GET /readyz`, readiness (the store answers too: send it
//! traffic only then), and with a real engine behind it, one of the engine's replicas answers.
//! A replica whose database or engine is down stays alive — it recovers by itself when they
//! return — but is not ready.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::AppState;

/// `GET /healthz`: 200 `ok` while the process serves requests.
pub async fn live() -> &'static str {
    "ok"
}

/// `GET /readyz`: 200 `ready` when the store answers and the engine can serve (a real
/// engine: one of its replicas answers), else 503 with the reason.
pub async fn ready(State(state): State<AppState>) -> Response {
    let ready = match state.store.ready().await {
        Ok(()) => state.model.readiness(),
        Err(error) => Err(error.to_string()),
    };
    match ready {
        Ok(()) => (StatusCode::OK, "ready\n").into_response(),
        Err(error) => {
            tracing::warn!("readiness: {error}");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("not ready: {error}\n"),
            )
                .into_response()
        }
    }
}
