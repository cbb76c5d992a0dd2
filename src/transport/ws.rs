//! WebSocket mode with gloo-net: one connection, reused across turns (the point of the mode).
//!
//! Two clients over the same decoding:
//! - [`WsClient`], behind the single-turn chat view: a writer task owns the socket's sending half
//!   and drains a channel, so [`WsClient::send`] never blocks the UI; a reader task decodes every
//!   frame into an [`Incoming`] and hands it to the callback given at connect time.
//! - [`WsTransport`], behind the agent loop: the [`Transport`] trait, pulling one event at a time.

use std::cell::Cell;
use std::pin::Pin;
use std::rc::Rc;

use futures::channel::mpsc;
use futures::future::LocalBoxFuture;
use futures::{SinkExt, StreamExt};
use gloo_net::websocket::futures::WebSocket;
use gloo_net::websocket::{Message, State};
use tether_protocol::{ResponseCreate, ServerEvent};

use crate::transport::{Received, Transport, TransportError, TransportKind, wire_text};

/// What the connection delivers.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Event(Box<ServerEvent>),
    /// A frame that is not a server event; the reason says why.
    Undecodable(String),
    /// The connection ended; the reason says how.
    Closed(String),
}

/// Decodes one text frame from the server.
pub fn decode_incoming(text: &str) -> Incoming {
    match serde_json::from_str::<ServerEvent>(text) {
        Ok(event) => Incoming::Event(Box::new(event)),
        Err(error) => Incoming::Undecodable(error.to_string()),
    }
}

/// The WebSocket URL for a page served from `protocol` (`http:`/`https:`) and `host`
/// (`host:port`): clients derive `ws://host/v1/responses` from `http://host/v1`.
pub fn responses_url(protocol: &str, host: &str) -> String {
    let scheme = if protocol == "https:" { "wss" } else { "ws" };
    format!("{scheme}://{host}/v1/responses")
}

/// `url` with `tether_timing=1` added to its query: the upgrade's opt-in to the server's
/// per-stage timing summary (a browser cannot set the `x-tether-timing` header on an upgrade).
pub fn with_timing(url: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}tether_timing=1")
}

/// An open (or opening) WebSocket-mode connection.
pub struct WsClient {
    outgoing: mpsc::UnboundedSender<String>,
    open: Rc<Cell<bool>>,
}

impl WsClient {
    /// Opens a connection to `url`; every frame received is passed to `on_incoming`.
    pub fn connect(url: &str, on_incoming: impl Fn(Incoming) + 'static) -> Result<Self, String> {
        let socket = WebSocket::open(url).map_err(|e| e.to_string())?;
        let (mut sink, mut stream) = socket.split();
        let (outgoing, mut queued) = mpsc::unbounded::<String>();
        let open = Rc::new(Cell::new(true));

        // gloo-net's sink waits for the connection to open before the first send.
        wasm_bindgen_futures::spawn_local(async move {
            while let Some(text) = queued.next().await {
                if sink.send(Message::Text(text)).await.is_err() {
                    break;
                }
            }
        });
        let reader_open = open.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let reason = loop {
                match stream.next().await {
                    Some(Ok(Message::Text(text))) => on_incoming(decode_incoming(&text)),
                    Some(Ok(Message::Bytes(_))) => {
                        on_incoming(Incoming::Undecodable("a binary frame".into()))
                    }
                    Some(Err(error)) => break error.to_string(),
                    None => break "closed by the server".to_string(),
                }
            };
            reader_open.set(false);
            on_incoming(Incoming::Closed(reason));
        });
        Ok(WsClient { outgoing, open })
    }

    /// Queues a text frame.
    pub fn send(&self, text: String) -> Result<(), String> {
        if !self.is_open() {
            return Err("the connection is closed".into());
        }
        self.outgoing
            .unbounded_send(text)
            .map_err(|e| e.to_string())
    }

    /// Whether the connection is still usable.
    pub fn is_open(&self) -> bool {
        self.open.get()
    }
}

/// WebSocket mode as a [`Transport`]: one socket for the whole agent run, closed on drop.
pub struct WsTransport {
    url: String,
    socket: Option<WebSocket>,
    /// Why the socket is gone, once it is.
    closed: Option<String>,
}

impl WsTransport {
    /// Opens a connection to `url` (`ws://host/v1/responses`), asking for the server's timing
    /// summary on every terminal event ([`with_timing`]).
    pub fn connect(url: &str) -> Result<Self, TransportError> {
        let url = with_timing(url);
        let socket = WebSocket::open(&url).map_err(|e| TransportError::Closed(e.to_string()))?;
        Ok(WsTransport {
            url,
            socket: Some(socket),
            closed: None,
        })
    }

