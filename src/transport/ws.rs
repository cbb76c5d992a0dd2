//! WebSocket mode: one connection, reused across turns (the point of the mode), on
//! `tether-client`'s [`WebSocket`] — which mints the upgrade's client secret from the API key
//! (never the key in the URL) and, when a socket does not open, asks the same server over HTTP
//! why (a browser hides it).
//!
//! A connection is driven by one task that owns it ([`spawn_driver`]): it reads frames and hands
//! them on, and sends what is queued for it, whichever comes first. So a frame can be sent while
//! a turn streams (a `response.steer` from the page, beside the agent loop), and a frame sent
//! before the socket opened waits for it. Two clients over that driver:
//! - [`WsClient`], behind the single-turn chat view: every frame, decoded into an [`Incoming`],
//!   goes to the callback given at connect time;
//! - [`WsTransport`], behind the agent loop: the [`Transport`] trait, one event at a time.
//!
//! The connection closes (1000) when its client is dropped.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::StreamExt;
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::future::{Either, LocalBoxFuture, select};
use tether_client::{Endpoint, Error, Frame, WebSocket};
use tether_protocol::{ResponseCreate, ServerEvent};

use crate::transport::client::received;
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

/// Decodes one text frame from the server (by the protocol's decoder).
pub fn decode_incoming(text: &str) -> Incoming {
    match ServerEvent::from_json(text) {
        Ok(event) => Incoming::Event(Box::new(event)),
        Err(error) => Incoming::Undecodable(error.to_string()),
    }
}

/// What a connection's driver hands on, in order: `Opened` once, then frames, then at most one
/// `Ended`.
#[derive(Debug)]
pub enum Delivery {
    /// The upgrade succeeded.
    Opened,
    Frame(Frame),
    /// The connection did not open (the error says why, diagnosed) or ended.
    Ended(Error),
}

/// The driver's next step: a frame read, or a frame to send.
enum Step {
    Read(Result<Frame, Error>),
    Send(Option<String>),
}

/// Opens a connection to `endpoint` on a task of its own, which hands everything it reads to
/// `deliver` and sends every text `outgoing` yields. The connection closes (1000) once
/// `outgoing` ends (its senders are dropped) or `deliver` returns `false` (nobody listens).
pub fn spawn_driver(
    endpoint: Endpoint,
    mut outgoing: UnboundedReceiver<String>,
    deliver: impl Fn(Delivery) -> bool + 'static,
) {
    wasm_bindgen_futures::spawn_local(async move {
        let mut ws = match WebSocket::connect(&endpoint).await {
            Ok(ws) => ws,
            Err(error) => {
                deliver(Delivery::Ended(error));
                return;
            }
        };
        if !deliver(Delivery::Opened) {
            ws.close().await;
            return;
        }
        loop {
            let step = {
                // Reading is cancel-safe: a frame not yet read stays with the socket.
                let read = std::pin::pin!(ws.next());
                match select(read, outgoing.next()).await {
                    Either::Left((read, _)) => Step::Read(read),
                    Either::Right((text, _)) => Step::Send(text),
                }
            };
            match step {
                Step::Read(Ok(frame)) => {
                    if !deliver(Delivery::Frame(frame)) {
                        break;
                    }
                }
                Step::Read(Err(error)) => {
                    deliver(Delivery::Ended(error));
                    return;
                }
                Step::Send(Some(text)) => {
                    if let Err(error) = ws.send_text(text).await {
                        deliver(Delivery::Ended(error));
                        return;
                    }
                }
                Step::Send(None) => break,
            }
        }
        ws.close().await;
    });
}

/// An open (or opening) WebSocket-mode connection for the chat view.
pub struct WsClient {
    outgoing: UnboundedSender<String>,
    ended: Rc<Cell<bool>>,
}

