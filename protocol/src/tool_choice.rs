//! `tool_choice` read as what it allows, and which of a request's tools can be called.
//!
//! The request keeps `tool_choice` as the JSON the client sent (it is echoed back verbatim);
//! [`ToolChoice::parse`] is the parsed view every reader shares — the server, which refuses a
//! choice that is malformed or names a tool the request does not offer, and a model, which must
//! honour it. Deciding what to refuse is the server's business, not this crate's.

use serde_json::Value;

use crate::tools::{CustomTool, FunctionTool, Tool};

/// What a request's `tool_choice` allows the model to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// `none`: answer without calling a tool.
    None,
    /// `auto` (and absent): the model decides.
    Auto,
    /// `required`: call at least one tool.
    Required,
    /// `{"type":"function"|"custom","name":N}`: call tool N.
    Forced(String),
    /// `{"type":"allowed_tools","mode":"auto"|"required","tools":[…]}`: only these tools, and
    /// at least one of them when `required`.
    Allowed { names: Vec<String>, required: bool },
}

impl ToolChoice {
    /// Reads `tool_choice`; a choice of a hosted tool (`{"type":"web_search"}`, …) leaves the
    /// model free, as `auto` does. `None` (the Rust one) for a value no shape matches.
    pub fn parse(value: Option<&Value>) -> Option<ToolChoice> {
        let Some(value) = value else {
            return Some(ToolChoice::Auto);
        };
        match value {
            Value::Null => Some(ToolChoice::Auto),
            Value::String(mode) => match mode.as_str() {
                "none" => Some(ToolChoice::None),
                "auto" => Some(ToolChoice::Auto),
                "required" => Some(ToolChoice::Required),
                _ => None,
            },
            Value::Object(choice) => match choice.get("type").and_then(Value::as_str)? {
                "function" | "custom" => choice
                    .get("name")
                    .and_then(Value::as_str)
                    .map(|name| ToolChoice::Forced(name.to_string())),
                "allowed_tools" => {
                    let required = match choice.get("mode").and_then(Value::as_str) {
                        Some("required") => true,
                        Some("auto") | None => false,
                        Some(_) => return None,
                    };
                    let names = choice
                        .get("tools")?
                        .as_array()?
                        .iter()
                        .filter_map(|tool| tool.get("name").and_then(Value::as_str))
                        .map(str::to_string)
                        .collect();
                    Some(ToolChoice::Allowed { names, required })
                }
                _ => Some(ToolChoice::Auto),
            },
            _ => None,
        }
    }

    /// Whether a tool named `name` may be called.
    pub fn allows(&self, name: &str) -> bool {
        match self {
            ToolChoice::None => false,
            ToolChoice::Auto | ToolChoice::Required => true,
            ToolChoice::Forced(forced) => forced == name,
            ToolChoice::Allowed { names, .. } => names.iter().any(|allowed| allowed == name),
        }
    }

    /// Whether the model must call a tool now.
    pub fn must_call(&self) -> bool {
        matches!(
            self,
            ToolChoice::Required
                | ToolChoice::Forced(_)
                | ToolChoice::Allowed { required: true, .. }
        )
    }
}

/// A tool the model can call, and the namespace it is in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallableTool<'a> {
    pub tool: Callable<'a>,
    pub namespace: Option<&'a str>,
}

/// The two kinds of tool a model calls itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Callable<'a> {
    Function(&'a FunctionTool),
    Custom(&'a CustomTool),
}

impl<'a> CallableTool<'a> {
    /// The name the model calls it by.
    pub fn name(&self) -> &'a str {
        match self.tool {
            Callable::Function(function) => &function.name,
            Callable::Custom(custom) => &custom.name,
        }
    }
}

/// The tools a model can call, in order — functions and custom tools, descending into
/// namespaces; hosted tools (`web_search`, …) are not called by the model's client.
pub fn callable_tools(tools: &[Tool]) -> Vec<CallableTool<'_>> {
    fn walk<'a>(tools: &'a [Tool], namespace: Option<&'a str>, out: &mut Vec<CallableTool<'a>>) {
        for tool in tools {
            let tool = match tool {
                Tool::Function(function) => Callable::Function(function),
                Tool::Custom(custom) => Callable::Custom(custom),
                Tool::Namespace(group) => {
                    walk(&group.tools, Some(&group.name), out);
                    continue;
                }
                Tool::Other(_) => continue,
            };
            out.push(CallableTool { tool, namespace });
        }
    }
    let mut out = Vec::new();
    walk(tools, None, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn choices_parse_to_what_they_allow() {
        let parse = |value: Value| ToolChoice::parse(Some(&value));
        assert_eq!(ToolChoice::parse(None), Some(ToolChoice::Auto));
        assert_eq!(parse(json!(null)), Some(ToolChoice::Auto));
        assert_eq!(parse(json!("none")), Some(ToolChoice::None));
        assert_eq!(parse(json!("sometimes")), None);
        assert_eq!(parse(json!(3)), None);
        assert_eq!(
            parse(json!({"type": "web_search"})),
            Some(ToolChoice::Auto),
            "a hosted tool's choice leaves the model free"
        );
        let forced = parse(json!({"type": "custom", "name": "apply_patch"})).unwrap();
        assert!(forced.must_call() && forced.allows("apply_patch") && !forced.allows("shell"));
        let allowed = parse(json!({"type": "allowed_tools", "mode": "required",
            "tools": [{"type": "function", "name": "shell"}]}))
        .unwrap();
        assert!(allowed.must_call() && allowed.allows("shell") && !allowed.allows("x"));
        assert_eq!(
            parse(json!({"type": "allowed_tools", "mode": "often", "tools": []})),
            None
        );
        assert!(!ToolChoice::None.allows("shell"));
    }

    #[test]
    fn callable_tools_descend_into_namespaces_and_skip_hosted_ones() {
        let tools: Vec<Tool> = serde_json::from_value(json!([
            {"type": "web_search"},
            {"type": "namespace", "name": "mcp", "description": "d",
             "tools": [{"type": "function", "name": "lookup"}]},
            {"type": "custom", "name": "apply_patch"}
        ]))
        .unwrap();
        let found: Vec<(&str, Option<&str>)> = callable_tools(&tools)
            .iter()
            .map(|callable| (callable.name(), callable.namespace))
            .collect();
        assert_eq!(found, [("lookup", Some("mcp")), ("apply_patch", None)]);
    }
}
