//! The request options a client sets outside the body: `x-tether-fail: KIND` forces an injected
//! failure, `x-tether-timing: 1` asks for Tether's timing summary on the terminal event. Over
//! HTTP they come with each request; in WebSocket mode with the upgrade request, for every
//! response of the connection — and, since a browser cannot set headers on an upgrade, the
//! timing summary can also be asked for as `?tether_timing=1` on the URL. Only an upgrade can
//! ask for the reference's `responsesapi.websocket_timing` event
//! (`x-responsesapi-include-timing-metrics: true`, which Codex sends with its runtime metrics
//! on).

use axum::http::HeaderMap;

use crate::error::ApiFailure;
use crate::model::FailureKind;
use crate::pipeline::RequestOptions;
use crate::tenancy::Project;

/// The options an HTTP request's `headers` ask for, for the key's `project`; 400 for an unknown
/// failure kind.
pub fn for_http(headers: &HeaderMap, project: Project) -> Result<RequestOptions, ApiFailure> {
    Ok(RequestOptions {
        project,
        forced_failure: forced_failure(headers)?,
        report_timing: wants_summary(headers),
        timing_metrics: false,
        append_mode: false,
        multi_agent: false,
        default_model: None,
    })
}

/// The options an upgrade request's `headers` and URL `query` ask for, for every response of
/// its connection (all of the key's `project`); 400 for an unknown failure kind.
pub fn for_upgrade(
    headers: &HeaderMap,
    query: Option<&str>,
    project: Project,
) -> Result<RequestOptions, ApiFailure> {
    Ok(RequestOptions {
        project,
        forced_failure: forced_failure(headers)?,
        report_timing: wants_summary(headers)
            || query.is_some_and(|query| query.split('&').any(|pair| pair == "tether_timing=1")),
        timing_metrics: headers
            .get("x-responsesapi-include-timing-metrics")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true")),
        append_mode: beta(headers, "responses_websockets=2026-02-04"),
        multi_agent: beta(headers, "responses_multi_agent=v1"),
        default_model: query.and_then(|query| {
            query
                .split('&')
                .find_map(|pair| pair.strip_prefix("model="))
                .filter(|model| !model.is_empty())
                .map(|model| {
                    percent_encoding::percent_decode_str(&model.replace('+', " "))
                        .decode_utf8_lossy()
                        .into_owned()
                })
        }),
    })
}

/// Whether an `OpenAI-Beta` header (comma-separated, possibly repeated) names `feature`.
fn beta(headers: &HeaderMap, feature: &str) -> bool {
    headers
        .get_all("openai-beta")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|value| value.trim() == feature)
}

fn wants_summary(headers: &HeaderMap) -> bool {
    headers
        .get("x-tether-timing")
        .is_some_and(|v| v.as_bytes() == b"1")
}

/// The failure the `x-tether-fail` header forces, if any.
fn forced_failure(headers: &HeaderMap) -> Result<Option<FailureKind>, ApiFailure> {
    let Some(value) = headers.get("x-tether-fail") else {
        return Ok(None);
    };
    let name = value.to_str().unwrap_or_default();
    FailureKind::parse(name).map(Some).ok_or_else(|| {
        let kinds: Vec<&str> = FailureKind::ALL.iter().map(|kind| kind.name()).collect();
        ApiFailure::bad_request(
            None,
            format!(
                "x-tether-fail must be one of {}; got '{name}'.",
                kinds.join(", ")
            ),
            None,
        )
    })
}
