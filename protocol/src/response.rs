//! The Response object, as returned by `POST /v1/responses` and carried by the lifecycle events.
//!
//! Every field Open Responses' `ResponseResource` requires (all 31 of them) is always
//! serialized, `null` only where that schema allows it, and the echoed settings take the
//! schema's shapes: `text` always has a `format`, `reasoning` is `null` or has both `effort` and
//! `summary`, function tools spell out `description`, `parameters` and `strict`
//! (docs/protocol.md §3, The Response object). The same shapes satisfy `openai-python` with
//! `_strict_response_validation=True`. Decoding is lenient: a field missing or `null` (an older
//! stored response, another server) takes its default.

use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::items::{Item, Metadata};
use crate::lenient::null_as_default;
use crate::request::ResponseCreate;
use crate::tools::{Tool, serialize_echoed};

/// Where a response is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseStatus {
    Queued,
    InProgress,
    Completed,
    Failed,
    Incomplete,
    Cancelled,
}

/// Why a response ended incomplete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IncompleteDetails {
    pub reason: String,
}

/// Token accounting of one response.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    #[serde(default)]
    pub input_tokens_details: InputTokensDetails,
    pub output_tokens: u64,
    #[serde(default)]
    pub output_tokens_details: OutputTokensDetails,
    pub total_tokens: u64,
}

impl Usage {
    /// Usage with `total_tokens` derived from its parts.
    pub fn new(input_tokens: u64, cached_tokens: u64, output_tokens: u64, reasoning: u64) -> Self {
        Usage {
            input_tokens,
            input_tokens_details: InputTokensDetails {
                cached_tokens,
                cache_write_tokens: 0,
                cache_write_tokens_details: None,
            },
            output_tokens,
            output_tokens_details: OutputTokensDetails {
                reasoning_tokens: reasoning,
            },
            total_tokens: input_tokens + output_tokens,
        }
    }

    /// This usage with `written` prompt tokens written to the engine's prompt cache: the total,
    /// and, when the request chose retentions, how many with each.
    pub fn with_cache_writes(mut self, written: u64, details: Option<CacheWriteDetails>) -> Self {
        self.input_tokens_details.cache_write_tokens = written;
        self.input_tokens_details.cache_write_tokens_details = details;
        self
    }
}

/// How the input met the engine's prompt cache: tokens read from it (`cached_tokens`) and
/// written to it (`cache_write_tokens`); both are parts of `input_tokens`, and do not overlap.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InputTokensDetails {
    #[serde(default)]
    pub cached_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens_details: Option<CacheWriteDetails>,
}

/// Tokens written to the prompt cache, by retention.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheWriteDetails {
    pub ttl_30m_tokens: u64,
    pub ttl_12h_tokens: u64,
}

/// How much of the output was reasoning.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputTokensDetails {
    #[serde(default)]
    pub reasoning_tokens: u64,
}

/// A response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub id: String,
    #[serde(default = "response_object")]
    pub object: String,
    /// Unix seconds.
    pub created_at: u64,
    #[serde(default)]
    pub completed_at: Option<u64>,
    pub status: ResponseStatus,
    #[serde(default)]
    pub error: Option<ApiError>,
    #[serde(default)]
    pub incomplete_details: Option<IncompleteDetails>,
    #[serde(default, serialize_with = "crate::escaped::instructions")]
    pub instructions: Option<Arc<str>>,
    #[serde(default)]
    pub metadata: Option<Metadata>,
    pub model: String,
    #[serde(default)]
    pub output: Vec<Item>,
    #[serde(default = "default_true")]
    pub parallel_tool_calls: bool,
    #[serde(default)]
    pub previous_response_id: Option<String>,
    #[serde(default)]
    pub reasoning: Option<Value>,
    #[serde(default = "default_true")]
    pub store: bool,
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub top_p: Option<f64>,
    /// Not read by the simulator; always `0`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub presence_penalty: f64,
    /// Not read by the simulator; always `0`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub frequency_penalty: f64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub top_logprobs: u32,
    /// `{format, verbosity?}`, `format` always present.
    #[serde(default)]
    pub text: Option<Value>,
    #[serde(default = "default_tool_choice")]
    pub tool_choice: Value,
    /// Shared: a response's snapshots (`created`, `in_progress`, `completed`) and the
    /// responses that offer the same tools hold one list, not a copy each.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        serialize_with = "serialize_echoed"
    )]
    pub tools: Arc<[Tool]>,
    #[serde(default)]
    pub truncation: Option<String>,
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
    #[serde(default)]
    pub max_tool_calls: Option<u64>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub background: bool,
    /// The tier that served the response: `default` unless the request named another.
    #[serde(
        default = "default_service_tier",
        deserialize_with = "service_tier_or_default"
    )]
    pub service_tier: String,
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub safety_identifier: Option<String>,
    #[serde(default)]
    pub prompt_cache_key: Option<String>,
    #[serde(default)]
    pub prompt_cache_retention: Option<String>,
    /// The prompt cache options the request set, echoed as `{mode, ttl, comparison_response_id}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_options: Option<Value>,
    /// What the engine's prompt cache did, when `prompt_cache_options.comparison_response_id`
    /// asked: `{type: cache_hit | cache_miss | comparison_response_not_found | unavailable, …}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_diagnostics: Option<Value>,
    /// `{id}`: the conversation the response belongs to, when it was created with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<Value>,
}

fn response_object() -> String {
    "response".to_string()
}

fn default_true() -> bool {
    true
}

fn default_tool_choice() -> Value {
    Value::String("auto".into())
}

fn default_service_tier() -> String {
    "default".into()
}

