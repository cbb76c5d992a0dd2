//! One request pipeline for both transports: [`prepare`] builds the context — the previous
//! context (from the connection cache, the store, or nothing) plus the new input — checks it,
//! and runs the stages over what this connection has not processed yet; [`generate`] streams
//! the model's answer and records it.
//!
//! The transports differ only in where the previous context comes from ([`Origin`]): HTTP always
//! loads the chain from the store; WebSocket mode first looks in its connection cache, and on a
//! hit only the new items are rendered, validated and classified.

pub mod background;
mod checks;
mod context_management;
pub mod conversation;
mod limit;
mod parameters;
mod previous;
mod record;
mod running;
mod stages;
mod steering;
mod stream;

pub use checks::supported;
pub use parameters::{ALLOWED_UNKNOWN, Via};
pub use previous::reference_ids;
pub use running::{End, Running, Sampled};
pub use steering::{MAX_PENDING_STEERS, QueuedSteer, Refused, Steering};

use std::sync::Arc;

use tether_protocol::{Item, Response, ResponseCreate, ServerEvent};
use tokio::sync::mpsc;

use crate::AppState;
use crate::cache::{Ancestor, CachedResponse, Reusable};
use crate::conditions::Conditions;
use crate::error::ApiFailure;
use crate::ids::new_id;
use crate::metrics::CacheLookup;
use crate::model::{Context, FailureKind};
use crate::stages::validate::tools_key;
use crate::tenancy::Project;
use crate::timing::{Modelled, PathKind, Stage, StageTimings};
use stages::Conversation;

/// What the client asked of a request besides its body: from the request's headers over HTTP,
/// from the upgrade request's (or URL's) for every response of a WebSocket connection.
#[derive(Debug, Clone, Default)]
pub struct RequestOptions {
    /// The project of the request's API key: it sees only this project's stored responses.
    pub project: Project,
    /// `x-tether-fail`: a failure to force.
    pub forced_failure: Option<FailureKind>,
    /// `x-tether-timing: 1`: attach the timing summary to the terminal event.
    pub report_timing: bool,
    /// `x-responsesapi-include-timing-metrics: true` (WebSocket upgrade): send
    /// `responsesapi.websocket_timing` before each terminal event.
    pub timing_metrics: bool,
    /// `OpenAI-Beta: responses_websockets=2026-02-04` (v1, WebSocket upgrade): a response that
    /// calls client tools pauses with `response.done` and resumes on `response.append`.
    pub append_mode: bool,
    /// `OpenAI-Beta: responses_multi_agent=v1` (WebSocket upgrade): a response with
    /// `multi_agent.enabled` waits at client tool calls for `response.inject`.
    pub multi_agent: bool,
    /// `?model=` on the upgrade URL: the model of a `response.create` that names none.
    pub default_model: Option<String>,
    /// The client's span, when the server exports traces (`--otlp-endpoint`): the response's
    /// span is its child. `None` when traces are off: nothing is kept for them.
    pub trace: Option<crate::traces::Parent>,
    /// The conditions the client chose (`tether_rtt_ms`, `tether_api_costs`, …): the link
    /// the transport applies to the socket, the API-cost preset charged here.
    pub conditions: Conditions,
}

/// Where a request comes from, which decides where its previous context may be found.
pub enum Origin {
    /// HTTP: the store only.
    Http,
    /// WebSocket mode: `cached` is the previous response if the connection cache held it;
    /// `referenced`, the items of the connection cache that the input's `item_reference`s name.
    /// `route`, the engine replica the connection's earlier responses went to.
    WebSocket {
        cached: Option<Box<CachedResponse>>,
        referenced: Vec<Item>,
        route: Option<usize>,
    },
}

/// A request ready to generate.
#[derive(Debug)]
pub struct Prepared {
    pub context: Context,
    /// What a stored row for this response records as its added input.
    pub added_input: Vec<Item>,
    /// The previous response, when it is in the store (the chain continues there).
    pub stored_parent: Option<String>,
    /// Where a WebSocket continuation found its previous response.
    pub lookup: Option<CacheLookup>,
    /// The rendered prompt (`usage.input_tokens` is its length) and the compiled tools.
    pub reusable: Reusable,
    /// The responses this one continues on the connection (from the cache entry it took).
    pub lineage: std::collections::VecDeque<Ancestor>,
    /// What each stage cost so far.
    pub timings: StageTimings,
    pub options: RequestOptions,
    /// The conversation the response holds and appends to, when it names one.
    pub conversation: Option<conversation::Bound>,
    /// The compaction item its output begins with, when its context was compacted
    /// (`context_management`).
    pub compacted: Option<Item>,
    /// `include: ["reasoning.encrypted_content"]`: the key and project its reasoning items'
    /// `encrypted_content` is sealed with.
    pub reasoning_seal: Option<(crate::compaction::Sealer, String)>,
}

