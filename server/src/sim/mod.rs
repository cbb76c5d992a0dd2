//! The model behind the API. The pipeline only sees the [`Model`] trait — `generate(&Context)`
//! returning a stream of [`ModelEvent`]s — so the simulator can be replaced by a real upstream
//! model server without touching transports or the event builder.
//!
//! [`TextModel`] is the first simulator, deterministic and paced at a fixed number of tokens per
//! second: when function tools are offered (and `tool_choice` is not `none`) and the conversation
//! does not end with a tool output, it calls the first function tool with arguments made from its
//! JSON Schema; otherwise it answers with a text that quotes the user's last message and, after a
//! tool output, what the tool returned.

pub mod tokens;

use std::pin::Pin;
use std::time::Duration;

use futures_util::Stream;
use serde_json::{Map, Value, json};
use tether_protocol::{Item, ResponseCreate, Role, Tool};

/// What a model generates from: the request and its full logical input.
#[derive(Debug, Clone)]
pub struct Context {
    pub request: ResponseCreate,
    /// The whole conversation: previous context plus the request's new input.
    pub items: Vec<Item>,
    pub input_tokens: u64,
}

impl Context {
    /// The context of a request without history.
    pub fn new(request: ResponseCreate) -> Self {
        let items = request.input.clone().into_items();
        Self::with_items(request, items)
    }

    /// The context of a request over a whole conversation.
    pub fn with_items(request: ResponseCreate, items: Vec<Item>) -> Self {
        let input_tokens = items
            .iter()
            .map(|item| tokens::count(&item_text(item)) as u64)
            .sum();
        Context {
            request,
            items,
            input_tokens,
        }
    }

    /// The tool output that ends the conversation, if it ends with one.
    pub fn trailing_tool_output(&self) -> Option<String> {
        match self.items.last()? {
            Item::FunctionCallOutput(o) | Item::CustomToolCallOutput(o) => Some(o.output.text()),
            _ => None,
        }
    }

    /// The tools to call now: none when `tool_choice` is `none` or the conversation ends with a
    /// tool output; otherwise the first callable tool offered — or the first two when the
    /// request explicitly sets `parallel_tool_calls: true`.
    pub fn tools_to_call(&self) -> Vec<ToolCallPlan> {
        if self.request.tool_choice.as_ref().and_then(|c| c.as_str()) == Some("none")
            || self.trailing_tool_output().is_some()
        {
            return Vec::new();
        }
        let mut callable = Vec::new();
        collect_callable(&self.request.tools, None, &mut callable);
        let count = if self.request.parallel_tool_calls == Some(true) {
            2
        } else {
            1
        };
        callable.truncate(count);
        callable
    }

    /// The text of the last user message, if any.
    pub fn last_user_text(&self) -> Option<String> {
        self.items.iter().rev().find_map(|item| match item {
            Item::Message(m) if m.role == Role::User => Some(m.content.text()),
            _ => None,
        })
    }
}

/// The text an item contributes to the prompt.
fn item_text(item: &Item) -> String {
    match item {
        Item::Message(m) => m.content.text(),
        Item::FunctionCall(c) => format!("{} {}", c.name, c.arguments),
        Item::FunctionCallOutput(o) | Item::CustomToolCallOutput(o) => o.output.text(),
        Item::CustomToolCall(c) => format!("{} {}", c.name, c.input),
        Item::Reasoning(r) => r.summary.iter().map(|s| s.text.as_str()).collect(),
        Item::ItemReference { .. } | Item::Unknown(_) => String::new(),
    }
}

/// A tool call the model will make: how it begins and the text of its arguments or input.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallPlan {
    pub begin: ModelEvent,
    pub input: String,
}

/// Every callable tool in `tools`, in order, descending into namespaces.
fn collect_callable(tools: &[Tool], namespace: Option<&str>, out: &mut Vec<ToolCallPlan>) {
    for tool in tools {
        match tool {
            Tool::Function(function) => out.push(ToolCallPlan {
                begin: ModelEvent::BeginFunctionCall {
                    name: function.name.clone(),
                    namespace: namespace.map(str::to_string),
                },
                input: arguments_for(function.parameters.as_ref().unwrap_or(&Value::Null))
                    .to_string(),
            }),
            Tool::Custom(custom) => out.push(ToolCallPlan {
                begin: ModelEvent::BeginCustomToolCall {
                    name: custom.name.clone(),
                },
                input: format!("input for {}", custom.name),
            }),
            Tool::Namespace(group) => collect_callable(&group.tools, Some(&group.name), out),
            Tool::Other(_) => {}
        }
    }
}

