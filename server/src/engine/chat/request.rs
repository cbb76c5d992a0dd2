//! A response's context as a Chat Completions request: the instructions and the conversation
//! as `messages`, the tools as `function` tools, the parameters under their Chat Completions
//! names — and a refusal, naming the field, for what has no equivalent there.
//!
//! What maps: `instructions` → a `system` message; user/system/developer/assistant messages
//! (`developer` as `system`; images as `image_url` parts); function calls → the assistant
//! message's `tool_calls` (consecutive calls are one message: parallel calls), their outputs →
//! `tool` messages; custom tools → a function with one string parameter `input`; namespace tools
//! → functions named `NAMESPACE__NAME`; `tool_choice` (and `allowed_tools`, which keeps only the
//! tools it names), `parallel_tool_calls`, `max_output_tokens` → `max_tokens`, `temperature`,
//! `top_p`, `text.format` → `response_format`, `reasoning.effort` → `reasoning_effort`.
//! Reasoning items are not sent back (engines' chat templates drop earlier reasoning); a
//! compaction item of this server goes as the summary it stands for, a user message.

use std::collections::HashMap;

use bytes::Bytes;

use serde_json::{Map, Value, json};
use tether_protocol::items::{ContentPart, MessageContent, Role, ToolOutputContent};
use tether_protocol::tools::Tool;
use tether_protocol::{ApiError, Callable, Input, Item, ResponseCreate, callable_tools};

use crate::engine::body::Parts;
use crate::engine::prefix::Prefix;
use crate::model::Context;

/// What a tool the upstream calls by a flattened name really is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Called {
    Function {
        name: String,
        namespace: Option<String>,
    },
    /// A custom tool, offered as a function whose `input` argument is its freeform input.
    Custom { name: String },
}

/// The names the upstream knows the tools by, and what each is.
pub type ToolNames = HashMap<String, Called>;

/// The separator of a namespace and a tool's name in the function name the upstream sees.
const NAMESPACE_SEPARATOR: &str = "__";

/// A field this dialect cannot carry: a 400 naming it.
fn refuse(param: &str, what: impl std::fmt::Display) -> ApiError {
    ApiError::invalid_request(
        Some("unsupported_by_engine"),
        format!(
            "{what}: the engine behind this model speaks Chat Completions, which has no \
             equivalent, so Tether refuses it rather than drop it."
        ),
        Some(param),
    )
}

/// Refuses the request's fields and new input that cannot be sent (before the response
/// starts); the conversation's earlier items are checked when it is built.
pub fn check(request: &ResponseCreate) -> Result<(), ApiError> {
    if request.top_logprobs.is_some_and(|n| n > 0) {
        return Err(refuse("top_logprobs", "top_logprobs is not streamed back"));
    }
    if request.max_tool_calls.is_some() {
        return Err(refuse("max_tool_calls", "max_tool_calls"));
    }
    if request
        .truncation
        .as_deref()
        .is_some_and(|t| t != "disabled")
    {
        return Err(refuse("truncation", "truncation other than \"disabled\""));
    }
    if request.prompt_cache_options.is_some() {
        return Err(refuse(
            "prompt_cache_options",
            "prompt_cache_options (breakpoints, prewarm and diagnostics are the simulator's \
             prompt cache)",
        ));
    }
    if let Some(tier) = request
        .service_tier
        .as_deref()
        .filter(|t| !matches!(*t, "auto" | "default"))
    {
        return Err(refuse("service_tier", format!("service_tier \"{tier}\"")));
    }
    if let Some(verbosity) = request
        .text
        .as_ref()
        .and_then(|t| t.get("verbosity"))
        .and_then(Value::as_str)
        .filter(|v| *v != "medium")
    {
        return Err(refuse(
            "text.verbosity",
            format!("text.verbosity \"{verbosity}\""),
        ));
    }
    response_format(request)?;
    tools(&request.tools, request.tool_choice.as_ref())?;
    if let Input::Items(items) = &request.input {
        for (index, item) in items.iter().enumerate() {
            check_item(item, &format!("input[{index}]"))?;
        }
    }
    Ok(())
}

