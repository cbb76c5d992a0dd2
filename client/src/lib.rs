//! `tether-client`: a client of the Responses API as Tether speaks it — HTTP JSON, Server-Sent
//! Events and WebSocket mode — with one API over two backends:
//!
//! - **native** (tokio, hyper, tokio-tungstenite), for programs, benchmarks and tests;
//! - **browser** (`wasm32`: the page's own `WebSocket` and `fetch`, through web-sys), for wasm
//!   pages such as Tether's playground.
//!
//! The same names mean the same things on both: [`Endpoint`] (the server, its key, the opt-ins),
//! [`WebSocket`] (one WebSocket-mode connection: `response.create` with continuation and lanes,
//! `generate: false`, `response.append`, `response.inject`, `response.steer`), [`Http`] (JSON and
//! SSE), [`Session`] (a conversation with the recovery rules real clients follow), [`Frame`]
//! (one event as it arrived, decoded on demand into `tether-protocol`'s
//! [`ServerEvent`](tether_protocol::ServerEvent)), [`Finished`] (how a response ended) and
//! [`Error`].
//!
//! The wire types, the SSE decoder and the event definitions are `tether-protocol`'s: this crate
//! adds the I/O and the rules around it, never a second decoder. `docs/client.md` is the guide.
//!
//! ```no_run
//! # async fn example() -> Result<(), tether_client::Error> {
//! use tether_client::{Endpoint, Session};
//! use tether_protocol::ResponseCreate;
//!
//! let endpoint = Endpoint::new("http://127.0.0.1:8080")?.with_timing(true);
//! let mut session = Session::new(endpoint);
//! let finished = session.turn(ResponseCreate::new("spark", "Say hello.")).await?;
//! println!("{}", finished.response.output_text());
//! # Ok(()) }
//! ```

mod connection;
pub mod diagnosis;
pub mod endpoint;
pub mod error;
pub mod frame;
mod http;
mod lanes;
pub mod reply;
pub mod secrets;
pub mod session;
pub mod sse;
pub mod turn;
mod websocket;
pub mod wire;

#[cfg(target_arch = "wasm32")]
mod browser;
#[cfg(not(target_arch = "wasm32"))]
mod native;

#[cfg(target_arch = "wasm32")]
pub use browser::{Http, SseStream};
#[cfg(not(target_arch = "wasm32"))]
pub use native::{Http, SseStream};

pub use endpoint::{APPEND_BETA, Endpoint, MULTI_AGENT_BETA};
pub use error::Error;
pub use frame::Frame;
pub use reply::Reply;
pub use session::{Recovered, Recovery, Session, Transport};
pub use sse::SseFrames;
pub use turn::{Ending, Finished, TurnReader};
pub use websocket::WebSocket;

/// The guide's code blocks (`docs/client.md`), compiled as doctests so the guide cannot drift
/// from the API.
#[cfg(doctest)]
#[doc = include_str!("../../docs/client.md")]
struct ClientGuide;
