//! The HTTP endpoints that prepare a request as `POST /v1/responses` would — the previous
//! response resolved from the store, references looked up, every check, the prompt rendered —
//! and stop before the engine:
//!
//! - `POST /v1/responses/input_tokens`: `{"object":"response.input_tokens","input_tokens":N}`,
//!   the length of the rendered prompt, the same count a response's `usage.input_tokens` has;
//! - `POST /v1/responses/compact`: `object: "response.compaction"`, whose `output` is the
//!   conversation's user messages followed by one `compaction` item standing for the rest
//!   ([`crate::compaction`]). Sent back as input (with no `previous_response_id`: it starts a
//!   new chain), over HTTP or WebSocket, the item reads as its summary.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::{Extension, Json};
use serde_json::{Map, Value, json};
use tether_protocol::{ContentPart, Item, MessageContent, Usage, decode_request};

use super::options;
use crate::AppState;
use crate::compaction;
use crate::conditions::Conditions;
use crate::error::ApiFailure;
use crate::ids::{new_id, unix_now};
use crate::pipeline::{self, Origin, Prepared};
use crate::sim::{self, compact};
use crate::tenancy::Project;
use crate::tokenizer;

/// `POST /v1/responses/input_tokens`: every field optional, `model` included.
pub async fn input_tokens(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Extension(conditions): Extension<Conditions>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Value>, ApiFailure> {
    let mut body = object(&body)?;
    body.entry("model")
        .or_insert_with(|| Value::String(sim::MODEL_ID.into()));
    let prepared = prepare(&state, project, conditions, &headers, body).await?;
    Ok(Json(json!({
        "object": "response.input_tokens",
        "input_tokens": prepared.context.input_tokens(),
    })))
}

/// `POST /v1/responses/compact`: `model` required.
pub async fn compact(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Extension(conditions): Extension<Conditions>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Json<Value>, ApiFailure> {
    let body = object(&body)?;
    if !body.get("model").is_some_and(Value::is_string) {
        return Err(ApiFailure::bad_request(
            Some("missing_required_parameter"),
            "Missing required parameter: 'model'.",
            Some("model"),
        ));
    }
    let prepared = prepare(&state, project.clone(), conditions, &headers, body).await?;
    let input_tokens = prepared.context.input_tokens();
    let (users, summary) = compact::compact(&prepared.context.items);
    let mut output: Vec<Value> = users.into_iter().map(user_message).collect();
    let mut output_tokens = 0;
    if let Some(summary) = summary {
        output_tokens = tokenizer::count(&summary.text) as u64;
        let content = state.compaction.seal(project.as_str(), &summary);
        output.push(compaction::item(new_id("cmp"), content));
    }
    let usage = Usage::new(input_tokens, 0, output_tokens, 0);
    Ok(Json(json!({
        "id": new_id("resp"),
        "object": "response.compaction",
        "created_at": unix_now(),
        "output": output,
        "usage": usage,
    })))
}

/// The body as a JSON object, or the API's 400.
pub(super) fn object(body: &Bytes) -> Result<Map<String, Value>, ApiFailure> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ApiFailure::bad_request(
            None,
            "The request body must be a JSON object.",
            None,
        )),
        Err(e) => Err(ApiFailure::bad_request(
            None,
            format!("The request body is not valid JSON: {e}"),
            None,
        )),
    }
}

/// The pipeline's preparation of `body` as a non-streaming, unstored request.
async fn prepare(
    state: &AppState,
    project: Project,
    conditions: Conditions,
    headers: &HeaderMap,
    mut body: Map<String, Value>,
) -> Result<Prepared, ApiFailure> {
    // Nothing is generated, streamed or stored here.
    body.remove("stream");
    body.insert("store".into(), Value::Bool(false));
    let request =
        decode_request(Value::Object(body)).map_err(|e| ApiFailure::new(400, e.to_api_error()))?;
    pipeline::supported(&request, pipeline::Via::Http)?;
    let options = options::for_http(headers, project, conditions)?;
    pipeline::prepare(state, request, Origin::Http, options).await
}

/// A user message of the conversation as an output item: with an id and a status, its text
/// as `input_text` parts.
fn user_message(item: Item) -> Value {
    let Item::Message(mut message) = item else {
        return json!(item);
    };
    if let MessageContent::Text(text) = &message.content {
        message.content = MessageContent::Parts(vec![ContentPart::InputText {
            text: text.clone(),
            prompt_cache_breakpoint: None,
        }]);
    }
    let mut value = json!(message);
    value["type"] = json!("message");
    if value.get("id").is_none_or(Value::is_null) {
        value["id"] = json!(new_id("msg"));
    }
    value["status"] = json!("completed");
    value
}
