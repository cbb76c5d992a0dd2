//! WebSocket mode over tokio-tungstenite: one connection, kept across turns (the point of the
//! mode), with its frames read one at a time.
//!
//! Lanes (`stream_id`) share the connection: a turn on one lane reads its own events and keeps
//! the other lanes' for their readers ([`WebSocket::next_on`], `crate::lanes`, as in the
//! browser backend).

use futures_util::{SinkExt, StreamExt};
use tether_protocol::{Input, ResponseCreate};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};

use crate::endpoint::Endpoint;
use crate::error::{Error, api_error_of};
use crate::frame::Frame;
use crate::lanes::Lanes;
use crate::turn::{Finished, TurnReader};
use crate::wire;

/// How much tungstenite reads at most per system call. It zero-fills that much of its buffer
/// before every read, and at its default 128 KiB that memset costs more than the frames a
/// client reads; a larger frame takes a few more reads.
const READ_BUFFER: usize = 8 * 1024;

/// An open WebSocket-mode connection to `/v1/responses`.
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
    socket: WebSocketStream<TcpStream>,
    url: String,
    /// Frames read for another lane than the one being read.
    lanes: Lanes,
    /// The code of the close frame the server sent, once it has.
    close_code: Option<u16>,
    /// The headers of the server's `101 Switching Protocols`.
    handshake_headers: Vec<(String, String)>,
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
    /// Opens a connection and completes the upgrade, with the endpoint's key, timing opt-in,
    /// betas and headers on the upgrade request.
    pub async fn connect(endpoint: &Endpoint) -> Result<WebSocket, Error> {
        let url = endpoint.upgrade_url();
        let stream = super::connect_tcp(endpoint, &url).await?;
        let mut request =
            url.as_str()
                .into_client_request()
                .map_err(|error| Error::InvalidUrl {
                    url: url.clone(),
                    reason: error.to_string(),
                })?;
        for (name, value) in endpoint.upgrade_headers() {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| Error::Protocol(format!("'{name}' cannot be an HTTP header name")))?;
            let value = HeaderValue::from_str(&value).map_err(|_| {
                Error::Protocol(format!("the value of {name} is not a valid header"))
            })?;
            request.headers_mut().append(name, value);
        }
        let config = WebSocketConfig::default().read_buffer_size(READ_BUFFER);
        match tokio_tungstenite::client_async_with_config(request, stream, Some(config)).await {
            Ok((socket, response)) => Ok(WebSocket {
                socket,
                url,
                lanes: Lanes::default(),
                close_code: None,
                handshake_headers: response
                    .headers()
                    .iter()
                    .map(|(name, value)| {
                        (
                            name.as_str().to_string(),
                            String::from_utf8_lossy(value.as_bytes()).into_owned(),
                        )
                    })
                    .collect(),
            }),
            Err(tungstenite::Error::Http(response)) => {
                let status = response.status().as_u16();
                let body = response.body().as_deref().unwrap_or_default();
                let error = api_error_of(body);
                let detail = match &error {
                    Some(error) => error.message.clone(),
                    None => String::from_utf8_lossy(body).trim().to_string(),
                };
                Err(Error::UpgradeRefused {
                    url,
                    status: Some(status),
                    error: error.map(Box::new),
                    detail,
                })
            }
            Err(tungstenite::Error::Io(error)) => Err(Error::Connect {
                url,
                detail: error.to_string(),
                io: Some(error.kind()),
            }),
            Err(error) => Err(Error::Connect {
                url,
                detail: format!("the handshake failed: {error}"),
                io: None,
            }),
        }
    }

    /// The URL this connection was opened to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The headers of the server's answer to the upgrade (names in lower case): what a server
    /// says about the connection, such as its rate limits (`x-ratelimit-*`).
    pub fn handshake_headers(&self) -> &[(String, String)] {
        &self.handshake_headers
    }

    /// The code of the close frame the server ended the connection with (1000, 1001 going
    /// away, 1008 a policy, 1009 a message too big), once read; `None` before, or when the
    /// connection ended without one.
    pub fn close_code(&self) -> Option<u16> {
        self.close_code
    }

    /// Sends a text frame as it is (any client frame, or something a test wants the server to
    /// refuse).
    pub async fn send_text(&mut self, text: impl Into<String>) -> Result<(), Error> {
        self.socket
            .send(Message::Text(text.into().into()))
            .await
            .map_err(|error| Error::Closed(format!("sending failed: {error}")))
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
        loop {
            match self.socket.next().await {
                Some(Ok(Message::Text(text))) => return Ok(Frame::of(text)),
                Some(Ok(Message::Binary(_))) => {
                    return Err(Error::Protocol(
                        "a binary frame; the protocol sends JSON text frames only".into(),
                    ));
                }
                Some(Ok(Message::Close(frame))) => {
                    self.close_code = frame.as_ref().map(|frame| u16::from(frame.code));
                    return Err(Error::Closed(match frame {
                        Some(frame) if frame.reason.is_empty() => {
                            format!("closed by the server ({})", u16::from(frame.code))
                        }
                        Some(frame) => format!(
                            "closed by the server ({}: {})",
                            u16::from(frame.code),
                            frame.reason
                        ),
                        None => "closed by the server".into(),
                    }));
                }
                // Pings are answered by tungstenite; pongs say nothing.
                Some(Ok(_)) => continue,
                Some(Err(error)) => return Err(Error::Closed(error.to_string())),
                None => return Err(Error::Closed("the connection ended".into())),
            }
        }
    }

    /// Closes the connection (a close frame, then the end of the socket, at most a second).
    pub async fn close(mut self) {
        let _ =
            tokio::time::timeout(std::time::Duration::from_secs(1), self.socket.close(None)).await;
    }
}
