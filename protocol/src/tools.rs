//! Tool definitions a request offers the model.
//!
//! `function`, `custom` and `namespace` tools are modelled; every other type (`web_search`,
//! `tool_search`, …) is accepted and kept verbatim, since Codex offers them and a request must not
//! fail because of them (docs/protocol.md §3, Items).
//!
//! A request's tools serialize as they were given; a response echoes them through
//! [`serialize_echoed`], which spells out what a function tool left unsaid.

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

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum KnownTool {
    Function(FunctionTool),
    Custom(CustomTool),
    Namespace(NamespaceTool),
}

/// [`KnownTool`] to serialize, borrowed: a tool's schema is not copied to be written.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum KnownToolRef<'a> {
    Function(&'a FunctionTool),
    Custom(&'a CustomTool),
    Namespace(&'a NamespaceTool),
}

impl Serialize for Tool {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let known = match self {
            Tool::Function(t) => KnownToolRef::Function(t),
            Tool::Custom(t) => KnownToolRef::Custom(t),
            Tool::Namespace(t) => KnownToolRef::Namespace(t),
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

/// Serializes a response's `tools`: as a request gives them, except that every function tool
/// (also inside a namespace) carries `description`, `parameters` and `strict`, `null` when the
/// request had none — Open Responses' `FunctionTool` requires all three keys.
pub(crate) fn serialize_echoed<S: Serializer>(
    tools: &[Tool],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(tools.iter().map(Echoed))
}

/// A tool as a response echoes it.
struct Echoed<'a>(&'a Tool);

impl Serialize for Echoed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self.0 {
            Tool::Function(tool) => {
                let mut map = serializer.serialize_map(Some(5))?;
                map.serialize_entry("type", "function")?;
                map.serialize_entry("name", &tool.name)?;
                map.serialize_entry("description", &tool.description)?;
                map.serialize_entry("parameters", &tool.parameters)?;
                map.serialize_entry("strict", &tool.strict)?;
                map.end()
            }
            Tool::Namespace(tool) => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("type", "namespace")?;
                map.serialize_entry("name", &tool.name)?;
                if let Some(description) = &tool.description {
                    map.serialize_entry("description", description)?;
                }
                let tools: Vec<Echoed> = tool.tools.iter().map(Echoed).collect();
                map.serialize_entry("tools", &tools)?;
                map.end()
            }
            other => other.serialize(serializer),
        }
    }
}