/// One step of generation, in stream order.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    BeginMessage,
    TextDelta(String),
    /// A function tool call; `namespace` names the namespace tool it belongs to, if any.
    BeginFunctionCall {
        name: String,
        namespace: Option<String>,
    },
    /// A custom (freeform) tool call.
    BeginCustomToolCall {
        name: String,
    },
    /// A piece of the open call's arguments (function) or input (custom).
    ArgumentsDelta(String),
    EndItem,
}

/// The model id `GET /v1/models` lists; requests for any other model are served by it too.
pub const MODEL_ID: &str = "tether-sim";

/// A stream of model events.
pub type ModelStream = Pin<Box<dyn Stream<Item = ModelEvent> + Send>>;

/// Generates output for a context.
pub trait Model: Send + Sync + 'static {
    fn generate(&self, context: &Context) -> ModelStream;
}

/// Answers with a fixed text quoting the user, decoded at `tokens_per_second`.
#[derive(Debug, Clone)]
pub struct TextModel {
    token_interval: Duration,
}

impl TextModel {
    /// A model decoding `tokens_per_second` (must be positive and finite).
    pub fn new(tokens_per_second: f64) -> Self {
        TextModel {
            token_interval: Duration::from_secs_f64(1.0 / tokens_per_second),
        }
    }

    /// The answer to a prompt, mentioning the tool output that preceded it, if any.
    pub fn answer_after(prompt: Option<&str>, tool_output: Option<&str>) -> String {
        let answer = Self::answer(prompt);
        match tool_output {
            Some(output) => {
                let shown: String = output.chars().take(120).collect();
                let more = if output.chars().count() > 120 {
                    "…"
                } else {
                    ""
                };
                format!("The tool returned \"{shown}{more}\". {answer}")
            }
            None => answer,
        }
    }

    /// The answer to a prompt.
    pub fn answer(prompt: Option<&str>) -> String {
        let prompt = prompt.map(str::trim).filter(|p| !p.is_empty());
        let quoted = match prompt {
            Some(p) if p.chars().count() > 200 => {
                format!("\"{}…\"", p.chars().take(200).collect::<String>())
            }
            Some(p) => format!("\"{p}\""),
            None => "nothing".to_string(),
        };
        format!(
            "You said: {quoted}. This answer comes from Tether's inference simulator and is \
             streamed over one WebSocket, one token per response.output_text.delta event. When \
             response.completed arrives, the page shows the time to first token and the decoding \
             speed in tokens per second."
        )
    }
}

impl Model for TextModel {
    fn generate(&self, context: &Context) -> ModelStream {
        // Each item: its opening event and the text streamed into it.
        let calls = context.tools_to_call();
        let items: Vec<(ModelEvent, String)> = if calls.is_empty() {
            let output = context.trailing_tool_output();
            let last = context.last_user_text();
            vec![(
                ModelEvent::BeginMessage,
                Self::answer_after(last.as_deref(), output.as_deref()),
            )]
        } else {
            calls
                .into_iter()
                .map(|call| (call.begin, call.input))
                .collect()
        };
        // The whole output as one sequence of events; only deltas cost decoding time.
        let mut events = Vec::new();
        for (begin, text) in items {
            let is_message = begin == ModelEvent::BeginMessage;
            events.push(begin);
            events.extend(tokens::split(&text).map(|piece| {
                if is_message {
                    ModelEvent::TextDelta(piece.to_string())
                } else {
                    ModelEvent::ArgumentsDelta(piece.to_string())
                }
            }));
            events.push(ModelEvent::EndItem);
        }
        let interval = self.token_interval;
        let start = tokio::time::Instant::now();
        // Token i is due at start + i × interval: pacing against the start, not the previous
        // token, keeps the rate exact even when a send is delayed.
        Box::pin(futures_util::stream::unfold(
            (events.into_iter(), 0u32),
            move |(mut rest, token)| async move {
                let event = rest.next()?;
                let is_token = matches!(
                    event,
                    ModelEvent::TextDelta(_) | ModelEvent::ArgumentsDelta(_)
                );
                if is_token {
                    tokio::time::sleep_until(start + interval * token).await;
                }
                Some((event, (rest, token + u32::from(is_token))))
            },
        ))
    }
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
        _ if schema.get("properties").is_some() => "object",
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
    use futures_util::StreamExt;

