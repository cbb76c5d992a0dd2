//! What a conversation item says, as text — the one projection every reader shares: the prompt
//! renders each item as a framed block of its [`header`] and [`body`], the classifier scans the
//! body, the item size limit measures it, and the simulator reads tool outputs and hashes the
//! conversation through it.

use std::borrow::Cow;

use tether_protocol::{Item, Role};

/// Who speaks and how, as the rendered block's header: `user`, `assistant to=functions.shell`,
/// `tool call_id=call_1`, …
pub fn header(item: &Item) -> Cow<'_, str> {
    match item {
        Item::Message(m) => Cow::Borrowed(role_name(m.role)),
        Item::FunctionCall(c) => Cow::Owned(format!("assistant to=functions.{}", c.name)),
        Item::CustomToolCall(c) => Cow::Owned(format!("assistant to=custom.{}", c.name)),
        Item::FunctionCallOutput(o) | Item::CustomToolCallOutput(o) => {
            Cow::Owned(format!("tool call_id={}", o.call_id))
        }
        Item::Reasoning(_) => Cow::Borrowed("assistant reasoning"),
        Item::ItemReference { .. } => Cow::Borrowed("reference"),
        Item::Unknown(value) => {
            Cow::Borrowed(value.get("type").and_then(|t| t.as_str()).unwrap_or("item"))
        }
    }
}

/// The item's text: a message's text (parts joined), a call's arguments or input, a tool's
/// output, a reasoning summary, the summary a compaction item stands for; an item type Tether
/// does not model is its JSON.
pub fn body(item: &Item) -> Cow<'_, str> {
    match item {
        Item::Message(m) => m.content.text_cow(),
        Item::FunctionCall(c) => Cow::Borrowed(&c.arguments),
        Item::CustomToolCall(c) => Cow::Borrowed(&c.input),
        Item::FunctionCallOutput(o) | Item::CustomToolCallOutput(o) => o.output.text_cow(),
        Item::Reasoning(r) => Cow::Owned(r.summary.iter().map(|s| s.text.as_str()).collect()),
        Item::ItemReference { id } => Cow::Borrowed(id),
        // A compaction item reads as the summary it stands for.
        Item::Unknown(value) => match crate::compaction::expanded(value) {
            Some(summary) => Cow::Owned(summary),
            None => Cow::Owned(value.to_string()),
        },
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::System => "system",
        Role::Developer => "developer",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_item_has_a_header_and_a_body() {
        let items: Vec<Item> = serde_json::from_value(json!([
            {"type": "message", "role": "developer", "content": [
                {"type": "input_text", "text": "Be "}, {"type": "input_text", "text": "brief."}]},
            {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{\"cmd\":\"ls\"}"},
            {"type": "function_call_output", "call_id": "c1", "output": "a.txt"},
            {"type": "web_search_call", "id": "ws_1"}
        ]))
        .unwrap();
        let shown: Vec<(String, String)> = items
            .iter()
            .map(|item| (header(item).into_owned(), body(item).into_owned()))
            .collect();
        assert_eq!(shown[0], ("developer".into(), "Be brief.".into()));
        assert_eq!(
            shown[1],
            (
                "assistant to=functions.shell".into(),
                "{\"cmd\":\"ls\"}".into()
            )
        );
        assert_eq!(shown[2], ("tool call_id=c1".into(), "a.txt".into()));
        assert_eq!(shown[3].0, "web_search_call");
        assert!(shown[3].1.contains("ws_1"));
    }
}
