//! The stages that process the conversation — render, validate, classify — each over what this
//! connection has not processed yet: on a WebSocket cache hit only the new items, with the
//! cached tokens and compiled tools reused; on the full path (HTTP, a WebSocket miss) the whole
//! conversation. The stages themselves are `crate::stages`; this is where the pipeline decides
//! how much of the conversation each one sees.

use tether_protocol::{Item, ResponseCreate};

use crate::AppState;
use crate::error::ApiFailure;
use crate::stages::classify::{self, ClassifierPolicy};
use crate::stages::render::{RenderedPrompt, TokenCache};
use crate::stages::validate::{self, CompiledTools};

/// The conversation a request continues and its new input, and whether the previous part was
/// processed on this connection already (a cache hit).
pub struct Conversation<'a> {
    pub prior: &'a [Item],
    pub new: &'a [Item],
    pub hit: bool,
}

/// Render: the cached token buffer extended with the new items, or the whole conversation
/// tokenized (over HTTP through the optional process-wide `token_cache`). Returns the prompt and
/// how many of its tokens were reused from the connection cache.
pub fn render(
    request: &ResponseCreate,
    tools_key: &str,
    conversation: &Conversation<'_>,
    cached: Option<RenderedPrompt>,
    token_cache: Option<&TokenCache>,
) -> (RenderedPrompt, usize) {
    let instructions = request.instructions.as_deref();
    match cached {
        Some(rendered) => rendered.extend(
            instructions,
            &request.tools,
            tools_key,
            conversation.new,
            None,
        ),
        None => {
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
    }
}

/// Validate: the cached compiled tools while they are unchanged, else the tools compiled (or
/// kept from a request that sent the same ones); the
/// items not yet checked on this connection checked against them.
pub fn validate(
    request: &ResponseCreate,
    tools_key: &str,
    conversation: &Conversation<'_>,
    cached: Option<CompiledTools>,
) -> Result<CompiledTools, ApiFailure> {
    let compiled = match cached {
        Some(compiled) if *compiled.key == tools_key => compiled,
        _ => validate::compiled(&request.tools, tools_key)?,
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

/// The rendered tokens of the items the classify stage scanned: the new items on a hit, the
/// whole conversation otherwise (their blocks in `rendered`, framing included).
pub fn scanned_tokens(rendered: &RenderedPrompt, conversation: &Conversation<'_>) -> u64 {
    let end = rendered.items.len() as u64;
    if !conversation.hit {
        return end;
    }
    let before_new = match conversation.prior.len() {
        0 => 0,
        n => rendered.ends.get(n - 1).copied().map_or(0, u64::from),
    };
    end - before_new
}

/// Classify: the text not yet scanned on this connection, under the configured policy; each
/// finding is counted in `/metrics`.
pub fn classify(state: &AppState, conversation: &Conversation<'_>) -> Result<(), ApiFailure> {
    if state.classifier_policy == ClassifierPolicy::Off {
        return Ok(());
    }
    let scanned: Vec<&Item> = if conversation.hit {
        conversation.new.iter().collect()
    } else {
        conversation.prior.iter().chain(conversation.new).collect()
    };
    classify::check(
        &state.classifier,
        state.classifier_policy,
        &scanned,
        |rule| state.metrics.classifier_finding(rule),
    )
}
