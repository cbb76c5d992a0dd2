//! Runtime reconfiguration of the simulator: `GET /admin/simulator` shows the seed, every
//! latency profile and the failure rates; `PATCH /admin/simulator` changes any of them, e.g.
//!
//! ```json
//! {"profiles": {"spark": {"tokens_per_second": 2000, "jitter": 0.02}},
//!  "failure_rates": {"server_error": 0.05}}
//! ```
//!
//! Each given field replaces that field; the whole change is validated first and applied only
//! if every value is valid (otherwise 400 and nothing changes). Changes are serialised, and a
//! profile's new timing applies from the next token of every running stream. Both need the
//! admin key (`--admin-key`) as a bearer token; without one configured the endpoint is off
//! (404).

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response as HttpResponse};
use serde_json::{Map, Value, json};

use crate::AppState;
use crate::pipeline::Refusal;
use crate::sim::{FailureRates, Profile};

/// Serialises reconfigurations, so two concurrent changes never interleave.
static RECONFIGURE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn authorize(state: &AppState, headers: &HeaderMap) -> Result<(), Refusal> {
    let Some(key) = state.admin_key.as_deref() else {
        return Err(Refusal::not_found(
            None,
            "The admin endpoint is disabled.",
            None,
        ));
    };
    let given = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if given == Some(key) {
        Ok(())
    } else {
        Err(Refusal {
            status: 401,
            error: tether_protocol::ApiError::invalid_request(
                Some("invalid_admin_key"),
                "The admin endpoint needs `Authorization: Bearer <admin key>`.",
                None,
            ),
        })
    }
}

fn snapshot(state: &AppState) -> Value {
    let simulator = &state.simulator;
    let profiles: Map<String, Value> = simulator
        .profiles()
        .map(|(name, slot)| (name.to_string(), json!(*slot.profile())))
        .collect();
    json!({
        "seed": simulator.seed(),
        "profiles": profiles,
        "failure_rates": simulator.failure_rates(),
    })
}

/// `GET /admin/simulator`.
pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<HttpResponse, Refusal> {
    authorize(&state, &headers)?;
    Ok(Json(snapshot(&state)).into_response())
}

/// `PATCH /admin/simulator`.
pub async fn update(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(change): Json<Value>,
) -> Result<HttpResponse, Refusal> {
    authorize(&state, &headers)?;
    let invalid = |message: String| Refusal::bad_request(Some("invalid_value"), message, None);
    let Some(change) = change.as_object() else {
        return Err(invalid("the body must be a JSON object".into()));
    };
    if let Some(key) = change
        .keys()
        .find(|k| *k != "profiles" && *k != "failure_rates")
    {
        return Err(invalid(format!(
            "unknown field '{key}' (expected profiles, failure_rates)"
        )));
    }
    let _serialised = RECONFIGURE.lock().await;
    let simulator = &state.simulator;
    let mut profiles = Vec::new();
    if let Some(changes) = change.get("profiles") {
        let Some(changes) = changes.as_object() else {
            return Err(invalid("profiles must be an object by model id".into()));
        };
        for (name, fields) in changes {
            let Some((_, slot)) = simulator.profiles().find(|(n, _)| n == name) else {
                return Err(invalid(format!("unknown profile '{name}'")));
            };
            let merged = merge(json!(*slot.profile()), fields)
                .map_err(|e| invalid(format!("profiles.{name}: {e}")))?;
            let profile: Profile = serde_json::from_value(merged)
                .map_err(|e| invalid(format!("profiles.{name}: {e}")))?;
            profile
                .validate()
                .map_err(|e| invalid(format!("profiles.{name}: {e}")))?;
            profiles.push((slot, profile));
        }
    }
    let rates = match change.get("failure_rates") {
        Some(fields) => {
            let merged = merge(json!(simulator.failure_rates()), fields)
                .map_err(|e| invalid(format!("failure_rates: {e}")))?;
            let rates: FailureRates = serde_json::from_value(merged)
                .map_err(|e| invalid(format!("failure_rates: {e}")))?;
            rates
                .validate()
                .map_err(|e| invalid(format!("failure_rates: {e}")))?;
            Some(rates)
        }
        None => None,
    };
    for (slot, profile) in profiles {
        slot.replace(profile);
    }
    if let Some(rates) = rates {
        simulator.set_failure_rates(rates);
    }
    Ok(Json(snapshot(&state)).into_response())
}

/// `current` with the fields of `change` replaced.
fn merge(mut current: Value, change: &Value) -> Result<Value, String> {
    let (Some(target), Some(fields)) = (current.as_object_mut(), change.as_object()) else {
        return Err("must be an object".into());
    };
    for (key, value) in fields {
        target.insert(key.clone(), value.clone());
    }
    Ok(current)
}
