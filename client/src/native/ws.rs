//! The native backend's WebSocket-mode connection, over tokio-tungstenite: the upgrade with the
//! endpoint's headers, text frames sent and read one at a time. [`crate::WebSocket`] is written
//! over it.

use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};

use crate::connection::Connection;
use crate::endpoint::Endpoint;
use crate::error::{Error, api_error_of};
use crate::frame::Frame;

/// How much tungstenite reads at most per system call. It zero-fills that much of its buffer
/// before every read, and at its default 128 KiB that memset costs more than the frames a
/// client reads; a larger frame takes a few more reads.
const READ_BUFFER: usize = 8 * 1024;

/// An upgraded connection.
pub(crate) struct WsConnection {
    socket: WebSocketStream<TcpStream>,
    url: String,
    /// The code of the close frame the server sent, once it has.
    close_code: Option<u16>,
    /// The headers of the server's `101 Switching Protocols`.
    handshake_headers: Vec<(String, String)>,
}

impl Connection for WsConnection {
    /// The endpoint's key, timing opt-in, betas and headers go on the upgrade request.
    async fn connect(endpoint: &Endpoint) -> Result<WsConnection, Error> {
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
            Ok((socket, response)) => Ok(WsConnection {
                socket,
                url,
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

    fn url(&self) -> &str {
        &self.url
    }

    fn handshake_headers(&self) -> &[(String, String)] {
        &self.handshake_headers
    }

    fn close_code(&self) -> Option<u16> {
        self.close_code
    }

    async fn send_text(&mut self, text: String) -> Result<(), Error> {
        self.socket
            .send(Message::Text(text.into()))
            .await
            .map_err(|error| Error::Closed(format!("sending failed: {error}")))
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

    /// A close frame, then the end of the socket, at most a second.
    async fn close(mut self) {
        let _ =
            tokio::time::timeout(std::time::Duration::from_secs(1), self.socket.close(None)).await;
    }
}
