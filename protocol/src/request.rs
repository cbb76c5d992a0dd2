//! The body of `POST /v1/responses` and, flat next to `type`, of a WebSocket `response.create`.
//!
//! Every field but `model` is optional, and an explicit `null` counts as absent. A field this
//! type does not model is not an error here: [`crate::decode_request`] names it in
//! [`ResponseCreate::unknown_fields`], and the server decides what to refuse. Configuration objects the server only echoes back (`text`,
//! `reasoning`, `tool_choice`, …) stay as JSON values so that no client setting is lost.

use std::sync::Arc;

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::items::{Item, Metadata};
use crate::lenient::null_as_default;
use crate::tools::Tool;

/// A request to create a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseCreate {
    pub model: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub input: Input,
    #[serde(
        default,
        deserialize_with = "shared_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub instructions: Option<Arc<str>>,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tools: Vec<Tool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<String>,
    /// Whether to persist the response; the API's default is `true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    /// Ignored on WebSocket, where every response streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tool_calls: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_retention: Option<String>,
    /// `{mode: implicit|explicit, ttl: 30m|12h, prewarm, comparison_response_id}`: the engine's
    /// prompt cache with breakpoints (see the server's simulator docs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_options: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safety_identifier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_management: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<bool>,
    /// WebSocket only: `false` is a warm-up that prepares state and samples nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate: Option<bool>,
    /// `{enabled: true}` (multi-agent beta): over WebSocket the response waits at client tool
    /// calls for `response.inject`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_agent: Option<Value>,
    /// WebSocket only: the lane this response runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_id: Option<String>,
    /// The conversation the response belongs to: `"conv_…"` or `{"id": "conv_…"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<ConversationRef>,
    /// A stored prompt template (`{id, version?, variables?}`): known, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<Value>,
    /// Moderation of input and output (`{model, policy?}`): known, kept as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moderation: Option<Value>,
    /// The top-level fields of the decoded body that this type does not model, by name
    /// ([`crate::decode_request`] fills it in; never serialized).
    #[serde(skip)]
    pub unknown_fields: Vec<String>,
}

/// `conversation` on a request: a conversation id, sent as the id itself or as `{"id": …}`;
/// serialized as the id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationRef {
    pub id: String,
}

impl Serialize for ConversationRef {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.id)
    }
}

impl<'de> Deserialize<'de> for ConversationRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Shape {
            Id(String),
            Object { id: String },
        }
        match Shape::deserialize(deserializer) {
            Ok(Shape::Id(id) | Shape::Object { id }) => Ok(ConversationRef { id }),
            Err(_) => Err(serde::de::Error::custom(
                "expected a conversation id or an object {\"id\": …}",
            )),
        }
    }
}

impl ResponseCreate {
    /// A minimal request: a model and a text input.
    pub fn new(model: impl Into<String>, input: impl Into<String>) -> Self {
        ResponseCreate {
            model: model.into(),
            input: Input::Text(input.into()),
            instructions: None,
            tools: Vec::new(),
            tool_choice: None,
            parallel_tool_calls: None,
            previous_response_id: None,
            store: None,
            stream: None,
            max_output_tokens: None,
            max_tool_calls: None,
            temperature: None,
            top_p: None,
            top_logprobs: None,
            metadata: None,
            text: None,
            reasoning: None,
            truncation: None,
            include: None,
            prompt_cache_key: None,
            prompt_cache_retention: None,
            prompt_cache_options: None,
            safety_identifier: None,
            service_tier: None,
            user: None,
            stream_options: None,
            context_management: None,
            client_metadata: None,
            background: None,
            generate: None,
            multi_agent: None,
            stream_id: None,
            conversation: None,
            prompt: None,
            moderation: None,
            unknown_fields: Vec::new(),
        }
    }