/// The request's body (`stream: true`, usage included) for `model`, and the tool names the
/// upstream will call.
pub fn body(context: &Context, model: &str) -> Result<(Value, ToolNames), ApiError> {
    let (parts, names, _) = encode(context, model, None)?;
    let body = serde_json::from_slice(&Parts::new(parts).to_vec())
        .map_err(|e| ApiError::server(format!("the engine request is not JSON: {e}")))?;
    Ok((body, names))
}

/// The request's body as it is sent, its tool names, and its conversation serialized — to
/// continue from: `from`, when given, is the serialized conversation of an earlier request
/// whose items this context's begin with, and only the items after them are serialized now.
pub fn encode(
    context: &Context,
    model: &str,
    from: Option<&Prefix>,
) -> Result<(Vec<Bytes>, ToolNames, Prefix), ApiError> {
    let request = &context.request;
    let (tools, names, tool_choice) = tools(&request.tools, request.tool_choice.as_ref())?;
    let mut prefix = from.cloned().unwrap_or_default();
    extend(&mut prefix, &context.items)?;
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("stream".into(), true.into());
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if !tools.is_empty() {
        body.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = tool_choice {
            body.insert("tool_choice".into(), choice);
        }
        if let Some(parallel) = request.parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), parallel.into());
        }
    }
    if let Some(max) = request.max_output_tokens {
        body.insert("max_tokens".into(), max.into());
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), temperature.into());
    }
    if let Some(top_p) = request.top_p {
        body.insert("top_p".into(), top_p.into());
    }
    if let Some(format) = response_format(request)? {
        body.insert("response_format".into(), format);
    }
    if let Some(effort) = request
        .reasoning
        .as_ref()
        .and_then(|r| r.get("effort"))
        .and_then(Value::as_str)
    {
        body.insert("reasoning_effort".into(), effort.into());
    }
    let instructions = request
        .instructions
        .as_deref()
        .filter(|i| !i.is_empty())
        .map(|i| json!({"role": "system", "content": i}));
    let rest = serde_json::to_vec(&Value::Object(body))
        .map_err(|e| ApiError::server(format!("cannot encode the engine request: {e}")))?;
    prefix.seal();
    let mut parts = vec![Bytes::from_static(b"{\"messages\":")];
    prefix.array(instructions.as_ref(), &mut parts);
    // `rest` is an object with `model` in it: a comma, then everything after its `{`.
    let mut tail = rest;
    tail[0] = b',';
    parts.push(Bytes::from(tail));
    Ok((parts, names, prefix))
}

/// `text.format` as `response_format`: `json_schema` and `json_object`; `text` is the default.
fn response_format(request: &ResponseCreate) -> Result<Option<Value>, ApiError> {
    let Some(format) = request.text.as_ref().and_then(|t| t.get("format")) else {
        return Ok(None);
    };
    match format.get("type").and_then(Value::as_str) {
        None | Some("text") => Ok(None),
        Some("json_object") => Ok(Some(json!({"type": "json_object"}))),
        Some("json_schema") => {
            let mut schema = Map::new();
            for key in ["name", "schema", "strict", "description"] {
                if let Some(value) = format.get(key).filter(|v| !v.is_null()) {
                    schema.insert(key.into(), value.clone());
                }
            }
            if !schema.contains_key("schema") {
                return Err(ApiError::invalid_request(
                    None,
                    "text.format of type json_schema needs a schema.",
                    Some("text.format.schema"),
                ));
            }
            Ok(Some(json!({"type": "json_schema", "json_schema": schema})))
        }
        Some(other) => Err(refuse(
            "text.format.type",
            format!("text.format of type \"{other}\""),
        )),
    }
}