    #[tokio::test(start_paused = true)]
    async fn text_model_paces_tokens_at_the_configured_rate() {
        let model = TextModel::new(100.0);
        let context = Context::new(ResponseCreate::new("m", "hello there"));
        let start = tokio::time::Instant::now();
        let events: Vec<_> = model.generate(&context).collect().await;
        let deltas: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::TextDelta(d) => Some(d.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(events.first(), Some(&ModelEvent::BeginMessage));
        assert_eq!(events.last(), Some(&ModelEvent::EndItem));
        assert_eq!(deltas.concat(), TextModel::answer(Some("hello there")));
        // The last of n tokens is due (n - 1) intervals after the first, which is immediate.
        let expected = Duration::from_millis(10) * (deltas.len() as u32 - 1);
        assert_eq!(start.elapsed(), expected);
    }

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

    #[tokio::test(start_paused = true)]
    async fn offered_tools_are_called_until_a_tool_output_arrives() {
        let model = TextModel::new(1000.0);
        let mut request = ResponseCreate::new("m", "list files");
        request.tools = vec![Tool::Function(tether_protocol::tools::FunctionTool {
            name: "shell".into(),
            description: None,
            parameters: Some(
                json!({"type": "object", "required": ["cmd"], "properties": {"cmd": {"type": "string"}}}),
            ),
            strict: None,
        })];
        let events: Vec<_> = model
            .generate(&Context::new(request.clone()))
            .collect()
            .await;
        assert_eq!(
            events[0],
            ModelEvent::BeginFunctionCall {
                name: "shell".into(),
                namespace: None
            }
        );
        let arguments: String = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::ArgumentsDelta(d) => Some(d.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(arguments, r#"{"cmd":"example"}"#);

        let items = vec![
            Item::user_text("list files"),
            Item::FunctionCallOutput(tether_protocol::items::ToolCallOutput {
                id: None,
                call_id: "call_1".into(),
                output: tether_protocol::items::ToolOutputContent::Text("a.txt".into()),
                status: None,
            }),
        ];
        let events: Vec<_> = model
            .generate(&Context::with_items(request, items))
            .collect()
            .await;
        assert_eq!(events[0], ModelEvent::BeginMessage);
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::TextDelta(d) => Some(d.as_str()),
                _ => None,
            })
            .collect();
        assert!(text.starts_with("The tool returned \"a.txt\"."), "{text}");
    }

    #[tokio::test(start_paused = true)]
    async fn custom_namespaced_and_parallel_calls() {
        let tools: Vec<Tool> = serde_json::from_value(json!([
            {"type": "web_search"},
            {"type": "namespace", "name": "mcp", "description": "d",
             "tools": [{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]},
            {"type": "custom", "name": "apply_patch"}
        ]))
        .unwrap();
        let mut request = ResponseCreate::new("m", "go");
        request.tools = tools;
        let context = Context::new(request.clone());
        let plans = context.tools_to_call();
        assert_eq!(
            plans.len(),
            1,
            "one call unless parallel calls are asked for"
        );
        assert_eq!(
            plans[0].begin,
            ModelEvent::BeginFunctionCall {
                name: "lookup".into(),
                namespace: Some("mcp".into())
            }
        );
        request.parallel_tool_calls = Some(true);
        let events: Vec<_> = TextModel::new(1000.0)
            .generate(&Context::new(request))
            .collect()
            .await;
        let begins: Vec<_> = events
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    ModelEvent::BeginFunctionCall { .. } | ModelEvent::BeginCustomToolCall { .. }
                )
            })
            .collect();
        assert_eq!(begins.len(), 2);
        assert_eq!(
            begins[1],
            &ModelEvent::BeginCustomToolCall {
                name: "apply_patch".into()
            }
        );
        assert_eq!(
            events.iter().filter(|e| **e == ModelEvent::EndItem).count(),
            2
        );
    }

    #[test]
    fn answer_quotes_and_truncates_the_prompt() {
        assert!(TextModel::answer(Some("  hi ")).starts_with("You said: \"hi\"."));
        assert!(TextModel::answer(None).starts_with("You said: nothing."));
        let long = "x".repeat(500);
        assert!(TextModel::answer(Some(&long)).contains(&format!("\"{}…\"", "x".repeat(200))));
    }
}
