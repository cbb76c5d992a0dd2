//! Wire types of the Responses API as Tether speaks it — over HTTP (JSON and SSE) and over
//! WebSocket mode — shared by the server and the playground so both sides agree by construction.
//!
//! No I/O lives here: the crate compiles for `wasm32-unknown-unknown` and native alike. The
//! contract these types follow is `docs/protocol.md`; where the public API leaves a point open,
//! that page says which choice Tether made, and the choice is written down next to the type
//! that makes it.
//!
//! Decoding is lenient where real clients differ (unknown fields are ignored, the `type` of an
//! input message may be missing) and strict where a mistake would be silent (a wrong field type
//! is an error naming the field, see [`DecodeError`]).

pub mod builder;
mod deltas;
mod direct;
pub mod error;
pub mod escaped;
mod event_tree;
pub mod events;
pub mod frames;
pub mod items;
mod lenient;
pub mod request;
pub mod response;
pub mod sse;
pub mod tool_choice;
pub mod tools;

pub use builder::ResponseStreamBuilder;
pub use error::{ApiError, ErrorBody, ErrorFrame};
pub use events::{FailedSteer, ServerEvent, Steer, StreamEvent};
pub use frames::{
    ClientFrame, DecodeError, ResponseAppend, ResponseInject, ResponseSteer, decode_client_frame,
    decode_client_frame_with, decode_request,
};
pub use items::{ContentPart, Item, ItemStatus, MessageContent, Role};
pub use request::{ConversationRef, Input, ResponseCreate};
pub use response::{
    CacheWriteDetails, InputTokensDetails, OutputTokensDetails, Response, ResponseStatus, Usage,
};
pub use tool_choice::{Callable, CallableTool, ToolChoice, callable_tools};
pub use tools::Tool;
