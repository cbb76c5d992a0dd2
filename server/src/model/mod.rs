//! The seam between the API and the engine that generates: the pipeline hands a [`Model`] a
//! rendered, validated [`Context`] and gets a stream of [`ModelEvent`]s back. The simulator
//! (`crate::sim`) is one implementation; a client of a real inference server can be another,
//! without touching the transports, the pipeline or the event builder.

pub mod breakpoints;
mod events;
mod failure;
pub mod prefix;
pub mod routing;

pub use breakpoints::Breakpoints;
pub use events::{Admission, Delta, EngineUsage, ModelEvent, ModelStream, PromptCacheUse};
pub use failure::{FailureKind, rate_limit_exceeded};
pub use prefix::PrefixHashes;

use std::sync::Arc;

use tether_protocol::{ApiError, Item, ResponseCreate};

use crate::tenancy::Project;

/// The rendered prompt as token ids: the preamble (instructions and tools), then one block per
/// item of the conversation. Shared buffers: cloning copies no tokens.
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    pub preamble: Arc<Vec<u32>>,
    pub items: Arc<Vec<u32>>,
    /// For each item of the conversation, the offset in `items` just past its block.
    pub item_ends: Arc<Vec<u32>>,
    /// The chained hash of the prompt's prefixes, every [`prefix::STRIDE`] tokens (extended
    /// with the tokens a continuation adds, so an engine need not hash the whole prompt).
    pub hashes: PrefixHashes,
    /// Where breakpoints may be (`prompt_cache_options`), recorded as the items rendered.
    pub breakpoints: Breakpoints,
}

impl Prompt {
    /// The prompt's length in tokens (`usage.input_tokens`).
    pub fn len(&self) -> usize {
        self.preamble.len() + self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every token, in order.
    pub fn tokens(&self) -> impl Iterator<Item = u32> + '_ {
        self.preamble.iter().chain(self.items.iter()).copied()
    }

    /// The token at `index` (counted from the start of the prompt).
    pub fn token(&self, index: usize) -> u32 {
        match index.checked_sub(self.preamble.len()) {
            None => self.preamble[index],
            Some(offset) => self.items[offset],
        }
    }

    /// The chained hash of the prompt's first `at` tokens ([`prefix::Chain`]).
    pub fn prefix_hash(&self, at: usize) -> u64 {
        self.hashes.at(at, |index| self.token(index))
    }

    /// Where item `index`'s block ends, counted from the start of the prompt.
    pub fn item_end(&self, index: usize) -> Option<usize> {
        let end = *self.item_ends.get(index)?;
        Some(self.preamble.len() + end as usize)
    }
}

/// What a model generates from: the request, its full logical input and its rendered prompt,
/// as the pipeline prepared them.
#[derive(Debug, Clone)]
pub struct Context {
    pub request: ResponseCreate,
    /// The id the response will have (an engine may remember what it did for it).
    pub response_id: String,
    /// The whole conversation: previous context plus the request's new input.
    pub items: Vec<Item>,
    /// The conversation rendered; `items[i]`'s block ends at `prompt.item_end(i)`.
    pub prompt: Prompt,
    /// The engine replica this caller's earlier requests went to (a WebSocket connection
    /// keeps its routing), if any.
    pub route: Option<usize>,
    /// A failure the client asked for (`x-tether-fail`), overriding the configured rates.
    pub forced_failure: Option<FailureKind>,
    /// The caller's project: an engine keeps projects' cached prompts apart.
    pub project: Project,
}

impl Context {
    /// A string value of the request's `metadata`.
    pub fn metadata(&self, key: &str) -> Option<&str> {
        self.request.metadata.as_ref()?.get(key)?.as_str()
    }

    /// The prompt's length in tokens.
    pub fn input_tokens(&self) -> u64 {
        self.prompt.len() as u64
    }
}

/// Generates output for a context.
pub trait Model: Send + Sync + 'static {
    /// The response's events, in stream order; the stream ends after the last item (or a
    /// failure).
    fn generate(&self, context: &Context) -> ModelStream;

    /// The model ids the server lists and, with `--reject-unknown-models`, accepts.
    fn model_ids(&self) -> Vec<String>;

    /// The scenarios a request may name in `metadata.scenario`, sorted; `None` for a model that
    /// plays none (an engine).
    fn scenario_names(&self) -> Option<Vec<String>> {
        None
    }

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

    /// Whether `model` is answered by a real engine — an upstream, or a recording of one — whose
    /// hop from the API is real and in its measured time: `--api-costs` then models no engine
    /// hop on top of it.
    fn real_engine(&self, _model: &str) -> bool {
        false
    }

    /// Whether the model can serve now (`/readyz`): a real engine is ready while one of its
    /// replicas answers; the reason it is not, otherwise.
    fn readiness(&self) -> Result<(), String> {
        Ok(())
    }
}
