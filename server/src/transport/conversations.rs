//! The Conversations API over HTTP (docs/protocol.md §11): `POST /v1/conversations`,
//! `GET`/`POST`/`DELETE /v1/conversations/{id}`, and its items — `GET`/`POST
//! /v1/conversations/{id}/items`, `GET`/`DELETE /v1/conversations/{id}/items/{item_id}`. What a
//! conversation is, and how a response reads and extends one, is `pipeline::conversation`; the
//! rows are the store's (`store::conversations`).

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::{Extension, Json};
use serde_json::{Map, Value, json};
use tether_protocol::Item;
use tether_protocol::items::Metadata;

use crate::AppState;
use crate::error::ApiFailure;
use crate::ids::{new_id, unix_now};
use crate::pipeline::conversation::{accept_items, not_found};
use crate::store::{Conversation, ItemPage, Listing};
use crate::tenancy::Project;

/// The most items one request may add.
const MAX_ITEMS: usize = 20;

/// `POST /v1/conversations` `{metadata?, items?}`.
pub async fn create(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    body: Bytes,
) -> Result<HttpResponse, ApiFailure> {
    let mut body = object(&body)?;
    refuse_unknown(&body, &["metadata", "items"])?;
    let metadata = metadata(body.remove("metadata"))?;
    let items = match body.remove("items") {
        None | Some(Value::Null) => Vec::new(),
        Some(items) => items_of(items)?,
    };
    let items = accept_items(&state, &project, items, "items").await?;
    let conversation = Conversation {
        id: new_id("conv"),
        project: project.as_str().to_string(),
        created_at: unix_now(),
        metadata,
    };
    state
        .store
        .create_conversation(&conversation, &items)
        .await?;
    Ok(Json(conversation.to_json()).into_response())
}

/// `GET /v1/conversations/{id}`.
pub async fn retrieve(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Path(id): Path<String>,
) -> Result<HttpResponse, ApiFailure> {
    match state.store.conversation(project.as_str(), &id).await? {
        Some(conversation) => Ok(Json(conversation.to_json()).into_response()),
        None => Err(not_found(&id)),
    }
}

