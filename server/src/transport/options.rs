//! The request options a client sets outside the body: `x-tether-fail: KIND` forces an injected
//! failure, `x-tether-timing: 1` asks for Tether's timing summary on the terminal event. Over
//! HTTP they come with each request; in WebSocket mode with the upgrade request, for every
//! response of the connection — and, since a browser cannot set headers on an upgrade, the
//! timing summary can also be asked for as `?tether_timing=1` on the URL. Only an upgrade can
//! ask for the reference's `responsesapi.websocket_timing` event
//! (`x-responsesapi-include-timing-metrics: true`, which Codex sends with its runtime metrics
//! on). The same reason lets an upgrade name its betas as `?openai_beta=` (the `OpenAI-Beta`
//! header's value, URL-encoded: `?openai_beta=responses_websockets%3D2026-02-04`). The
//! conditions a client chooses (`tether_rtt_ms`, …) are parsed and applied to the socket before
//! the handler runs (`transport/link.rs`) and travel with the options.

use axum::http::HeaderMap;

use crate::conditions::Conditions;
use crate::error::ApiFailure;
use crate::model::FailureKind;
use crate::pipeline::RequestOptions;
use crate::tenancy::Project;

/// The options an HTTP request's `headers` ask for, for the key's `project`, under the
/// `conditions` it chose (`transport/link.rs` parsed and applied them); 400 for an unknown
/// failure kind.
pub fn for_http(
    headers: &HeaderMap,
    project: Project,
    conditions: Conditions,
) -> Result<RequestOptions, ApiFailure> {
    Ok(RequestOptions {
        project,
        forced_failure: forced_failure(headers)?,
        report_timing: wants_summary(headers),
        timing_metrics: false,
        append_mode: false,
        multi_agent: false,
        default_model: None,
        trace: None,
        conditions,
    })
}

/// The options an upgrade request's `headers` and URL `query` ask for, for every response of
/// its connection (all of the key's `project`), under the `conditions` it chose; 400 for an
/// unknown failure kind.
pub fn for_upgrade(
    headers: &HeaderMap,
    query: Option<&str>,
    project: Project,
    conditions: Conditions,
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
        append_mode: beta(headers, query, "responses_websockets=2026-02-04"),
        multi_agent: beta(headers, query, "responses_multi_agent=v1"),
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
        trace: None,
        conditions,
    })
}

/// Whether an `OpenAI-Beta` header (comma-separated, possibly repeated) or the URL's
/// `openai_beta` parameter (the header's value, URL-encoded: a browser cannot set headers on an
/// upgrade) names `feature`.
fn beta(headers: &HeaderMap, query: Option<&str>, feature: &str) -> bool {
    let from_query = query.into_iter().flat_map(|query| {
        query
            .split('&')
            .filter_map(|pair| pair.strip_prefix("openai_beta="))
            .map(|value| {
                percent_encoding::percent_decode_str(&value.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            })
    });
    headers
        .get_all("openai-beta")
        .iter()
        .filter_map(|value| value.to_str().ok().map(str::to_string))
        .chain(from_query)
        .any(|value| value.split(',').any(|value| value.trim() == feature))
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

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const V1: &str = "responses_websockets=2026-02-04";

    #[test]
    fn a_beta_comes_from_the_header_or_the_url() {
        let none = HeaderMap::new();
        let mut header = HeaderMap::new();
        header.insert(
            "openai-beta",
            HeaderValue::from_static("responses_multi_agent=v1, responses_websockets=2026-02-04"),
        );
        assert!(beta(&header, None, V1));
        assert!(beta(&header, None, "responses_multi_agent=v1"));
        assert!(!beta(&none, None, V1));
        let encoded = Some("tether_timing=1&openai_beta=responses_websockets%3D2026-02-04");
        assert!(beta(&none, encoded, V1));
        assert!(!beta(&none, encoded, "responses_multi_agent=v1"));
        let both =
            Some("openai_beta=responses_websockets%3D2026-02-04%2Cresponses_multi_agent%3Dv1");
        assert!(beta(&none, both, V1) && beta(&none, both, "responses_multi_agent=v1"));
        assert!(!beta(
            &none,
            Some("openai_beta=responses_websockets%3D2026-02-06"),
            V1
        ));
        assert!(!beta(
            &none,
            Some("beta=responses_websockets%3D2026-02-04"),
            V1
        ));
    }

    #[test]
    fn an_upgrade_turns_append_mode_on_from_its_url() {
        let options = for_upgrade(
            &HeaderMap::new(),
            Some("openai_beta=responses_websockets%3D2026-02-04"),
            Project::open(),
            Conditions::default(),
        )
        .unwrap();
        assert!(options.append_mode && !options.multi_agent);
        let v2 = for_upgrade(
            &HeaderMap::new(),
            Some("tether_timing=1"),
            Project::open(),
            Conditions::default(),
        )
        .unwrap();
        assert!(!v2.append_mode);
    }
}
