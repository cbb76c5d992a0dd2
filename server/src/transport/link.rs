//! The link at the socket edge: every accepted socket is a `tether_link::Shaped` one
//! ([`Listener`]), and [`apply`], a middleware of every route, sets its link for the request
//! being served from the conditions the request asks for (`crate::conditions`), so the bytes
//! really read and written are delayed and paced — the same code for HTTP, SSE and WebSocket
//! mode. HTTP stateless pays for re-uploading its history; WebSocket mode for what it sends.
//!
//! - **Scope.** A WebSocket upgrade's link holds for the connection; an HTTP request's for that
//!   request. HTTP/1.1 keep-alive serves several requests on one socket: each one's bytes pay its
//!   own conditions (the upload ends when the handler has answered; the next request's head
//!   waits for the next request's conditions).
//! - **The head.** The request line and headers are read before the conditions are known:
//!   passed on at once, then charged when they are — the middleware waits until the last of
//!   them would have arrived over the link. A body that waited in the socket meanwhile is
//!   taken to have been sent with the head.
//! - **The way down of the timing summary** is known only when the terminal message is
//!   written: [`finish_summary`] fills it in there (the WebSocket writer, the SSE stream, the
//!   JSON handler).
//! - **No link asked**: a socket that never had one is passed straight through.

use std::net::SocketAddr;

use axum::extract::connect_info::{ConnectInfo, Connected};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::serve::IncomingStream;
use tether_link::{LinkHandle, Shaped};
use tether_protocol::ServerEvent;
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use crate::AppState;
use crate::conditions::{Conditions, LINK_BUDGET};
use crate::error::ApiFailure;
use crate::timing;

/// An accepted socket: its bytes go through the link its requests ask for.
pub type Socket = Shaped<OwnedReadHalf, OwnedWriteHalf>;

/// Accepts TCP connections as [`Socket`]s, with `TCP_NODELAY` (events are small frames written
/// one at a time: Nagle's algorithm would hold each behind the client's delayed ACK).
pub struct Listener {
    tcp: tokio::net::TcpListener,
}

impl Listener {
    pub fn new(tcp: tokio::net::TcpListener) -> Self {
        Listener { tcp }
    }
}

impl axum::serve::Listener for Listener {
    type Io = Socket;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Socket, SocketAddr) {
        loop {
            match self.tcp.accept().await {
                Ok((stream, addr)) => return (shaped(stream), addr),
                Err(error) => {
                    // Out of file descriptors, typically: wait rather than spin.
                    tracing::warn!("accept failed: {error}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

fn shaped(stream: TcpStream) -> Socket {
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!("cannot set TCP_NODELAY: {error}");
    }
    let (read, write) = stream.into_split();
    Shaped::new(read, write)
}

/// The handle of the socket a request came on, for the handlers (axum's connect info).
#[derive(Clone, Debug)]
pub struct SocketLink(pub LinkHandle);

impl Connected<IncomingStream<'_, Listener>> for SocketLink {
    fn connect_info(stream: IncomingStream<'_, Listener>) -> Self {
        SocketLink(stream.io().handle())
    }
}

/// The router as a service whose requests know their socket's link: serve it on a
/// [`Listener`] (`axum::serve(Listener::new(tcp), transport::link::service(router))`).
pub fn service(
    router: axum::Router,
) -> axum::extract::connect_info::IntoMakeServiceWithConnectInfo<axum::Router, SocketLink> {
    router.into_make_service_with_connect_info::<SocketLink>()
}

/// Sets the socket's link for the request from the conditions it asks for (only `/v1/...`
/// requests may ask; others are served without a link), waits until its head would have
/// arrived, and hands the conditions to the handler as an extension; a 400 for conditions out
/// of bounds or not allowed.
pub async fn apply(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> HttpResponse {
    let socket = request
        .extensions()
        .get::<ConnectInfo<SocketLink>>()
        .map(|info| info.0.0.clone());
    let asked = if request.uri().path().starts_with("/v1/") {
        Conditions::parse(
            request.uri().query(),
            request.headers(),
            state.allow_client_conditions,
        )
    } else {
        Ok(Conditions::default())
    };
    let mut conditions = match asked {
        Ok(conditions) => conditions,
        Err(failure) => {
            if let Some(socket) = &socket {
                socket.apply(None, LINK_BUDGET);
            }
            return failure.into_response();
        }
    };
    match (conditions.link, &socket) {
        (Some(link), Some(socket)) => {
            let arrived = socket.apply(Some(link.config()), LINK_BUDGET);
            tokio::time::sleep_until(arrived).await;
            conditions.meter = Some(socket.clone());
        }
        (Some(_), None) => {
            return ApiFailure::internal(
                "this server was started without a link-capable listener, so it cannot emulate \
                 a link (serve it with transport::link::Listener)",
            )
            .into_response();
        }
        (None, Some(socket)) => {
            socket.apply(None, LINK_BUDGET);
        }
        (None, None) => {}
    }
    request.extensions_mut().insert(conditions);
    let response = next.run(request).await;
    if let Some(socket) = &socket {
        if response.status() == StatusCode::SWITCHING_PROTOCOLS {
            // The connection keeps its link; its first response's upload starts after the
            // upgrade request (which was charged above).
            socket.take_upload();
        } else {
            // An HTTP request's upload ends with its answer.
            socket.end_upload();
        }
    }
    response
}

/// Fills in the way down of `event`'s timing summary, if it has a link account: the bytes of
/// the response so far with this message's, and when the message will arrive. `message_bytes`
/// says what the event takes on the socket; the figures change its length, so they are
/// computed again until it holds still (twice, as a rule). Called with the message about to be
/// written, after the messages before it were.
pub fn finish_summary(
    event: &mut ServerEvent,
    meter: &LinkHandle,
    message_bytes: impl Fn(&ServerEvent) -> usize,
) {
    if !wants_download(event) {
        return;
    }
    let mut bytes = message_bytes(event);
    for _ in 0..4 {
        if let Some(summary) = event.tether_timing.as_mut() {
            fill(summary, meter, bytes);
        }
        let now = message_bytes(event);
        if now == bytes {
            break;
        }
        bytes = now;
    }
}

/// [`finish_summary`] for a JSON response's summary, which travels in a header: the message is
/// the body, of `body_bytes`.
pub fn finish_value(summary: &mut serde_json::Value, meter: &LinkHandle, body_bytes: usize) {
    if timing::has_link(summary) {
        fill(summary, meter, body_bytes);
    }
}

fn fill(summary: &mut serde_json::Value, meter: &LinkHandle, message_bytes: usize) {
    if let Some(download) = meter.download(message_bytes) {
        timing::set_download(
            summary,
            download.bytes,
            download.lag,
            meter.budget_exhausted(),
        );
    }
}

/// Whether `event` carries a timing summary whose way down is still to be filled in.
pub fn wants_download(event: &ServerEvent) -> bool {
    event.tether_timing.as_ref().is_some_and(timing::has_link)
}
