//! Conversation items: what a request's `input` holds and what a response's `output` holds.
//!
//! One [`Item`] type serves both directions because a continuation feeds a response's output
//! items back in as context verbatim (docs/protocol.md §2), and Codex builds its next request
//! from the `response.output_item.done` payloads. Item types we do not model are kept raw
//! ([`Item::Unknown`]) so that replayed history from real clients never fails a request.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::lenient::{Tagged, decode_tagged};

/// The author of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    System,
    Developer,
}

/// Progress of an item as the stream reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    InProgress,
    Completed,
    Incomplete,
}

/// A message: `content` is either a plain string or a list of parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub role: Role,
    pub content: MessageContent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
}

/// The two shapes of message content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MessageContent {
    Text(String),
    Parts(Vec<ContentPart>),
}

impl MessageContent {
    /// All text of the message, parts joined without separator (images and files contribute
    /// nothing).
    pub fn text(&self) -> String {
        self.text_cow().into_owned()
    }

    /// [`MessageContent::text`], borrowed when the message has at most one text part (no copy).
    pub fn text_cow(&self) -> Cow<'_, str> {
        match self {
            MessageContent::Text(text) => Cow::Borrowed(text),
            MessageContent::Parts(parts) => joined(parts),
        }
    }
}

/// The text of `parts`, joined without separator; borrowed when at most one part has text.
fn joined(parts: &[ContentPart]) -> Cow<'_, str> {
    let mut texts = parts.iter().filter_map(ContentPart::text);
    match (texts.next(), texts.next()) {
        (None, _) => Cow::Borrowed(""),
        (Some(only), None) => Cow::Borrowed(only),
        (Some(first), Some(second)) => {
            let mut text = String::from(first);
            text.push_str(second);
            text.extend(texts);
            Cow::Owned(text)
        }
    }
}

/// One part of a message's content.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentPart {
    /// `input_text`; `prompt_cache_breakpoint` (`{"mode":"explicit","ttl":"30m"|"12h"}`) marks
    /// the end of a reusable prompt prefix for the engine's prompt cache.
    InputText {
        text: String,
        prompt_cache_breakpoint: Option<Value>,
    },
    OutputText(OutputText),
    Refusal {
        refusal: String,
    },
    /// `input_image`, `input_file` and any other part type, kept verbatim.
    Other(Value),
}

/// An assistant's text part, as streamed in `response.content_part.*` events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputText {
    pub text: String,
    #[serde(default)]
    pub annotations: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Vec<Value>>,
}

impl OutputText {
    /// A text part as the server emits it: no annotations, empty logprobs.
    pub fn new(text: impl Into<String>) -> Self {
        OutputText {
            text: text.into(),
            annotations: Vec::new(),
            logprobs: Some(Vec::new()),
        }
    }
}

impl ContentPart {
    /// An `input_text` part without a cache breakpoint.
    pub fn input_text(text: impl Into<String>) -> Self {
        ContentPart::InputText {
            text: text.into(),
            prompt_cache_breakpoint: None,
        }
    }

    /// The text this part carries, if any.
    pub fn text(&self) -> Option<&str> {
        match self {
            ContentPart::InputText { text, .. } => Some(text),
            ContentPart::OutputText(part) => Some(&part.text),
            ContentPart::Refusal { refusal } => Some(refusal),
            ContentPart::Other(_) => None,
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum KnownPart {
    InputText {
        text: String,
        #[serde(default)]
        prompt_cache_breakpoint: Option<Value>,
    },
    OutputText(OutputText),
    Refusal {
        refusal: String,
    },
}

/// [`KnownPart`] to serialize, borrowed.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum KnownPartRef<'a> {
    InputText {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        prompt_cache_breakpoint: Option<&'a Value>,
    },
    OutputText(&'a OutputText),
    Refusal {
        refusal: &'a str,
    },
}

impl Serialize for ContentPart {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentPart::InputText {
                text,
                prompt_cache_breakpoint,
            } => KnownPartRef::InputText {
                text,
                prompt_cache_breakpoint: prompt_cache_breakpoint.as_ref(),
            }
            .serialize(serializer),
            ContentPart::OutputText(part) => KnownPartRef::OutputText(part).serialize(serializer),
            ContentPart::Refusal { refusal } => {
                KnownPartRef::Refusal { refusal }.serialize(serializer)
            }
            ContentPart::Other(value) => value.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(
            match decode_tagged(value, &["input_text", "output_text", "refusal"], None)? {
                Tagged::Known(KnownPart::InputText {
                    text,
                    prompt_cache_breakpoint,
                }) => ContentPart::InputText {
                    text,
                    prompt_cache_breakpoint,
                },
                Tagged::Known(KnownPart::OutputText(part)) => ContentPart::OutputText(part),
                Tagged::Known(KnownPart::Refusal { refusal }) => ContentPart::Refusal { refusal },
                Tagged::Unknown(value) => ContentPart::Other(value),
            },
        )
    }
}

/// A call of a function tool chosen by the model; `arguments` is a JSON text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub call_id: String,
    pub name: String,
    pub arguments: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
}

/// The client's answer to a [`FunctionCall`] or a custom tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallOutput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub call_id: String,
    pub output: ToolOutputContent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
}

/// A tool's output: a string or a list of content parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolOutputContent {
    Text(String),
    Parts(Vec<ContentPart>),
}

impl ToolOutputContent {
    /// All text of the output.
    pub fn text(&self) -> String {
        self.text_cow().into_owned()
    }