fn service_tier_or_default<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.unwrap_or_else(default_service_tier))
}

/// The service tier a response reports for a request's `service_tier`: the one it named when
/// that is a tier openai-python knows, `default` for `auto`, none or anything else (the
/// simulator serves every tier alike).
fn service_tier(requested: Option<&str>) -> String {
    match requested {
        Some(tier @ ("default" | "flex" | "scale" | "priority" | "fast" | "ultrafast")) => {
            tier.to_string()
        }
        _ => default_service_tier(),
    }
}

/// `text` as a response echoes it: the request's object with `format` always present (`text`
/// when absent), a `json_schema` format with `description` (`null`), `schema` (`null`) and
/// `strict` (`false`) filled in when the request left them out, and no `verbosity: null`.
fn echo_text(text: Option<&Value>) -> Value {
    let mut text = match text {
        Some(Value::Object(text)) => text.clone(),
        _ => Map::new(),
    };
    let format = match text.remove("format") {
        Some(Value::Object(mut format)) => {
            if format.get("type").and_then(Value::as_str) == Some("json_schema") {
                format.entry("description").or_insert(Value::Null);
                format.entry("schema").or_insert(Value::Null);
                if !format.get("strict").is_some_and(Value::is_boolean) {
                    format.insert("strict".into(), Value::Bool(false));
                }
            }
            Value::Object(format)
        }
        _ => serde_json::json!({"type": "text"}),
    };
    text.insert("format".into(), format);
    if text.get("verbosity").is_some_and(Value::is_null) {
        text.remove("verbosity");
    }
    Value::Object(text)
}

/// `reasoning` as a response echoes it: `null` without a reasoning object, else the request's
/// object with both `effort` and `summary` present (`null` when unset; `summary` falls back to
/// the older `generate_summary`).
fn echo_reasoning(reasoning: Option<&Value>) -> Option<Value> {
    let Some(Value::Object(reasoning)) = reasoning else {
        return None;
    };
    let mut reasoning = reasoning.clone();
    reasoning.entry("effort").or_insert(Value::Null);
    if reasoning.get("summary").is_none_or(Value::is_null) {
        let summary = reasoning
            .get("generate_summary")
            .cloned()
            .unwrap_or(Value::Null);
        reasoning.insert("summary".into(), summary);
    }
    Some(Value::Object(reasoning))
}

/// `prompt_cache_options` as a response echoes it: `{mode, ttl, comparison_response_id}`, with
/// the defaults (`implicit`, `30m`, `null`) filled in.
fn echo_cache_options(options: &Value) -> Value {
    let field = |name: &str, default: Value| options.get(name).cloned().unwrap_or(default);
    serde_json::json!({
        "mode": field("mode", Value::String("implicit".into())),
        "ttl": field("ttl", Value::String("30m".into())),
        "comparison_response_id": field("comparison_response_id", Value::Null),
    })
}

impl Response {
    /// A new `in_progress` response for `request`, echoing its settings.
    pub fn in_progress(id: impl Into<String>, created_at: u64, request: &ResponseCreate) -> Self {
        Self::in_progress_offering(id, created_at, request, request.tools.as_slice().into())
    }

    /// [`Response::in_progress`] with `tools`, the request's tools as a list already held (an
    /// earlier response's, when they are the same), so they are not copied again.
    pub fn in_progress_offering(
        id: impl Into<String>,
        created_at: u64,
        request: &ResponseCreate,
        tools: Arc<[Tool]>,
    ) -> Self {
        debug_assert!(*tools == *request.tools, "the request's tools");
        Response {
            id: id.into(),
            object: response_object(),
            created_at,
            completed_at: None,
            status: ResponseStatus::InProgress,
            error: None,
            incomplete_details: None,
            instructions: request.instructions.clone(),
            metadata: Some(request.metadata.clone().unwrap_or_default()),
            model: request.model.clone(),
            output: Vec::new(),
            parallel_tool_calls: request.parallel_tool_calls.unwrap_or(true),
            previous_response_id: request.previous_response_id.clone(),
            reasoning: echo_reasoning(request.reasoning.as_ref()),
            store: request.stores(),
            temperature: Some(request.temperature.unwrap_or(1.0)),
            top_p: Some(request.top_p.unwrap_or(1.0)),
            presence_penalty: 0.0,
            frequency_penalty: 0.0,
            top_logprobs: request.top_logprobs.unwrap_or(0),
            text: Some(echo_text(request.text.as_ref())),
            tool_choice: request
                .tool_choice
                .clone()
                .unwrap_or_else(default_tool_choice),
            tools,
            truncation: Some(
                request
                    .truncation
                    .clone()
                    .unwrap_or_else(|| "disabled".into()),
            ),
            max_output_tokens: request.max_output_tokens,
            max_tool_calls: request.max_tool_calls,
            background: request.background.unwrap_or(false),
            service_tier: service_tier(request.service_tier.as_deref()),
            usage: None,
            user: request.user.clone(),
            safety_identifier: request.safety_identifier.clone(),
            prompt_cache_key: request.prompt_cache_key.clone(),
            prompt_cache_retention: request.prompt_cache_retention.clone(),
            prompt_cache_options: request
                .prompt_cache_options
                .as_ref()
                .map(echo_cache_options),
            prompt_cache_diagnostics: None,
            conversation: request
                .conversation
                .as_ref()
                .map(|conversation| serde_json::json!({"id": conversation.id})),
        }
    }

    /// The concatenated text of every assistant message in `output`.
    pub fn output_text(&self) -> String {
        self.output
            .iter()
            .filter_map(|item| match item {
                Item::Message(m) => Some(m.content.text()),
                _ => None,
            })
            .collect()
    }
}
