//! The agent side of the playground, independent of the DOM and of the transport: what a turn
//! is, how stream events advance it, and what it measures.

mod turn;

pub use turn::{RunStatus, Turn};
