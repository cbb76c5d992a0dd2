//! The checks a request passes before the stages work on it: whether its parts agree with each
//! other and with the conversation (tool outputs answer calls, `tool_choice` names offered
//! tools, parameters are in their ranges, input items have a type the API knows, compaction
//! items are sealed here). What a transport serves at all is [`super::parameters`]'s; whether
//! the model serves the request, the resolve step's ([`super::prepare`]).

use serde_json::Value;
use tether_protocol::{Input, Item, ResponseCreate, Tool, ToolChoice, callable_tools};

use crate::AppState;
use crate::error::ApiFailure;

/// A compaction item in the input must be one this server sealed for the project
/// ([`crate::compaction`]): anything else is refused, naming it.
pub fn compactions(state: &AppState, project: &str, new_items: &[Item]) -> Result<(), ApiFailure> {
    match state.compaction.first_unsealed(project, new_items) {
        None => Ok(()),
        Some(index) => Err(unsealed(&format!("input[{index}].encrypted_content"))),
    }
}

/// The refusal of a compaction item this server did not seal, at `param`.
pub fn unsealed(param: &str) -> ApiFailure {
    ApiFailure::bad_request(
        Some("invalid_encrypted_content"),
        "The compaction item's encrypted_content was not produced by this server for this \
         project, or was altered: send the output of /v1/responses/compact as it came.",
        Some(param),
    )
}

/// The request's parts against each other and against the conversation before it (`prior`).
pub fn request(
    request: &ResponseCreate,
    prior: &[Item],
    new_items: &[Item],
) -> Result<(), ApiFailure> {
    input_item_types(request)?;
    parameters(request)?;
    tool_outputs(prior, new_items)?;
    check_tool_choice(request.tool_choice.as_ref(), &request.tools)?;
    if request.max_output_tokens == Some(0) {
        return Err(ApiFailure::bad_request(
            None,
            "Invalid 'max_output_tokens': expected at least 1 token, got 0.",
            Some("max_output_tokens"),
        ));
    }
    prompt_cache(request)
}

/// Refuses a `tool_choice` that is malformed, names a tool `tools` does not offer, or requires
/// a call when no tool can be called.
pub fn check_tool_choice(choice: Option<&Value>, tools: &[Tool]) -> Result<ToolChoice, ApiFailure> {
    let parsed = ToolChoice::parse(choice).ok_or_else(|| {
        ApiFailure::bad_request(
            None,
            format!(
                "Invalid value for 'tool_choice': {}. Expected 'none', 'auto', 'required', \
                 {{\"type\": \"function\", \"name\": …}} or {{\"type\": \"allowed_tools\", …}}.",
                choice.map(Value::to_string).unwrap_or_default()
            ),
            Some("tool_choice"),
        )
    })?;
    let callable: Vec<&str> = callable_tools(tools)
        .into_iter()
        .map(|callable| callable.name())
        .collect();
    let missing = |name: &str| !callable.contains(&name);
    match &parsed {
        ToolChoice::Forced(name) if missing(name) => Err(ApiFailure::bad_request(
            None,
            format!("Tool choice '{name}' is not among the tools of the request ('tools')."),
            Some("tool_choice"),
        )),
        ToolChoice::Allowed { names, .. } if names.iter().any(|name| missing(name)) => {
            let unknown: Vec<&str> = names
                .iter()
                .map(String::as_str)
                .filter(|name| missing(name))
                .collect();
            Err(ApiFailure::bad_request(
                None,
                format!(
                    "Allowed tools {} are not among the tools of the request ('tools').",
                    unknown.join(", ")
                ),
                Some("tool_choice.tools"),
            ))
        }
        _ if parsed.must_call() && !callable.iter().any(|name| parsed.allows(name)) => {
            Err(ApiFailure::bad_request(
                None,
                "'tool_choice' requires a tool call, but no function or custom tool it allows \
                 is in 'tools'.",
                Some("tool_choice"),
            ))
        }
        _ => Ok(parsed),
    }
}

/// Every `type` an item of a request's `input` may have: the union `ResponseInputItemParam` of
/// openai-python 3.57 (`types/responses/response_input_item_param.py`, which
/// `response_input_param.py` repeats). Tether models a few of them (`protocol/src/items.rs`) and
/// keeps the others verbatim, since Codex replays items such as `web_search_call`, `reasoning`,
/// `compaction` or `local_shell_call`; only a type outside this list is refused.
const INPUT_ITEM_TYPES: &[&str] = &[
    "message",
    "file_search_call",
    "computer_call",
    "computer_call_output",
    "web_search_call",
    "function_call",
    "function_call_output",
    "tool_search_call",
    "tool_search_output",
    "additional_tools",
    "configuration_update",
    "reasoning",
    "compaction",
    "image_generation_call",
    "code_interpreter_call",
    "local_shell_call",
    "local_shell_call_output",
    "shell_call",
    "shell_call_output",
    "apply_patch_call",
    "apply_patch_call_output",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "mcp_call",
    "custom_tool_call_output",
    "custom_tool_call",
    "compaction_trigger",
    "item_reference",
    "program",
    "program_output",
];

/// An input item whose `type` is no Responses input item type is refused, naming
/// `input[i].type`.
fn input_item_types(request: &ResponseCreate) -> Result<(), ApiFailure> {
    match &request.input {
        Input::Items(items) => item_types(items, "input"),
        Input::Text(_) => Ok(()),
    }
}

