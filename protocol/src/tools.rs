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
        let mut value = Value::deserialize(deserializer)?;
        if let Some(tool) = function_as_given(&mut value) {
            return Ok(Tool::Function(tool));
        }
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

/// A function tool whose fields have the types it declares, taken out of `value` as they are:
/// what [`KnownTool`]'s derived decoding makes of it, without copying the object into serde's
/// buffer and the schema out of it again (a tool's decoding was ~3 % of the server's CPU a turn
/// under load, most of it those copies). Anything else — another type, a field of another
/// type, `name` missing — is left untouched for the general decoding and its error.
fn function_as_given(value: &mut Value) -> Option<FunctionTool> {
    let object = value.as_object_mut()?;
    if object.get("type")?.as_str()? != "function" {
        return None;
    }
    let optional = |key: &str, fits: fn(&Value) -> bool| {
        object.get(key).is_none_or(|v| v.is_null() || fits(v))
    };
    if !object.get("name")?.is_string()
        || !optional("description", Value::is_string)
        || !optional("strict", Value::is_boolean)
    {
        return None;
    }
    let mut take = |key: &str| object.remove(key).filter(|v| !v.is_null());
    let Some(Value::String(name)) = take("name") else {
        unreachable!("checked above")
    };
    Some(FunctionTool {
        name,
        description: take("description").and_then(|v| match v {
            Value::String(text) => Some(text),
            _ => None,
        }),
        parameters: take("parameters"),
        strict: take("strict").and_then(|v| v.as_bool()),
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The general decoding, without the shortcut.
    fn general(value: Value) -> Result<Tool, String> {
        match decode_tagged::<KnownTool, serde_json::Error>(
            value,
            &["function", "custom", "namespace"],
            None,
        ) {
            Ok(Tagged::Known(KnownTool::Function(t))) => Ok(Tool::Function(t)),
            Ok(Tagged::Known(KnownTool::Custom(t))) => Ok(Tool::Custom(t)),
            Ok(Tagged::Known(KnownTool::Namespace(t))) => Ok(Tool::Namespace(t)),
            Ok(Tagged::Unknown(value)) => Ok(Tool::Other(value)),
            Err(error) => Err(error.to_string()),
        }
    }

    #[test]
    fn a_function_tool_taken_as_given_is_what_the_general_decoding_makes_of_it() {
        let schema = json!({"type": "object", "properties": {"cmd": {"type": "array"}},
                            "required": ["cmd"], "additionalProperties": false});
        let taken = [
            json!({"type": "function", "name": "shell", "description": "Runs a command.",
                   "parameters": schema, "strict": true}),
            json!({"type": "function", "name": "shell"}),
            json!({"type": "function", "name": "", "description": null, "parameters": null,
                   "strict": null}),
            json!({"type": "function", "name": "f", "parameters": 7, "strict": false,
                   "unknown": {"kept": "no"}}),
            json!({"name": "f", "type": "function", "parameters": [1, 2.5, "x"]}),
        ];
        for value in taken {
            let mut given = value.clone();
            let fast = function_as_given(&mut given).map(Tool::Function);
            assert_eq!(fast, Some(general(value.clone()).unwrap()), "{value}");
            let text = value.to_string();
            let decoded: Tool = serde_json::from_str(&text).unwrap();
            assert_eq!(Some(decoded), fast);
        }
        // Left to the general decoding, untouched: its errors are the ones a client sees.
        let left = [
            json!({"type": "function"}),
            json!({"type": "function", "name": 3}),
            json!({"type": "function", "name": "f", "description": 1}),
            json!({"type": "function", "name": "f", "strict": "yes"}),
            json!({"type": "custom", "name": "apply_patch"}),
            json!({"type": "web_search"}),
            json!({"name": "f"}),
            json!([1]),
        ];
        for value in left {
            let mut given = value.clone();
            assert_eq!(function_as_given(&mut given), None, "{value}");
            assert_eq!(given, value);
            let via_serde =
                serde_json::from_value::<Tool>(value.clone()).map_err(|e| e.to_string());
            assert_eq!(via_serde, general(value.clone()), "{value}");
        }
    }
}
