//! One request pipeline for both transports: [`prepare`] builds the context — the previous
//! context (from the connection cache, the store, or nothing) plus the new input — checks it,
//! and runs the stages over what this connection has not processed yet; [`generate`] streams
//! the model's answer and records it.
//!
//! The transports differ only in where the previous context comes from ([`Origin`]): HTTP always
//! loads the chain from the store; WebSocket mode first looks in its connection cache, and on a
//! hit only the new items are rendered, validated and classified.

mod checks;
mod limit;
mod previous;
mod record;
mod stages;
mod stream;

pub use checks::supported;
pub use previous::reference_ids;

use std::sync::Arc;

use tether_protocol::{
    CacheWriteDetails, Item, Response, ResponseCreate, ResponseStreamBuilder, ServerEvent,
    StreamEvent, Usage,
};
use tokio::sync::mpsc;

use crate::AppState;
use crate::cache::{CachedResponse, Reusable};
use crate::error::ApiFailure;
use crate::ids::{new_id, unix_now};
use crate::metrics::CacheLookup;
use crate::model::{Context, FailureKind};
use crate::stages::validate::tools_key;
use crate::tenancy::Project;
use crate::timing::{EngineTiming, Modelled, PathKind, Stage, StageTimings};
use stages::Conversation;
use stream::send_all;

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
    /// What each stage cost so far.
    pub timings: StageTimings,
    pub options: RequestOptions,
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
    let resolve_time = resolve_started.elapsed();

    let load_started = std::time::Instant::now();
    let previous = match &request.previous_response_id {
        Some(id) => Some(previous::find(state, &options.project, id, cached).await?),
        None => None,
    };
    let load_time = load_started.elapsed();
    let (mut items, stored_previous, lookup, reuse) = match previous {
        Some(p) => (p.items, p.stored, Some(p.lookup), p.reuse),
        None => (Vec::new(), false, None, None),
    };
    let hit = reuse.is_some();
    let mut timings = StageTimings::new(match (websocket, hit) {
        (false, _) => PathKind::Http,
        (true, true) => PathKind::WsHit,
        (true, false) => PathKind::WsMiss,
    });
    timings.received = received;
    timings.record(Stage::Resolve, resolve_time);
    if lookup == Some(CacheLookup::Store) {
        timings.record(Stage::Load, load_time);
    }

    let new_items = request.input.clone().into_items();
    let referenced =
        previous::referenced_elsewhere(state, &options.project, &new_items, &items, referenced)
            .await?;
    let new_items = previous::resolve_references(new_items, &items, &referenced)?;
    checks::request(&request, &items, &new_items)?;

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
    let compiled = timings.time(Stage::Validate, || {
        stages::validate(&request, &tools_key, &conversation, cached_compiled)
    })?;
    timings.time(Stage::Classify, || stages::classify(state, &conversation))?;
    // The modelled classifier (`--api-costs`) takes its time per token the stage scanned.
    let scanned = stages::scanned_tokens(&rendered, &conversation);
    let modelled = state.api_costs.classifier(scanned);
    if !modelled.is_zero() {
        tokio::time::sleep(modelled).await;
        timings.record_modelled(Modelled::Classify, modelled);
    }
    timings.tokens.reused_by_connection = cached_tokens as u64;

    let stored_parent = request
        .previous_response_id
        .clone()
        .filter(|_| stored_previous);
    // Only a stored response needs its input kept apart (the whole of it when its parent is
    // not in the store).
    let added_input = match (request.stores(), stored_parent.is_some()) {
        (false, _) => Vec::new(),
        (true, true) => new_items.clone(),
        (true, false) => items.iter().chain(&new_items).cloned().collect(),
    };
    items.extend(new_items);
    let context = Context {
        request,
        response_id: new_id("resp"),
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
        timings,
        options,
    })
}

/// The client went away; the response was abandoned.
#[derive(Debug)]
pub struct Disconnected;

/// The outcome of a generated response.
#[derive(Debug)]
pub struct Generated {
    pub response: Response,
    /// The whole conversation after the response, for the connection cache.
    pub context: Arc<Vec<Item>>,
    /// The request's rendered prompt and compiled tools, for the connection cache.
    reusable: Reusable,
    /// The engine replica that served it (a WebSocket connection keeps it for its next turns).
    pub replica: usize,
}

impl Generated {
    /// The cache entry for this response: the request's rendered prompt extended with the
    /// output's tokens, its compiled tools. Called after the terminal event is sent, off the
    /// critical path.
    pub fn into_cached(self) -> CachedResponse {
        CachedResponse {
            reusable: Reusable {
                rendered: self.reusable.rendered.with_items(&self.response.output),
                compiled: self.reusable.compiled,
            },
            response: self.response,
            context: self.context,
        }
    }
}