/// The tools as function tools, their names, and `tool_choice` in the Chat Completions shape.
fn tools(
    tools: &[Tool],
    choice: Option<&Value>,
) -> Result<(Vec<Value>, ToolNames, Option<Value>), ApiError> {
    for (index, tool) in tools.iter().enumerate() {
        let hosted = match tool {
            Tool::Other(value) => Some(value),
            Tool::Namespace(group) => group.tools.iter().find_map(|t| match t {
                Tool::Other(value) => Some(value),
                _ => None,
            }),
            _ => None,
        };
        if let Some(value) = hosted {
            let kind = value.get("type").and_then(Value::as_str).unwrap_or("?");
            return Err(refuse(
                &format!("tools[{index}]"),
                format!(
                    "the hosted tool \"{kind}\" (only function, custom and namespace tools are called by an engine)"
                ),
            ));
        }
    }
    let mut names = ToolNames::new();
    let mut offered = Vec::new();
    for callable in callable_tools(tools) {
        let flat = match callable.namespace {
            Some(namespace) => format!("{namespace}{NAMESPACE_SEPARATOR}{}", callable.name()),
            None => callable.name().to_string(),
        };
        let (function, called) = match callable.tool {
            Callable::Function(function) => {
                let mut spec = Map::new();
                spec.insert("name".into(), flat.clone().into());
                if let Some(description) = &function.description {
                    spec.insert("description".into(), description.clone().into());
                }
                spec.insert(
                    "parameters".into(),
                    function
                        .parameters
                        .clone()
                        .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
                );
                if let Some(strict) = function.strict {
                    spec.insert("strict".into(), strict.into());
                }
                (
                    spec,
                    Called::Function {
                        name: function.name.clone(),
                        namespace: callable.namespace.map(str::to_string),
                    },
                )
            }
            Callable::Custom(custom) => {
                let mut spec = Map::new();
                spec.insert("name".into(), flat.clone().into());
                let description = custom.description.clone().unwrap_or_default();
                spec.insert(
                    "description".into(),
                    format!("{description} (The freeform input goes in `input`.)")
                        .trim()
                        .into(),
                );
                spec.insert(
                    "parameters".into(),
                    json!({
                        "type": "object",
                        "properties": {"input": {"type": "string"}},
                        "required": ["input"],
                    }),
                );
                (
                    spec,
                    Called::Custom {
                        name: custom.name.clone(),
                    },
                )
            }
        };
        names.insert(flat, called);
        offered.push(json!({"type": "function", "function": function}));
    }
    let flat_name = |name: &str| {
        names
            .iter()
            .find(|(_, called)| match called {
                Called::Function { name: n, .. } | Called::Custom { name: n } => n == name,
            })
            .map(|(flat, _)| flat.clone())
            .unwrap_or_else(|| name.to_string())
    };
    let choice = match choice {
        None | Some(Value::Null) => None,
        Some(Value::String(mode)) => Some(Value::String(mode.clone())),
        Some(Value::Object(object)) => match object.get("type").and_then(Value::as_str) {
            Some("function" | "custom") => {
                let name = object.get("name").and_then(Value::as_str).unwrap_or("");
                Some(json!({"type": "function", "function": {"name": flat_name(name)}}))
            }
            Some("allowed_tools") => {
                let allowed: Vec<String> = object
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .map(flat_name)
                    .collect();
                offered.retain(|tool| {
                    tool.pointer("/function/name")
                        .and_then(Value::as_str)
                        .is_some_and(|name| allowed.iter().any(|a| a == name))
                });
                let mode = object.get("mode").and_then(Value::as_str).unwrap_or("auto");
                Some(Value::String(mode.to_string()))
            }
            other => {
                return Err(refuse(
                    "tool_choice",
                    format!("tool_choice of type \"{}\"", other.unwrap_or("?")),
                ));
            }
        },
        Some(_) => None,
    };
    Ok((offered, names, choice))
}

/// An item that cannot be sent is refused, naming it (`param`).
fn check_item(item: &Item, param: &str) -> Result<(), ApiError> {
    match item {
        Item::Message(message) => {
            content(&message.content, message.role, param)?;
            Ok(())
        }
        // A compaction item of this server reads as the summary it stands for.
        Item::Unknown(value) if crate::compaction::expanded(value).is_some() => Ok(()),
        Item::Unknown(value) => Err(refuse(
            &format!("{param}.type"),
            format!(
                "an input item of type \"{}\"",
                value.get("type").and_then(Value::as_str).unwrap_or("?")
            ),
        )),
        _ => Ok(()),
    }
}

