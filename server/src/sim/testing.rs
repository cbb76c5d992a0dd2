//! Contexts for the simulator's unit tests, built as the pipeline would without running it.

use tether_protocol::{Item, ResponseCreate};

use crate::ids::new_id;
use crate::model::Context;
use crate::stages;
use crate::stages::render::RenderedPrompt;

/// The context of a request without history.
pub fn context(request: ResponseCreate) -> Context {
    let items = request.input.clone().into_items();
    context_with(request, items)
}

/// The context of a request over a whole conversation, rendered as the pipeline renders it.
pub fn context_with(request: ResponseCreate, items: Vec<Item>) -> Context {
    let tools_key = stages::tools_key(&request.tools);
    let rendered = RenderedPrompt::full(
        request.instructions.as_deref(),
        &request.tools,
        &tools_key,
        &items,
        None,
    );
    Context {
        request,
        response_id: new_id("resp"),
        items,
        prompt: rendered.prompt(),
        route: None,
        forced_failure: None,
        project: Default::default(),
    }
}
