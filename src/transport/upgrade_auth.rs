//! How the page authenticates a WebSocket upgrade without putting the API key in the URL. A
//! browser cannot set headers on an upgrade, and a key in `?api_key=` ends up in proxies' and
//! access logs. So, with a key set, the page first mints a short-lived **client secret** with
//! `POST /v1/responses/client_secrets` (`Authorization: Bearer <key>`, over HTTP as every other
//! request) and offers it on the upgrade as the subprotocol `openai-insecure-api-key.<secret>`,
//! beside `responses`, which the server selects (docs/protocol.md §1, docs/server.md). The
//! secret is good for the upgrade only and expires after [`SECRET_SECONDS`]; each connection,
//! reconnects included, gets a fresh one.
//!
//! A server that does not mint secrets (404, 405: another Responses server, an older Tether) is
//! offered the key itself as that subprotocol — still never in the URL.
//!
//! Plain Rust but for [`credential`]'s `fetch`: the words and the decoding are tested natively.

use serde::Deserialize;

use crate::transport::TransportError;
use crate::transport::diagnose::unreachable;

/// The subprotocol the server selects; offered beside a key or secret.
pub const SUBPROTOCOL: &str = "responses";
/// The prefix of the subprotocol that carries a client secret (or a key).
pub const KEY_SUBPROTOCOL_PREFIX: &str = "openai-insecure-api-key.";
/// How long a minted secret lasts: it is used at once, for one upgrade.
pub const SECRET_SECONDS: u64 = 60;

/// What an upgrade needs to authenticate: the key, and where to mint a secret with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeAuth {
    pub api_key: String,
    /// `http://host/v1/responses/client_secrets`.
    pub secrets_url: String,
}

impl UpgradeAuth {
    /// The upgrade's authentication with `api_key` against the server at `base`; `None` without
    /// a key.
    pub fn new(base: &str, api_key: &str) -> Option<UpgradeAuth> {
        let api_key = api_key.trim();
        (!api_key.is_empty()).then(|| UpgradeAuth {
            api_key: api_key.to_string(),
            secrets_url: format!("{base}/v1/responses/client_secrets"),
        })
    }
}

/// What the upgrade offers as its credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// A minted client secret (`ek_…`).
    Secret(String),
    /// The server mints none: the key itself, as the subprotocol.
    Key(String),
}

impl Credential {
    /// The subprotocols the upgrade offers: `responses` and the credential's.
    pub fn subprotocols(&self) -> Vec<String> {
        let token = match self {
            Credential::Secret(token) | Credential::Key(token) => token,
        };
        vec![
            SUBPROTOCOL.to_string(),
            format!("{KEY_SUBPROTOCOL_PREFIX}{token}"),
        ]
    }

    pub fn is_secret(&self) -> bool {
        matches!(self, Credential::Secret(_))
    }
}