/// Generates the response and sends its events to `out`; records it first (the store, the
/// ledger) so a continuation can find it the moment the terminal event arrives: over HTTP
/// written before, in WebSocket mode queued before and written after.
pub async fn generate(
    state: &AppState,
    prepared: Prepared,
    out: &mpsc::Sender<ServerEvent>,
) -> Result<Generated, Disconnected> {
    let Prepared {
        context,
        added_input,
        stored_parent,
        reusable,
        mut timings,
        options,
        ..
    } = prepared;
    let generate_started = std::time::Instant::now();
    let request = &context.request;
    let response = Response::in_progress(context.response_id.clone(), unix_now(), request);
    let mut builder = ResponseStreamBuilder::new(response, request.stream_id.clone());
    send_all(out, builder.start()).await?;

    let prewarm = request
        .prompt_cache_options
        .as_ref()
        .and_then(|o| o.get("prewarm"))
        .and_then(|p| p.as_bool())
        == Some(true);
    let streamed = if request.generates() || prewarm {
        let limit = request.max_output_tokens.unwrap_or(u64::MAX);
        call_engine(state, &context, &mut builder, limit, out, &mut timings).await?
    } else {
        stream::Streamed::default()
    };
    let replica = streamed.admission.replica;
    if let Some((status, error)) = streamed.failure {
        // The WebSocket shape (with `status`); the SSE transport flattens it.
        send_all(out, builder.fail(Some(status), error)).await?;
        return Ok(finished(
            builder.response().clone(),
            context.items,
            reusable,
            replica,
        ));
    }
    let cache = &streamed.admission.cache;
    let usage = Usage::new(
        context.input_tokens(),
        cache.cached_tokens,
        streamed.output_tokens,
        streamed.reasoning_tokens,
    )
    .with_cache_writes(
        cache.written_tokens,
        cache
            .written_by_ttl
            .map(|(ttl_30m_tokens, ttl_12h_tokens)| CacheWriteDetails {
                ttl_30m_tokens,
                ttl_12h_tokens,
            }),
    );
    timings.tokens.input = context.input_tokens();
    timings.tokens.cached = cache.cached_tokens;
    timings.tokens.cache_write = cache.written_tokens;
    builder.response_mut().prompt_cache_diagnostics = cache.diagnostics.clone();
    let mut terminal = if streamed.cut_short {
        builder.incomplete("max_output_tokens", usage.clone())
    } else {
        builder.complete(usage.clone(), unix_now())
    };
    let response = builder.response().clone();
    timings.record(Stage::Generate, generate_started.elapsed());
    let transport = match timings.path {
        PathKind::Http if request.stream == Some(true) => "sse",
        PathKind::Http => "http",
        PathKind::WsHit | PathKind::WsMiss => "ws",
    };
    let record = record::record(
        &context.project,
        &response,
        &usage,
        added_input,
        stored_parent,
        transport,
    );
    if timings.path == PathKind::Http {
        // Over HTTP the response is final once stored and billed.
        state.records.write_now(record, &mut timings).await;
    } else {
        // Queued before the terminal event, so a continuation can always find it; written after.
        state.records.write_later(record, timings.path).await;
    }
    state.metrics.stages.observe(&timings);
    timings.finish();
    if options.timing_metrics {
        let timing = StreamEvent::WebsocketTiming {
            timing_metrics: timings.websocket_timing(),
        };
        send_all(out, vec![builder.unnumbered(timing)]).await?;
    }
    if options.report_timing
        && let Some(last) = terminal.last_mut()
    {
        last.tether_timing = Some(timings.summary());
    }
    send_all(out, terminal).await?;
    Ok(finished(response, context.items, reusable, replica))
}

/// One engine call: the modelled hop, then the model's events streamed to `out`; the engine's
/// part of the response's time recorded in `timings`.
async fn call_engine(
    state: &AppState,
    context: &Context,
    builder: &mut ResponseStreamBuilder,
    limit: u64,
    out: &mpsc::Sender<ServerEvent>,
    timings: &mut StageTimings,
) -> Result<stream::Streamed, Disconnected> {
    let requested = std::time::Instant::now();
    let hop = state.api_costs.engine_hop();
    if !hop.is_zero() {
        tokio::time::sleep(hop).await;
        timings.record_modelled(Modelled::EngineHop, hop);
    }
    let called = std::time::Instant::now();
    let streamed = stream::stream(state.model.generate(context), builder, limit, out).await?;
    let ended = std::time::Instant::now();
    let first = streamed.first_token_at.unwrap_or(ended);
    timings.engine = EngineTiming {
        calls: 1,
        replica: streamed.admission.replica,
        queue: streamed.admission.queue_time,
        prefill: streamed
            .admitted_at
            .map_or(std::time::Duration::ZERO, |admitted| first - admitted),
        decode: streamed
            .last_token_at
            .map_or(std::time::Duration::ZERO, |last| last - first),
        service_total: ended - called,
        service_ttft: first - called,
        iapi_ttft: first - requested,
        iapi_total: ended - requested,
    };
    Ok(streamed)
}

/// The outcome: `response`, the conversation after it, what the cache may keep of it, the
/// engine replica that served it.
fn finished(
    response: Response,
    mut items: Vec<Item>,
    reusable: Reusable,
    replica: usize,
) -> Generated {
    items.extend(response.output.iter().cloned());
    Generated {
        response,
        context: Arc::new(items),
        reusable,
        replica,
    }
}
