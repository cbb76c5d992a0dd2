//! How a browser authenticates a WebSocket upgrade without putting the API key in the URL. A
//! page cannot set headers on an upgrade, and a key in `?api_key=` ends up in proxies' and
//! access logs. So, with a key set, the browser backend first mints a short-lived **client
//! secret** with `POST /v1/responses/client_secrets` (`Authorization: Bearer <key>`, over HTTP as
//! every other request) and offers it on the upgrade as the subprotocol
//! `openai-insecure-api-key.<secret>`, beside `responses`, which the server selects
//! (docs/protocol.md §1). The secret is good for the upgrade only and expires after
//! [`SECRET_SECONDS`]; every connection, reconnects included, gets a fresh one.
//!
//! A server that does not mint secrets (404, 405: another Responses server, an older Tether) is
//! offered the key itself as that subprotocol — still never in the URL.
//!
//! Plain Rust (the mint's `fetch` is the backend's): the words and the decoding are tested
//! natively.

use serde::Deserialize;

use crate::endpoint::shown_url;
use crate::error::{Error, error_message};

/// The subprotocol the server selects; offered beside a key or secret.
pub const SUBPROTOCOL: &str = "responses";
/// The prefix of the subprotocol that carries a client secret (or a key).
pub const KEY_SUBPROTOCOL_PREFIX: &str = "openai-insecure-api-key.";
/// How long a minted secret lasts: it is used at once, for one upgrade.
pub const SECRET_SECONDS: u64 = 60;
/// Where secrets are minted, on the server's HTTP base.
pub const MINT_PATH: &str = "/v1/responses/client_secrets";

/// What an upgrade offers as its credential.
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
) -> Result<Credential, Error> {
    let ws_url = shown_url(ws_url);
    let what = "which mints the client secret the WebSocket upgrade carries";
    let refused = |detail: String| Error::UpgradeRefused {
        url: ws_url.to_string(),
        status: None,
        error: crate::error::api_error_of(body.as_bytes()).map(Box::new),
        detail,
    };
    match status {
        200..=299 => match serde_json::from_str::<Minted>(body) {
            Ok(minted) if !minted.value.is_empty() => Ok(Credential::Secret(minted.value)),
            Ok(_) => Err(Error::Protocol(format!(
                "POST {url} ({what}) answered an empty secret"
            ))),
            Err(error) => Err(Error::Protocol(format!(
                "POST {url} ({what}) answered {status} without a secret: {error}"
            ))),
        },
        404 | 405 => Ok(Credential::Key(api_key.to_string())),
        401 => Err(refused(format!(
            "401: wrong API key — the WebSocket upgrade to {ws_url} carries a client secret \
             minted with the key, and POST {url} answers 401{}",
            said(body)
        ))),
        status => Err(refused(format!(
            "{status}: no client secret for the WebSocket upgrade to {ws_url}: POST {url} \
             ({what}) answers {status}{}",
            said(body)
        ))),
    }
}

/// The API's error message in `body`, as `: message`, or nothing.
fn said(body: &str) -> String {
    crate::error::said(&error_message(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://127.0.0.1:9/v1/responses/client_secrets";
    const WS: &str = "ws://127.0.0.1:9/v1/responses?tether_timing=1";

    #[test]
    fn a_minted_secret_is_offered_as_a_subprotocol() {
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
        assert_eq!(wrong.code(), Some("invalid_api_key"));
        let Error::UpgradeRefused { detail, url, .. } = &wrong else {
            panic!("{wrong:?}")
        };
        assert_eq!(url, "ws://127.0.0.1:9/v1/responses");
        assert!(
            detail.starts_with(
                "401: wrong API key — the WebSocket upgrade to ws://127.0.0.1:9/v1/responses \
                 carries a client secret minted with the key, and POST "
            ),
            "{detail}"
        );
        assert!(detail.contains(URL), "{detail}");
        assert!(
            detail.ends_with("answers 401: Incorrect API key provided."),
            "{detail}"
        );
        assert!(!wrong.to_string().contains("sk-bad"), "{wrong}");

        let limited = read_minted(URL, WS, "k", 429, body)
            .unwrap_err()
            .to_string();
        assert!(
            limited.contains("429: no client secret for the WebSocket upgrade"),
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
