//! A response's context as a Responses request to an engine that has HTTP Responses already
//! (`POST {base}/responses`, `stream: true`): the same fields, with the conversation Tether
//! holds sent whole as `input` (`store: false` upstream — Tether keeps the state, the cache
//! and the store). The items go without their ids: they are Tether's, not the upstream's, and
//! an engine with a store of its own would look them up; a compaction item goes as the summary
//! it stands for, a reasoning item without the `encrypted_content` Tether sealed it with.

use bytes::Bytes;
use serde_json::{Map, Value, json};
use tether_protocol::{ApiError, Item, ResponseCreate};

use crate::engine::body::Parts;
use crate::engine::prefix::Prefix;
use crate::model::Context;

/// Refuses what the upstream's Responses cannot be asked for by Tether.
pub fn check(request: &ResponseCreate) -> Result<(), ApiError> {
    if request.prompt_cache_options.is_some() {
        return Err(ApiError::invalid_request(
            Some("unsupported_by_engine"),
            "prompt_cache_options: breakpoints, prewarm and diagnostics are the simulator's \
             prompt cache; the engine behind this model keeps its own, so Tether refuses them \
             rather than drop them.",
            Some("prompt_cache_options"),
        ));
    }
    Ok(())
}

/// The fields passed on as they are.
const PASSED: &[&str] = &[
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_output_tokens",
    "max_tool_calls",
    "temperature",
    "top_p",
    "top_logprobs",
    "text",
    "reasoning",
    "truncation",
    "prompt_cache_key",
    "prompt_cache_retention",
    "service_tier",
    "safety_identifier",
];

/// The request's body for `model`.
pub fn body(context: &Context, model: &str) -> Result<Value, ApiError> {
    let (parts, _) = encode(context, model, None)?;
    serde_json::from_slice(&Parts::new(parts).to_vec())
        .map_err(|e| ApiError::server(format!("the engine request is not JSON: {e}")))
}

/// The request's body as it is sent and its conversation serialized, continuing `from` (the
/// serialized conversation of an earlier request whose items this context's begin with).
pub fn encode(
    context: &Context,
    model: &str,
    from: Option<&Prefix>,
) -> Result<(Vec<Bytes>, Prefix), ApiError> {
    let request = serde_json::to_value(&context.request)
        .map_err(|e| ApiError::server(format!("cannot encode the request: {e}")))?;
    let mut prefix = from.cloned().unwrap_or_default();
    for item in context.items.iter().skip(prefix.items) {
        // A compaction item of this server is sealed with its key: the engine gets the summary
        // it stands for.
        if let Item::Unknown(value) = item
            && let Some(summary) = crate::compaction::expanded(value)
        {
            prefix.push(&json!({"type": "message", "role": "user", "content": summary}));
            continue;
        }
        let mut value = serde_json::to_value(item)
            .map_err(|e| ApiError::server(format!("cannot encode an item: {e}")))?;
        if let Value::Object(object) = &mut value {
            object.remove("id");
            // A reasoning item's `encrypted_content` is Tether's seal of its summary
            // (`include: ["reasoning.encrypted_content"]`), which no engine can open: the
            // engine reads the summary.
            if object.get("type").and_then(Value::as_str) == Some("reasoning") {
                object.remove("encrypted_content");
            }
        }
        prefix.push(&value);
    }
    prefix.items = context.items.len();
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    for key in PASSED {
        if let Some(value) = request.get(*key).filter(|v| !v.is_null()) {
            body.insert((*key).into(), value.clone());
        }
    }
    body.insert("stream".into(), true.into());
    body.insert("store".into(), false.into());
    let rest = serde_json::to_vec(&Value::Object(body))
        .map_err(|e| ApiError::server(format!("cannot encode the engine request: {e}")))?;
    prefix.seal();
    let mut parts = vec![Bytes::from_static(b"{\"input\":")];
    prefix.array(None, &mut parts);
    let mut tail = rest;
    tail[0] = b',';
    parts.push(Bytes::from(tail));
    Ok((parts, prefix))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tether_protocol::decode_request;

    #[test]
    fn the_whole_conversation_goes_without_tethers_ids() {
        let request = decode_request(json!({
            "model": "m",
            "input": [
                {"type": "message", "id": "msg_1", "role": "user", "content": "hi"},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "ok"}
            ],
            "tools": [{"type": "function", "name": "f"}],
            "max_output_tokens": 10,
            "metadata": {"scenario": "x"},
            "previous_response_id": "resp_0",
            "store": true
        }))
        .unwrap();
        let context = Context {
            items: request.input.clone().into_items(),
            request,
            response_id: "resp_1".into(),
            prompt: Default::default(),
            route: None,
            forced_failure: None,
            project: crate::tenancy::Project::open(),
        };
        let body = body(&context, "upstream").unwrap();
        assert_eq!(body["model"], "upstream");
        assert_eq!(
            body["input"][0],
            json!({"type": "message", "role": "user", "content": "hi"})
        );
        assert_eq!(body["input"][1]["call_id"], "call_1");
        assert!(body["input"][1].get("id").is_none());
        assert_eq!(body["max_output_tokens"], 10);
        assert_eq!(body["store"], false);
        assert_eq!(body["stream"], true);
        for tethers in ["metadata", "previous_response_id"] {
            assert!(body.get(tethers).is_none(), "{tethers} is Tether's");
        }
    }
}
