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
            },
            output_tokens,
            output_tokens_details: OutputTokensDetails {
                reasoning_tokens: reasoning,
            },
            total_tokens: input_tokens + output_tokens,
        }
    }
}

/// How much of the input was served from a cache.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InputTokensDetails {
    #[serde(default)]
    pub cached_tokens: u64,
    #[serde(default)]
    pub cache_write_tokens: u64,
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
