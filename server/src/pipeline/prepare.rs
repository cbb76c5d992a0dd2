//! [`prepare`]: a request made ready to generate, in named steps that read top-down —
//!
//! 1. **resolve**: the model serves the request as asked; `context_management`'s threshold read;
//! 2. **load**: the history — the previous response (from the connection cache, else the store)
//!    or the conversation the request binds (held from here until the response ends);
//! 3. **check**: the input's `item_reference`s resolved, its parts checked against each other
//!    and the history ([`super::checks`]);
//! 4. **stages**: render, validate, classify over what this connection has not processed yet
//!    ([`crate::stages::process`]), and the modelled classifier's wait;
//! 5. **compact**: past `context_management`'s threshold, the context compacted;
//! 6. **assemble**: the [`Prepared`] the engine call starts from.
//!
//! Each step leaves its result on the [`Preparation`] for the next. The steps after resolve run
//! in one fallible function; a refusal from any of them gives a held conversation back once,
//! before it is answered, so the client's corrected retry does not find it still held.

use std::collections::VecDeque;
use std::time::Instant;

use tether_protocol::{Item, ResponseCreate};

use super::{
    Origin, Prepared, RequestOptions, checks, context_management, conversation, previous,
    references,
};
use crate::AppState;
use crate::cache::{Ancestor, Checkout};
use crate::error::ApiFailure;
use crate::ids::new_id;
use crate::metrics::CacheLookup;
use crate::model::Context;
use crate::stages::render::RenderedPrompt;
use crate::stages::{self, Conversation, Reusable};
use crate::timing::{Modelled, PathKind, Stage, StageTimings};

/// Builds the context of `request` and runs the stages over it: everything on the full path,
/// only the new items on a WebSocket cache hit.
pub async fn prepare(
    state: &AppState,
    request: ResponseCreate,
    origin: Origin,
    options: RequestOptions,
) -> Result<Prepared, ApiFailure> {
    let mut preparation = Preparation::new(state, request, origin, options);
    match preparation.steps().await {
        Ok(()) => Ok(preparation.assemble()),
        Err(failure) => {
            if let Some(bound) = preparation.bound.take() {
                bound.finish(&preparation.options.project, None).await;
            }
            Err(failure)
        }
    }
}

/// A request on its way through [`prepare`]'s steps.
struct Preparation<'s> {
    state: &'s AppState,
    request: ResponseCreate,
    options: RequestOptions,
    response_id: String,
    timings: StageTimings,
    /// What the connection cache gave a WebSocket turn (nothing over HTTP).
    checkout: Checkout,
    websocket: bool,
    /// Resolve: `context_management`'s threshold, if the request sets one.
    compact_threshold: Option<u64>,
    /// Load: the history, where its previous response was found, whether that one is stored,
    /// the responses it continues on the connection, the conversation held.
    history: Vec<Item>,
    lookup: Option<CacheLookup>,
    stored_previous: bool,
    lineage: VecDeque<Ancestor>,
    bound: Option<conversation::Bound>,
    /// Check: the new input, its references resolved.
    input: Vec<Item>,
    /// Stages: the conversation rendered and its tools compiled — on a hit, from the cache entry
    /// the turn took, extended.
    work: Reusable,
    /// The previous response came from this connection's cache: its conversation was checked.
    hit: bool,
    /// And `work` holds its rendering (unless the entry had given it up).
    rendered: bool,
    /// Compact: the compaction item the output begins with, and the input the stored response
    /// records (the user messages kept), when the context was compacted.
    compacted: Option<(Item, Vec<Item>)>,
}

