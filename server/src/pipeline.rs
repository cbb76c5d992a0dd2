//! One request pipeline for both transports: build the context (from the connection cache, the
//! store, or nothing), check the new input against it, generate, and persist.
//!
//! The transports differ only in where the previous context comes from: HTTP always loads the
//! chain from the store; WebSocket mode first looks in its connection cache.

use std::sync::Arc;

use tether_protocol::items::{
    ContentPart, CustomToolCall, FunctionCall, MessageContent, OutputText,
};
use tether_protocol::{
    ApiError, Item, Response, ResponseCreate, ResponseStreamBuilder, Role, ServerEvent, Usage,
};
use tokio::sync::mpsc;

use crate::AppState;
use crate::cache::CachedResponse;
use crate::ids::{new_id, unix_now};
use crate::metrics::CacheLookup;
use crate::persist::Record;
use crate::sim::{Context, ModelEvent};
use crate::stages::classify::ClassifierPolicy;
use crate::stages::render::{self, RenderedPrompt};
use crate::stages::validate::{self, CompiledTools, tools_key};
use crate::store::{LedgerEntry, StoredResponse};
use crate::timing::{PathKind, Stage, StageTimings};

/// A request refused before or while it ran: an HTTP status and the API error.
#[derive(Debug, Clone)]
pub struct Refusal {
    pub status: u16,
    pub error: ApiError,
}

impl Refusal {
    pub fn bad_request(
        code: Option<&str>,
        message: impl Into<String>,
        param: Option<&str>,
    ) -> Self {
        Refusal {
            status: 400,
            error: ApiError::invalid_request(code, message, param),
        }
    }

