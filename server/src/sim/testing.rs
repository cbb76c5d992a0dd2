//! Contexts for the simulator's unit tests, built as the pipeline would without running it.

use tether_protocol::{Item, ResponseCreate};

use crate::items;
use crate::model::Context;
use crate::tokenizer;

/// The context of a request without history.
pub fn context(request: ResponseCreate) -> Context {
    let items = request.input.clone().into_items();
    context_with(request, items)
}

/// The context of a request over a whole conversation (its input tokens counted from the items'
/// text, without the rendered framing).
pub fn context_with(request: ResponseCreate, items: Vec<Item>) -> Context {
    let input_tokens = items
        .iter()
        .map(|item| tokenizer::count(&items::body(item)) as u64)
        .sum();
    Context {
        request,
        items,
        input_tokens,
        cached_tokens: 0,
        forced_failure: None,
    }
}
