//! `GET /v1/models`: the model profiles the server offers, for the settings' profile selector;
//! and the same request as a [`probe`] of a server whose WebSocket did not open.

use serde::Deserialize;

use crate::transport::diagnose::Probe;
use crate::transport::fetch::{bearer, fetch, text};
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

/// `GET url` with `api_key` when set: the status and the body, or why nothing answered.
async fn get(url: &str, api_key: &str) -> Result<(u16, String), String> {
    let auth = bearer(api_key);
    let headers: Vec<(&str, &str)> = auth
        .iter()
        .map(|auth| ("Authorization", auth.as_str()))
        .collect();
    let response = fetch("GET", url, &headers, None).await?;
    let body = text(&response)
        .await
        .map_err(|e| format!("cannot read the answer: {e}"))?;
    Ok((response.status(), body))
}

/// Fetches the model ids from `url` (`http://host/v1/models`), with `api_key` when set.
pub async fn fetch_models(url: &str, api_key: &str) -> Result<Vec<String>, String> {
    let (status, body) = get(url, api_key)
        .await
        .map_err(|e| format!("cannot reach {url}: {e}"))?;
    if !(200..300).contains(&status) {
        return Err(format!("HTTP {status}: {}", error_message(&body)));
    }
    parse_models(&body)
}

/// What `GET url` answers with `api_key`: a probe of the server behind a failed WebSocket.
pub async fn probe(url: &str, api_key: &str) -> Probe {
    match get(url, api_key).await {
        Ok((status, body)) => Probe::Status {
            status,
            message: if (200..300).contains(&status) {
                String::new()
            } else {
                error_message(&body)
            },
        },
        Err(detail) => Probe::Unreachable(detail),
    }
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