    pub fn not_found(code: Option<&str>, message: impl Into<String>, param: Option<&str>) -> Self {
        Refusal {
            status: 404,
            error: ApiError::invalid_request(code, message, param),
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Refusal {
            status: 500,
            error: ApiError::server(message),
        }
    }
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
    /// The rendered prompt (`usage.input_tokens` is its length).
    pub rendered: RenderedPrompt,
    /// Tokens of the prompt reused from the connection cache (`cached_tokens`).
    pub cached_tokens: u64,
    /// The request's tools, compiled.
    pub compiled: CompiledTools,
    /// What each stage cost so far.
    pub timings: StageTimings,
    /// Whether the client opted in (`x-tether-timing: 1`) to the timing summary on the
    /// terminal event.
    pub report_timing: bool,
}

impl Prepared {
    /// What the connection cache keeps of this request besides the conversation: the rendered
    /// prompt and the compiled tools (cheap clones of shared buffers).
    pub fn reusable(&self) -> (RenderedPrompt, CompiledTools) {
        (self.rendered.clone(), self.compiled.clone())
    }
}

/// Whether a request's headers opt in to the timing summary (`x-tether-timing: 1`).
pub fn wants_timing(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get("x-tether-timing")
        .is_some_and(|v| v.as_bytes() == b"1")
}

/// Where a request comes from, which decides where its previous context may be found.
pub enum Origin {
    /// HTTP: the store only.
    Http,
    /// WebSocket mode: `cached` is the previous response if the connection cache held it;
    /// `referenced`, the items of the connection cache that the input's `item_reference`s name.
    WebSocket {
        cached: Option<Box<CachedResponse>>,
        referenced: Vec<Item>,
    },
}

/// The previous response's context, from wherever it was found.
struct Previous {
    /// The conversation so far, owned: on a cache hit it is the cached vector itself (the cache
    /// hands its entry over), so continuing never copies the history.
    items: Vec<Item>,
    stored: bool,
    lookup: CacheLookup,
    /// On a cache hit: the rendered prompt and compiled tools, to reuse.
    reuse: Option<(RenderedPrompt, CompiledTools)>,
}

/// Builds the context of `request`: the previous context (from the connection cache on a
/// WebSocket hit, else from the store) + the new input, with item references resolved and tool
/// outputs checked; then renders, validates and classifies — everything on a cache miss, only
/// the new items on a hit.
pub async fn prepare(
    state: &AppState,
    request: ResponseCreate,
    origin: Origin,
) -> Result<Prepared, Refusal> {
    let (cached, referenced, websocket) = match origin {
        Origin::Http => (None, Vec::new(), false),
        Origin::WebSocket { cached, referenced } => (cached.map(|c| *c), referenced, true),
    };
    let resolve_started = std::time::Instant::now();
    if state.reject_unknown_models && !state.model.serves(&request.model) {
        return Err(Refusal::not_found(
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
        .check(&request)
        .map_err(|error| Refusal { status: 400, error })?;
    let resolve_time = resolve_started.elapsed();
    let load_started = std::time::Instant::now();
    let previous = match &request.previous_response_id {
        Some(id) => Some(find_previous(state, id, cached).await?),
        None => None,
    };
    let load_time = load_started.elapsed();
    let (mut items, stored_previous, lookup, reuse) = match previous {
        Some(p) => (p.items, p.stored, Some(p.lookup), p.reuse),
        None => (Vec::new(), false, None, None),
    };
    let mut timings = StageTimings::new(match (websocket, reuse.is_some()) {
        (false, _) => PathKind::Http,
        (true, true) => PathKind::WsHit,
        (true, false) => PathKind::WsMiss,
    });
    timings.record(Stage::Resolve, resolve_time);
    if lookup == Some(CacheLookup::Store) {
        timings.record(Stage::Load, load_time);
    }
    let new_items = request.input.clone().into_items();
    let referenced = referenced_elsewhere(state, &new_items, &items, referenced).await?;
    let new_items = resolve_references(new_items, &items, &referenced)?;
    check_tool_outputs(&items, &new_items)?;
    validate::check_tool_choice(request.tool_choice.as_ref(), &request.tools)?;
    if request.max_output_tokens == Some(0) {
        return Err(Refusal::bad_request(
            None,
            "Invalid 'max_output_tokens': expected at least 1 token, got 0.",
            Some("max_output_tokens"),
        ));
    }
    let instructions = request.instructions.as_deref();
    let tools_key = tools_key(&request.tools);
    let hit = reuse.is_some();
    let (reuse_rendered, reuse_compiled) = match reuse {
        Some((rendered, compiled)) => (Some(rendered), Some(compiled)),
        None => (None, None),
    };

    // Render: extend the cached token buffer, or tokenize the whole conversation.
    // Over HTTP the optional process-wide token cache spares blocks seen before.
    let token_cache = if websocket {
        None
    } else {
        state.token_cache.as_deref()
    };
    let (rendered, cached_tokens) = timings.time(Stage::Render, || match reuse_rendered {
        Some(rendered) => {
            rendered.extend(instructions, &request.tools, &tools_key, &new_items, None)
        }
        None => {
            let prior = RenderedPrompt::full(
                instructions,
                &request.tools,
                &tools_key,
                &items,
                token_cache,
            );
            (
                prior
                    .extend(
                        instructions,
                        &request.tools,
                        &tools_key,
                        &new_items,
                        token_cache,
                    )
                    .0,
                0,
            )
        }
    });

    // Validate: reuse the compiled tools while they are unchanged; check the items not yet
    // checked on this connection.
    let total = items.len() + new_items.len();
    let compiled = timings.time(Stage::Validate, || -> Result<CompiledTools, Refusal> {
        let compiled = match reuse_compiled {
            Some(compiled) if *compiled.key == tools_key => compiled,
            _ => validate::compile(&request.tools, &tools_key)?,
        };
        let mut mismatches = validate::check_items(&new_items, items.len(), total, &compiled)?
            .arguments_not_matching_schema;
        if !hit {
            mismatches +=
                validate::check_items(&items, 0, total, &compiled)?.arguments_not_matching_schema;
        }
        if mismatches > 0 {
            tracing::debug!("{mismatches} function calls in the input do not match their schema");
        }
        Ok(compiled)
    })?;

    // Classify: scan the text not yet scanned on this connection.
    let scanned: Vec<&Item> = if hit {
        new_items.iter().collect()
    } else {
        items.iter().chain(&new_items).collect()
    };
    timings.time(Stage::Classify, || classify_items(state, &scanned))?;

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
        items,
        input_tokens: rendered.len() as u64,
        // The simulator's prefill skips what the connection cache already holds.
        cached_tokens: cached_tokens as u64,
        forced_failure: None,
    };
    Ok(Prepared {
        context,
        added_input,
        stored_parent,
        lookup,
        rendered,
        cached_tokens: cached_tokens as u64,
        compiled,
        timings,
        report_timing: false,
    })
}

/// Runs the classifier over `items` and applies the configured policy.
fn classify_items(state: &AppState, items: &[&Item]) -> Result<(), Refusal> {
    if state.classifier_policy == ClassifierPolicy::Off {
        return Ok(());
    }
    for item in items {
        let (_, text) = render::header_and_body(item);
        for finding in state.classifier.scan(&text) {
            state.metrics.classifier_finding(finding.rule);
            if state.classifier_policy == ClassifierPolicy::Refuse {
                return Err(Refusal::bad_request(
                    Some("sensitive_content"),
                    format!(
                        "The input contains what looks like sensitive data ({}); remove it or ask the server operator to relax --classifier.",
                        finding.rule
                    ),
                    Some("input"),
                ));
            }
        }
    }
    Ok(())
}

async fn find_previous(
    state: &AppState,
    id: &str,
    cached: Option<CachedResponse>,
) -> Result<Previous, Refusal> {
    if let Some(cached) = cached.filter(|c| c.response.id == id) {
        return Ok(Previous {
            items: Arc::try_unwrap(cached.context).unwrap_or_else(|shared| (*shared).clone()),
            stored: cached.response.store,
            lookup: CacheLookup::Hit,
            reuse: Some((cached.rendered, cached.compiled)),
        });
    }
    let store = state.store.clone();
    let key = id.to_string();
    let loaded = blocking(move || store.load_context(&key)).await?;
    match loaded {
        Some((_, items)) => Ok(Previous {
            items,
            stored: true,
            lookup: CacheLookup::Store,
            reuse: None,
        }),
        None => Err(previous_not_found(id)),
    }
}

/// Runs a store call off the async workers; a failure is logged and answered 500.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, crate::store::StoreError> + Send + 'static,
) -> Result<T, Refusal> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Refusal::internal(format!("store task failed: {e}")))?
        .map_err(|e| {
            tracing::error!("store: {e}");
            Refusal::internal("the response store is unavailable")
        })
}