impl<'s> Preparation<'s> {
    fn new(
        state: &'s AppState,
        request: ResponseCreate,
        origin: Origin,
        options: RequestOptions,
    ) -> Self {
        let received = Instant::now();
        let (checkout, websocket) = match origin {
            Origin::Http => (Checkout::default(), false),
            Origin::WebSocket(checkout) => (checkout, true),
        };
        let mut timings = StageTimings::new(if websocket {
            PathKind::WsMiss
        } else {
            PathKind::Http
        });
        timings.received = received;
        if options.trace.is_some() {
            timings.keep_marks();
        }
        timings.conditions = Some(options.conditions.applied(
            &state.api_costs,
            &request.model,
            state.simulator.tokens_per_second(&request.model),
        ));
        timings.link = options.conditions.take_upload();
        Preparation {
            state,
            request,
            options,
            response_id: String::new(),
            timings,
            checkout,
            websocket,
            compact_threshold: None,
            history: Vec::new(),
            lookup: None,
            stored_previous: false,
            lineage: VecDeque::new(),
            bound: None,
            input: Vec::new(),
            work: Reusable::default(),
            hit: false,
            rendered: false,
            compacted: None,
        }
    }

    /// The steps, in order; the first refusal ends them.
    async fn steps(&mut self) -> Result<(), ApiFailure> {
        self.resolve()?;
        self.load().await?;
        self.check().await?;
        self.stages().await?;
        self.compact();
        Ok(())
    }

    /// Resolve: the model must serve the request as asked (an unknown one is refused with
    /// `--reject-unknown-models`); `context_management` must be well formed.
    fn resolve(&mut self) -> Result<(), ApiFailure> {
        let started = Instant::now();
        let (state, request) = (self.state, &self.request);
        if state.reject_unknown_models && !state.model.serves(&request.model) {
            return Err(ApiFailure::not_found(
                Some("model_not_found"),
                format!(
                    "The model '{}' does not exist or you do not have access to it.",
                    request.model
                ),
                Some("model"),
            ));
        }
        state
            .model
            .check(request)
            .map_err(|error| ApiFailure::new(400, error))?;
        self.compact_threshold = context_management::threshold(request)?;
        self.timings
            .record_at(Stage::Resolve, started, started.elapsed());
        Ok(())
    }

    /// Load: the previous response's context — the connection cache's entry on a hit, the
    /// store's chain otherwise — or the items of the conversation the request binds, which the
    /// response holds until it ends (`previous_response_id` and `conversation` are exclusive).
    /// Timed when it reads the store.
    async fn load(&mut self) -> Result<(), ApiFailure> {
        self.response_id = new_id("resp");
        let started = Instant::now();
        let project = &self.options.project;
        if let Some(id) = &self.request.previous_response_id {
            let cached = self.checkout.previous.take().map(|entry| *entry);
            let found = previous::find(self.state, project, id, cached).await?;
            self.history = found.items;
            self.stored_previous = found.stored;
            self.lookup = Some(found.lookup);
            self.lineage = found.lineage;
            self.hit = found.lookup == CacheLookup::Hit;
            if let Some(reuse) = found.reuse {
                self.work = reuse;
                self.rendered = true;
            }
        }
        if let Some(named) = &self.request.conversation {
            let (bound, held) =
                conversation::bind(self.state, project, &named.id, &self.response_id).await?;
            self.history = held;
            self.bound = Some(bound);
        }
        if self.websocket && self.hit {
            self.timings.path = PathKind::WsHit;
        }
        if self.lookup == Some(CacheLookup::Store) || self.bound.is_some() {
            self.timings
                .record_at(Stage::Load, started, started.elapsed());
        }
        Ok(())
    }

    /// Check: the input's `item_reference`s replaced by what they name (from the history, the
    /// connection cache, the store), a bound conversation's input given its listing shape, and
    /// the request's parts checked against each other and the history.
    async fn check(&mut self) -> Result<(), ApiFailure> {
        let project = &self.options.project;
        let input = self.request.input.clone().into_items();
        let referenced = std::mem::take(&mut self.checkout.referenced);
        let referenced =
            references::elsewhere(self.state, project, &input, &self.history, referenced).await?;
        let mut input = references::resolve(input, &self.history, &referenced)?;
        if let Some(bound) = &mut self.bound {
            // The ids the conversation will list them by, the same in the stored response.
            input = conversation::shape(input);
            bound.input = input.clone();
        }
        checks::request(&self.request, &self.history, &input)?;
        checks::compactions(self.state, project.as_str(), &input)?;
        self.input = input;
        Ok(())
    }

