//! The endpoints a load balancer or an orchestrator asks: `GET /healthz`, liveness (the process
//! answers: restart it if not), and `GET /readyz`, readiness (the store answers too: send it
//! traffic only then). A replica whose database is down stays alive — it recovers by itself
//! when the database returns — but is not ready.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use crate::AppState;

/// `GET /healthz`: 200 `ok` while the process serves requests.
pub async fn live() -> &'static str {
    "ok"
}

/// `GET /readyz`: 200 `ready` when the store answers, else 503 with the reason.
pub async fn ready(State(state): State<AppState>) -> Response {
    match state.store.ready().await {
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
