//! Runtime reconfiguration of the simulator: `GET /admin/simulator` shows the seed, every
//! latency profile and the failure rates; `PATCH /admin/simulator` changes any of them, e.g.
//!
//! ```json
//! {"profiles": {"spark": {"tokens_per_second": 2000, "jitter": 0.02}},
//!  "failure_rates": {"server_error": 0.05}}
//! ```
//!
//! Each given field replaces that field; the whole change is validated first and applied only
//! if every value is valid (otherwise 400 and nothing changes) — see [`crate::sim::config`].
//! Changes are serialised, and a profile's new timing applies from the next token of every
//! running stream. Both need the
//! admin key (`--admin-key`) as a bearer token; without one configured the endpoint is off
//! (404).

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response as HttpResponse};
use serde_json::Value;

use crate::AppState;
use crate::error::ApiFailure;

fn authorize(state: &AppState, headers: &HeaderMap) -> Result<(), ApiFailure> {
    let Some(key) = state.admin_key.as_deref() else {
        return Err(ApiFailure::not_found(
            None,
            "The admin endpoint is disabled.",
            None,
        ));
    };
    let given = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let matches = given.is_some_and(|given| {
        bool::from(subtle::ConstantTimeEq::ct_eq(
            given.as_bytes(),
            key.as_bytes(),
        ))
    });
    if matches {
        Ok(())
    } else {
        Err(ApiFailure::unauthorized(
            "invalid_admin_key",
            "The admin endpoint needs `Authorization: Bearer <admin key>`.",
        ))
    }
}

/// `GET /admin/simulator`.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<HttpResponse, ApiFailure> {
    authorize(&state, &headers)?;
    Ok(Json(state.simulator.settings()).into_response())
}

/// `PATCH /admin/simulator`: the format of [`crate::sim::config`], without `aliases`.
pub async fn update(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(change): Json<Value>,
) -> Result<HttpResponse, ApiFailure> {
    authorize(&state, &headers)?;
    state
        .simulator
        .reconfigure(&change)
        .map_err(|e| ApiFailure::bad_request(Some("invalid_value"), e, None))?;
    Ok(Json(state.simulator.settings()).into_response())
}
