//! `GET /v1/models`: the model profiles the server offers, for the settings' profile selector.

use gloo_net::http::Request;
use serde::Deserialize;

use crate::transport::http::error_message;

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

/// Fetches the model ids from `url` (`http://host/v1/models`), with `api_key` when set.
pub async fn fetch_models(url: &str, api_key: &str) -> Result<Vec<String>, String> {
    let mut request = Request::get(url);
    if !api_key.trim().is_empty() {
        request = request.header("Authorization", &format!("Bearer {}", api_key.trim()));
    }
    let response = request
        .send()
        .await
        .map_err(|e| format!("cannot reach {url}: {e}"))?;
    let body = response
        .text()
        .await
        .map_err(|e| format!("cannot read the model list: {e}"))?;
    if !response.ok() {
        return Err(format!(
            "HTTP {}: {}",
            response.status(),
            error_message(&body)
        ));
    }
    parse_models(&body)
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