/// `POST /v1/conversations/{id}` `{metadata}`: replaces the metadata.
pub async fn update(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<HttpResponse, ApiFailure> {
    let mut body = object(&body)?;
    refuse_unknown(&body, &["metadata"])?;
    if !body.contains_key("metadata") {
        return Err(ApiFailure::bad_request(
            Some("missing_required_parameter"),
            "Missing required parameter: 'metadata'.",
            Some("metadata"),
        ));
    }
    let metadata = metadata(body.remove("metadata"))?;
    match state
        .store
        .update_conversation(project.as_str(), &id, &metadata)
        .await?
    {
        Some(conversation) => Ok(Json(conversation.to_json()).into_response()),
        None => Err(not_found(&id)),
    }
}

/// `DELETE /v1/conversations/{id}`: the conversation and its item list go; the responses that
/// ran on it stay.
pub async fn delete(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Path(id): Path<String>,
) -> Result<HttpResponse, ApiFailure> {
    if state
        .store
        .delete_conversation(project.as_str(), &id)
        .await?
    {
        Ok(
            Json(json!({"id": id, "object": "conversation.deleted", "deleted": true}))
                .into_response(),
        )
    } else {
        Err(not_found(&id))
    }
}

/// `GET /v1/conversations/{id}/items?limit&order&after&include`: `limit` 1–100 (default 20),
/// `order` `desc` (default) or `asc`, `after` an item id.
pub async fn list_items(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<HttpResponse, ApiFailure> {
    let query = Query::parse(query.as_deref(), &["limit", "order", "after", "include"])?;
    let limit = match query.one("limit") {
        None => 20,
        Some(text) => match text.parse::<usize>() {
            Ok(limit) if (1..=100).contains(&limit) => limit,
            _ => {
                return Err(ApiFailure::bad_request(
                    None,
                    format!("limit must be an integer between 1 and 100, not '{text}'."),
                    Some("limit"),
                ));
            }
        },
    };
    let descending = match query.one("order") {
        None | Some("desc") => true,
        Some("asc") => false,
        Some(other) => {
            return Err(ApiFailure::bad_request(
                None,
                format!("order must be 'asc' or 'desc', not '{other}'."),
                Some("order"),
            ));
        }
    };
    let page = ItemPage {
        after: query.one("after").map(str::to_string),
        limit: Some(limit),
        descending,
    };
    match state
        .store
        .conversation_items(project.as_str(), &id, &page)
        .await?
    {
        Listing::Page(items, has_more) => Ok(Json(list(&items, has_more)).into_response()),
        Listing::NoConversation => Err(not_found(&id)),
        Listing::NoItem => Err(ApiFailure::bad_request(
            None,
            format!(
                "No item with id '{}' in conversation '{id}'.",
                page.after.unwrap_or_default()
            ),
            Some("after"),
        )),
    }
}

/// `POST /v1/conversations/{id}/items?include` `{items}` (at most 20): appended in order;
/// answers the list of the items added.
pub async fn add_items(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Result<HttpResponse, ApiFailure> {
    Query::parse(query.as_deref(), &["include"])?;
    let mut body = object(&body)?;
    refuse_unknown(&body, &["items"])?;
    let items = match body.remove("items") {
        Some(items) if !items.is_null() => items_of(items)?,
        _ => {
            return Err(ApiFailure::bad_request(
                Some("missing_required_parameter"),
                "Missing required parameter: 'items'.",
                Some("items"),
            ));
        }
    };
    let items = accept_items(&state, &project, items, "items").await?;
    if state
        .store
        .add_conversation_items(project.as_str(), &id, &items)
        .await?
    {
        Ok(Json(list(&items, false)).into_response())
    } else {
        Err(not_found(&id))
    }
}

/// `GET /v1/conversations/{id}/items/{item_id}?include`.
pub async fn retrieve_item(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Path((id, item_id)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Result<HttpResponse, ApiFailure> {
    Query::parse(query.as_deref(), &["include"])?;
    match state
        .store
        .conversation_item(project.as_str(), &id, &item_id)
        .await?
    {
        Some(item) => Ok(Json(item).into_response()),
        None => Err(item_not_found(&state, &project, &id, &item_id).await),
    }
}

/// `DELETE /v1/conversations/{id}/items/{item_id}`: answers the conversation.
pub async fn delete_item(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Path((id, item_id)): Path<(String, String)>,
) -> Result<HttpResponse, ApiFailure> {
    if !state
        .store
        .delete_conversation_item(project.as_str(), &id, &item_id)
        .await?
    {
        return Err(item_not_found(&state, &project, &id, &item_id).await);
    }
    match state.store.conversation(project.as_str(), &id).await? {
        Some(conversation) => Ok(Json(conversation.to_json()).into_response()),
        None => Err(not_found(&id)),
    }
}

/// 404 naming what is missing: the conversation, or the item in it.
async fn item_not_found(
    state: &AppState,
    project: &Project,
    id: &str,
    item_id: &str,
) -> ApiFailure {
    match state.store.conversation(project.as_str(), id).await {
        Ok(Some(_)) => ApiFailure::not_found(
            None,
            format!("Item with id '{item_id}' not found in conversation '{id}'."),
            None,
        ),
        Ok(None) => not_found(id),
        Err(error) => error.into(),
    }
}

/// A list of items as the API pages them.
fn list(items: &[Item], has_more: bool) -> Value {
    json!({
        "object": "list",
        "data": items,
        "first_id": items.first().and_then(Item::id),
        "last_id": items.last().and_then(Item::id),
        "has_more": has_more,
    })
}

/// The body as a JSON object (an empty body is an empty object), or the API's 400.
fn object(body: &Bytes) -> Result<Map<String, Value>, ApiFailure> {
    if body.is_empty() {
        return Ok(Map::new());
    }
    super::dry_run::object(body)
}

fn refuse_unknown(body: &Map<String, Value>, known: &[&str]) -> Result<(), ApiFailure> {
    match body.keys().find(|key| !known.contains(&key.as_str())) {
        Some(unknown) => Err(ApiFailure::bad_request(
            Some("unknown_parameter"),
            format!("Unknown parameter: '{unknown}'."),
            Some(unknown),
        )),
        None => Ok(()),
    }
}

/// `metadata`: at most 16 pairs, keys up to 64 characters, string values up to 512.
fn metadata(value: Option<Value>) -> Result<Metadata, ApiFailure> {
    let invalid = |message: String| ApiFailure::bad_request(None, message, Some("metadata"));
    let map = match value {
        None | Some(Value::Null) => return Ok(Metadata::new()),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(invalid("Invalid 'metadata': expected an object.".into())),
    };
    if map.len() > 16 {
        return Err(invalid(format!(
            "Invalid 'metadata': too many properties. Expected at most 16, got {}.",
            map.len()
        )));
    }
    for (key, value) in &map {
        if key.chars().count() > 64 {
            return Err(invalid(format!(
                "Invalid 'metadata': key '{key}' is longer than 64 characters."
            )));
        }
        match value {
            Value::String(text) if text.chars().count() <= 512 => {}
            Value::String(_) => {
                return Err(invalid(format!(
                    "Invalid 'metadata.{key}': longer than 512 characters."
                )));
            }
            _ => {
                return Err(invalid(format!(
                    "Invalid 'metadata.{key}': expected a string."
                )));
            }
        }
    }
    Ok(map)
}

/// `items`: a list of at most [`MAX_ITEMS`] input items, each decoded (a bad one named by its
/// path).
fn items_of(value: Value) -> Result<Vec<Item>, ApiFailure> {
    let Value::Array(values) = value else {
        return Err(ApiFailure::bad_request(
            Some("invalid_type"),
            "Invalid type for 'items': expected an array of items.",
            Some("items"),
        ));
    };
    if values.len() > MAX_ITEMS {
        return Err(ApiFailure::bad_request(
            Some("array_above_max_length"),
            format!(
                "Invalid 'items': array too long. Expected an array with maximum length \
                 {MAX_ITEMS}, but got an array with length {} instead.",
                values.len()
            ),
            Some("items"),
        ));
    }
    values
        .into_iter()
        .enumerate()
        .map(|(index, value)| {
            serde_path_to_error::deserialize::<_, Item>(value).map_err(|error| {
                let path = error.path().to_string();
                let param = if path == "." {
                    format!("items[{index}]")
                } else {
                    format!("items[{index}].{path}")
                };
                ApiFailure::bad_request(
                    None,
                    format!("Invalid '{param}': {}", error.into_inner()),
                    Some(&param),
                )
            })
        })
        .collect()
}

/// A query string's parameters; `include` may repeat (`include=a&include=b`, or `include[]=`).
struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    /// Reads `query`, refusing parameters outside `known` and `include` values no item has.
    fn parse(query: Option<&str>, known: &[&str]) -> Result<Query, ApiFailure> {
        let pairs: Vec<(String, String)> = form_urlencoded_pairs(query.unwrap_or(""));
        for (key, value) in &pairs {
            let key = key.strip_suffix("[]").unwrap_or(key);
            if !known.contains(&key) {
                return Err(ApiFailure::bad_request(
                    Some("unknown_parameter"),
                    format!("Unknown parameter: '{key}'."),
                    Some(key),
                ));
            }
            if key == "include" && !INCLUDABLE.contains(&value.as_str()) {
                return Err(ApiFailure::bad_request(
                    Some("invalid_value"),
                    format!(
                        "Invalid value for 'include': '{value}'. Supported values are: {}.",
                        INCLUDABLE.join(", ")
                    ),
                    Some("include"),
                ));
            }
        }
        Ok(Query { pairs })
    }

    fn one(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The values `include` takes (openai-node 6.49's `ResponseIncludable`). None adds anything to
/// an item Tether stores: it runs no built-in tools, keeps images as sent and has no logprobs;
/// a reasoning item carries `encrypted_content` when the response that made it asked for it.
const INCLUDABLE: &[&str] = &[
    "file_search_call.results",
    "web_search_call.results",
    "web_search_call.action.sources",
    "message.input_image.image_url",
    "computer_call_output.output.image_url",
    "code_interpreter_call.outputs",
    "reasoning.encrypted_content",
    "message.output_text.logprobs",
];

fn form_urlencoded_pairs(query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}
