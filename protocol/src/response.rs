//! The Response object, as returned by `POST /v1/responses` and carried by the lifecycle events.
//!
//! Fields the official SDKs declare as required are always serialized, `null` where the API
//! allows it, because `openai-python` with `_strict_response_validation=True` checks them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ApiError;
use crate::items::{Item, Metadata};
use crate::request::ResponseCreate;
use crate::tools::Tool;

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
    #[serde(default)]
    pub instructions: Option<String>,
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
    #[serde(default)]
    pub text: Option<Value>,
    #[serde(default = "default_tool_choice")]
    pub tool_choice: Value,
    #[serde(default)]
    pub tools: Vec<Tool>,
    #[serde(default)]
    pub truncation: Option<String>,
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default)]
    pub user: Option<String>,
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
            reasoning: request.reasoning.clone(),
            store: request.stores(),
            temperature: Some(request.temperature.unwrap_or(1.0)),
            top_p: Some(request.top_p.unwrap_or(1.0)),
            text: Some(
                request
                    .text
                    .clone()
                    .unwrap_or_else(|| serde_json::json!({"format": {"type": "text"}})),
            ),
            tool_choice: request
                .tool_choice
                .clone()
                .unwrap_or_else(default_tool_choice),
            tools: request.tools.clone(),
            truncation: Some(
                request
                    .truncation
                    .clone()
                    .unwrap_or_else(|| "disabled".into()),
            ),
            max_output_tokens: request.max_output_tokens,
            usage: None,
            user: request.user.clone(),
            prompt_cache_key: request.prompt_cache_key.clone(),
            prompt_cache_retention: request.prompt_cache_retention.clone(),
            prompt_cache_options: request
                .prompt_cache_options
                .as_ref()
                .map(echo_cache_options),
            prompt_cache_diagnostics: None,
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
