//! The seam between the API and the engine that generates: the pipeline hands a [`Model`] a
//! rendered, validated [`Context`] and gets a stream of [`ModelEvent`]s back. The simulator
//! (`crate::sim`) is one implementation; a client of a real inference server can be another,
//! without touching the transports, the pipeline or the event builder.

mod events;
mod failure;

pub use events::{Delta, ModelEvent, ModelStream};
pub use failure::{FailureKind, rate_limit_exceeded};

use tether_protocol::{ApiError, Item, ResponseCreate};

/// What a model generates from: the request and its full logical input, as the pipeline
/// prepared them.
#[derive(Debug, Clone)]
pub struct Context {
    pub request: ResponseCreate,
    /// The whole conversation: previous context plus the request's new input.
    pub items: Vec<Item>,
    /// The rendered prompt's length (`usage.input_tokens`).
    pub input_tokens: u64,
    /// Prompt tokens already in the server's cache (prefill skips them); 0 when unknown.
    pub cached_tokens: u64,
    /// A failure the client asked for (`x-tether-fail`), overriding the configured rates.
    pub forced_failure: Option<FailureKind>,
}

impl Context {
    /// A string value of the request's `metadata`.
    pub fn metadata(&self, key: &str) -> Option<&str> {
        self.request.metadata.as_ref()?.get(key)?.as_str()
    }
}

/// Generates output for a context.
pub trait Model: Send + Sync + 'static {
    /// The response's events, in stream order; the stream ends after the last item (or a
    /// failure).
    fn generate(&self, context: &Context) -> ModelStream;

    /// The model ids the server lists and, with `--reject-unknown-models`, accepts.
    fn model_ids(&self) -> Vec<String>;

    /// Whether `model` is served with `--reject-unknown-models`: a listed id, or another name
    /// the model answers to.
    fn serves(&self, model: &str) -> bool {
        self.model_ids().iter().any(|id| id == model)
    }

    /// Refuses a request the model cannot answer as asked (a `400` before the response starts),
    /// such as one naming a scenario or generator that does not exist.
    fn check(&self, _request: &ResponseCreate) -> Result<(), ApiError> {
        Ok(())
    }
}
