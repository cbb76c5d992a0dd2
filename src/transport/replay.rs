//! A [`Transport`] that replays recorded turns instead of talking to a server: each `send` plays
//! the next script, event by event, and every request is kept for inspection. The agent loop's
//! native tests (and the browser component tests) run on it; a script may end in a
//! [`TransportError`] to play a dropped connection.

use std::collections::VecDeque;

use futures::future::LocalBoxFuture;
use tether_protocol::{ResponseCreate, ServerEvent};

use crate::transport::{Received, Transport, TransportError, TransportKind};

/// What one scripted turn delivers, in order.
pub type Script = Vec<Result<ServerEvent, TransportError>>;

/// Replays scripts, one per request.
pub struct ReplayTransport {
    kind: TransportKind,
    scripts: VecDeque<Script>,
    playing: VecDeque<Result<ServerEvent, TransportError>>,
    requests: Vec<ResponseCreate>,
    connected: bool,
    reconnects: usize,
}

impl ReplayTransport {
    /// A transport of `kind` that answers the n-th request with the n-th script.
    pub fn new(kind: TransportKind, scripts: impl IntoIterator<Item = Script>) -> Self {
        ReplayTransport {
            kind,
            scripts: scripts.into_iter().collect(),
            playing: VecDeque::new(),
            requests: Vec::new(),
            connected: true,
            reconnects: 0,
        }
    }

    /// Every request sent, in order.
    pub fn requests(&self) -> &[ResponseCreate] {
        &self.requests
    }

    /// How many times the loop reconnected.
    pub fn reconnects(&self) -> usize {
        self.reconnects
    }
}

impl Transport for ReplayTransport {
    fn kind(&self) -> TransportKind {
        self.kind
    }

    fn send<'a>(
        &'a mut self,
        request: &'a ResponseCreate,
        _text: &'a str,
    ) -> LocalBoxFuture<'a, Result<(), TransportError>> {
        Box::pin(async move {
            if !self.connected {
                return Err(TransportError::Closed("not connected".into()));
            }
            self.requests.push(request.clone());
            self.playing = self.scripts.pop_front().unwrap_or_default().into();
            Ok(())
        })
    }

    fn next_event(&mut self) -> LocalBoxFuture<'_, Result<Received, TransportError>> {
        Box::pin(async move {
            if !self.connected {
                return Err(TransportError::Closed("not connected".into()));
            }
            match self.playing.pop_front() {
                Some(Err(error)) => {
                    if error.is_disconnect() {
                        self.connected = false;
                    }
                    Err(error)
                }
                Some(Ok(event)) => Ok(Received::of(event)),
                None => Err(TransportError::Closed(
                    "the script has no more events".into(),
                )),
            }
        })
    }

    fn reconnect(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            self.connected = true;
            self.playing.clear();
            self.reconnects += 1;
            Ok(())
        })
    }
}
