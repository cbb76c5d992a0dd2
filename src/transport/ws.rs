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
//! ([`super::diagnose`]): the browser hides why an upgrade failed. With an API key, the upgrade
//! carries a client secret minted for it, never the key in the URL ([`super::upgrade_auth`]).

use std::cell::RefCell;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use tether_protocol::{ResponseCreate, ServerEvent};

use crate::transport::decode::decode_event;
use crate::transport::diagnose::{refused_upgrade, shown_url};
use crate::transport::socket::{Ended, Next, Socket};
use crate::transport::upgrade_auth::{Credential, UpgradeAuth, credential};
use crate::transport::{Received, SideChannel, Transport, TransportError, TransportKind};

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
    with_param(url, "tether_timing=1")
}

/// The v1 WebSocket beta (`response.append`, docs/protocol.md §9), as the `OpenAI-Beta` header
/// names it.
pub const APPEND_BETA: &str = "responses_websockets=2026-02-04";

/// `url` asking for the v1 beta: a browser cannot set `OpenAI-Beta` on an upgrade, so the
/// server also reads it from `?openai_beta=` (the header's value, URL-encoded).
pub fn with_append_beta(url: &str) -> String {
    with_param(url, "openai_beta=responses_websockets%3D2026-02-04")
}

fn with_param(url: &str, param: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{param}")
}

/// Where to ask, over HTTP, why a WebSocket did not open: the same server's `GET /v1/models`,
/// with the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeTarget {
    pub models_url: String,
    pub api_key: String,
}

impl ProbeTarget {
    /// Why the socket to `url`, offered `credential`, ended before it opened.
    async fn explain(&self, url: &str, credential: Option<&Credential>) -> TransportError {
        let probe = crate::transport::models::probe(&self.models_url, &self.api_key).await;
        refused_upgrade(
            url,
            &self.models_url,
            !self.api_key.trim().is_empty(),
            credential.is_some_and(Credential::is_secret),
            probe,
        )
    }

    /// How `ended` is reported: a socket that had opened just closed; one that never did is
    /// diagnosed.
    async fn ended(
        &self,
        url: &str,
        credential: Option<&Credential>,
        ended: Ended,
    ) -> TransportError {
        if ended.opened {
            TransportError::Closed(ended.describe())
        } else {
            self.explain(url, credential).await
        }
    }
}

/// Opens a socket to `url`, first minting the credential `auth` asks for (none without a key);
/// returns the socket and the credential it offered.
async fn open_socket(
    url: &str,
    auth: Option<&UpgradeAuth>,
) -> Result<(Socket, Option<Credential>), TransportError> {
    let credential = match auth {
        Some(auth) => Some(credential(auth, url).await?),
        None => None,
    };
    let protocols = credential
        .as_ref()
        .map(Credential::subprotocols)
        .unwrap_or_default();
    let socket = Socket::open(url, &protocols).map_err(|e| {
        TransportError::Closed(format!(
            "cannot open a WebSocket to {}: {e}",
            shown_url(url)
        ))
    })?;
    Ok((socket, credential))
}

/// An open (or opening) WebSocket-mode connection for the chat view.
pub struct WsClient {
    /// `None` while the credential is minted.
    socket: Rc<RefCell<Option<Rc<Socket>>>>,
    /// Frames sent before the socket opened, sent once it has; `None` once it opened or failed.
    waiting: Rc<RefCell<Option<Vec<String>>>>,
    failed: Rc<std::cell::Cell<bool>>,
}

impl WsClient {
    /// Opens a connection to `url` (authenticated by `auth`, when there is a key); every frame
    /// received is passed to `on_incoming`, and a connection that does not open is explained
    /// (asking `probe`).
    pub fn connect(
        url: &str,
        auth: Option<UpgradeAuth>,
        probe: ProbeTarget,
        on_incoming: impl Fn(Incoming) + 'static,
    ) -> Result<Self, String> {
        let socket = Rc::new(RefCell::new(None::<Rc<Socket>>));
        let waiting = Rc::new(RefCell::new(Some(Vec::<String>::new())));
        let failed = Rc::new(std::cell::Cell::new(false));
        let slot = socket.clone();
        let queued = waiting.clone();
        let lost = failed.clone();
        let url = url.to_string();
        wasm_bindgen_futures::spawn_local(async move {
            let (opened, credential) = match open_socket(&url, auth.as_ref()).await {
                Ok((socket, credential)) => (Rc::new(socket), credential),
                Err(error) => {
                    queued.borrow_mut().take();
                    lost.set(true);
                    on_incoming(Incoming::NotOpened(error.to_string()));
                    return;
                }
            };
            *slot.borrow_mut() = Some(opened.clone());
            if let Err(ended) = opened.opened().await {
                queued.borrow_mut().take();
                lost.set(true);
                let error = probe.ended(&url, credential.as_ref(), ended).await;
                on_incoming(Incoming::NotOpened(error.to_string()));
                return;
            }
            for text in queued.borrow_mut().take().unwrap_or_default() {
                if let Err(error) = opened.send(&text) {
                    on_incoming(Incoming::Closed(error));
                }
            }
            loop {
                match opened.next().await {
                    Next::Text(text) => on_incoming(decode_incoming(&text)),
                    Next::Binary => on_incoming(Incoming::Undecodable("a binary frame".into())),
                    Next::Ended(ended) => {
                        lost.set(true);
                        on_incoming(Incoming::Closed(ended.describe()));
                        break;
                    }
                }
            }
        });
        Ok(WsClient {
            socket,
            waiting,
            failed,
        })
    }

