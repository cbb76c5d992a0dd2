//! How the playground reaches the server. WebSocket mode today; the HTTP transport joins it
//! behind a common trait when the agent loop needs to compare the two.

pub mod ws;
