//! `GET /v1/models`: the model profiles the server offers, for the settings' profile selector,
//! and whether it takes client-chosen conditions (Tether's `x-tether-client-conditions`), asked
//! with `tether-client`'s [`Http`].

use serde::Deserialize;
use tether_client::error::error_message;
use tether_client::{Endpoint, Http};

#[derive(Deserialize)]
struct ModelList {
    data: Vec<ModelEntry>,
}

#[derive(Deserialize)]
struct ModelEntry {
    id: String,
}

/// The model ids of a `/v1/models` answer, in the server's order.
pub fn parse_models(body: &str) -> Result<Vec<String>, String> {
    let list: ModelList =
        serde_json::from_str(body).map_err(|e| format!("the model list does not decode: {e}"))?;
    if list.data.is_empty() {
        return Err("the server lists no models".into());
    }
    Ok(list.data.into_iter().map(|m| m.id).collect())
}

/// What a Tether server says, on its model list, of client-chosen conditions: refused
/// (`x-tether-client-conditions: refused`, started without `--allow-client-conditions`).
pub const CONDITIONS_REFUSED: &str = "This server does not accept client-chosen conditions: it \
     was started without --allow-client-conditions (cargo xtask run passes it).";

/// A server's model list, and whether it refuses client-chosen conditions (a server that does
/// not say — not Tether's — is taken to accept them; a run then says otherwise).
pub struct Models {
    pub ids: Vec<String>,
    pub conditions_refused: bool,
    /// The scenarios the server plays (`x-tether-scenarios`); `None` from a server that does not
    /// say (in front of an engine, or not Tether): a name is then the server's to refuse.
    pub scenarios: Option<Vec<String>>,
}

/// The names of an `x-tether-scenarios` header.
fn scenario_names(header: Option<&str>) -> Option<Vec<String>> {
    Some(
        header?
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

/// Whether a model list's answer says the server refuses client-chosen conditions.
fn refuses_conditions(header: Option<&str>) -> bool {
    header.is_some_and(|value| value.trim().eq_ignore_ascii_case("refused"))
}

/// Fetches the model ids of the server at `endpoint`.
pub async fn fetch_models(endpoint: &Endpoint) -> Result<Models, String> {
    let reply = Http::new(endpoint)
        .get("/v1/models")
        .await
        .map_err(|e| e.to_string())?;
    if !reply.is_success() {
        return Err(format!(
            "HTTP {}: {}",
            reply.status,
            error_message(&reply.text())
        ));
    }
    Ok(Models {
        ids: parse_models(&reply.text())?,
        conditions_refused: refuses_conditions(reply.header("x-tether-client-conditions")),
        scenarios: scenario_names(reply.header("x-tether-scenarios")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_lists_decode_to_their_ids() {
        let body = r#"{"object":"list","data":[{"id":"tether-sim","object":"model"},{"id":"spark","object":"model"}]}"#;
        assert_eq!(parse_models(body).unwrap(), ["tether-sim", "spark"]);
        assert!(
            parse_models(r#"{"data":[]}"#)
                .unwrap_err()
                .contains("no models")
        );
        assert!(
            parse_models("<html>")
                .unwrap_err()
                .contains("does not decode")
        );
    }

    #[test]
    fn only_a_refused_header_refuses_conditions() {
        assert!(refuses_conditions(Some("refused")));
        assert!(!refuses_conditions(Some("allowed")));
        assert!(
            !refuses_conditions(None),
            "a server that does not say is not refused"
        );
    }

    #[test]
    fn a_scenario_list_is_its_names_and_no_header_is_no_list() {
        assert_eq!(
            scenario_names(Some("fix-sample-project, triage-ci-log")).unwrap(),
            ["fix-sample-project", "triage-ci-log"]
        );
        assert_eq!(scenario_names(None), None);
    }
}
