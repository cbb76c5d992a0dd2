//! A conversation, continued turn after turn over WebSocket mode (or HTTP), with the recovery
//! rules real clients follow (docs/protocol.md §1, §4 and §6; the Codex CLI does each):
//!
//! - **426, or any refused upgrade → HTTP.** WebSocket mode is off (or the upgrade cannot go
//!   through): the rest of the session streams `POST /v1/responses` instead, continuing the
//!   conversation by its store or with the full context.
//! - **`previous_response_not_found` → the full context, once.** The server lost the previous
//!   response (an evicted cache entry, a reconnect with `store: false`, a deleted response): the
//!   turn is sent again with the whole conversation and no `previous_response_id`.
//! - **The connection's lifetime (60 minutes) → a new connection.** The server ends a connection
//!   with `websocket_connection_limit_reached`, and a connection may simply drop: before the
//!   response began, the turn is sent again on a new connection — continued from the store when
//!   the previous response was stored, else with the full context (the new connection's cache
//!   is empty).
//!
//! Each rule can be turned off ([`Recovery`]), and every recovery made is recorded
//! ([`Session::recoveries`]), so a caller that measures a transport can tell it changed. The same
//! code runs over both backends.

use tether_protocol::{Input, Item, ResponseCreate};

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::frame::Frame;
use crate::turn::Finished;
use crate::{Http, WebSocket};

/// Which recovery rules a [`Session`] applies; all of them by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recovery {
    /// A refused upgrade (426 or any other status) moves the session to HTTP.
    pub http_fallback: bool,
    /// `previous_response_not_found` resends the turn once with the full context.
    pub resend_full_context: bool,
    /// A connection that reached its lifetime, or dropped before the response began, is
    /// replaced and the turn sent again, once.
    pub reconnect: bool,
}

impl Default for Recovery {
    fn default() -> Self {
        Recovery {
            http_fallback: true,
            resend_full_context: true,
            reconnect: true,
        }
    }
}

impl Recovery {
    /// No recovery: every failure is returned as it happened.
    pub fn none() -> Recovery {
        Recovery {
            http_fallback: false,
            resend_full_context: false,
            reconnect: false,
        }
    }
}

/// Which transport a session uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    WebSocket,
    Http,
}

/// A recovery a session made.
#[derive(Debug, Clone, PartialEq)]
pub enum Recovered {
    /// The upgrade was refused (`status` when the backend saw it); the session uses HTTP.
    FellBackToHttp { status: Option<u16> },
    /// The server did not have the previous response; the turn was sent with the full context.
    ResentFullContext { previous_response_id: String },
    /// The connection was gone (`reason`); a new one carried the turn.
    Reconnected { reason: String },
}

/// The previous response of the conversation.
#[derive(Debug, Clone)]
struct Previous {
    id: String,
    stored: bool,
    /// The connection it was made on (its cache holds it), or `None` over HTTP.
    connection: Option<u64>,
}

/// One conversation with a server.
///
/// ```no_run
/// # async fn example() -> Result<(), tether_client::Error> {
/// use tether_client::{Endpoint, Session};
/// use tether_protocol::ResponseCreate;
///
/// let mut session = Session::new(Endpoint::new("http://127.0.0.1:8080")?);
/// let mut request = ResponseCreate::new("spark", "Find the failing test.");
/// request.store = Some(false);
/// let first = session.turn(request).await?;
/// // Only the new input goes out: the session chains it to the previous response.
/// let mut next = ResponseCreate::new("spark", "Fix it.");
/// next.store = Some(false);
/// let second = session.turn(next).await?;
/// println!("{} ({:?})", second.response.output_text(), session.transport());
/// # let _ = first; Ok(()) }
/// ```
#[derive(Debug)]
pub struct Session {
    endpoint: Endpoint,
    transport: Transport,
    recovery: Recovery,
    ws: Option<WebSocket>,
    http: Option<Http>,
    /// Counts the connections opened, so that a previous response knows whether the current
    /// connection's cache can hold it.
    connections: u64,
    /// The whole conversation so far: every input item sent, every output item received.
    context: Vec<Item>,
    previous: Option<Previous>,
    recoveries: Vec<Recovered>,
}

impl Session {
    /// A session over WebSocket mode (HTTP once an upgrade is refused); it connects at its
    /// first turn.
    pub fn new(endpoint: Endpoint) -> Session {
        Session::with_transport(endpoint, Transport::WebSocket)
    }

    /// A session over HTTP (SSE) from the start.
    pub fn over_http(endpoint: Endpoint) -> Session {
        Session::with_transport(endpoint, Transport::Http)
    }

    fn with_transport(endpoint: Endpoint, transport: Transport) -> Session {
        Session {
            endpoint,
            transport,
            recovery: Recovery::default(),
            ws: None,
            http: None,
            connections: 0,
            context: Vec::new(),
            previous: None,
            recoveries: Vec::new(),
        }
    }

    /// Applies only the rules `recovery` turns on.
    pub fn with_recovery(mut self, recovery: Recovery) -> Session {
        self.recovery = recovery;
        self
    }

    /// The transport the next turn uses.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// Every recovery made so far, in order.
    pub fn recoveries(&self) -> &[Recovered] {
        &self.recoveries
    }

    /// The id the next turn continues from.
    pub fn previous_response_id(&self) -> Option<&str> {
        self.previous.as_ref().map(|p| p.id.as_str())
    }

    /// The conversation so far: the items sent and received, in order.
    pub fn context(&self) -> &[Item] {
        &self.context
    }

    /// The session's WebSocket, once open: to append, inject or steer on it.
    pub fn websocket(&mut self) -> Option<&mut WebSocket> {
        self.ws.as_mut()
    }

