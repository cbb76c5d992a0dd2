//! Validation: every function tool's JSON Schema compiled into a validator (once per connection
//! while the tools stay the same, and kept a while for the next requests that send the same
//! tools), and the items checked — sizes, counts, and the arguments of
//! function calls in the conversation against their tool's schema.
//!
//! A schema that does not compile refuses the request (`tools[i].parameters`); a function call
//! in the history whose arguments do not match its schema is model output, not a client error,
//! so it is counted, not refused.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, LazyLock};

use lru::LruCache;
use parking_lot::Mutex;

use serde_json::Value;
use tether_protocol::{Item, Tool};

use crate::error::ApiFailure;
use crate::items;

/// The largest text one item may carry.
pub const MAX_ITEM_BYTES: usize = 10 * 1024 * 1024;
/// The most items one conversation may hold.
pub const MAX_ITEMS: usize = 100_000;

/// Compiled validators for a set of tools, by function name.
#[derive(Clone, Default)]
pub struct CompiledTools {
    /// Identifies the tools these were compiled from (the serialized tools).
    pub key: Arc<String>,
    validators: Arc<HashMap<String, jsonschema::Validator>>,
}

impl std::fmt::Debug for CompiledTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledTools")
            .field("functions", &self.validators.len())
            .finish()
    }
}

/// Tool sets compiled lately, by key, kept for the next request that sends the same tools —
/// a new conversation, an HTTP request — so it does not compile them again.
const COMPILED_KEPT: usize = 256;
/// A key longer than this (the serialized tools) is compiled every time rather than kept.
const LONGEST_KEPT_KEY: usize = 256 * 1024;

static COMPILED: LazyLock<Mutex<LruCache<String, CompiledTools>>> = LazyLock::new(|| {
    Mutex::new(LruCache::new(
        NonZeroUsize::new(COMPILED_KEPT).expect("non-zero"),
    ))
});

/// The validators for `tools` (`key` is [`super::tools_key`] of them): kept ones when the same tools
/// were compiled lately, else [`compile`]d now. A tool set that does not compile is not kept.
pub fn compiled(tools: &[Tool], key: &str) -> Result<CompiledTools, ApiFailure> {
    if let Some(compiled) = COMPILED.lock().get(key) {
        return Ok(compiled.clone());
    }
    let compiled = compile(tools, key)?;
    if key.len() <= LONGEST_KEPT_KEY {
        COMPILED.lock().put(key.to_string(), compiled.clone());
    }
    Ok(compiled)
}

