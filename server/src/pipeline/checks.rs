//! The checks a request passes before any work is done on it: what this server supports at all,
//! whether the model serves it, and whether its parts agree with each other and with the
//! conversation (tool outputs answer calls, `tool_choice` names offered tools, limits are sane).

use serde_json::Value;
use tether_protocol::{Item, ResponseCreate};

use crate::AppState;
use crate::error::ApiFailure;
use crate::stages::validate;

/// Refuses what neither transport supports; both call it first, before touching any state.
pub fn supported(request: &ResponseCreate) -> Result<(), ApiFailure> {
    if request.background == Some(true) {
        return Err(ApiFailure::bad_request(
            None,
            "Background mode (background: true) is not supported by this server.",
            Some("background"),
        ));
    }
    Ok(())
}

/// The resolve stage: the model must serve the request as asked.
pub fn model(state: &AppState, request: &ResponseCreate) -> Result<(), ApiFailure> {
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
        .map_err(|error| ApiFailure::new(400, error))
}

/// The request's parts against each other and against the conversation before it (`prior`).
pub fn request(
    request: &ResponseCreate,
    prior: &[Item],
    new_items: &[Item],
) -> Result<(), ApiFailure> {
    tool_outputs(prior, new_items)?;
    validate::check_tool_choice(request.tool_choice.as_ref(), &request.tools)?;
    if request.max_output_tokens == Some(0) {
        return Err(ApiFailure::bad_request(
            None,
            "Invalid 'max_output_tokens': expected at least 1 token, got 0.",
            Some("max_output_tokens"),
        ));
    }
    prompt_cache(request)
}

/// A field, whether a value of it is valid, and what is expected.
type FieldCheck = (&'static str, fn(&Value) -> bool, &'static str);

/// `prompt_cache_retention` and `prompt_cache_options` take only the documented values.
fn prompt_cache(request: &ResponseCreate) -> Result<(), ApiFailure> {
    let invalid = |param: &str, expected: &str, got: &Value| {
        ApiFailure::bad_request(
            Some("invalid_value"),
            format!("Invalid value for '{param}': expected {expected}, got {got}."),
            Some(param),
        )
    };
    if let Some(retention) = &request.prompt_cache_retention
        && !matches!(retention.as_str(), "in_memory" | "24h")
    {
        return Err(invalid(
            "prompt_cache_retention",
            "'in_memory' or '24h'",
            &Value::String(retention.clone()),
        ));
    }
    let Some(options) = &request.prompt_cache_options else {
        return Ok(());
    };
    let Some(options) = options.as_object() else {
        return Err(invalid("prompt_cache_options", "an object", options));
    };
    let allowed: [FieldCheck; 4] = [
        (
            "mode",
            |v| matches!(v.as_str(), Some("implicit" | "explicit")),
            "'implicit' or 'explicit'",
        ),
        (
            "ttl",
            |v| matches!(v.as_str(), Some("30m" | "12h")),
            "'30m' or '12h'",
        ),
        (
            "comparison_response_id",
            |v| v.is_string() || v.is_null(),
            "a response id",
        ),
        ("prewarm", |v| v.is_boolean() || v.is_null(), "a boolean"),
    ];
    for (field, valid, expected) in allowed {
        if let Some(value) = options.get(field)
            && !valid(value)
        {
            return Err(invalid(
                &format!("prompt_cache_options.{field}"),
                expected,
                value,
            ));
        }
    }
    Ok(())
}

/// Every tool output must answer a call made earlier in the conversation.
fn tool_outputs(prior: &[Item], new_items: &[Item]) -> Result<(), ApiFailure> {
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
            return Err(ApiFailure::bad_request(
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
