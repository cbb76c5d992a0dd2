//! Rendering: the conversation as the model sees it, tokenized with the `o200k_base` BPE (the
//! vocabulary ships inside the `bpe-openai` crate and loads offline).
//!
//! The prompt is a preamble — instructions and tool definitions — followed by one framed block
//! per item (`<|start|>header<|message|>body<|end|>`). Items render independently, so a
//! continuation appends the new items' tokens to the cached buffer and gets exactly the tokens a
//! full render would produce. `usage.input_tokens` is the length of this buffer.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use tether_protocol::{Item, Tool};

/// The tokenizer every stage shares.
pub fn tokenizer() -> &'static bpe_openai::Tokenizer {
    bpe_openai::o200k_base()
}

/// A rendered prompt: the preamble's tokens and the conversation's tokens.
#[derive(Debug, Clone, Default)]
pub struct RenderedPrompt {
    /// Identifies the instructions and tools the preamble was rendered from.
    pub preamble_key: u64,
    pub preamble: Arc<Vec<u32>>,
    pub items: Arc<Vec<u32>>,
}

impl RenderedPrompt {
    /// The prompt length in tokens.
    pub fn len(&self) -> usize {
        self.preamble.len() + self.items.len()
    }

    /// Whether the prompt is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Renders a whole prompt from nothing. `tools_key` is [`tools_key`](super::validate::tools_key)
    /// of `tools`, computed once per request.
    pub fn full(
        instructions: Option<&str>,
        tools: &[Tool],
        tools_key: &str,
        items: &[Item],
    ) -> Self {
        let mut tokens = Vec::new();
        render_items(items, &mut tokens);
        RenderedPrompt {
            preamble_key: preamble_key(instructions, tools_key),
            preamble: Arc::new(render_preamble(instructions, tools)),
            items: Arc::new(tokens),
        }
    }

    /// Extends this prompt with `new_items`, re-rendering the preamble only if the instructions
    /// or tools changed. Returns the new prompt and how many of its tokens were reused. The token
    /// buffer is extended in place when this prompt is its only owner (a cache entry handed
    /// over), so a continuation never copies the history's tokens.
    pub fn extend(
        self,
        instructions: Option<&str>,
        tools: &[Tool],
        tools_key: &str,
        new_items: &[Item],
    ) -> (Self, usize) {
        let key = preamble_key(instructions, tools_key);
        let (preamble, reused_preamble) = if key == self.preamble_key {
            let reused = self.preamble.len();
            (self.preamble, reused)
        } else {
            (Arc::new(render_preamble(instructions, tools)), 0)
        };
        let reused = reused_preamble + self.items.len();
        let mut items = self.items;
        render_items(new_items, Arc::make_mut(&mut items));
        (
            RenderedPrompt {
                preamble_key: key,
                preamble,
                items,
            },
            reused,
        )
    }

    /// This prompt with `items` (a response's output) appended, in place when unshared.
    pub fn with_items(mut self, items: &[Item]) -> Self {
        render_items(items, Arc::make_mut(&mut self.items));
        self
    }
}

fn preamble_key(instructions: Option<&str>, tools_key: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    instructions.hash(&mut hasher);
    tools_key.hash(&mut hasher);
    hasher.finish()
}

fn render_preamble(instructions: Option<&str>, tools: &[Tool]) -> Vec<u32> {
    let mut text = String::new();
    if let Some(instructions) = instructions {
        frame(&mut text, "system", instructions);
    }
    if !tools.is_empty() {
        let mut body = String::from("# Tools\n");
        for tool in tools {
            body.push_str(&serde_json::to_string(tool).unwrap_or_default());
            body.push('\n');
        }
        frame(&mut text, "developer", &body);
    }
    tokenizer().encode(text.as_str())
}

/// Appends the tokens of `items`, one framed block each.
pub fn render_items(items: &[Item], out: &mut Vec<u32>) {
    let mut text = String::new();
    for item in items {
        text.clear();
        let (header, body) = header_and_body(item);
        frame(&mut text, &header, &body);
        out.extend(tokenizer().encode(text.as_str()));
    }
}

fn frame(text: &mut String, header: &str, body: &str) {
    text.push_str("<|start|>");
    text.push_str(header);
    text.push_str("<|message|>");
    text.push_str(body);
    text.push_str("<|end|>");
}

/// The header and body an item renders to.
pub fn header_and_body(item: &Item) -> (String, String) {
    match item {
        Item::Message(m) => (role_name(m.role).to_string(), m.content.text()),
        Item::FunctionCall(c) => (
            format!("assistant to=functions.{}", c.name),
            c.arguments.clone(),
        ),
        Item::CustomToolCall(c) => (format!("assistant to=custom.{}", c.name), c.input.clone()),
        Item::FunctionCallOutput(o) | Item::CustomToolCallOutput(o) => {
            (format!("tool call_id={}", o.call_id), o.output.text())
        }
        Item::Reasoning(r) => (
            "assistant reasoning".to_string(),
            r.summary.iter().map(|s| s.text.as_str()).collect(),
        ),
        Item::ItemReference { id } => ("reference".to_string(), id.clone()),
        Item::Unknown(value) => (
            value
                .get("type")
                .and_then(|t| t.as_str())
                .unwrap_or("item")
                .to_string(),
            value.to_string(),
        ),
    }
}

fn role_name(role: tether_protocol::Role) -> &'static str {
    match role {
        tether_protocol::Role::User => "user",
        tether_protocol::Role::Assistant => "assistant",
        tether_protocol::Role::System => "system",
        tether_protocol::Role::Developer => "developer",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_rendering_equals_a_full_render() {
        let tools: Vec<Tool> =
            serde_json::from_value(serde_json::json!([{"type": "function", "name": "shell"}]))
                .unwrap();
        let first = vec![
            Item::user_text("Fix the failing test, please."),
            Item::assistant_text("m1", "On it.", tether_protocol::ItemStatus::Completed),
        ];
        let second = vec![Item::user_text("Also update the README — thanks!")];
        let key = crate::stages::validate::tools_key(&tools);
        let base = RenderedPrompt::full(Some("Be brief."), &tools, &key, &first);
        let (extended, reused) = base
            .clone()
            .extend(Some("Be brief."), &tools, &key, &second);
        let all: Vec<Item> = first.iter().chain(&second).cloned().collect();
        let full = RenderedPrompt::full(Some("Be brief."), &tools, &key, &all);
        assert_eq!(extended.preamble, full.preamble);
        assert_eq!(extended.items, full.items);
        assert_eq!(reused, base.len());
        assert!(full.len() > 30);
        // Changed tools: the preamble is rendered anew and not counted as reused.
        let (changed, reused) = base.clone().extend(Some("Be brief."), &[], "[]", &second);
        assert_eq!(reused, base.items.len());
        assert!(changed.preamble.len() < base.preamble.len());
    }

    #[test]
    fn tokens_are_real_bpe_tokens() {
        let tokens = tokenizer().encode("Hello, world!");
        assert_eq!(
            tokenizer().decode(&tokens).as_deref(),
            Some("Hello, world!")
        );
        assert_eq!(tokens.len(), 4);
    }
}