/// Builds the context of `request` and runs the stages over it: everything on the full path,
/// only the new items on a WebSocket cache hit.
pub async fn prepare(
    state: &AppState,
    request: ResponseCreate,
    origin: Origin,
    options: RequestOptions,
) -> Result<Prepared, ApiFailure> {
    let received = std::time::Instant::now();
    let (cached, referenced, route, websocket) = match origin {
        Origin::Http => (None, Vec::new(), None, false),
        Origin::WebSocket {
            cached,
            referenced,
            route,
        } => (cached.map(|c| *c), referenced, route, true),
    };
    let resolve_started = std::time::Instant::now();
    checks::model(state, &request)?;
    let compact_threshold = context_management::threshold(&request)?;
    let resolve_time = resolve_started.elapsed();

    let response_id = new_id("resp");
    let load_started = std::time::Instant::now();
    let previous = match &request.previous_response_id {
        Some(id) => Some(previous::find(state, &options.project, id, cached).await?),
        None => None,
    };
    let (mut items, stored_previous, lookup, reuse, lineage) = match previous {
        Some(p) => (p.items, p.stored, Some(p.lookup), p.reuse, p.lineage),
        None => (Vec::new(), false, None, None, Default::default()),
    };
    // A conversation's items are the context (never with `previous_response_id`: refused in
    // `parameters`); the response holds it until it ends.
    let mut bound = match &request.conversation {
        Some(named) => {
            let (bound, held) =
                conversation::bind(state, &options.project, &named.id, &response_id).await?;
            items = held;
            Some(bound)
        }
        None => None,
    };
    let load_time = load_started.elapsed();
    // A request refused from here on gives its conversation back before it is answered, so the
    // client's corrected retry does not find it still held.
    macro_rules! held {
        ($result:expr) => {
            match $result {
                Ok(value) => value,
                Err(failure) => {
                    if let Some(bound) = bound.take() {
                        bound.finish(&options.project, None).await;
                    }
                    return Err(failure);
                }
            }
        };
    }
    let hit = reuse.is_some();
    let mut timings = StageTimings::new(match (websocket, hit) {
        (false, _) => PathKind::Http,
        (true, true) => PathKind::WsHit,
        (true, false) => PathKind::WsMiss,
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
    timings.record_at(Stage::Resolve, resolve_started, resolve_time);
    if lookup == Some(CacheLookup::Store) || bound.is_some() {
        timings.record_at(Stage::Load, load_started, load_time);
    }

    let new_items = request.input.clone().into_items();
    let referenced = held!(
        previous::referenced_elsewhere(state, &options.project, &new_items, &items, referenced)
            .await
    );
    let mut new_items = held!(previous::resolve_references(new_items, &items, &referenced));
    if let Some(bound) = &mut bound {
        // The ids the conversation will list them by, the same in the stored response.
        new_items = conversation::shape(new_items);
        bound.input = new_items.clone();
    }
    held!(checks::request(&request, &items, &new_items));
    held!(checks::compactions(
        state,
        options.project.as_str(),
        &new_items
    ));

    let tools_key = tools_key(&request.tools);
    let (cached_rendered, cached_compiled) = match reuse {
        Some(reusable) => (Some(reusable.rendered), Some(reusable.compiled)),
        None => (None, None),
    };
    let conversation = Conversation {
        prior: &items,
        new: &new_items,
        hit,
    };
    // The optional process-wide token cache serves the full path over HTTP.
    let token_cache = state.token_cache.as_deref().filter(|_| !websocket);
    let (rendered, cached_tokens) = timings.time(Stage::Render, || {
        stages::render(
            &request,
            &tools_key,
            &conversation,
            cached_rendered,
            token_cache,
        )
    });
    let compiled = held!(timings.time(Stage::Validate, || {
        stages::validate(&request, &tools_key, &conversation, cached_compiled)
    }));
    held!(timings.time(Stage::Classify, || stages::classify(state, &conversation)));
    // The modelled classifier (`--api-costs`) takes its time per token the stage scanned.
    let scanned = stages::scanned_tokens(&rendered, &conversation);
    let modelled = options
        .conditions
        .api_costs(&state.api_costs)
        .classifier(scanned);
    if !modelled.is_zero() {
        tokio::time::sleep(modelled).await;
        timings.record_modelled(Modelled::Classify, modelled);
    }
    timings.tokens.reused_by_connection = cached_tokens as u64;

    let mut stored_parent = request
        .previous_response_id
        .clone()
        .filter(|_| stored_previous);
    // Only a stored response needs its input kept apart (the whole of it when its parent is
    // not in the store).
    let mut added_input = match (request.stores(), stored_parent.is_some()) {
        (false, _) => Vec::new(),
        (true, true) => new_items.clone(),
        (true, false) => items.iter().chain(&new_items).cloned().collect(),
    };
    items.extend(new_items);
    // Past the threshold the model reads the context compacted (the length is the render
    // stage's, cached on a hit): the user messages and the compaction item, rendered anew. The
    // stored chain starts again here, from the user messages (the item is the first output).
    let mut rendered = rendered;
    let mut compacted = None;
    if let Some(threshold) = compact_threshold
        && rendered.len() as u64 > threshold
        && let Some((users, item)) =
            context_management::compact(state, options.project.as_str(), &items)
    {
        let mut kept = users.clone();
        kept.push(item.clone());
        let fresh = Conversation {
            prior: &[],
            new: &kept,
            hit: false,
        };
        let (again, _) = timings.time(Stage::Render, || {
            stages::render(&request, &tools_key, &fresh, None, None)
        });
        rendered = again;
        items = kept;
        stored_parent = None;
        added_input = if request.stores() { users } else { Vec::new() };
        compacted = Some(item);
    }
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
        prompt: rendered.prompt(),
        route,
        forced_failure: options.forced_failure,
        project: options.project.clone(),
    };
    Ok(Prepared {
        context,
        added_input,
        stored_parent,
        lookup,
        reusable: Reusable { rendered, compiled },
        lineage,
        timings,
        options,
        conversation: bound,
        compacted,
        reasoning_seal,
    })
}

/// The client went away; the response was abandoned.
#[derive(Debug)]
pub struct Disconnected;

/// The outcome of a generated response.
#[derive(Debug)]
pub struct Generated {
    pub response: Response,
    /// The request it answered, moved out of its context (an automatic successor of a
    /// steered response takes its settings) until a caller takes it.
    pub request: Option<ResponseCreate>,
    /// The whole conversation after the response, for the connection cache.
    pub context: Arc<Vec<Item>>,
    /// The request's rendered prompt and compiled tools, for the connection cache.
    reusable: Reusable,
    /// Output items not rendered onto `reusable` yet.
    pending_outputs: Vec<Item>,
    lineage: std::collections::VecDeque<Ancestor>,
    /// The engine replica that served it (a WebSocket connection keeps it for its next turns).
    pub replica: usize,
    /// The sequence number an event after its terminal one gets (`response.steer.pending`).
    pub next_sequence: u64,
    /// The steers it took (the successor's or the next request's input).
    pub steers: Vec<QueuedSteer>,
}

impl Generated {
    /// The cache entry for this response: the request's rendered prompt extended with the
    /// output's tokens, its compiled tools. Called after the terminal event is sent, off the
    /// critical path.
    pub fn into_cached(self) -> CachedResponse {
        CachedResponse {
            reusable: Reusable {
                rendered: self.reusable.rendered.with_items(&self.pending_outputs),
                compiled: self.reusable.compiled,
            },
            response: self.response,
            context: self.context,
            lineage: self.lineage,
        }
    }
}

/// Generates the response and sends its events to `out`: one engine call, then the terminal
/// event; records it first (the store, the ledger) so a continuation can find it the moment the
/// terminal event arrives: over HTTP written before, in WebSocket mode queued before and
/// written after.
pub async fn generate(
    state: &AppState,
    prepared: Prepared,
    out: &mpsc::Sender<Box<ServerEvent>>,
) -> Result<Generated, Disconnected> {
    let mut running = Running::start(prepared, out).await?;
    let end = match running.sample(state, out).await? {
        Sampled::Failed(status, error) => End::Failed(status, error),
        Sampled::CutShort => End::Incomplete("max_output_tokens"),
        Sampled::Steered => End::Incomplete("steered"),
        Sampled::Answered | Sampled::Called(_) => End::Completed,
    };
    running.finish(state, out, end).await
}
