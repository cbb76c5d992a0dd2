//! WebSocket mode, one API on both backends: one connection kept across turns (the point of the
//! mode), `response.create` with continuation and lanes, `response.append`, `response.inject`,
//! `response.steer`, and frames read one at a time or a response to its end.
//!
//! Lanes (`stream_id`) share the connection: a turn on one lane reads its own events and keeps
//! the other lanes' for their readers ([`WebSocket::next_on`], `crate::lanes`).
//!
//! Everything here is written once over the backend's [`Connection`]: natively
//! tokio-tungstenite, in a browser the page's `WebSocket` (whose upgrade carries a minted client
//! secret, and whose refusal is explained over HTTP: `docs/client.md`, "In a browser").

use tether_protocol::{Input, ResponseCreate};

#[cfg(target_arch = "wasm32")]
use crate::browser::WsConnection;
use crate::connection::Connection;
use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::frame::Frame;
use crate::lanes::Lanes;
#[cfg(not(target_arch = "wasm32"))]
use crate::native::WsConnection;
use crate::turn::{Finished, TurnReader};
use crate::wire;

/// An open WebSocket-mode connection to `/v1/responses` (in a browser, closed with 1000 when
/// dropped).
///
/// ```no_run
/// # async fn example() -> Result<(), tether_client::Error> {
/// use tether_client::{Endpoint, WebSocket};
/// use tether_protocol::ResponseCreate;
///
/// let endpoint = Endpoint::new("http://127.0.0.1:8080")?;
/// let mut ws = WebSocket::connect(&endpoint).await?;
/// let first = ws.turn(&ResponseCreate::new("spark", "List the files.")).await?;
/// let mut next = ResponseCreate::new("spark", "Now the tests.");
/// next.store = Some(false);
/// next.previous_response_id = Some(first.response.id.clone());
/// let second = ws.turn(&next).await?; // served from the connection cache
/// println!("{}", second.response.output_text());
/// ws.close().await;
/// # Ok(()) }
/// ```
pub struct WebSocket {
    connection: WsConnection,
    /// Frames read for another lane than the one being read.
    lanes: Lanes,
}

impl std::fmt::Debug for WebSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocket")
            .field("url", &self.url())
            .field("parked", &self.lanes.len())
            .field("close_code", &self.close_code())
            .finish_non_exhaustive()
    }
}

impl WebSocket {
    /// Opens a connection and completes the upgrade. Natively the endpoint's key, timing
    /// opt-in, betas and headers go on the upgrade request; in a browser the opt-ins go in the
    /// URL's query and the key as a minted client secret, and a socket that does not open is
    /// diagnosed over HTTP.
    pub async fn connect(endpoint: &Endpoint) -> Result<WebSocket, Error> {
        Ok(WebSocket {
            connection: WsConnection::connect(endpoint).await?,
            lanes: Lanes::default(),
        })
    }

    /// The URL this connection was opened to.
    pub fn url(&self) -> &str {
        self.connection.url()
    }

    /// The headers of the server's answer to the upgrade (names in lower case): what a server
    /// says about the connection, such as its rate limits (`x-ratelimit-*`). Always empty in a
    /// browser, which shows a page none of them.
    pub fn handshake_headers(&self) -> &[(String, String)] {
        self.connection.handshake_headers()
    }

    /// The code of the close frame the server ended the connection with (1000, 1001 going
    /// away, 1008 a policy, 1009 a message too big), once read; natively `None` before, or
    /// when the connection ended without one; in a browser 1006 then.
    pub fn close_code(&self) -> Option<u16> {
        self.connection.close_code()
    }

    /// Sends a text frame as it is (any client frame, or something a test wants the server to
    /// refuse).
    pub async fn send_text(&mut self, text: impl Into<String>) -> Result<(), Error> {
        self.connection.send_text(text.into()).await
    }

    /// Sends `response.create` for `request` (its `stream_id` names its lane).
    pub async fn create(&mut self, request: &ResponseCreate) -> Result<(), Error> {
        self.lanes.sending(request);
        self.send_text(wire::create_frame(request)).await
    }

    /// Resumes the response paused on `stream_id`'s lane with `input` (v1 beta,
    /// [`crate::APPEND_BETA`] on the endpoint).
    pub async fn append(&mut self, input: Input, stream_id: Option<&str>) -> Result<(), Error> {
        self.send_text(wire::append_frame(input, stream_id)).await
    }

    /// Gives input to a response waiting for it (multi-agent beta,
    /// [`crate::MULTI_AGENT_BETA`]).
    pub async fn inject(&mut self, response_id: &str, input: Input) -> Result<(), Error> {
        self.send_text(wire::inject_frame(response_id, input)).await
    }

    /// Steers the running response `response_id` with user input.
    pub async fn steer(&mut self, response_id: &str, input: Input) -> Result<(), Error> {
        self.send_text(wire::steer_frame(response_id, input)).await
    }

    /// The next text frame, whatever its lane; `Err(Closed)` once the connection ended. Pings
    /// are answered on the way. Cancel-safe: dropped before it finished, it leaves any frame
    /// not yet read to the next call (so it can race a send in a `select`).
    pub async fn next(&mut self) -> Result<Frame, Error> {
        match self.lanes.any() {
            Some(frame) => Ok(frame),
            None => self.connection.read().await,
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
            let frame = self.connection.read().await?;
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

    /// Closes the connection: natively a close frame, then the end of the socket, at most a
    /// second; in a browser the page's socket closes with 1000.
    pub async fn close(self) {
        self.connection.close().await;
    }
}