    /// Sends a text frame (once the socket is open).
    pub fn send(&self, text: String) -> Result<(), String> {
        if let Some(waiting) = self.waiting.borrow_mut().as_mut() {
            waiting.push(text);
            return Ok(());
        }
        match self.socket.borrow().as_ref() {
            Some(socket) => socket.send(&text),
            None => Err("the WebSocket did not open".into()),
        }
    }

    /// Whether the connection is still usable (open, or opening).
    pub fn is_open(&self) -> bool {
        !self.failed.get()
            && self
                .socket
                .borrow()
                .as_ref()
                .is_none_or(|socket| socket.ended().is_none())
    }
}

/// The socket a [`WsTransport`] has open, shared with its [`SideChannel`].
#[derive(Clone, Default)]
struct SharedSocket(Rc<RefCell<Option<Rc<Socket>>>>);

impl SideChannel for SharedSocket {
    fn send(&self, text: &str) -> Result<(), String> {
        match self.0.borrow().as_ref() {
            Some(socket) => socket.send(text),
            None => Err("the WebSocket is not open".into()),
        }
    }
}

/// WebSocket mode as a [`Transport`]: one socket for the whole agent run, closed on drop.
pub struct WsTransport {
    url: String,
    auth: Option<UpgradeAuth>,
    probe: ProbeTarget,
    socket: SharedSocket,
    /// What the open socket offered as its credential.
    credential: Option<Credential>,
    /// Why the socket is gone, once it is.
    error: Option<TransportError>,
}

impl WsTransport {
    /// A connection to `url` (`ws://host/v1/responses`), asking for the server's timing summary
    /// on every terminal event ([`with_timing`]), and for the v1 beta when `append` (the
    /// long-running design: [`with_append_beta`]); authenticated by `auth` when there is a key.
    /// It opens at [`Transport::ready`] or the first send.
    pub fn connect(url: &str, append: bool, auth: Option<UpgradeAuth>, probe: ProbeTarget) -> Self {
        let mut url = with_timing(url);
        if append {
            url = with_append_beta(&url);
        }
        WsTransport {
            url,
            auth,
            probe,
            socket: SharedSocket::default(),
            credential: None,
            error: None,
        }
    }

    /// Ends the socket with `error`, which every later call returns.
    fn lose(&mut self, error: TransportError) -> TransportError {
        self.socket.0.borrow_mut().take();
        self.error = Some(error.clone());
        error
    }

    fn current(&self) -> Result<Rc<Socket>, TransportError> {
        match (self.socket.0.borrow().as_ref(), &self.error) {
            (Some(socket), _) => Ok(socket.clone()),
            (None, Some(error)) => Err(error.clone()),
            (None, None) => Err(TransportError::Closed("the connection is closed".into())),
        }
    }

    /// Starts opening a socket (minting its credential first) unless one is open or the
    /// transport failed.
    async fn start(&mut self) -> Result<(), TransportError> {
        if self.socket.0.borrow().is_some() {
            return Ok(());
        }
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        let auth = self.auth.clone();
        match open_socket(&self.url, auth.as_ref()).await {
            Ok((socket, credential)) => {
                *self.socket.0.borrow_mut() = Some(Rc::new(socket));
                self.credential = credential;
                Ok(())
            }
            Err(error) => Err(self.lose(error)),
        }
    }

    /// Waits for the socket to open; one that does not is diagnosed.
    async fn open(&mut self) -> Result<(), TransportError> {
        self.start().await?;
        let socket = self.current()?;
        match socket.opened().await {
            Ok(()) => Ok(()),
            Err(ended) => {
                let error = self
                    .probe
                    .ended(&self.url, self.credential.as_ref(), ended)
                    .await;
                Err(self.lose(error))
            }
        }
    }
}

impl Drop for WsTransport {
    fn drop(&mut self) {
        // The side channel may outlive the transport: the socket closes with the transport.
        if let Some(socket) = self.socket.0.borrow_mut().take() {
            socket.close(1000, "run finished");
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
            let sent = self.current()?.send(text);
            sent.map_err(|error| self.lose(TransportError::Closed(error)))
        })
    }

    fn next_event(&mut self) -> LocalBoxFuture<'_, Result<Received, TransportError>> {
        Box::pin(async move {
            let socket = self.current()?;
            match socket.next().await {
                Next::Text(text) => match decode_event(&text) {
                    Ok(event) => Ok(Received { event, text }),
                    Err(error) => Err(TransportError::Undecodable(error.to_string())),
                },
                Next::Binary => Err(TransportError::Undecodable("a binary frame".into())),
                Next::Ended(ended) => {
                    let error = self
                        .probe
                        .ended(&self.url, self.credential.as_ref(), ended)
                        .await;
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
            if let Some(socket) = self.socket.0.borrow_mut().take() {
                socket.close(1000, "reconnecting");
            }
            self.error = None;
            self.credential = None;
            // A fresh credential: the last secret may have expired.
            self.start().await
        })
    }

    fn side_channel(&self) -> Option<Rc<dyn SideChannel>> {
        Some(Rc::new(self.socket.clone()))
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
    fn the_long_running_transport_asks_for_the_v1_beta_on_the_upgrade_url() {
        let url = with_append_beta(&with_timing("ws://h/v1/responses"));
        assert_eq!(
            url,
            "ws://h/v1/responses?tether_timing=1&openai_beta=responses_websockets%3D2026-02-04"
        );
        let value = url
            .split("openai_beta=")
            .nth(1)
            .unwrap()
            .replace("%3D", "=");
        assert_eq!(value, APPEND_BETA);
        assert!(!url.contains("api_key"));
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
