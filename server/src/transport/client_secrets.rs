//! `POST /v1/responses/client_secrets`: a short-lived secret (`ek_…`) for the caller's project,
//! for a browser to open WebSocket mode without holding an API key
//! (`crate::tenancy::secrets`). The request is authenticated like every `/v1` route, and only
//! an API key mints: a client secret is accepted on the WebSocket upgrade and nowhere else.
//!
//! The body is optional: `{"expires_after": {"anchor": "created_at", "seconds": N}}`, the
//! shape of the Realtime API's client secrets, with `seconds` from 1 to 3600 (default 600). The
//! answer is `{"value": "ek_…", "expires_at": UNIX_SECONDS}`.

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{Value, json};

use crate::AppState;
use crate::error::ApiFailure;
use crate::tenancy::Project;
use crate::tenancy::secrets::{DEFAULT_TTL, MAX_TTL};

/// `POST /v1/responses/client_secrets`.
pub async fn create(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    body: Bytes,
) -> Result<Response, ApiFailure> {
    let ttl = lifetime(&body)?;
    let minted = state.client_secrets.mint(&project, ttl);
    Ok(Json(json!({"value": minted.value, "expires_at": minted.expires_at})).into_response())
}

/// The lifetime the body asks for: `expires_after.seconds`, else the default.
fn lifetime(body: &[u8]) -> Result<Duration, ApiFailure> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(DEFAULT_TTL);
    }
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        ApiFailure::bad_request(
            None,
            format!("The request body is not valid JSON: {e}"),
            None,
        )
    })?;
    let Value::Object(body) = value else {
        return Err(ApiFailure::bad_request(
            None,
            "The request body must be a JSON object.",
            None,
        ));
    };
    let expires_after = match body.get("expires_after") {
        None | Some(Value::Null) => return Ok(DEFAULT_TTL),
        Some(Value::Object(expires_after)) => expires_after,
        Some(_) => {
            return Err(ApiFailure::bad_request(
                None,
                "expires_after must be an object: {\"anchor\": \"created_at\", \"seconds\": N}.",
                Some("expires_after"),
            ));
        }
    };
    match expires_after.get("anchor") {
        None | Some(Value::Null) => {}
        Some(Value::String(anchor)) if anchor == "created_at" => {}
        Some(other) => {
            return Err(ApiFailure::bad_request(
                Some("invalid_value"),
                format!("expires_after.anchor must be 'created_at', not {other}."),
                Some("expires_after.anchor"),
            ));
        }
    }
    let max = MAX_TTL.as_secs();
    let param = Some("expires_after.seconds");
    let seconds = match expires_after.get("seconds") {
        None | Some(Value::Null) => return Ok(DEFAULT_TTL),
        Some(Value::Number(n)) if n.as_i64().is_some_and(|n| n < 1) => {
            return Err(ApiFailure::bad_request(
                Some("integer_below_min_value"),
                format!("expires_after.seconds must be at least 1, got {n}."),
                param,
            ));
        }
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or(u64::MAX),
        Some(other) => {
            return Err(ApiFailure::bad_request(
                None,
                format!("expires_after.seconds must be an integer from 1 to {max}, got {other}."),
                param,
            ));
        }
    };
    if seconds > max {
        return Err(ApiFailure::bad_request(
            Some("integer_above_max_value"),
            format!("expires_after.seconds must be at most {max}, got {seconds}."),
            param,
        ));
    }
    Ok(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: &str) -> (Option<String>, Option<String>, String) {
        let failure = lifetime(body.as_bytes()).unwrap_err();
        assert_eq!(failure.status, 400, "{body}");
        (
            failure.error.code,
            failure.error.param,
            failure.error.message,
        )
    }

    #[test]
    fn the_lifetime_defaults_and_is_bounded() {
        for body in [
            "",
            "  ",
            "{}",
            r#"{"expires_after": null}"#,
            r#"{"expires_after": {}}"#,
        ] {
            assert_eq!(lifetime(body.as_bytes()).unwrap(), DEFAULT_TTL, "{body}");
        }
        let body = r#"{"expires_after": {"anchor": "created_at", "seconds": 3600}}"#;
        assert_eq!(lifetime(body.as_bytes()).unwrap(), MAX_TTL);
        let body = r#"{"expires_after": {"seconds": 1}}"#;
        assert_eq!(lifetime(body.as_bytes()).unwrap(), Duration::from_secs(1));

        let (code, param, _) = refused(r#"{"expires_after": {"seconds": 3601}}"#);
        assert_eq!(code.as_deref(), Some("integer_above_max_value"));
        assert_eq!(param.as_deref(), Some("expires_after.seconds"));
        for seconds in ["0", "-5"] {
            let (code, _, _) =
                refused(&format!(r#"{{"expires_after": {{"seconds": {seconds}}}}}"#));
            assert_eq!(code.as_deref(), Some("integer_below_min_value"));
        }
        for seconds in ["1.5", "\"60\"", "true"] {
            let (code, param, message) =
                refused(&format!(r#"{{"expires_after": {{"seconds": {seconds}}}}}"#));
            assert_eq!(code, None);
            assert_eq!(param.as_deref(), Some("expires_after.seconds"));
            assert!(message.contains("integer"), "{message}");
        }
        let (code, param, _) = refused(r#"{"expires_after": {"anchor": "now", "seconds": 5}}"#);
        assert_eq!(code.as_deref(), Some("invalid_value"));
        assert_eq!(param.as_deref(), Some("expires_after.anchor"));
        let (_, param, _) = refused(r#"{"expires_after": 60}"#);
        assert_eq!(param.as_deref(), Some("expires_after"));
        let (_, param, message) = refused("[1]");
        assert_eq!(param, None);
        assert!(message.contains("object"), "{message}");
        let (_, _, message) = refused("{");
        assert!(message.contains("not valid JSON"), "{message}");
    }
}
