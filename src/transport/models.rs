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
}
