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
use crate::sim::{Context, ModelEvent};
use crate::store::StoredResponse;

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
}

/// The previous response's context, from wherever it was found.
struct Previous {
    items: Arc<Vec<Item>>,
    stored: bool,
    lookup: CacheLookup,
}

/// Builds the context of `request`: previous context (`cached` when the caller's connection
/// cache held the previous response, else the store) + the new input, with item references
/// resolved and tool outputs checked.
pub async fn prepare(
    state: &AppState,
    request: ResponseCreate,
    cached: Option<CachedResponse>,
) -> Result<Prepared, Refusal> {
    if state.reject_unknown_models && !state.model.model_ids().contains(&request.model) {
        return Err(Refusal::not_found(
            Some("model_not_found"),
            format!(
                "The model '{}' does not exist or you do not have access to it.",
                request.model
            ),
            Some("model"),
        ));
    }
    let previous = match &request.previous_response_id {
        Some(id) => Some(find_previous(state, id, cached).await?),
        None => None,
    };
    let prior: &[Item] = previous.as_ref().map_or(&[], |p| p.items.as_slice());
    let new_items = resolve_references(request.input.clone().into_items(), prior)?;
    check_tool_outputs(prior, &new_items)?;

    let stored_parent = previous
        .as_ref()
        .filter(|p| p.stored)
        .and(request.previous_response_id.clone());
    let added_input = if stored_parent.is_some() {
        new_items.clone()
    } else {
        prior.iter().chain(&new_items).cloned().collect()
    };
    let mut items = Vec::with_capacity(prior.len() + new_items.len());
    items.extend_from_slice(prior);
    items.extend(new_items);
    Ok(Prepared {
        context: Context::with_items(request, items),
        added_input,
        stored_parent,
        lookup: previous.map(|p| p.lookup),
    })
}

async fn find_previous(
    state: &AppState,
    id: &str,
    cached: Option<CachedResponse>,
) -> Result<Previous, Refusal> {
    if let Some(cached) = cached.filter(|c| c.response.id == id) {
        return Ok(Previous {
            items: cached.context,
            stored: cached.response.store,
            lookup: CacheLookup::Hit,
        });
    }
    let store = state.store.clone();
    let key = id.to_string();
    let loaded = tokio::task::spawn_blocking(move || store.load_context(&key))
        .await
        .map_err(|e| Refusal::internal(format!("store task failed: {e}")))?
        .map_err(|e| {
            tracing::error!("loading {id} from the store: {e}");
            Refusal::internal("the response store is unavailable")
        })?;
    match loaded {
        Some((_, items)) => Ok(Previous {
            items: Arc::new(items),
            stored: true,
            lookup: CacheLookup::Store,
        }),
        None => Err(previous_not_found(id)),
    }
}

/// The error for an unknown `previous_response_id` (PROTOCOL.md §4).
pub fn previous_not_found(id: &str) -> Refusal {
    Refusal::bad_request(
        Some("previous_response_not_found"),
        format!("Previous response with id '{id}' not found."),
        Some("previous_response_id"),
    )
}

/// Replaces each `item_reference` with the item it names from the previous context.
fn resolve_references(items: Vec<Item>, prior: &[Item]) -> Result<Vec<Item>, Refusal> {
    items
        .into_iter()
        .map(|item| match item {
            Item::ItemReference { id } => prior
                .iter()
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
    pub fn into_cached(self) -> CachedResponse {
        CachedResponse {
            response: self.response,
            context: self.context,
        }
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
        ..
    } = prepared;
    let request = &context.request;
    let response = Response::in_progress(new_id("resp"), unix_now(), request);
    let mut builder = ResponseStreamBuilder::new(response, request.stream_id.clone());
    send_all(out, builder.start()).await?;

    let mut output_tokens = 0u64;
    let mut reasoning_tokens = 0u64;
    let mut failure = None;
    if request.generates() {
        let mut events = state.model.generate(&context);
        use futures_util::StreamExt;
        while let Some(model_event) = events.next().await {
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
                    output_tokens += 1;
                    reasoning_tokens += 1;
                    vec![builder.reasoning_summary_delta(&delta)]
                }
                ModelEvent::BeginMessage => builder.begin_message(new_id("msg")),
                ModelEvent::TextDelta(delta) => {
                    output_tokens += 1;
                    vec![builder.text_delta(&delta)]
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
                    output_tokens += 1;
                    vec![builder.arguments_delta(&delta)]
                }
                ModelEvent::EndItem => builder.end_item(),
            };
            send_all(out, wire).await?;
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
    let usage = Usage::new(context.input_tokens, 0, output_tokens, reasoning_tokens);
    let terminal = builder.complete(usage, unix_now());
    let response = builder.response().clone();
    if response.store {
        let stored = StoredResponse {
            response: response.clone(),
            added_input: with_listing_shape(added_input),
            parent_id: stored_parent,
        };
        let store = state.store.clone();
        match tokio::task::spawn_blocking(move || store.put(&stored)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!("persisting {}: {e}", response.id),
            Err(e) => tracing::error!("persisting {}: task failed: {e}", response.id),
        }
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
