//! What a generator decides to answer, before it is tokenized and paced: a list of outputs —
//! reasoning, a message, tool calls — possibly ending in a failure.

use serde_json::{Map, Value, json};
use tether_protocol::{Callable, Tool, callable_tools};

use crate::model::{FailureKind, ModelEvent};

/// One output item a generator decided on.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// A reasoning item with this summary.
    Reasoning(String),
    Message(String),
    Call(ToolCallPlan),
    /// The response fails here (after the outputs before it).
    Fail(FailureKind),
}

/// A tool call the model will make: how it begins and the text of its arguments or input.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallPlan {
    pub begin: ModelEvent,
    pub input: String,
}

impl ToolCallPlan {
    /// The name of the tool called.
    pub fn name(&self) -> Option<&str> {
        match &self.begin {
            ModelEvent::BeginFunctionCall { name, .. }
            | ModelEvent::BeginCustomToolCall { name, .. } => Some(name),
            _ => None,
        }
    }
}

/// A plan for every callable tool in `tools`, in order, descending into namespaces.
pub fn callable(tools: &[Tool]) -> Vec<ToolCallPlan> {
    callable_tools(tools)
        .into_iter()
        .map(|callable| match callable.tool {
            Callable::Function(function) => ToolCallPlan {
                begin: ModelEvent::BeginFunctionCall {
                    name: function.name.clone(),
                    namespace: callable.namespace.map(str::to_string),
                    call_id: None,
                },
                input: arguments_for(function.parameters.as_ref().unwrap_or(&Value::Null))
                    .to_string(),
            },
            Callable::Custom(custom) => ToolCallPlan {
                begin: ModelEvent::BeginCustomToolCall {
                    name: custom.name.clone(),
                    call_id: None,
                },
                input: format!("input for {}", custom.name),
            },
        })
        .collect()
}

/// Arguments that satisfy `schema`: every required property, with the first `enum` value or a
/// plain value of its type.
pub fn arguments_for(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => kinds.iter().find_map(Value::as_str).unwrap_or("object"),
        Some(Value::String(kind)) => kind.as_str(),
        _ => "object",
    };
    match kind {
        "string" => json!("example"),
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "array" => match schema.get("items") {
            Some(items) if schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) > 0 => {
                json!([arguments_for(items)])
            }
            _ => json!([]),
        },
        "null" => Value::Null,
        _ => {
            let mut object = Map::new();
            let properties = schema.get("properties").and_then(Value::as_object);
            let required = schema.get("required").and_then(Value::as_array);
            for name in required.into_iter().flatten().filter_map(Value::as_str) {
                let property = properties.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
                object.insert(name.to_string(), arguments_for(property));
            }
            Value::Object(object)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_follow_the_schema() {
        let schema = json!({"type": "object", "required": ["cmd", "n", "mode", "opts"],
            "properties": {"cmd": {"type": "string"}, "n": {"type": "integer"},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "opts": {"type": "object", "required": ["flag"], "properties": {"flag": {"type": "boolean"}}},
                "optional": {"type": "string"}}});
        assert_eq!(
            arguments_for(&schema),
            json!({"cmd": "example", "n": 1, "mode": "fast", "opts": {"flag": true}})
        );
    }
}