    fn lost(&mut self, reason: String) -> TransportError {
        if let Some(socket) = self.socket.take() {
            // Already failing: a close error adds nothing.
            let _ = socket.close(None, None);
        }
        self.closed = Some(reason.clone());
        TransportError::Closed(reason)
    }

    fn gone(&self) -> TransportError {
        TransportError::Closed(
            self.closed
                .clone()
                .unwrap_or_else(|| "the connection is closed".into()),
        )
    }
}

impl Drop for WsTransport {
    fn drop(&mut self) {
        if let Some(socket) = self.socket.take() {
            // 1000: a normal close; the run is over (or was stopped) and the server may free
            // the connection's cache. Failing to close a socket being dropped changes nothing.
            let _ = socket.close(Some(1000), Some("run finished"));
        }
    }
}

impl Transport for WsTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::WebSocket
    }

    fn send<'a>(
        &'a mut self,
        request: &'a ResponseCreate,
    ) -> LocalBoxFuture<'a, Result<String, TransportError>> {
        Box::pin(async move {
            let frame = wire_text(TransportKind::WebSocket, request);
            let Some(socket) = self.socket.as_mut() else {
                return Err(self.gone());
            };
            // gloo-net's sink waits for the connection to open before the first send.
            match socket.send(Message::Text(frame.clone())).await {
                Ok(()) => Ok(frame),
                Err(error) => Err(self.lost(error.to_string())),
            }
        })
    }

    fn next_event(&mut self) -> LocalBoxFuture<'_, Result<Received, TransportError>> {
        Box::pin(async move {
            let Some(socket) = self.socket.as_mut() else {
                return Err(self.gone());
            };
            match socket.next().await {
                Some(Ok(Message::Text(text))) => match decode_incoming(&text) {
                    Incoming::Event(event) => Ok(Received {
                        event: *event,
                        text,
                    }),
                    Incoming::Undecodable(reason) => Err(TransportError::Undecodable(reason)),
                    Incoming::Closed(reason) => Err(self.lost(reason)),
                },
                Some(Ok(Message::Bytes(_))) => {
                    Err(TransportError::Undecodable("a binary frame".into()))
                }
                Some(Err(error)) => Err(self.lost(error.to_string())),
                None => Err(self.lost("closed by the server".into())),
            }
        })
    }

    fn ready(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            let Some(socket) = self.socket.as_mut() else {
                return Err(self.gone());
            };
            // The sink is ready once the socket has left CONNECTING: open, or failed.
            let waited = futures::future::poll_fn(|cx| {
                futures::Sink::poll_ready(Pin::new(&mut *socket), cx)
            })
            .await;
            match (waited, socket.state()) {
                (Ok(()), State::Open) => Ok(()),
                (Ok(()), _) => Err(self.lost("the WebSocket did not open".into())),
                (Err(error), _) => Err(self.lost(error.to_string())),
            }
        })
    }

    fn reconnect(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            if let Some(socket) = self.socket.take() {
                let _ = socket.close(Some(1000), Some("reconnecting"));
            }
            let socket =
                WebSocket::open(&self.url).map_err(|e| TransportError::Closed(e.to_string()))?;
            self.socket = Some(socket);
            self.closed = None;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_follow_the_page() {
        assert_eq!(
            responses_url("http:", "127.0.0.1:8080"),
            "ws://127.0.0.1:8080/v1/responses"
        );
        assert_eq!(
            responses_url("https:", "tether.example"),
            "wss://tether.example/v1/responses"
        );
    }

    #[test]
    fn the_agent_transport_asks_for_timings_on_the_upgrade_url() {
        assert_eq!(
            with_timing("ws://h/v1/responses"),
            "ws://h/v1/responses?tether_timing=1"
        );
        assert_eq!(
            with_timing("ws://h/v1/responses?x=1"),
            "ws://h/v1/responses?x=1&tether_timing=1"
        );
    }

    #[test]
    fn frames_decode_to_events_or_reasons() {
        let event = decode_incoming(
            r#"{"type":"response.output_text.delta","sequence_number":3,
            "item_id":"m","output_index":0,"content_index":0,"delta":"hi","logprobs":[]}"#,
        );
        assert!(matches!(event, Incoming::Event(e) if e.sequence_number == Some(3)));
        assert!(matches!(decode_incoming("nope"), Incoming::Undecodable(_)));
    }
}