impl WsClient {
    /// Opens a connection to `endpoint`; every frame received is passed to `on_incoming`, and
    /// one that does not open is explained.
    pub fn connect(endpoint: Endpoint, on_incoming: impl Fn(Incoming) + 'static) -> Self {
        let (outgoing, queued) = unbounded();
        let ended = Rc::new(Cell::new(false));
        let opened = Cell::new(false);
        let over = ended.clone();
        spawn_driver(endpoint, queued, move |delivery| {
            match delivery {
                Delivery::Opened => opened.set(true),
                Delivery::Frame(frame) => on_incoming(decode_incoming(frame.text())),
                Delivery::Ended(error) => {
                    over.set(true);
                    let reason = closed_reason(error);
                    on_incoming(if opened.get() {
                        Incoming::Closed(reason)
                    } else {
                        Incoming::NotOpened(reason)
                    });
                }
            }
            true
        });
        WsClient { outgoing, ended }
    }

    /// Sends a text frame (once the socket is open).
    pub fn send(&self, text: String) -> Result<(), String> {
        self.outgoing
            .unbounded_send(text)
            .map_err(|_| "the WebSocket is closed".to_string())
    }

    /// Whether the connection is still usable (open, or opening).
    pub fn is_open(&self) -> bool {
        !self.ended.get() && !self.outgoing.is_closed()
    }
}

/// How an ended connection is reported: a close by its reason alone, anything else whole.
fn closed_reason(error: Error) -> String {
    match TransportError::from(error) {
        TransportError::Closed(reason) => reason,
        other => other.to_string(),
    }
}

/// Where a [`WsTransport`]'s frames go, shared with its [`SideChannel`]: the open connection's
/// queue, `None` while there is none.
#[derive(Clone, Default)]
struct Outgoing(Rc<RefCell<Option<UnboundedSender<String>>>>);

impl SideChannel for Outgoing {
    fn send(&self, text: &str) -> Result<(), String> {
        match self.0.borrow().as_ref() {
            Some(queue) => queue
                .unbounded_send(text.to_string())
                .map_err(|_| "the WebSocket is closed".to_string()),
            None => Err("the WebSocket is not open".into()),
        }
    }
}

/// WebSocket mode as a [`Transport`]: one connection for the whole agent run, closed on drop.
pub struct WsTransport {
    endpoint: Endpoint,
    outgoing: Outgoing,
    /// What the open connection's driver delivers; `None` while there is none.
    incoming: Option<UnboundedReceiver<Delivery>>,
    opened: bool,
    /// Why the connection is gone, once it is.
    error: Option<TransportError>,
}

impl WsTransport {
    /// A connection to `endpoint` (made by [`super::client::endpoint`], which asks for the
    /// server's timing summary on every terminal event). It opens at [`Transport::ready`] or
    /// the first send.
    pub fn new(endpoint: Endpoint) -> Self {
        WsTransport {
            endpoint,
            outgoing: Outgoing::default(),
            incoming: None,
            opened: false,
            error: None,
        }
    }

    /// Ends the connection with `error`, which every later call returns.
    fn lose(&mut self, error: TransportError) -> TransportError {
        self.drop_connection();
        self.error = Some(error.clone());
        error
    }

    /// Lets the connection go: its driver closes it.
    fn drop_connection(&mut self) {
        self.outgoing.0.borrow_mut().take();
        self.incoming = None;
        self.opened = false;
    }

    /// Starts a connection unless one is open or the transport failed.
    fn start(&mut self) -> Result<(), TransportError> {
        if self.incoming.is_some() {
            return Ok(());
        }
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        let (outgoing, queued) = unbounded();
        let (delivered, incoming) = unbounded();
        spawn_driver(self.endpoint.clone(), queued, move |delivery| {
            delivered.unbounded_send(delivery).is_ok()
        });
        *self.outgoing.0.borrow_mut() = Some(outgoing);
        self.incoming = Some(incoming);
        Ok(())
    }

    /// What the driver delivers next; a driver gone without a word is a closed connection.
    async fn delivery(&mut self) -> Result<Delivery, TransportError> {
        let next = match (self.incoming.as_mut(), &self.error) {
            (Some(incoming), _) => incoming.next().await,
            (None, Some(error)) => return Err(error.clone()),
            (None, None) => return Err(TransportError::Closed("the connection is closed".into())),
        };
        match next {
            Some(Delivery::Ended(error)) => Err(self.lose(error.into())),
            Some(delivery) => Ok(delivery),
            None => Err(self.lose(TransportError::Closed("the connection is closed".into()))),
        }
    }