/// Adds the conversation's items past those `prefix` holds to it as `messages`.
fn extend(prefix: &mut Prefix, items: &[Item]) -> Result<(), ApiError> {
    for (index, item) in items.iter().enumerate().skip(prefix.items) {
        let param = format!("input[{index}]");
        match item {
            Item::Message(message) => {
                let role = match message.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                    Role::System | Role::Developer => "system",
                };
                let message = json!({
                    "role": role,
                    "content": content(&message.content, message.role, &param)?,
                });
                if role == "assistant" {
                    // Tool calls right after it join it.
                    prefix.close();
                    prefix.open = Some(message);
                } else {
                    prefix.push(&message);
                }
            }
            Item::FunctionCall(call) => {
                let name = match &call.namespace {
                    Some(namespace) => format!("{namespace}{NAMESPACE_SEPARATOR}{}", call.name),
                    None => call.name.clone(),
                };
                push_call(
                    prefix,
                    json!({"id": call.call_id, "type": "function",
                           "function": {"name": name, "arguments": call.arguments}}),
                );
            }
            Item::CustomToolCall(call) => {
                let arguments = json!({"input": call.input}).to_string();
                push_call(
                    prefix,
                    json!({"id": call.call_id, "type": "function",
                           "function": {"name": call.name, "arguments": arguments}}),
                );
            }
            Item::FunctionCallOutput(output) | Item::CustomToolCallOutput(output) => {
                prefix.push(&json!({
                    "role": "tool",
                    "tool_call_id": output.call_id,
                    "content": tool_output(&output.output),
                }));
            }
            // Earlier reasoning is not sent back, as the engines' chat templates drop it.
            Item::Reasoning(_) => {}
            Item::ItemReference { id } => {
                return Err(ApiError::invalid_request(
                    None,
                    format!("The item reference {id} was not resolved."),
                    Some(&param),
                ));
            }
            Item::Unknown(value) => match crate::compaction::expanded(value) {
                // The summary goes as the user's (a system message past the first trips some
                // engines' chat templates).
                Some(summary) => prefix.push(&json!({"role": "user", "content": summary})),
                None => check_item(item, &param)?,
            },
        }
        prefix.items = index + 1;
    }
    prefix.items = prefix.items.max(items.len());
    Ok(())
}

/// Adds a tool call to the assistant's open message, or opens one for it.
fn push_call(prefix: &mut Prefix, call: Value) {
    if let Some(Value::Object(last)) = &mut prefix.open {
        match last.get_mut("tool_calls") {
            Some(Value::Array(calls)) => calls.push(call),
            _ => {
                last.insert("tool_calls".into(), Value::Array(vec![call]));
            }
        }
        if last.get("content").is_some_and(|c| c.as_str() == Some("")) {
            last.insert("content".into(), Value::Null);
        }
        return;
    }
    prefix.close();
    prefix.open = Some(json!({"role": "assistant", "content": null, "tool_calls": [call]}));
}

/// A message's content: its text, or parts when it carries images.
fn content(content: &MessageContent, role: Role, param: &str) -> Result<Value, ApiError> {
    let parts = match content {
        MessageContent::Text(text) => return Ok(Value::String(text.clone())),
        MessageContent::Parts(parts) => parts,
    };
    let mut out = Vec::with_capacity(parts.len());
    let mut text_only = true;
    for (index, part) in parts.iter().enumerate() {
        match part {
            ContentPart::InputText { text, .. } => out.push(json!({"type": "text", "text": text})),
            ContentPart::OutputText(part) => out.push(json!({"type": "text", "text": part.text})),
            ContentPart::Refusal { refusal } => out.push(json!({"type": "text", "text": refusal})),
            ContentPart::Other(value) => {
                let kind = value.get("type").and_then(Value::as_str).unwrap_or("?");
                let url = value
                    .get("image_url")
                    .and_then(|u| u.as_str().or_else(|| u.get("url")?.as_str()));
                match (kind, url) {
                    ("input_image", Some(url)) if role != Role::Assistant => {
                        let mut image = json!({"url": url});
                        if let Some(detail) = value.get("detail").filter(|d| !d.is_null()) {
                            image["detail"] = detail.clone();
                        }
                        out.push(json!({"type": "image_url", "image_url": image}));
                        text_only = false;
                    }
                    _ => {
                        return Err(refuse(
                            &format!("{param}.content[{index}]"),
                            format!(
                                "a content part of type \"{kind}\"{}",
                                if kind == "input_image" {
                                    " without an image_url"
                                } else {
                                    ""
                                }
                            ),
                        ));
                    }
                }
            }
        }
    }
    if text_only {
        Ok(Value::String(
            out.iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
        ))
    } else {
        Ok(Value::Array(out))
    }
}

