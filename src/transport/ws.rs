//! WebSocket mode: one connection, reused across turns (the point of the mode), on the page's
//! own [`Socket`].
//!
//! Two clients over the same socket and decoding:
//! - [`WsClient`], behind the single-turn chat view: a reader task decodes every frame into an
//!   [`Incoming`] and hands it to the callback given at connect time; a frame sent before the
//!   socket is open waits for it.
//! - [`WsTransport`], behind the agent loop: the [`Transport`] trait, pulling one event at a time.
//!
//! A socket that does not open is diagnosed over HTTP before anything is reported
//! ([`super::diagnose`]): the browser hides why an upgrade failed.

use std::cell::RefCell;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use tether_protocol::{ResponseCreate, ServerEvent};

use crate::transport::decode::decode_event;
use crate::transport::diagnose::{refused_upgrade, shown_url};
use crate::transport::socket::{Ended, Next, Socket};
use crate::transport::{Received, Transport, TransportError, TransportKind};

/// What the connection delivers.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Event(Box<ServerEvent>),
    /// A frame that is not a server event; the reason says why.
    Undecodable(String),
    /// The connection ended; the reason says how.
    Closed(String),
    /// The connection never opened; the reason says why, as far as the page could find out.
    NotOpened(String),
}

/// Decodes one text frame from the server.
pub fn decode_incoming(text: &str) -> Incoming {
    match decode_event(text) {
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

/// Where to ask, over HTTP, why a WebSocket did not open: the same server's `GET /v1/models`,
/// with the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeTarget {
    pub models_url: String,
    pub api_key: String,
}

impl ProbeTarget {
    /// Why the socket to `url` ended before it opened.
    async fn explain(&self, url: &str) -> TransportError {
        let probe = crate::transport::models::probe(&self.models_url, &self.api_key).await;
        refused_upgrade(
            url,
            &self.models_url,
            !self.api_key.trim().is_empty(),
            probe,
        )
    }

    /// How `ended` is reported: a socket that had opened just closed; one that never did is
    /// diagnosed.
    async fn ended(&self, url: &str, ended: Ended) -> TransportError {
        if ended.opened {
            TransportError::Closed(ended.describe())
        } else {
            self.explain(url).await
        }
    }
}

/// An open (or opening) WebSocket-mode connection for the chat view.
pub struct WsClient {
    socket: Rc<Socket>,
    /// Frames sent before the socket opened, sent once it has.
    waiting: Rc<RefCell<Option<Vec<String>>>>,
}

impl WsClient {
    /// Opens a connection to `url`; every frame received is passed to `on_incoming`, and a
    /// connection that does not open is explained (asking `probe`).
    pub fn connect(
        url: &str,
        probe: ProbeTarget,
        on_incoming: impl Fn(Incoming) + 'static,
    ) -> Result<Self, String> {
        let socket = Rc::new(Socket::open(url)?);
        let waiting = Rc::new(RefCell::new(Some(Vec::<String>::new())));
        let reader = socket.clone();
        let queued = waiting.clone();
        let url = url.to_string();
        wasm_bindgen_futures::spawn_local(async move {
            if let Err(ended) = reader.opened().await {
                queued.borrow_mut().take();
                let error = probe.ended(&url, ended).await;
                on_incoming(Incoming::NotOpened(error.to_string()));
                return;
            }
            for text in queued.borrow_mut().take().unwrap_or_default() {
                if let Err(error) = reader.send(&text) {
                    on_incoming(Incoming::Closed(error));
                }
            }
            loop {
                match reader.next().await {
                    Next::Text(text) => on_incoming(decode_incoming(&text)),
                    Next::Binary => on_incoming(Incoming::Undecodable("a binary frame".into())),
                    Next::Ended(ended) => {
                        on_incoming(Incoming::Closed(ended.describe()));
                        break;
                    }
                }
            }
        });
        Ok(WsClient { socket, waiting })
    }

    /// Sends a text frame (once the socket is open).
    pub fn send(&self, text: String) -> Result<(), String> {
        if let Some(waiting) = self.waiting.borrow_mut().as_mut() {
            waiting.push(text);
            return Ok(());
        }
        self.socket.send(&text)
    }

    /// Whether the connection is still usable (open, or opening).
    pub fn is_open(&self) -> bool {
        self.socket.ended().is_none()
    }
}

/// WebSocket mode as a [`Transport`]: one socket for the whole agent run, closed on drop.
pub struct WsTransport {
    url: String,
    probe: ProbeTarget,
    socket: Option<Socket>,
    /// Why the socket is gone, once it is.
    error: Option<TransportError>,
}

impl WsTransport {
    /// Opens a connection to `url` (`ws://host/v1/responses`), asking for the server's timing
    /// summary on every terminal event ([`with_timing`]).
    pub fn connect(url: &str, probe: ProbeTarget) -> Result<Self, TransportError> {
        let url = with_timing(url);
        let socket = Socket::open(&url).map_err(|e| {
            TransportError::Closed(format!(
                "cannot open a WebSocket to {}: {e}",
                shown_url(&url)
            ))
        })?;
        Ok(WsTransport {
            url,
            probe,
            socket: Some(socket),
            error: None,
        })
    }

    /// Ends the socket with `error`, which every later call returns.
    fn lose(&mut self, error: TransportError) -> TransportError {
        self.socket.take();
        self.error = Some(error.clone());
        error
    }

    fn gone(&self) -> TransportError {
        self.error
            .clone()
            .unwrap_or_else(|| TransportError::Closed("the connection is closed".into()))
    }

    /// Waits for the socket to open; one that does not is diagnosed.
    async fn open(&mut self) -> Result<(), TransportError> {
        let opened = match &self.socket {
            Some(socket) => socket.opened().await,
            None => return Err(self.gone()),
        };
        match opened {
            Ok(()) => Ok(()),
            Err(ended) => {
                let error = self.probe.ended(&self.url, ended).await;
                Err(self.lose(error))
            }
        }
    }
}

impl Transport for WsTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::WebSocket
    }

    fn send<'a>(
        &'a mut self,
        _request: &'a ResponseCreate,
        text: &'a str,
    ) -> LocalBoxFuture<'a, Result<(), TransportError>> {
        Box::pin(async move {
            self.open().await?;
            let sent = match &self.socket {
                Some(socket) => socket.send(text),
                None => return Err(self.gone()),
            };
            sent.map_err(|error| self.lose(TransportError::Closed(error)))
        })
    }

    fn next_event(&mut self) -> LocalBoxFuture<'_, Result<Received, TransportError>> {
        Box::pin(async move {
            let next = match &self.socket {
                Some(socket) => socket.next().await,
                None => return Err(self.gone()),
            };
            match next {
                Next::Text(text) => match decode_event(&text) {
                    Ok(event) => Ok(Received { event, text }),
                    Err(error) => Err(TransportError::Undecodable(error.to_string())),
                },
                Next::Binary => Err(TransportError::Undecodable("a binary frame".into())),
                Next::Ended(ended) => {
                    let error = self.probe.ended(&self.url, ended).await;
                    Err(self.lose(error))
                }
            }
        })
    }

    fn ready(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(self.open())
    }

    fn reconnect(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            if let Some(socket) = self.socket.take() {
                socket.close(1000, "reconnecting");
            }
            let socket = Socket::open(&self.url).map_err(|e| {
                TransportError::Closed(format!(
                    "cannot open a WebSocket to {}: {e}",
                    shown_url(&self.url)
                ))
            })?;
            self.socket = Some(socket);
            self.error = None;
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
