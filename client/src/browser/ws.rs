//! WebSocket mode in a browser: the same API as the native backend's, on the page's own
//! WebSocket ([`super::socket`]).
//!
//! With an API key, the upgrade carries a client secret minted for it — never the key in the
//! URL ([`crate::secrets`]); a socket that does not open is diagnosed over HTTP before anything
//! is reported ([`crate::diagnosis`]): the browser hides why an upgrade failed.

use tether_protocol::{Input, ResponseCreate};

use super::socket::{Next, Socket};
use super::{body_bytes, fetch};
use crate::diagnosis::{Probe, error_message, refused_upgrade, shown_url, unreachable};
use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::frame::Frame;
use crate::lanes::Lanes;
use crate::secrets::{Credential, MINT_PATH, mint_body, read_minted};
use crate::turn::{Finished, TurnReader};
use crate::wire;

/// An open WebSocket-mode connection to `/v1/responses`; closed (1000) when dropped.
pub struct WebSocket {
    socket: Socket,
    url: String,
    /// Frames read for another lane than the one being read.
    lanes: Lanes,
    close_code: Option<u16>,
}

impl std::fmt::Debug for WebSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocket")
            .field("url", &self.url)
            .field("parked", &self.lanes.len())
            .field("close_code", &self.close_code)
            .finish_non_exhaustive()
    }
}

impl WebSocket {
    /// Opens a connection and waits for the upgrade: the endpoint's timing opt-in and betas in
    /// the URL's query, its key as a minted client secret.
    pub async fn connect(endpoint: &Endpoint) -> Result<WebSocket, Error> {
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
            Ok(()) => Ok(WebSocket {
                socket,
                url,
                lanes: Lanes::default(),
                close_code: None,
            }),
            Err(_) => Err(explain(endpoint, &url, credential.as_ref()).await),
        }
    }

    /// The URL this connection was opened to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The headers of the server's answer to the upgrade: always empty in a browser, which
    /// shows a page none of them.
    pub fn handshake_headers(&self) -> &[(String, String)] {
        &[]
    }

    /// The close code the connection ended with (1006 when it was lost without a close
    /// frame), once read.
    pub fn close_code(&self) -> Option<u16> {
        self.close_code
    }

    /// Sends a text frame as it is.
    pub async fn send_text(&mut self, text: impl Into<String>) -> Result<(), Error> {
        self.socket
            .send(&text.into())
            .map_err(|detail| Error::Closed(format!("sending failed: {detail}")))
    }

    /// Sends `response.create` for `request` (its `stream_id` names its lane).
    pub async fn create(&mut self, request: &ResponseCreate) -> Result<(), Error> {
        self.lanes.sending(request);
        self.send_text(wire::create_frame(request)).await
    }

    /// Resumes the response paused on `stream_id`'s lane with `input` (v1 beta).
    pub async fn append(&mut self, input: Input, stream_id: Option<&str>) -> Result<(), Error> {
        self.send_text(wire::append_frame(input, stream_id)).await
    }

    /// Gives input to a response waiting for it (multi-agent beta).
    pub async fn inject(&mut self, response_id: &str, input: Input) -> Result<(), Error> {
        self.send_text(wire::inject_frame(response_id, input)).await
    }

    /// Steers the running response `response_id` with user input.
    pub async fn steer(&mut self, response_id: &str, input: Input) -> Result<(), Error> {
        self.send_text(wire::steer_frame(response_id, input)).await
    }

    /// The next text frame, whatever its lane; `Err(Closed)` once the connection ended.
    /// Cancel-safe: dropped before it finished, it leaves any frame not yet read to the next
    /// call (so it can race a send in a `select`).
    pub async fn next(&mut self) -> Result<Frame, Error> {
        match self.lanes.any() {
            Some(frame) => Ok(frame),
            None => self.read().await,
        }
    }

    /// The next frame of `lane` (`None`: the default lane); other lanes' frames are kept for
    /// their own readers.
    pub async fn next_on(&mut self, lane: Option<&str>) -> Result<Frame, Error> {
        if !self.lanes.named() {
            return self.next().await;
        }
        if let Some(frame) = self.lanes.take(lane) {
            return Ok(frame);
        }
        loop {
            let frame = self.read().await?;
            if let Some(frame) = self.lanes.sort(frame, lane) {
                return Ok(frame);
            }
        }
    }

    /// Reads `lane`'s events up to its response's end, passing every frame to `observe` first.
    pub async fn finish_with(
        &mut self,
        lane: Option<&str>,
        mut observe: impl FnMut(&Frame),
    ) -> Result<Finished, Error> {
        let mut reader = TurnReader::new();
        loop {
            let frame = self.next_on(lane).await?;
            observe(&frame);
            if let Some(finished) = reader.read(&frame)? {
                return Ok(finished);
            }
        }
    }

    /// Sends `request` and reads its response to the end.
    pub async fn turn(&mut self, request: &ResponseCreate) -> Result<Finished, Error> {
        self.turn_with(request, |_| {}).await
    }

    /// [`WebSocket::turn`], passing every frame of the response to `observe` as it arrives.
    pub async fn turn_with(
        &mut self,
        request: &ResponseCreate,
        observe: impl FnMut(&Frame),
    ) -> Result<Finished, Error> {
        self.create(request).await?;
        self.finish_with(request.stream_id.as_deref(), observe)
            .await
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

    /// Closes the connection (1000).
    pub async fn close(self) {
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