fn tool_output(output: &ToolOutputContent) -> String {
    output.text()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::decode_request;

    fn context(request: Value) -> Context {
        let request = decode_request(request).unwrap();
        let items = request.input.clone().into_items();
        Context {
            request,
            response_id: "resp_1".into(),
            items,
            prompt: Default::default(),
            route: None,
            forced_failure: None,
            project: crate::tenancy::Project::open(),
        }
    }

    #[test]
    fn a_tool_loop_becomes_messages_with_parallel_calls() {
        let context = context(json!({
            "model": "m",
            "instructions": "Be brief.",
            "input": [
                {"role": "developer", "content": "Use tools."},
                {"role": "user", "content": [{"type": "input_text", "text": "List "}, {"type": "input_text", "text": "files"}]},
                {"type": "function_call", "call_id": "call_a", "name": "shell", "arguments": "{\"cmd\":\"ls\"}"},
                {"type": "function_call", "call_id": "call_b", "name": "lookup", "namespace": "mcp", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_a", "output": "a.txt"},
                {"type": "function_call_output", "call_id": "call_b", "output": [{"type": "input_text", "text": "ok"}]},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}
            ],
            "tools": [
                {"type": "function", "name": "shell", "parameters": {"type": "object"}},
                {"type": "namespace", "name": "mcp", "tools": [{"type": "function", "name": "lookup"}]},
                {"type": "custom", "name": "apply_patch", "description": "Patch files."}
            ],
            "tool_choice": {"type": "function", "name": "lookup"},
            "parallel_tool_calls": true,
            "max_output_tokens": 64,
            "temperature": 0.2,
            "text": {"format": {"type": "json_schema", "name": "out", "schema": {"type": "object"}, "strict": true}},
            "reasoning": {"effort": "low"}
        }));
        let (body, names) = body(&context, "upstream-m").unwrap();
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "Be brief."},
                {"role": "system", "content": "Use tools."},
                {"role": "user", "content": "List files"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"ls\"}"}},
                    {"id": "call_b", "type": "function", "function": {"name": "mcp__lookup", "arguments": "{}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_a", "content": "a.txt"},
                {"role": "tool", "tool_call_id": "call_b", "content": "ok"},
                {"role": "assistant", "content": "Done."}
            ])
        );
        assert_eq!(body["model"], "upstream-m");
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert_eq!(body["max_tokens"], 64);
        assert_eq!(body["reasoning_effort"], "low");
        assert_eq!(
            body["tool_choice"],
            json!({"type": "function", "function": {"name": "mcp__lookup"}})
        );
        assert_eq!(
            body["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "out", "schema": {"type": "object"}, "strict": true}})
        );
        let tool_names: Vec<&str> = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(tool_names, ["shell", "mcp__lookup", "apply_patch"]);
        assert_eq!(
            names["mcp__lookup"],
            Called::Function {
                name: "lookup".into(),
                namespace: Some("mcp".into())
            }
        );
        assert_eq!(
            names["apply_patch"],
            Called::Custom {
                name: "apply_patch".into()
            }
        );
        assert_eq!(
            body["tools"][2]["function"]["parameters"]["required"],
            json!(["input"])
        );
    }

    #[test]
    fn what_has_no_equivalent_is_refused_naming_it() {
        let refused = |request: Value| {
            check(&decode_request(request).unwrap())
                .unwrap_err()
                .param
                .unwrap()
        };
        assert_eq!(
            refused(json!({"model": "m", "input": "x", "tools": [{"type": "web_search"}]})),
            "tools[0]"
        );
        assert_eq!(
            refused(json!({"model": "m", "input": "x", "top_logprobs": 3})),
            "top_logprobs"
        );
        assert_eq!(
            refused(json!({"model": "m", "input": "x", "text": {"verbosity": "low"}})),
            "text.verbosity"
        );
        assert_eq!(
            refused(json!({"model": "m", "input": [{"type": "web_search_call", "id": "ws_1"}]})),
            "input[0].type"
        );
        assert_eq!(
            refused(json!({"model": "m", "input": [{"role": "user", "content": [
                {"type": "input_file", "file_id": "file_1"}]}]})),
            "input[0].content[0]"
        );
        let error = check(
            &decode_request(json!({"model": "m", "input": "x", "max_tool_calls": 2})).unwrap(),
        )
        .unwrap_err();
        assert_eq!(error.code.as_deref(), Some("unsupported_by_engine"));
        assert!(
            error.message.contains("Chat Completions"),
            "{}",
            error.message
        );
        // Images map.
        check(
            &decode_request(json!({"model": "m", "input": [{"role": "user", "content": [
                {"type": "input_text", "text": "what is this?"},
                {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]}]}))
            .unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn a_continuation_serializes_only_its_new_items_and_says_the_same() {
        let turn = |items: Value| {
            context(
                json!({"model": "m", "instructions": "Be brief.", "input": items,
                           "tools": [{"type": "function", "name": "shell"}]}),
            )
        };
        let first = turn(json!([{"role": "user", "content": "hi"},
                                {"role": "assistant", "content": "Let me look."}]));
        let (_, _, prefix) = encode(&first, "m", None).unwrap();
        assert_eq!(prefix.items, 2);
        assert!(
            prefix.open.is_some(),
            "the assistant's message stays open for its calls"
        );
        let second = turn(json!([{"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Let me look."},
            {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"}]));
        let (continued, _, prefix) = encode(&second, "m", Some(&prefix)).unwrap();
        let (whole, _, _) = encode(&second, "m", None).unwrap();
        let parse = |parts: Vec<Bytes>| {
            serde_json::from_slice::<Value>(&Parts::new(parts).to_vec()).unwrap()
        };
        let continued = parse(continued);
        assert_eq!(continued, parse(whole));
        assert_eq!(
            continued["messages"][2]["tool_calls"][0]["id"], "c1",
            "the call joined the assistant's message"
        );
        assert_eq!(prefix.items, 4);
    }

    #[test]
    fn a_compaction_item_goes_as_its_summary() {
        let sealer = crate::compaction::Sealer::random();
        let summary = crate::compaction::Summary {
            items: 2,
            text: "Summary of the conversation so far (2 items compacted)".into(),
        };
        let item = crate::compaction::item("cmp_1".into(), sealer.seal("p", &summary));
        let request = json!({"model": "m", "input": [item, {"role": "user", "content": "go on"}]});
        check(&decode_request(request.clone()).unwrap()).unwrap();
        let (body, _) = body(&context(request), "m").unwrap();
        assert_eq!(
            body["messages"][0],
            json!({"role": "user", "content": summary.text})
        );
    }

    #[test]
    fn allowed_tools_keeps_only_the_tools_it_names() {
        let context = context(json!({
            "model": "m", "input": "x",
            "tools": [{"type": "function", "name": "a"}, {"type": "function", "name": "b"}],
            "tool_choice": {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "b"}]}
        }));
        let (body, _) = body(&context, "m").unwrap();
        assert_eq!(body["tools"].as_array().unwrap().len(), 1);
        assert_eq!(body["tools"][0]["function"]["name"], "b");
        assert_eq!(body["tool_choice"], "required");
    }
}