/// Compiles every function tool's `parameters` (namespaces included); `key` is
/// [`super::tools_key`] of `tools`.
pub fn compile(tools: &[Tool], key: &str) -> Result<CompiledTools, ApiFailure> {
    let mut validators = HashMap::new();
    for (index, tool) in tools.iter().enumerate() {
        let functions: Vec<_> = match tool {
            Tool::Function(function) => vec![(function, format!("tools[{index}].parameters"))],
            Tool::Namespace(group) => group
                .tools
                .iter()
                .enumerate()
                .filter_map(|(inner, t)| match t {
                    Tool::Function(function) => Some((
                        function,
                        format!("tools[{index}].tools[{inner}].parameters"),
                    )),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        for (function, param) in functions {
            let Some(schema) = &function.parameters else {
                continue;
            };
            let validator = jsonschema::validator_for(schema).map_err(|error| {
                ApiFailure::bad_request(
                    Some("invalid_function_parameters"),
                    format!("Invalid schema for function '{}': {error}", function.name),
                    Some(&param),
                )
            })?;
            validators.insert(function.name.clone(), validator);
        }
    }
    Ok(CompiledTools {
        key: Arc::new(key.to_string()),
        validators: Arc::new(validators),
    })
}

/// What checking a slice of items found that is worth counting but not refusing.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ItemReport {
    pub arguments_not_matching_schema: usize,
}

/// Checks `items` (the `offset`-th item of the conversation first) against the limits and the
/// compiled tools; `total` is the conversation's length after them.
pub fn check_items(
    items: &[Item],
    offset: usize,
    total: usize,
    tools: &CompiledTools,
) -> Result<ItemReport, ApiFailure> {
    if total > MAX_ITEMS {
        return Err(ApiFailure::bad_request(
            Some("too_many_items"),
            format!("A conversation may hold at most {MAX_ITEMS} items; this one has {total}."),
            Some("input"),
        ));
    }
    let mut report = ItemReport::default();
    for (i, item) in items.iter().enumerate() {
        let size = items::body(item).len();
        if size > MAX_ITEM_BYTES {
            return Err(ApiFailure::bad_request(
                Some("item_too_large"),
                format!(
                    "Item {} carries {size} bytes; the limit is {MAX_ITEM_BYTES}.",
                    offset + i
                ),
                Some("input"),
            ));
        }
        if let Item::FunctionCall(call) = item
            && let Some(validator) = tools.validators.get(&call.name)
        {
            let matches = serde_json::from_str::<Value>(&call.arguments)
                .is_ok_and(|arguments| validator.is_valid(&arguments));
            if !matches {
                report.arguments_not_matching_schema += 1;
            }
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::tools_key;
    use serde_json::json;

    fn tools() -> Vec<Tool> {
        serde_json::from_value(json!([{"type": "function", "name": "shell", "parameters": {
            "type": "object", "required": ["command"],
            "properties": {"command": {"type": "array", "items": {"type": "string"}}}}}]))
        .unwrap()
    }

    #[test]
    fn schemas_compile_and_check_call_arguments() {
        let compiled = compile(&tools(), &tools_key(&tools())).unwrap();
        let call = |arguments: &str| {
            Item::FunctionCall(tether_protocol::items::FunctionCall {
                id: None,
                call_id: "c".into(),
                name: "shell".into(),
                arguments: arguments.into(),
                namespace: None,
                status: None,
            })
        };
        let items = vec![
            call(r#"{"command":["ls"]}"#),
            call(r#"{"command":"ls"}"#),
            call("not json"),
        ];
        let report = check_items(&items, 0, 3, &compiled).unwrap();
        assert_eq!(report.arguments_not_matching_schema, 2);
        assert_eq!(*compiled.key, tools_key(&tools()));
    }

    #[test]
    fn a_broken_schema_is_refused_naming_the_parameter() {
        let broken: Vec<Tool> = serde_json::from_value(json!([
            {"type": "custom", "name": "x"},
            {"type": "function", "name": "bad", "parameters": {"type": "no-such-type"}}
        ]))
        .unwrap();
        let refusal = compile(&broken, &tools_key(&broken)).unwrap_err();
        assert_eq!(refusal.status, 400);
        assert_eq!(refusal.error.param.as_deref(), Some("tools[1].parameters"));
    }

    #[test]
    fn the_same_tools_are_compiled_once_and_a_broken_set_every_time() {
        // A name no other test uses: the kept sets are the process's.
        let tools: Vec<Tool> = serde_json::from_value(json!([{"type": "function",
            "name": "kept_once", "parameters": {"type": "object"}}]))
        .unwrap();
        let key = tools_key(&tools);
        let first = compiled(&tools, &key).unwrap();
        let again = compiled(&tools, &key).unwrap();
        assert!(Arc::ptr_eq(&first.validators, &again.validators), "kept");
        let fresh = compile(&tools, &key).unwrap();
        assert!(!Arc::ptr_eq(&first.validators, &fresh.validators));

        let broken: Vec<Tool> = serde_json::from_value(json!([{"type": "function",
            "name": "kept_never", "parameters": {"type": "no-such-type"}}]))
        .unwrap();
        let key = tools_key(&broken);
        for _ in 0..2 {
            let refusal = compiled(&broken, &key).unwrap_err();
            assert_eq!(refusal.error.param.as_deref(), Some("tools[0].parameters"));
        }
        assert!(!COMPILED.lock().contains(&key));
    }

    #[test]
    fn limits_are_enforced() {
        let compiled = CompiledTools::default();
        assert!(check_items(&[], 0, MAX_ITEMS + 1, &compiled).is_err());
        let huge = Item::user_text("x".repeat(MAX_ITEM_BYTES + 1));
        let refusal = check_items(&[huge], 4, 5, &compiled).unwrap_err();
        assert!(refusal.error.message.contains("Item 4"));
    }
}