/// The error for an unknown `previous_response_id` (PROTOCOL.md §4).
pub fn previous_not_found(id: &str) -> Refusal {
    Refusal::bad_request(
        Some("previous_response_not_found"),
        format!("Previous response with id '{id}' not found."),
        Some("previous_response_id"),
    )
}

/// The ids of the `item_reference`s in `items`.
pub fn reference_ids(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|item| match item {
            Item::ItemReference { id } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

/// The items that `item_reference`s in `new_items` name and the previous context does not
/// hold: from `cached` (the connection cache's, WebSocket mode), then from the store.
async fn referenced_elsewhere(
    state: &AppState,
    new_items: &[Item],
    prior: &[Item],
    mut cached: Vec<Item>,
) -> Result<Vec<Item>, Refusal> {
    let known =
        |id: &str, extra: &[Item]| prior.iter().chain(extra).any(|item| item.id() == Some(id));
    let missing: Vec<String> = reference_ids(new_items)
        .into_iter()
        .filter(|id| !known(id, &cached))
        .collect();
    if missing.is_empty() {
        return Ok(cached);
    }
    let store = state.store.clone();
    let found = blocking(move || store.find_items(&missing)).await?;
    cached.extend(found);
    Ok(cached)
}

/// Replaces each `item_reference` with the item it names: from the previous context, else from
/// `elsewhere` (the connection cache's or the store's items). Only new input holds references:
/// what is cached or stored was resolved here first.
fn resolve_references(
    items: Vec<Item>,
    prior: &[Item],
    elsewhere: &[Item],
) -> Result<Vec<Item>, Refusal> {
    items
        .into_iter()
        .map(|item| match item {
            Item::ItemReference { id } => prior
                .iter()
                .chain(elsewhere)
                .find(|candidate| candidate.id() == Some(id.as_str()))
                .cloned()
                .ok_or_else(|| {
                    Refusal::bad_request(
                        None,
                        format!("Item with id '{id}' not found."),
                        Some("input"),
                    )
                }),
            other => Ok(other),
        })
        .collect()
}

/// Every tool output must answer a call made earlier in the conversation.
fn check_tool_outputs(prior: &[Item], new_items: &[Item]) -> Result<(), Refusal> {
    for (index, item) in new_items.iter().enumerate() {
        let (Item::FunctionCallOutput(output) | Item::CustomToolCallOutput(output)) = item else {
            continue;
        };
        let answered = prior
            .iter()
            .chain(&new_items[..index])
            .any(|candidate| match candidate {
                Item::FunctionCall(call) => call.call_id == output.call_id,
                Item::CustomToolCall(call) => call.call_id == output.call_id,
                _ => false,
            });
        if !answered {
            return Err(Refusal::bad_request(
                None,
                format!(
                    "No tool call found for function call output with call_id {}.",
                    output.call_id
                ),
                Some(&format!("input[{index}]")),
            ));
        }
    }
    Ok(())
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
}

impl Generated {
    /// The cache entry for this response: `reuse` (from [`Prepared::reusable`]) extended with
    /// the output's tokens. Called after `response.completed` is sent, off the critical path.
    pub fn into_cached(self, reuse: (RenderedPrompt, CompiledTools)) -> CachedResponse {
        let (rendered, compiled) = reuse;
        CachedResponse {
            rendered: rendered.with_items(&self.response.output),
            compiled,
            response: self.response,
            context: self.context,
        }
    }
}

/// A model event measured against `max_output_tokens`.
enum Within {
    /// It fits (or carries no tokens).
    Whole(ModelEvent),
    /// A delta cut to the tokens that still fit (at a token boundary); the output ends with it.
    Cut(ModelEvent),
    /// The limit was reached before it: the output ends.
    Nothing,
}

/// Measures `event` against `limit` tokens of output, `spent` of them already streamed: a delta
/// that does not fit is cut at a token boundary (nothing of it may fit), and once the limit is
/// reached a new item cannot begin; an item's end always passes, so an answer exactly as long as
/// the limit still completes.
fn within_limit(event: ModelEvent, spent: u64, limit: u64) -> Within {
    let left = limit.saturating_sub(spent);
    let (delta, rewrap): (crate::sim::Delta, fn(crate::sim::Delta) -> ModelEvent) = match event {
        ModelEvent::ReasoningDelta(d) => (d, ModelEvent::ReasoningDelta),
        ModelEvent::TextDelta(d) => (d, ModelEvent::TextDelta),
        ModelEvent::ArgumentsDelta(d) => (d, ModelEvent::ArgumentsDelta),
        ModelEvent::BeginReasoning
        | ModelEvent::BeginMessage
        | ModelEvent::BeginFunctionCall { .. }
        | ModelEvent::BeginCustomToolCall { .. }
            if left == 0 =>
        {
            return Within::Nothing;
        }
        other => return Within::Whole(other),
    };
    if delta.tokens as u64 <= left {
        return Within::Whole(rewrap(delta));
    }
    // Whole pieces (a piece is the fewest tokens that make whole characters) while they fit.
    let mut text = String::new();
    let mut tokens = 0usize;
    for (piece, n) in crate::sim::tokens::pieces(&delta.text) {
        if (tokens + n) as u64 > left {
            break;
        }
        text.push_str(piece);
        tokens += n;
    }
    if tokens == 0 {
        Within::Nothing
    } else {
        Within::Cut(rewrap(crate::sim::Delta::new(text, tokens)))
    }
}

/// Generates the response and sends its events to `out`; persists it first when `store` is set
/// (so a continuation can find it the moment `response.completed` arrives).
pub async fn generate(
    state: &AppState,
    prepared: Prepared,
    out: &mpsc::Sender<ServerEvent>,
) -> Result<Generated, Disconnected> {
    let Prepared {
        context,
        added_input,
        stored_parent,
        cached_tokens,
        mut timings,
        report_timing,
        ..
    } = prepared;
    let generate_started = std::time::Instant::now();
    let request = &context.request;
    let response = Response::in_progress(new_id("resp"), unix_now(), request);
    let mut builder = ResponseStreamBuilder::new(response, request.stream_id.clone());
    send_all(out, builder.start()).await?;

    let mut output_tokens = 0u64;
    let mut reasoning_tokens = 0u64;
    let mut failure = None;
    // `max_output_tokens` (reasoning included): the output stops at that many tokens and the
    // response ends `incomplete`.
    let limit = request.max_output_tokens.unwrap_or(u64::MAX);
    let mut cut_short = false;
    if request.generates() {
        let mut events = state.model.generate(&context);
        use futures_util::StreamExt;
        while let Some(model_event) = events.next().await {
            let model_event = match within_limit(model_event, output_tokens, limit) {
                Within::Whole(event) => event,
                Within::Cut(event) => {
                    cut_short = true;
                    event
                }
                Within::Nothing => {
                    cut_short = true;
                    break;
                }
            };
            let wire = match model_event {
                ModelEvent::Started { queue_time } => {
                    tracing::debug!("admitted after {queue_time:?} in the queue");
                    Vec::new()
                }
                ModelEvent::Fail { status, error } => {
                    failure = Some((status, error));
                    break;
                }
                ModelEvent::BeginReasoning => builder.begin_reasoning(new_id("rs")),
                ModelEvent::ReasoningDelta(delta) => {
                    output_tokens += delta.tokens as u64;
                    reasoning_tokens += delta.tokens as u64;
                    vec![builder.reasoning_summary_delta(&delta.text)]
                }
                ModelEvent::BeginMessage => builder.begin_message(new_id("msg")),
                ModelEvent::TextDelta(delta) => {
                    output_tokens += delta.tokens as u64;
                    vec![builder.text_delta(&delta.text)]
                }
                ModelEvent::BeginFunctionCall { name, namespace } => {
                    vec![builder.begin_tool_call(Item::FunctionCall(FunctionCall {
                        id: Some(new_id("fc")),
                        call_id: new_id("call"),
                        name,
                        arguments: String::new(),
                        namespace,
                        status: None,
                    }))]
                }
                ModelEvent::BeginCustomToolCall { name } => {
                    vec![
                        builder.begin_tool_call(Item::CustomToolCall(CustomToolCall {
                            id: Some(new_id("ctc")),
                            call_id: new_id("call"),
                            name,
                            input: String::new(),
                            status: None,
                        })),
                    ]
                }
                ModelEvent::ArgumentsDelta(delta) => {
                    output_tokens += delta.tokens as u64;
                    vec![builder.arguments_delta(&delta.text)]
                }
                ModelEvent::EndItem => builder.end_item(),
            };
            send_all(out, wire).await?;
            if cut_short {
                break;
            }
        }
    }
    if let Some((status, error)) = failure {
        // The WebSocket shape (with `status`); the SSE transport flattens it.
        send_all(out, builder.fail(Some(status), error)).await?;
        let response = builder.response().clone();
        let mut after = context.items;
        after.extend(response.output.iter().cloned());
        return Ok(Generated {
            response,
            context: Arc::new(after),
        });
    }
    let usage = Usage::new(
        context.input_tokens,
        cached_tokens,
        output_tokens,
        reasoning_tokens,
    );
    let terminal = if cut_short {
        builder.incomplete("max_output_tokens", usage)
    } else {
        builder.complete(usage, unix_now())
    };
    let response = builder.response().clone();
    timings.record(Stage::Generate, generate_started.elapsed());
    let record = Record {
        stored: response.store.then(|| StoredResponse {
            response: response.clone(),
            added_input: with_listing_shape(added_input),
            parent_id: stored_parent,
        }),
        bill: LedgerEntry {
            response_id: response.id.clone(),
            model: response.model.clone(),
            transport: match timings.path {
                PathKind::Http if request.stream == Some(true) => "sse",
                PathKind::Http => "http",
                PathKind::WsHit | PathKind::WsMiss => "ws",
            },
            input_tokens: context.input_tokens,
            cached_tokens,
            output_tokens,
            recorded_at: unix_now(),
        },
    };
    if timings.path == PathKind::Http {
        // Over HTTP the response is final once stored and billed.
        state.records.write_now(record, &mut timings).await;
    } else {
        // Queued before the terminal event, so a continuation can always find it; written after.
        state.records.write_later(record, timings.path);
    }
    state.stage_histograms.observe(&timings);
    let mut terminal = terminal;
    if report_timing && let Some(last) = terminal.last_mut() {
        last.tether_timing = serde_json::to_value(&timings).ok();
    }
    send_all(out, terminal).await?;
    let mut after = context.items;
    after.extend(response.output.iter().cloned());
    Ok(Generated {
        response,
        context: Arc::new(after),
    })
}

async fn send_all(
    out: &mpsc::Sender<ServerEvent>,
    events: Vec<ServerEvent>,
) -> Result<(), Disconnected> {
    for event in events {
        out.send(event).await.map_err(|_| Disconnected)?;
    }
    Ok(())
}

/// Gives stored input items the shape `GET /v1/responses/{id}/input_items` lists: every item
/// has an `id`, and message content is a list of parts.
fn with_listing_shape(items: Vec<Item>) -> Vec<Item> {
    items
        .into_iter()
        .map(|item| match item {
            Item::Message(mut message) => {
                message.id.get_or_insert_with(|| new_id("msg"));
                if let MessageContent::Text(text) = &message.content {
                    let part = match message.role {
                        Role::Assistant => ContentPart::OutputText(OutputText::new(text.clone())),
                        _ => ContentPart::InputText { text: text.clone() },
                    };
                    message.content = MessageContent::Parts(vec![part]);
                }
                Item::Message(message)
            }
            Item::FunctionCallOutput(mut output) => {
                output.id.get_or_insert_with(|| new_id("fco"));
                Item::FunctionCallOutput(output)
            }
            Item::CustomToolCallOutput(mut output) => {
                output.id.get_or_insert_with(|| new_id("ctco"));
                Item::CustomToolCallOutput(output)
            }
            Item::FunctionCall(mut call) => {
                call.id.get_or_insert_with(|| new_id("fc"));
                Item::FunctionCall(call)
            }
            other => other,
        })
        .collect()
}