    /// Warms the connection up: `request` (instructions and tools, usually no input) with
    /// `generate: false`, as Codex opens every connection — the server prepares the state and
    /// samples nothing, and the next turn continues from it. Over HTTP, where there is nothing
    /// to warm, it does nothing and returns `None`.
    pub async fn prewarm(
        &mut self,
        mut request: ResponseCreate,
    ) -> Result<Option<Finished>, Error> {
        if self.transport == Transport::WebSocket {
            self.open().await?;
        }
        if self.transport == Transport::Http {
            return Ok(None);
        }
        request.generate = Some(false);
        self.turn(request).await.map(Some)
    }

    /// Sends `request` — its `input` the new items only — continued from the conversation so
    /// far, and reads its response to the end, recovering as [`Recovery`] allows.
    pub async fn turn(&mut self, request: ResponseCreate) -> Result<Finished, Error> {
        self.turn_with(request, |_| {}).await
    }

    /// [`Session::turn`], passing every frame to `observe` as it arrives.
    pub async fn turn_with(
        &mut self,
        mut request: ResponseCreate,
        mut observe: impl FnMut(&Frame),
    ) -> Result<Finished, Error> {
        let new_items = std::mem::take(&mut request.input).into_items();
        let mut full_context = false;
        let mut resent = false;
        let mut reconnected = false;
        loop {
            if self.transport == Transport::WebSocket {
                self.open().await?;
            }
            let chained = !full_context && self.can_chain();
            self.shape(&mut request, &new_items, chained);
            // Whether the server took the request: any event but a refusal says so.
            let started = std::cell::Cell::new(false);
            let outcome = self
                .send(&request, |frame| {
                    if frame.kind() != "error" {
                        started.set(true);
                    }
                    observe(frame);
                })
                .await;
            match outcome {
                Ok(finished) => {
                    self.record(chained, &mut request, &finished);
                    return Ok(finished);
                }
                Err(error)
                    if chained
                        && self.recovery.resend_full_context
                        && !resent
                        && error.code() == Some("previous_response_not_found") =>
                {
                    resent = true;
                    full_context = true;
                    self.recoveries.push(Recovered::ResentFullContext {
                        previous_response_id: request
                            .previous_response_id
                            .clone()
                            .unwrap_or_default(),
                    });
                }
                Err(error)
                    if self.transport == Transport::WebSocket
                        && self.recovery.reconnect
                        && !reconnected
                        && error.is_disconnect()
                        && !started.get() =>
                {
                    // Nothing of this turn's response arrived: the server never took the
                    // request, so sending it again runs it once.
                    reconnected = true;
                    if let Some(ws) = self.ws.take() {
                        ws.close().await;
                    }
                    self.recoveries.push(Recovered::Reconnected {
                        reason: error.to_string(),
                    });
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Closes the connection, if one is open.
    pub async fn close(mut self) {
        if let Some(ws) = self.ws.take() {
            ws.close().await;
        }
    }

    /// Makes sure a WebSocket is open, or moves to HTTP when the upgrade is refused.
    async fn open(&mut self) -> Result<(), Error> {
        if self.ws.is_some() {
            return Ok(());
        }
        match WebSocket::connect(&self.endpoint).await {
            Ok(ws) => {
                self.ws = Some(ws);
                self.connections += 1;
                Ok(())
            }
            Err(Error::UpgradeRefused { status, .. }) if self.recovery.http_fallback => {
                self.transport = Transport::Http;
                self.recoveries.push(Recovered::FellBackToHttp { status });
                Ok(())
            }
            Err(error) => Err(error),
        }
    }

    /// Whether the next request can name the previous response: the connection's cache holds
    /// it, or the store does.
    fn can_chain(&self) -> bool {
        match &self.previous {
            None => false,
            Some(previous) => {
                previous.stored
                    || (self.transport == Transport::WebSocket
                        && previous.connection == Some(self.connections))
            }
        }
    }

    /// Fills in `request`'s input and `previous_response_id`: the new items after the previous
    /// response when `chained`, else after the whole conversation.
    fn shape(&self, request: &mut ResponseCreate, new_items: &[Item], chained: bool) {
        let mut input = Vec::with_capacity(new_items.len());
        if chained {
            request.previous_response_id = self.previous.as_ref().map(|p| p.id.clone());
        } else {
            request.previous_response_id = None;
            input.extend(self.context.iter().cloned());
        }
        input.extend(new_items.iter().cloned());
        request.input = Input::Items(input);
    }

    async fn send(
        &mut self,
        request: &ResponseCreate,
        observe: impl FnMut(&Frame),
    ) -> Result<Finished, Error> {
        match self.transport {
            Transport::WebSocket => {
                let ws = self.ws.as_mut().expect("open() opened it");
                ws.turn_with(request, observe).await
            }
            Transport::Http => {
                let http = self.http.get_or_insert_with(|| Http::new(&self.endpoint));
                http.stream(request).await?.finish_with(observe).await
            }
        }
    }

    /// Takes a finished turn into the conversation: what it sent (moved out of `request`) and
    /// what it received.
    fn record(&mut self, chained: bool, request: &mut ResponseCreate, finished: &Finished) {
        let sent = std::mem::take(&mut request.input).into_items();
        if chained {
            self.context.extend(sent);
        } else {
            self.context = sent;
        }
        self.context
            .extend(finished.response.output.iter().cloned());
        self.previous = Some(Previous {
            id: finished.response.id.clone(),
            stored: request.stores(),
            connection: (self.transport == Transport::WebSocket).then_some(self.connections),
        });
    }
}
