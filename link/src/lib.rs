//! `tether-link`: one model of a network link — a round-trip time (half each way), a bandwidth
//! per direction counted in 1448-byte segments, a "link free at" clock, bounded buffers — and
//! the two places it is applied, so both measure the same thing:
//!
//! - [`Shaped`]: a socket whose bytes are delayed and paced by the link, with a link a server
//!   can set once a request says which ([`LinkHandle`]). `tether-server` wraps every accepted
//!   socket in one, so the conditions a client asks for apply to the bytes really read and
//!   written, the same way over HTTP and WebSocket mode.
//! - [`proxy`]: a TCP proxy with a fixed link (the `tether-link` binary in `harness/`), for any
//!   client and server.
//!
//! [`model`] is the model itself, with no I/O: a [`Pacer`] says when bytes handed to one
//! direction reach the other end.

pub mod model;
pub mod proxy;
mod shaped;

pub use model::{Budget, Direction, LinkConfig, Pacer, SEGMENT_BYTES, default_buffer};
pub use shaped::{Download, LinkHandle, Shaped, Upload};
