//! Tool definitions a request offers the model.
//!
//! `function`, `custom` and `namespace` tools are modelled; every other type (`web_search`,
//! `tool_search`, …) is accepted and kept verbatim, since Codex offers them and a request must not
//! fail because of them (docs/protocol.md §3, Items).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::lenient::{Tagged, decode_tagged};

/// A function tool: arguments are JSON described by `parameters` (a JSON Schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// A custom (freeform) tool: input is free text, optionally constrained by `format`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Value>,
}

/// A group of tools under a common name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamespaceTool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub tools: Vec<Tool>,
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Tool {
    Function(FunctionTool),
    Custom(CustomTool),
    Namespace(NamespaceTool),
    /// Any other tool type, accepted and kept verbatim.
    Other(Value),
}

impl Tool {
    /// The tool's name, when its type has one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Tool::Function(t) => Some(&t.name),
            Tool::Custom(t) => Some(&t.name),
            Tool::Namespace(t) => Some(&t.name),
            Tool::Other(value) => value.get("name").and_then(Value::as_str),
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum KnownTool {
    Function(FunctionTool),
    Custom(CustomTool),
    Namespace(NamespaceTool),
}

impl Serialize for Tool {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let known = match self.clone() {
            Tool::Function(t) => KnownTool::Function(t),
            Tool::Custom(t) => KnownTool::Custom(t),
            Tool::Namespace(t) => KnownTool::Namespace(t),
            Tool::Other(value) => return value.serialize(serializer),
        };
        known.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Tool {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(
            match decode_tagged(value, &["function", "custom", "namespace"], None)? {
                Tagged::Known(KnownTool::Function(t)) => Tool::Function(t),
                Tagged::Known(KnownTool::Custom(t)) => Tool::Custom(t),
                Tagged::Known(KnownTool::Namespace(t)) => Tool::Namespace(t),
                Tagged::Unknown(value) => Tool::Other(value),
            },
        )
    }
}