/// The body of the mint: a secret that lasts [`SECRET_SECONDS`].
pub fn mint_body() -> String {
    format!(r#"{{"expires_after":{{"anchor":"created_at","seconds":{SECRET_SECONDS}}}}}"#)
}

#[derive(Deserialize)]
struct Minted {
    value: String,
}

/// What the mint at `url` answered (`status`, `body`) means for the upgrade to `ws_url` with
/// `api_key`.
pub fn read_minted(
    url: &str,
    ws_url: &str,
    api_key: &str,
    status: u16,
    body: &str,
) -> Result<Credential, TransportError> {
    let ws_url = crate::transport::diagnose::shown_url(ws_url);
    let what = "which mints the client secret the WebSocket upgrade carries";
    match status {
        200..=299 => match serde_json::from_str::<Minted>(body) {
            Ok(minted) if !minted.value.is_empty() => Ok(Credential::Secret(minted.value)),
            Ok(_) => Err(TransportError::Undecodable(format!(
                "POST {url} ({what}) answered an empty secret"
            ))),
            Err(error) => Err(TransportError::Undecodable(format!(
                "POST {url} ({what}) answered {status} without a secret: {error}"
            ))),
        },
        404 | 405 => Ok(Credential::Key(api_key.to_string())),
        401 => Err(TransportError::Refused(format!(
            "401: wrong API key — the WebSocket upgrade to {ws_url} carries a client secret \
             minted with the key, and POST {url} answers 401{}",
            said(body)
        ))),
        status => Err(TransportError::Refused(format!(
            "{status}: no client secret for the WebSocket upgrade to {ws_url}: POST {url} \
             ({what}) answers {status}{}",
            said(body)
        ))),
    }
}

/// The API's error message in `body`, as `: message`, or nothing.
fn said(body: &str) -> String {
    let message = crate::transport::http::error_message(body);
    let message = message.trim();
    if message.is_empty() {
        String::new()
    } else {
        format!(": {message}")
    }
}

/// Mints the credential an upgrade offers: a client secret, or the key where the server mints
/// none; the error names what failed and where.
pub async fn credential(auth: &UpgradeAuth, ws_url: &str) -> Result<Credential, TransportError> {
    use crate::transport::fetch::{bearer, fetch, text};
    let authorization = bearer(&auth.api_key).unwrap_or_default();
    let headers = [
        ("Authorization", authorization.as_str()),
        ("Content-Type", "application/json"),
    ];
    let response = fetch("POST", &auth.secrets_url, &headers, Some(&mint_body()))
        .await
        .map_err(|detail| unreachable(&auth.secrets_url, &detail))?;
    let body = text(&response)
        .await
        .map_err(|detail| unreachable(&auth.secrets_url, &detail))?;
    read_minted(
        &auth.secrets_url,
        ws_url,
        &auth.api_key,
        response.status(),
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://127.0.0.1:9/v1/responses/client_secrets";
    const WS: &str = "ws://127.0.0.1:9/v1/responses?tether_timing=1";

    #[test]
    fn a_key_makes_an_upgrade_authenticate_with_a_minted_secret() {
        assert_eq!(UpgradeAuth::new("http://h:1", "  "), None);
        let auth = UpgradeAuth::new("http://h:1", " sk-1 ").unwrap();
        assert_eq!(auth.api_key, "sk-1");
        assert_eq!(auth.secrets_url, "http://h:1/v1/responses/client_secrets");
        let body: serde_json::Value = serde_json::from_str(&mint_body()).unwrap();
        assert_eq!(body["expires_after"]["seconds"], 60);
        assert_eq!(body["expires_after"]["anchor"], "created_at");

        let minted = read_minted(URL, WS, "sk-1", 200, r#"{"value":"ek_abc","expires_at":1}"#);
        assert_eq!(minted, Ok(Credential::Secret("ek_abc".into())));
        assert_eq!(
            minted.unwrap().subprotocols(),
            ["responses", "openai-insecure-api-key.ek_abc"]
        );
    }

    #[test]
    fn a_server_without_secrets_gets_the_key_as_a_subprotocol_never_in_the_url() {
        for status in [404, 405] {
            let credential = read_minted(URL, WS, "sk-1", status, "").unwrap();
            assert!(!credential.is_secret());
            assert_eq!(
                credential.subprotocols(),
                ["responses", "openai-insecure-api-key.sk-1"]
            );
        }
    }

    #[test]
    fn a_failed_mint_names_its_cause_and_where() {
        let body = r#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}"#;
        let wrong = read_minted(URL, WS, "sk-bad", 401, body).unwrap_err();
        assert!(!wrong.is_disconnect());
        let wrong = wrong.to_string();
        assert!(
            wrong.starts_with(
                "401: wrong API key — the WebSocket upgrade to ws://127.0.0.1:9/v1/responses \
                 carries a client secret minted with the key, and POST "
            ),
            "{wrong}"
        );
        assert!(wrong.contains(URL), "{wrong}");
        assert!(
            wrong.ends_with("answers 401: Incorrect API key provided."),
            "{wrong}"
        );
        assert!(!wrong.contains("sk-bad"), "{wrong}");

        let limited = read_minted(URL, WS, "k", 429, body)
            .unwrap_err()
            .to_string();
        assert!(
            limited.starts_with("429: no client secret for the WebSocket upgrade"),
            "{limited}"
        );
        let garbled = read_minted(URL, WS, "k", 200, "<html>")
            .unwrap_err()
            .to_string();
        assert!(garbled.contains("without a secret"), "{garbled}");
        let empty = read_minted(URL, WS, "k", 200, r#"{"value":""}"#).unwrap_err();
        assert!(empty.to_string().contains("empty secret"));
    }
}