/// An item of `items` (the list `param` names) whose `type` is no Responses input item type is
/// refused, naming `param[i].type`.
pub fn item_types(items: &[Item], param: &str) -> Result<(), ApiFailure> {
    for (index, item) in items.iter().enumerate() {
        let Item::Unknown(_) = item else { continue };
        let kind = item.type_name();
        if !INPUT_ITEM_TYPES.contains(&kind) {
            return Err(ApiFailure::bad_request(
                Some("invalid_value"),
                format!(
                    "Invalid value: '{kind}'. Supported values are: {}.",
                    INPUT_ITEM_TYPES
                        .iter()
                        .map(|t| format!("'{t}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                Some(&format!("{param}[{index}].type")),
            ));
        }
    }
    Ok(())
}

/// Sampling and limit parameters must be in the ranges the API accepts: `temperature` 0–2,
/// `top_p` 0–1, `top_logprobs` 0–20, `max_tool_calls` at least 1, `truncation` `auto` or
/// `disabled`.
fn parameters(request: &ResponseCreate) -> Result<(), ApiFailure> {
    let decimal = |param: &str, value: Option<f64>, max: f64| match value {
        Some(value) if value < 0.0 => Err(ApiFailure::bad_request(
            Some("decimal_below_min_value"),
            format!(
                "Invalid '{param}': decimal below minimum value. Expected a value >= 0, but got {value} instead."
            ),
            Some(param),
        )),
        Some(value) if value > max => Err(ApiFailure::bad_request(
            Some("decimal_above_max_value"),
            format!(
                "Invalid '{param}': decimal above maximum value. Expected a value <= {max}, but got {value} instead."
            ),
            Some(param),
        )),
        _ => Ok(()),
    };
    decimal("temperature", request.temperature, 2.0)?;
    decimal("top_p", request.top_p, 1.0)?;
    if let Some(top_logprobs) = request.top_logprobs
        && top_logprobs > 20
    {
        return Err(ApiFailure::bad_request(
            Some("integer_above_max_value"),
            format!(
                "Invalid 'top_logprobs': integer above maximum value. Expected a value <= 20, but got {top_logprobs} instead."
            ),
            Some("top_logprobs"),
        ));
    }
    if request.max_tool_calls == Some(0) {
        return Err(ApiFailure::bad_request(
            Some("integer_below_min_value"),
            "Invalid 'max_tool_calls': integer below minimum value. Expected a value >= 1, but got 0 instead.",
            Some("max_tool_calls"),
        ));
    }
    if let Some(truncation) = &request.truncation
        && !matches!(truncation.as_str(), "auto" | "disabled")
    {
        return Err(ApiFailure::bad_request(
            Some("invalid_value"),
            format!("Invalid value: '{truncation}'. Supported values are: 'auto' and 'disabled'."),
            Some("truncation"),
        ));
    }
    Ok(())
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
        // Newest first: the call an output answers is almost always the latest item.
        let answered =
            prior
                .iter()
                .chain(&new_items[..index])
                .rev()
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_choice_is_checked_against_the_tools() {
        let tools: Vec<Tool> = serde_json::from_value(json!([
            {"type": "web_search"},
            {"type": "namespace", "name": "mcp", "description": "d",
             "tools": [{"type": "function", "name": "lookup"}]},
            {"type": "custom", "name": "apply_patch"}
        ]))
        .unwrap();
        let check = |choice: Value| check_tool_choice(Some(&choice), &tools);
        assert_eq!(check(json!("auto")).unwrap(), ToolChoice::Auto);
        assert_eq!(check(json!(null)).unwrap(), ToolChoice::Auto);
        assert_eq!(check_tool_choice(None, &[]).unwrap(), ToolChoice::Auto);
        assert_eq!(
            check(json!({"type": "function", "name": "lookup"})).unwrap(),
            ToolChoice::Forced("lookup".into())
        );
        assert_eq!(
            check(json!({"type": "web_search"})).unwrap(),
            ToolChoice::Auto,
            "a hosted tool's choice leaves the model free"
        );
        let refused = |choice: Value, tools: &[Tool]| {
            let refusal = check_tool_choice(Some(&choice), tools).unwrap_err();
            assert_eq!(refusal.status, 400);
            (refusal.error.param.unwrap(), refusal.error.message)
        };
        let (param, message) = refused(json!({"type": "function", "name": "nope"}), &tools);
        assert_eq!(param, "tool_choice");
        assert!(message.contains("'nope'"), "{message}");
        let (param, message) = refused(
            json!({"type": "allowed_tools", "mode": "auto",
                "tools": [{"type": "function", "name": "lookup"}, {"type": "function", "name": "gone"}]}),
            &tools,
        );
        assert_eq!(param, "tool_choice.tools");
        assert!(
            message.contains("gone") && !message.contains("lookup"),
            "{message}"
        );
        assert_eq!(refused(json!("sometimes"), &tools).0, "tool_choice");
        assert_eq!(refused(json!(3), &tools).0, "tool_choice");
        assert_eq!(refused(json!("required"), &tools[..1]).0, "tool_choice");
        assert_eq!(
            refused(
                json!({"type": "allowed_tools", "mode": "required", "tools": []}),
                &tools
            )
            .0,
            "tool_choice"
        );
        // `none` and `auto` need no tools.
        assert_eq!(
            check_tool_choice(Some(&json!("none")), &[]).unwrap(),
            ToolChoice::None
        );
    }
}