    /// Why the driver ended the connection, if it said so before it went (what it read before
    /// that is dropped: the connection is lost either way).
    fn why_ended(&mut self) -> Option<TransportError> {
        let incoming = self.incoming.as_mut()?;
        while let Ok(delivery) = incoming.try_recv() {
            if let Delivery::Ended(error) = delivery {
                return Some(error.into());
            }
        }
        None
    }

    /// Waits for the connection to open; one that does not is diagnosed.
    async fn open(&mut self) -> Result<(), TransportError> {
        self.start()?;
        while !self.opened {
            if let Delivery::Opened = self.delivery().await? {
                self.opened = true;
            }
        }
        Ok(())
    }
}

impl Drop for WsTransport {
    fn drop(&mut self) {
        // The side channel may outlive the transport: the connection closes with the transport.
        self.drop_connection();
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
            if let Err(error) = self.outgoing.send(text) {
                let error = self.why_ended().unwrap_or(TransportError::Closed(error));
                return Err(self.lose(error));
            }
            Ok(())
        })
    }

    fn next_event(&mut self) -> LocalBoxFuture<'_, Result<Received, TransportError>> {
        Box::pin(async move {
            loop {
                if let Delivery::Frame(frame) = self.delivery().await? {
                    return received(frame);
                }
            }
        })
    }

    fn ready(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(self.open())
    }

    fn reconnect(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            // A fresh connection, and a fresh client secret: the last one may have expired.
            self.drop_connection();
            self.error = None;
            self.start()
        })
    }

    fn side_channel(&self) -> Option<Rc<dyn SideChannel>> {
        Some(Rc::new(self.outgoing.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_decode_to_events_or_reasons() {
        let event = decode_incoming(
            r#"{"type":"response.output_text.delta","sequence_number":3,
            "item_id":"m","output_index":0,"content_index":0,"delta":"hi","logprobs":[]}"#,
        );
        assert!(matches!(event, Incoming::Event(e) if e.sequence_number == Some(3)));
        assert!(matches!(decode_incoming("nope"), Incoming::Undecodable(_)));
    }

    #[test]
    fn a_close_is_reported_by_its_reason_and_a_refusal_whole() {
        assert_eq!(closed_reason(Error::Closed("1006".into())), "1006");
        let refused = Error::UpgradeRefused {
            url: "ws://h/v1/responses".into(),
            status: None,
            error: None,
            detail: "401: wrong API key".into(),
        };
        assert_eq!(closed_reason(refused), "401: wrong API key");
    }

    #[test]
    fn a_send_on_a_lost_connection_says_why_the_driver_ended_it() {
        let mut transport = WsTransport::new(Endpoint::new("http://127.0.0.1:9").unwrap());
        assert!(
            transport.why_ended().is_none(),
            "no connection, nothing said"
        );
        let (delivered, incoming) = unbounded();
        delivered
            .unbounded_send(Delivery::Frame(Frame::new("{}")))
            .unwrap();
        let going_away = Error::Closed("closed by the server (1001: shutting down)".into());
        delivered
            .unbounded_send(Delivery::Ended(going_away))
            .unwrap();
        transport.incoming = Some(incoming);
        assert_eq!(
            transport.why_ended(),
            Some(TransportError::Closed(
                "closed by the server (1001: shutting down)".into()
            ))
        );
        assert!(transport.why_ended().is_none());
    }

    #[test]
    fn a_side_channel_without_a_connection_says_so() {
        let outgoing = Outgoing::default();
        assert_eq!(
            outgoing.send("{}").unwrap_err(),
            "the WebSocket is not open"
        );
        let (queue, mut queued) = unbounded();
        *outgoing.0.borrow_mut() = Some(queue);
        outgoing.send("{\"type\":\"response.steer\"}").unwrap();
        assert_eq!(
            queued.try_recv().ok().as_deref(),
            Some("{\"type\":\"response.steer\"}")
        );
        drop(queued);
        assert_eq!(outgoing.send("{}").unwrap_err(), "the WebSocket is closed");
    }
}
