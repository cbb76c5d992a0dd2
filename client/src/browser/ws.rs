//! The browser backend's WebSocket-mode connection, on the page's own WebSocket
//! ([`super::socket`]). [`crate::WebSocket`] is written over it.
//!
//! With an API key, the upgrade carries a client secret minted for it — never the key in the
//! URL ([`crate::secrets`]); a socket that does not open is diagnosed over HTTP before anything
//! is reported ([`crate::diagnosis`]): the browser hides why an upgrade failed.

use super::socket::{Next, Socket};
use super::{body_bytes, fetch};
use crate::connection::Connection;
use crate::diagnosis::{Probe, refused_upgrade, unreachable};
use crate::endpoint::{Endpoint, shown_url};
use crate::error::{Error, error_message};
use crate::frame::Frame;
use crate::secrets::{Credential, MINT_PATH, mint_body, read_minted};

/// An open connection; closed (1000) when dropped.
pub(crate) struct WsConnection {
    socket: Socket,
    url: String,
    close_code: Option<u16>,
}

impl Connection for WsConnection {
    /// The endpoint's timing opt-in and betas go in the URL's query, its key as a minted client
    /// secret.
    async fn connect(endpoint: &Endpoint) -> Result<WsConnection, Error> {
        let url = endpoint.browser_websocket_url();
        let credential = match endpoint.api_key() {
            Some(key) => Some(mint(endpoint, key, &url).await?),
            None => None,
        };
        let protocols = credential
            .as_ref()
            .map(Credential::subprotocols)
            .unwrap_or_default();
        let socket = Socket::open(&url, &protocols).map_err(|detail| Error::Connect {
            url: shown_url(&url).to_string(),
            detail: format!("cannot open a WebSocket: {detail}"),
            io: None,
        })?;
        match socket.opened().await {
            Ok(()) => Ok(WsConnection {
                socket,
                url,
                close_code: None,
            }),
            Err(_) => Err(explain(endpoint, &url, credential.as_ref()).await),
        }
    }

    fn url(&self) -> &str {
        &self.url
    }

    /// Always empty: a browser shows a page none of them.
    fn handshake_headers(&self) -> &[(String, String)] {
        &[]
    }

    /// 1006 when the connection was lost without a close frame.
    fn close_code(&self) -> Option<u16> {
        self.close_code
    }

    async fn send_text(&mut self, text: String) -> Result<(), Error> {
        self.socket
            .send(&text)
            .map_err(|detail| Error::Closed(format!("sending failed: {detail}")))
    }

    async fn read(&mut self) -> Result<Frame, Error> {
        match self.socket.next().await {
            Next::Text(text) => Ok(Frame::new(text)),
            Next::Binary => Err(Error::Protocol(
                "a binary frame; the protocol sends JSON text frames only".into(),
            )),
            Next::Ended(ended) => {
                self.close_code = Some(ended.code);
                Err(Error::Closed(ended.describe()))
            }
        }
    }

    async fn close(self) {
        self.socket.close(1000, "closed by the client");
    }
}

/// Mints the credential an upgrade to `ws_url` offers: a client secret, or the key where the
/// server mints none.
async fn mint(endpoint: &Endpoint, key: &str, ws_url: &str) -> Result<Credential, Error> {
    let url = endpoint.request_url(MINT_PATH);
    let headers = [
        ("Authorization", format!("Bearer {key}")),
        ("Content-Type", "application/json".to_string()),
    ];
    let response = fetch("POST", &url, &headers, Some(mint_body().as_bytes()))
        .await
        .map_err(|detail| unreachable(&url, &detail))?;
    let body = body_bytes(&response)
        .await
        .map_err(|detail| unreachable(&url, &detail))?;
    read_minted(
        &url,
        ws_url,
        key,
        response.status(),
        &String::from_utf8_lossy(&body),
    )
}

/// Why the socket to `ws_url` ended before it opened: `GET /v1/models` with the same key says.
async fn explain(endpoint: &Endpoint, ws_url: &str, credential: Option<&Credential>) -> Error {
    let models = endpoint.request_url("/v1/models");
    let headers: Vec<(&str, String)> = endpoint
        .api_key()
        .map(|key| ("Authorization", format!("Bearer {key}")))
        .into_iter()
        .collect();
    let probe = match fetch("GET", &models, &headers, None).await {
        Ok(response) => {
            let status = response.status();
            let body = body_bytes(&response).await.unwrap_or_default();
            Probe::Status {
                status,
                message: if (200..300).contains(&status) {
                    String::new()
                } else {
                    error_message(&String::from_utf8_lossy(&body))
                },
            }
        }
        Err(detail) => Probe::Unreachable(detail),
    };
    refused_upgrade(
        ws_url,
        &models,
        endpoint.api_key().is_some(),
        credential.is_some_and(Credential::is_secret),
        probe,
    )
}
