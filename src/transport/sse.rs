//! Server-Sent Events for the HTTP transport. The decoding itself is the protocol's SSE codec
//! ([`tether_protocol::sse`]: plain Rust, tested natively and fuzzed); this module is the
//! playground's name for it, fed by [`super::http`] with the chunks `fetch`'s body reader
//! delivers.

pub use tether_protocol::sse::{SseDecoder, SseMessage};