    /// Stages: render, validate and classify over what this connection has not processed yet
    /// (the new input on a hit); then the modelled classifier (`--api-costs`) takes its time
    /// per token the classify stage scanned.
    async fn stages(&mut self) -> Result<(), ApiFailure> {
        let state = self.state;
        let conversation = Conversation::of(&self.history, &self.input, self.hit, self.rendered);
        // The optional process-wide token cache serves the full path over HTTP.
        let token_cache = state.token_cache.as_deref().filter(|_| !self.websocket);
        let processed = stages::process(
            &self.request,
            &conversation,
            &mut self.work,
            token_cache,
            state.scan(),
            &mut self.timings,
        )?;
        let modelled = self
            .options
            .conditions
            .api_costs(&state.api_costs)
            .classifier(processed.scanned_tokens);
        if !modelled.is_zero() {
            tokio::time::sleep(modelled).await;
            self.timings.record_modelled(Modelled::Classify, modelled);
        }
        self.timings.tokens.reused_by_connection = processed.reused_tokens as u64;
        Ok(())
    }

    /// Compact: past the threshold the model reads the context compacted (the length is the
    /// render stage's, cached on a hit) — the user messages and a compaction item, rendered
    /// anew. The stored chain starts again here, from the user messages (the item is the first
    /// output).
    fn compact(&mut self) {
        let Some(threshold) = self.compact_threshold else {
            return;
        };
        if self.work.rendered.len() as u64 <= threshold {
            return;
        }
        let conversation: Vec<Item> = self.history.iter().chain(&self.input).cloned().collect();
        let Some((users, item)) =
            context_management::compact(self.state, self.options.project.as_str(), &conversation)
        else {
            return;
        };
        let mut kept = users.clone();
        kept.push(item.clone());
        let request = &self.request;
        let tools_key = self.work.compiled.key.clone();
        self.work.rendered = self.timings.time(Stage::Render, || {
            RenderedPrompt::full(
                request.instructions.as_deref(),
                &request.tools,
                &tools_key,
                &kept,
                None,
            )
        });
        self.history = Vec::new();
        self.input = kept;
        self.compacted = Some((item, users));
    }

    /// Assemble: the context the engine reads, and what recording the response needs.
    fn assemble(self) -> Prepared {
        let Preparation {
            state,
            request,
            options,
            response_id,
            timings,
            checkout,
            history,
            lookup,
            stored_previous,
            lineage,
            bound,
            input,
            work,
            compacted,
            ..
        } = self;
        // Only a stored response needs its input kept apart: its new input when its parent is
        // in the store, else the whole of it (from the user messages, when compacted).
        let stored_parent = request
            .previous_response_id
            .clone()
            .filter(|_| stored_previous && compacted.is_none());
        let (compacted, users) = compacted.unzip();
        let added_input = match (request.stores(), users) {
            (false, _) => Vec::new(),
            (true, Some(users)) => users,
            (true, None) if stored_parent.is_some() => input.clone(),
            (true, None) => history.iter().chain(&input).cloned().collect(),
        };
        let mut items = history;
        items.extend(input);
        let reasoning_seal = request
            .include
            .iter()
            .flatten()
            .any(|value| value == "reasoning.encrypted_content")
            .then(|| {
                (
                    state.compaction.clone(),
                    options.project.as_str().to_string(),
                )
            });
        let context = Context {
            request,
            response_id,
            items,
            prompt: work.rendered.prompt(),
            route: checkout.route,
            forced_failure: options.forced_failure,
            project: options.project.clone(),
        };
        Prepared {
            context,
            added_input,
            stored_parent,
            lookup,
            reusable: work,
            lineage,
            timings,
            options,
            conversation: bound,
            compacted,
            reasoning_seal,
        }
    }
}
