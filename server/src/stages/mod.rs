//! The per-request stages of the pipeline that do real, measurable work on the conversation:
//! [`render`] (BPE tokenization with chat framing), [`validate`] (compiled tool schemas, item
//! checks) and [`classify`] (a safety scan of the text). Each stage works on a slice of items, so
//! the full path (HTTP, cache miss) runs it over the whole conversation and the incremental path
//! (a WebSocket cache hit) over the new items only.

pub mod classify;
pub mod render;
pub mod validate;