    /// Every top-level field this type models, as the wire names it (`type` is the frame's).
    pub const FIELDS: &'static [&'static str] = &[
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "previous_response_id",
        "store",
        "stream",
        "max_output_tokens",
        "max_tool_calls",
        "temperature",
        "top_p",
        "top_logprobs",
        "metadata",
        "text",
        "reasoning",
        "truncation",
        "include",
        "prompt_cache_key",
        "prompt_cache_retention",
        "prompt_cache_options",
        "safety_identifier",
        "service_tier",
        "user",
        "stream_options",
        "context_management",
        "client_metadata",
        "background",
        "generate",
        "multi_agent",
        "stream_id",
        "conversation",
        "prompt",
        "moderation",
    ];

    /// Whether the response is persisted (`store` defaults to true).
    pub fn stores(&self) -> bool {
        self.store.unwrap_or(true)
    }

    /// Whether the model samples output (`generate` defaults to true).
    pub fn generates(&self) -> bool {
        self.generate.unwrap_or(true)
    }
}

/// A request's `input`: a string (one user message) or a list of items.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Input {
    Text(String),
    Items(Vec<Item>),
}

impl Default for Input {
    fn default() -> Self {
        Input::Items(Vec::new())
    }
}

impl Input {
    /// The input as items: a string becomes one user message.
    pub fn into_items(self) -> Vec<Item> {
        match self {
            Input::Text(text) => vec![Item::user_text(text)],
            Input::Items(items) => items,
        }
    }
}

/// Decodes `input` with a visitor rather than `#[serde(untagged)]`, so that an error inside an
/// item keeps its path (`input[2].content`) instead of "did not match any variant".
impl<'de> Deserialize<'de> for Input {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InputVisitor;

        impl<'de> Visitor<'de> for InputVisitor {
            type Value = Input;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or an array of items")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Input, E> {
                Ok(Input::Text(text.to_string()))
            }

            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Input, E> {
                Ok(Input::Text(text))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Input, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(item) = seq.next_element::<Item>()? {
                    items.push(item);
                }
                Ok(Input::Items(items))
            }
        }

        deserializer.deserialize_any(InputVisitor)
    }
}

/// Optional text read straight into a shared string: serde's own `Arc<str>` reads a `String`
/// and copies it again, and instructions are often kilobytes (12,000 instructions of a turn's
/// decoding for ~12 KB). The same values and errors ("expected a string") as serde's.
fn shared_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Arc<str>>, D::Error> {
    struct Text;
    impl<'de> Visitor<'de> for Text {
        type Value = Option<Arc<str>>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a string")
        }

        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, inner: D) -> Result<Self::Value, D::Error> {
            inner.deserialize_str(self)
        }

        fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
            Ok(Some(Arc::from(text)))
        }
    }
    deserializer.deserialize_option(Text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Instructions read as serde's `Option<Arc<str>>` would, from text and from a JSON tree.
    #[test]
    fn instructions_are_read_as_before() {
        let read = |instructions: &str| {
            let text = format!(r#"{{"model":"m","instructions":{instructions}}}"#);
            let direct = serde_json::from_str::<ResponseCreate>(&text).map(|r| r.instructions);
            let tree = serde_json::from_str::<Value>(&text)
                .and_then(serde_json::from_value::<ResponseCreate>)
                .map(|r| r.instructions);
            match (&direct, &tree) {
                (Ok(direct), Ok(tree)) => assert_eq!(direct, tree, "{instructions}"),
                // The same error; read from text it also says where.
                (Err(direct), Err(tree)) => {
                    assert!(
                        direct.to_string().starts_with(&tree.to_string()),
                        "{instructions}"
                    )
                }
                _ => panic!("{instructions}: {direct:?} but {tree:?}"),
            }
            direct.map_err(|e| e.to_string())
        };
        assert_eq!(read(r#""Be brief.""#), Ok(Some("Be brief.".into())));
        assert_eq!(
            read(r#""line\none \"quoted\" \u00e9""#),
            Ok(Some("line\none \"quoted\" é".into()))
        );
        assert_eq!(read("null"), Ok(None));
        let missing = serde_json::from_str::<ResponseCreate>(r#"{"model":"m"}"#).unwrap();
        assert_eq!(missing.instructions, None);
        let wrong = read("5").unwrap_err();
        assert!(
            wrong.starts_with("invalid type: integer `5`, expected a string"),
            "{wrong}"
        );
    }
}
