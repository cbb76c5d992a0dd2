//! What a backend gives [`crate::WebSocket`]: one WebSocket-mode connection that opens, sends
//! text, reads frames and closes. The frame-level API — `create`, `append`, `inject`, `steer`,
//! lanes, reading a response to its end — is written once over it (`crate::websocket`), so the
//! two backends differ only where their sockets do: tokio-tungstenite natively
//! (`native/ws.rs`), the page's `WebSocket` in a browser (`browser/ws.rs`).

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::frame::Frame;

/// One backend's WebSocket-mode connection to `/v1/responses`. Not `Send`-bound: the native
/// backend's futures are `Send` and stay so through [`crate::WebSocket`], the browser's cannot
/// be.
pub(crate) trait Connection: Sized {
    /// Opens a connection and completes the upgrade, with what `endpoint` asks of it (its key,
    /// timing opt-in, betas, query).
    async fn connect(endpoint: &Endpoint) -> Result<Self, Error>;

    /// The URL the connection was opened to.
    fn url(&self) -> &str;

    /// The headers of the server's `101 Switching Protocols` (names in lower case); none where
    /// the backend cannot see them.
    fn handshake_headers(&self) -> &[(String, String)];

    /// The close code the connection ended with, once read.
    fn close_code(&self) -> Option<u16>;

    /// Sends one text frame as it is.
    async fn send_text(&mut self, text: String) -> Result<(), Error>;

    /// The next text frame; `Err(Closed)` once the connection ended. Cancel-safe: dropped before
    /// it finished, it leaves a frame not yet read to the next call.
    async fn read(&mut self) -> Result<Frame, Error>;

    /// Closes the connection (1000).
    async fn close(self);
}
