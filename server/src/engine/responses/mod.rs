//! The Responses dialect (`POST {base}/responses`, streamed): for an engine that serves HTTP
//! Responses already and gets WebSocket mode, lanes and a connection cache from Tether.
//! [`request`] builds the request, [`stream`] reads its events as model events.

pub mod request;
pub mod stream;
