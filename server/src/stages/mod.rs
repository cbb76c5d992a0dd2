//! The stages of the pipeline that do real, measurable work on the conversation, in the order
//! they run: [`render`] (BPE tokenization with chat framing), [`validate`] (compiled tool
//! schemas, item checks) and [`classify`] (a safety scan of the text).
//!
//! [`process`] runs them over what this connection has not processed yet: on a WebSocket cache
//! hit only the new items, onto the cached tokens and with the compiled tools reused; on the
//! full path (HTTP, a WebSocket miss) the whole conversation. The pipeline calls it once a
//! request (and once for each batch of tool outputs a long-running response takes); each
//! stage's file is entered once, in order.

pub mod classify;
pub mod render;
pub mod validate;

use tether_protocol::{Item, ResponseCreate, Tool};

use crate::error::ApiFailure;
use crate::metrics::Metrics;
use crate::timing::{Stage, StageTimings};
use classify::{Classifier, ClassifierPolicy};
use render::{RenderedPrompt, TokenCache};
use validate::CompiledTools;

/// The key of a request's tools, which render and validate share: the serialized tools. Equal
/// keys mean the same preamble and the same compiled validators.
pub fn tools_key(tools: &[Tool]) -> String {
    serde_json::to_string(tools).unwrap_or_default()
}

/// The work a continuation can reuse: the conversation rendered, the tools compiled (cheap
/// clones of shared buffers).
#[derive(Debug, Clone, Default)]
pub struct Reusable {
    pub rendered: RenderedPrompt,
    pub compiled: CompiledTools,
}

/// The conversation a request continues and its new input, and how much of it this connection
/// processed already.
pub struct Conversation<'a> {
    pub prior: &'a [Item],
    pub new: &'a [Item],
    /// `prior` was validated and scanned on this connection (a cache hit): only `new` is.
    pub hit: bool,
    /// On a hit, `prior`'s rendering is in the work given to [`process`], to extend; false when
    /// the cache entry had given it up (not continued for a while): then it is rendered again.
    pub rendered: bool,
    /// How many of `new` (the first ones) are the model's own output — a long-running
    /// response's, before its client's tool outputs —: rendered and validated, not classified.
    pub own_output: usize,
}

impl<'a> Conversation<'a> {
    /// A request's conversation: `prior` then `new`, all of it the client's.
    pub fn of(prior: &'a [Item], new: &'a [Item], hit: bool, rendered: bool) -> Self {
        Conversation {
            prior,
            new,
            hit,
            rendered: hit && rendered,
            own_output: 0,
        }
    }

    /// The items the classify stage scans: the new input on a hit, everything otherwise.
    fn scanned(&self) -> Vec<&'a Item> {
        let new = &self.new[self.own_output..];
        if self.hit {
            new.iter().collect()
        } else {
            self.prior.iter().chain(new).collect()
        }
    }
}

/// How the classify stage scans: the server's classifier and policy (`--classifier`); each
/// finding is counted in `metrics`.
#[derive(Clone, Copy)]
pub struct Scan<'a> {
    pub classifier: &'a Classifier,
    pub policy: ClassifierPolicy,
    pub metrics: &'a Metrics,
}

/// What the stages found besides their work (left in the [`Reusable`] they were given).
#[derive(Debug, Clone, Copy)]
pub struct Processed {
    /// Tokens the connection cache supplied, not tokenized again.
    pub reused_tokens: usize,
    /// Tokens of the items the classify stage scanned (their rendered blocks, framing included):
    /// what the modelled classifier charges for.
    pub scanned_tokens: u64,
}

/// Runs render, validate and classify over `conversation`, each timed in `timings`. On a hit,
/// `work` holds the prompt rendered so far and the compiled tools, and is extended; otherwise
/// it is replaced (the whole conversation rendered, over HTTP through the optional process-wide
/// `token_cache`). A refusal leaves `work` as far as the stages got.
pub fn process(
    request: &ResponseCreate,
    conversation: &Conversation<'_>,
    work: &mut Reusable,
    token_cache: Option<&TokenCache>,
    scan: Scan<'_>,
    timings: &mut StageTimings,
) -> Result<Processed, ApiFailure> {
    let tools_key = tools_key(&request.tools);
    let previous = std::mem::take(&mut work.rendered);
    let (rendered, reused_tokens) = timings.time(Stage::Render, || {
        render_onto(request, &tools_key, conversation, previous, token_cache)
    });
    work.rendered = rendered;
    let compiled = timings.time(Stage::Validate, || {
        validate_new(request, &tools_key, conversation, &work.compiled)
    })?;
    work.compiled = compiled;
    timings.time(Stage::Classify, || classify_new(scan, conversation))?;
    Ok(Processed {
        reused_tokens,
        scanned_tokens: scanned_tokens(&work.rendered, conversation),
    })
}

/// Render: `previous` extended with the new items on a hit, else the whole conversation
/// tokenized. Returns the prompt and how many of its tokens `previous` supplied.
fn render_onto(
    request: &ResponseCreate,
    tools_key: &str,
    conversation: &Conversation<'_>,
    previous: RenderedPrompt,
    token_cache: Option<&TokenCache>,
) -> (RenderedPrompt, usize) {
    let instructions = request.instructions.as_deref();
    if conversation.rendered {
        return previous.extend(
            instructions,
            &request.tools,
            tools_key,
            conversation.new,
            None,
        );
    }
    let prior = RenderedPrompt::full(
        instructions,
        &request.tools,
        tools_key,
        conversation.prior,
        token_cache,
    );
    let (rendered, _) = prior.extend(
        instructions,
        &request.tools,
        tools_key,
        conversation.new,
        token_cache,
    );
    (rendered, 0)
}

/// Validate: the cached compiled tools while they are unchanged, else the tools compiled (or
/// kept from a request that sent the same ones); the items not yet checked on this connection
/// checked against them.
fn validate_new(
    request: &ResponseCreate,
    tools_key: &str,
    conversation: &Conversation<'_>,
    cached: &CompiledTools,
) -> Result<CompiledTools, ApiFailure> {
    let compiled = if conversation.rendered && *cached.key == tools_key {
        cached.clone()
    } else {
        validate::compiled(&request.tools, tools_key)?
    };
    let (prior, new) = (conversation.prior, conversation.new);
    let total = prior.len() + new.len();
    let mut mismatches =
        validate::check_items(new, prior.len(), total, &compiled)?.arguments_not_matching_schema;
    if !conversation.hit {
        mismatches +=
            validate::check_items(prior, 0, total, &compiled)?.arguments_not_matching_schema;
    }
    if mismatches > 0 {
        tracing::debug!("{mismatches} function calls in the input do not match their schema");
    }
    Ok(compiled)
}

/// Classify: the text not yet scanned on this connection, under the configured policy.
fn classify_new(scan: Scan<'_>, conversation: &Conversation<'_>) -> Result<(), ApiFailure> {
    if scan.policy == ClassifierPolicy::Off {
        return Ok(());
    }
    classify::check(
        scan.classifier,
        scan.policy,
        &conversation.scanned(),
        |rule| scan.metrics.classifier_finding(rule),
    )
}

/// The rendered tokens of the items the classify stage scanned (their blocks in `rendered`,
/// framing included).
fn scanned_tokens(rendered: &RenderedPrompt, conversation: &Conversation<'_>) -> u64 {
    let end = rendered.items.len() as u64;
    if !conversation.hit {
        return end;
    }
    let before_new = match conversation.prior.len() + conversation.own_output {
        0 => 0,
        n => rendered.ends.get(n - 1).copied().map_or(0, u64::from),
    };
    end - before_new
}
