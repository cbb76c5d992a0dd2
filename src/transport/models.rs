//! `GET /v1/models`: the model profiles the server offers, for the settings' profile selector,
//! asked with `tether-client`'s [`Http`].

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

/// Fetches the model ids of the server at `endpoint`.
pub async fn fetch_models(endpoint: &Endpoint) -> Result<Vec<String>, String> {
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
    parse_models(&reply.text())
}

/// Whether the server at `endpoint` takes client-chosen conditions: `GET /v1/models` asking for
/// local API costs (what any run of this page may ask) answers 400 `conditions_not_allowed` on
/// a server started without `--allow-client-conditions`. `Some(its message)` when it refuses;
/// `None` when it takes them, or when the answer says nothing either way (a run says the rest).
pub async fn conditions_refused(endpoint: &Endpoint) -> Option<String> {
    let endpoint = endpoint.clone().with_query("tether_api_costs", "local");
    let reply = Http::new(&endpoint).get("/v1/models").await.ok()?;
    refusal(reply.status, &reply.text())
}

/// The server's refusal of client-chosen conditions in a reply, if that is what it is.
fn refusal(status: u16, body: &str) -> Option<String> {
    (status == 400 && body.contains("conditions_not_allowed")).then(|| error_message(body))
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
    fn only_the_conditions_error_is_a_refusal() {
        let refused = r#"{"error":{"message":"This server does not accept client-chosen conditions (tether_api_costs); start it with --allow-client-conditions (cargo xtask run does) or leave them out.","type":"invalid_request_error","param":"tether_api_costs","code":"conditions_not_allowed"}}"#;
        assert!(
            refusal(400, refused)
                .unwrap()
                .contains("--allow-client-conditions")
        );
        assert_eq!(refusal(200, r#"{"data":[]}"#), None);
        assert_eq!(
            refusal(400, r#"{"error":{"code":"invalid_value","message":"x"}}"#),
            None
        );
        assert_eq!(refusal(401, "conditions_not_allowed"), None);
    }
}