    /// [`ToolOutputContent::text`], borrowed when the output has at most one text part.
    pub fn text_cow(&self) -> Cow<'_, str> {
        match self {
            ToolOutputContent::Text(text) => Cow::Borrowed(text),
            ToolOutputContent::Parts(parts) => joined(parts),
        }
    }
}

/// A call of a custom (freeform) tool; `input` is free text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomToolCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub call_id: String,
    pub name: String,
    pub input: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
}

/// A reasoning item with its summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reasoning {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default)]
    pub summary: Vec<SummaryText>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ItemStatus>,
}

/// One `summary_text` part of a reasoning item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "summary_text")]
pub struct SummaryText {
    pub text: String,
}

/// A conversation item.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Message(Message),
    FunctionCall(FunctionCall),
    FunctionCallOutput(ToolCallOutput),
    CustomToolCall(CustomToolCall),
    CustomToolCallOutput(ToolCallOutput),
    Reasoning(Reasoning),
    /// `{type:"item_reference", id}`: an item to look up among stored or cached items.
    ItemReference {
        id: String,
    },
    /// Any other item type, kept verbatim.
    Unknown(Value),
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum KnownItem {
    Message(Message),
    FunctionCall(FunctionCall),
    FunctionCallOutput(ToolCallOutput),
    CustomToolCall(CustomToolCall),
    CustomToolCallOutput(ToolCallOutput),
    Reasoning(Reasoning),
    ItemReference { id: String },
}

/// [`KnownItem`] to serialize, borrowed: an item (a tool output of thousands of tokens) is not
/// copied to be written.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum KnownItemRef<'a> {
    Message(&'a Message),
    FunctionCall(&'a FunctionCall),
    FunctionCallOutput(&'a ToolCallOutput),
    CustomToolCall(&'a CustomToolCall),
    CustomToolCallOutput(&'a ToolCallOutput),
    Reasoning(&'a Reasoning),
    ItemReference { id: &'a str },
}

const KNOWN_ITEM_TYPES: &[&str] = &[
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "reasoning",
    "item_reference",
];

impl Item {
    /// An assistant message with one text part, as the server emits it.
    pub fn assistant_text(
        id: impl Into<String>,
        text: impl Into<String>,
        status: ItemStatus,
    ) -> Self {
        Item::Message(Message {
            id: Some(id.into()),
            role: Role::Assistant,
            content: MessageContent::Parts(vec![ContentPart::OutputText(OutputText::new(text))]),
            status: Some(status),
        })
    }

    /// A user message with plain text content.
    pub fn user_text(text: impl Into<String>) -> Self {
        Item::Message(Message {
            id: None,
            role: Role::User,
            content: MessageContent::Text(text.into()),
            status: None,
        })
    }

    /// The item's `id`, when it has one.
    pub fn id(&self) -> Option<&str> {
        match self {
            Item::Message(m) => m.id.as_deref(),
            Item::FunctionCall(c) => c.id.as_deref(),
            Item::FunctionCallOutput(o) | Item::CustomToolCallOutput(o) => o.id.as_deref(),
            Item::CustomToolCall(c) => c.id.as_deref(),
            Item::Reasoning(r) => r.id.as_deref(),
            Item::ItemReference { id } => Some(id),
            Item::Unknown(value) => value.get("id").and_then(Value::as_str),
        }
    }

    /// The wire name of the item's type.
    pub fn type_name(&self) -> &str {
        match self {
            Item::Message(_) => "message",
            Item::FunctionCall(_) => "function_call",
            Item::FunctionCallOutput(_) => "function_call_output",
            Item::CustomToolCall(_) => "custom_tool_call",
            Item::CustomToolCallOutput(_) => "custom_tool_call_output",
            Item::Reasoning(_) => "reasoning",
            Item::ItemReference { .. } => "item_reference",
            Item::Unknown(value) => value
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("unknown"),
        }
    }
}

impl Serialize for Item {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let known = match self {
            Item::Message(m) => KnownItemRef::Message(m),
            Item::FunctionCall(c) => KnownItemRef::FunctionCall(c),
            Item::FunctionCallOutput(o) => KnownItemRef::FunctionCallOutput(o),
            Item::CustomToolCall(c) => KnownItemRef::CustomToolCall(c),
            Item::CustomToolCallOutput(o) => KnownItemRef::CustomToolCallOutput(o),
            Item::Reasoning(r) => KnownItemRef::Reasoning(r),
            Item::ItemReference { id } => KnownItemRef::ItemReference { id },
            Item::Unknown(value) => return value.serialize(serializer),
        };
        known.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        // A message without `type` is recognised by its `role` (the AI SDK sends those).
        let default_tag = value
            .as_object()
            .filter(|o| o.contains_key("role"))
            .map(|_| "message");
        Ok(match decode_tagged(value, KNOWN_ITEM_TYPES, default_tag)? {
            Tagged::Known(known) => match known {
                KnownItem::Message(m) => Item::Message(m),
                KnownItem::FunctionCall(c) => Item::FunctionCall(c),
                KnownItem::FunctionCallOutput(o) => Item::FunctionCallOutput(o),
                KnownItem::CustomToolCall(c) => Item::CustomToolCall(c),
                KnownItem::CustomToolCallOutput(o) => Item::CustomToolCallOutput(o),
                KnownItem::Reasoning(r) => Item::Reasoning(r),
                KnownItem::ItemReference { id } => Item::ItemReference { id },
            },
            Tagged::Unknown(value) => Item::Unknown(value),
        })
    }
}

/// Free-form key/value metadata attached to a request or response.
pub type Metadata = Map<String, Value>;
