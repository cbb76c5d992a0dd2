//! How the playground reaches the server: the [`Transport`] trait the agent loop drives, with a
//! WebSocket-mode implementation ([`ws::WsTransport`]), an HTTP + SSE one ([`http::HttpTransport`])
//! and a replay of recorded events ([`replay::ReplayTransport`], for tests and demos).
//!
//! A turn is: [`Transport::send`] one `response.create` (its wire text made by [`wire_text`]),
//! then [`Transport::next_event`] until a terminal event (`response.completed` / `failed` /
//! `incomplete`) or an error; each event comes with the text it arrived as (the frame or SSE
//! `data`), for the event inspector. The trait is object-safe and not `Send` — wasm is
//! single-threaded and browser handles cannot cross threads.
//!
//! The connections are `tether-client`'s browser backend ([`client`]): its WebSocket mints the
//! upgrade's client secret and diagnoses a refused upgrade over HTTP (the browser reports only
//! "failed"), its HTTP client decodes the SSE body and names the URL of a request that got no
//! answer. Errors keep that cause and place ([`TransportError`]).

pub mod client;
pub mod http;
pub mod models;
pub mod replay;
pub mod ws;

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use tether_protocol::{
    ClientFrame, Input, Item, ResponseCreate, ServerEvent, frames::ResponseAppend,
};

/// Which wire a transport uses; decides how the agent loop continues a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// One connection for the whole run, with a connection-scoped cache on the server.
    WebSocket,
    /// One request per turn; state only through the server's store.
    Http,
}

/// Why a turn could not go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The connection dropped; a reconnect may help.
    Closed(String),
    /// The server answered with an HTTP error status before streaming.
    Status { status: u16, message: String },
    /// Something arrived that is not a server event.
    Undecodable(String),
    /// Nothing answered at `url` (`url` never carries the API key).
    Unreachable { url: String, detail: String },
    /// The server refused the WebSocket upgrade; the text says why, as far as an HTTP probe of
    /// the same server could tell (`tether_client::diagnosis`).
    Refused(String),
}

impl TransportError {
    /// Whether the agent loop should reconnect and resend rather than give up.
    pub fn is_disconnect(&self) -> bool {
        matches!(self, TransportError::Closed(_))
    }
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Closed(reason) => write!(f, "the connection closed: {reason}"),
            TransportError::Status { status, message } => write!(f, "HTTP {status}: {message}"),
            TransportError::Undecodable(reason) => write!(f, "undecodable event: {reason}"),
            TransportError::Unreachable { url, detail } => {
                write!(f, "nothing listens at {url}: {detail}")
            }
            TransportError::Refused(why) => f.write_str(why),
        }
    }
}

/// A server event with the text it arrived as.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    pub event: ServerEvent,
    /// The WebSocket frame, or the SSE event's `data`.
    pub text: String,
}

impl Received {
    /// An event that arrived as its own canonical JSON (replays, tests).
    pub fn of(event: ServerEvent) -> Self {
        Received {
            text: event.to_json(),
            event,
        }
    }
}

/// The text a transport of `kind` sends for `request`: the `response.create` frame over
/// WebSocket, the streaming request body over HTTP.
pub fn wire_text(kind: TransportKind, request: &ResponseCreate) -> String {
    match kind {
        TransportKind::WebSocket => {
            ClientFrame::ResponseCreate(Box::new(request.clone())).to_json()
        }
        TransportKind::Http => {
            let mut body = request.clone();
            body.stream = Some(true);
            serde_json::to_string(&body).expect("requests always serialize")
        }
    }
}

/// The text of a `response.append` frame (v1 beta, docs/protocol.md §9) resuming the paused
/// response of the default lane with `items` (the client's tool outputs).
pub fn append_text(items: &[Item]) -> String {
    ClientFrame::ResponseAppend(ResponseAppend {
        input: Input::Items(items.to_vec()),
        client_metadata: None,
        stream_id: None,
    })
    .to_json()
}

/// A way to send a frame on a transport's connection while a turn streams — a `response.steer`
/// — beside the agent loop, which keeps the transport itself.
pub trait SideChannel {
    /// Sends `text` now; the error says why it could not (no connection open).
    fn send(&self, text: &str) -> Result<(), String>;
}

/// A way to run turns against a Responses server.
pub trait Transport {
    fn kind(&self) -> TransportKind;

    /// Sends one request as `text` (its [`wire_text`], which the loop makes and logs); its
    /// events then come from [`Transport::next_event`].
    fn send<'a>(
        &'a mut self,
        request: &'a ResponseCreate,
        text: &'a str,
    ) -> LocalBoxFuture<'a, Result<(), TransportError>>;

    /// The next event of the current turn. After a disconnect this keeps returning
    /// [`TransportError::Closed`] until [`Transport::reconnect`] succeeds.
    fn next_event(&mut self) -> LocalBoxFuture<'_, Result<Received, TransportError>>;

    /// Opens a fresh connection (WebSocket) or forgets the current stream (HTTP). Whatever the
    /// server cached for the old connection is gone.
    fn reconnect(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>>;

    /// Waits until the transport can send — a WebSocket until its handshake is done, HTTP until
    /// a first request has opened the kept-alive connection — so a run's clock starts with a
    /// connection ready. An error here shows again at the first send, which reports it.
    fn ready(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async { Ok(()) })
    }

    /// A handle that sends frames on this transport's connection from outside the loop, for
    /// transports that have one connection (WebSocket); `None` over HTTP.
    fn side_channel(&self) -> Option<Rc<dyn SideChannel>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_append_carries_only_the_new_items() {
        let output = Item::FunctionCallOutput(tether_protocol::items::ToolCallOutput {
            id: None,
            call_id: "call_1".into(),
            output: tether_protocol::items::ToolOutputContent::Text("3 files".into()),
            status: None,
        });
        let frame: serde_json::Value = serde_json::from_str(&append_text(&[output])).unwrap();
        assert_eq!(
            frame,
            serde_json::json!({"type": "response.append", "input": [
                {"type": "function_call_output", "call_id": "call_1", "output": "3 files"}]})
        );
    }

    #[test]
    fn only_a_closed_connection_calls_for_a_reconnect() {
        assert!(TransportError::Closed("reset".into()).is_disconnect());
        let status = TransportError::Status {
            status: 400,
            message: "bad".into(),
        };
        assert!(!status.is_disconnect());
        assert_eq!(status.to_string(), "HTTP 400: bad");
        assert!(!TransportError::Undecodable("x".into()).is_disconnect());
        let unreachable = TransportError::Unreachable {
            url: "http://127.0.0.1:9/v1/responses".into(),
            detail: "no answer".into(),
        };
        assert!(
            !unreachable.is_disconnect(),
            "retrying at once would not help"
        );
        assert_eq!(
            unreachable.to_string(),
            "nothing listens at http://127.0.0.1:9/v1/responses: no answer"
        );
        assert!(!TransportError::Refused("401: wrong API key".into()).is_disconnect());
    }
}
