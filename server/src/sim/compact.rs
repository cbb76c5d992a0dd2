//! The simulator's compaction (`POST /v1/responses/compact`): the conversation's user messages,
//! in order, and a summary of everything else — one line per compacted item (who spoke, the
//! start of what they said), the latest 64 of them. It stands in for the model-written summary
//! of the reference service; what matters here is that the conversation really shrinks, and
//! that the model still reads what the items were about.

use tether_protocol::{Item, Role};

use crate::compaction::{Summary, compaction, expanded};
use crate::items;

/// How many characters of an item's text its summary line keeps.
const LINE_CHARS: usize = 100;
/// How many compacted items the summary names (the latest ones); the rest are counted.
const LINES: usize = 64;

/// Compacts `conversation`: its user messages, in order, and the summary of the rest (`None`
/// when there is nothing but user messages).
pub fn compact(conversation: &[Item]) -> (Vec<Item>, Option<Summary>) {
    let (users, rest): (Vec<&Item>, Vec<&Item>) = conversation
        .iter()
        .partition(|item| matches!(item, Item::Message(m) if m.role == Role::User));
    let users = users.into_iter().cloned().collect();
    if rest.is_empty() {
        return (users, None);
    }
    let skipped = rest.len().saturating_sub(LINES);
    let mut text = format!(
        "Summary of the conversation so far ({} items compacted):",
        rest.len()
    );
    if skipped > 0 {
        text.push_str(&format!("\n- ({skipped} earlier items)"));
    }
    for item in &rest[skipped..] {
        // An earlier compaction's summary is carried over, not summarized again.
        if let Some(earlier) = compaction(item).and_then(expanded) {
            text.push('\n');
            text.push_str(&earlier);
            continue;
        }
        let body = items::body(item);
        let line: String = body.chars().take(LINE_CHARS).collect();
        let more = if body.chars().count() > LINE_CHARS {
            "…"
        } else {
            ""
        };
        text.push_str(&format!(
            "\n- {}: {}{more}",
            items::header(item),
            line.replace('\n', " ")
        ));
    }
    let summary = Summary {
        items: rest.len(),
        text,
    };
    (users, Some(summary))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn conversation() -> Vec<Item> {
        serde_json::from_value(json!([
            {"type": "message", "role": "user", "content": "fix the bug"},
            {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{\"cmd\":\"cargo test\"}"},
            {"type": "function_call_output", "call_id": "c1", "output": "1 failed\nat src/lib.rs:3"},
            {"type": "message", "role": "assistant", "content": "The test fails at line 3."},
            {"type": "message", "role": "user", "content": "go on"}
        ]))
        .unwrap()
    }

    #[test]
    fn a_conversation_becomes_its_user_messages_and_a_summary() {
        let (users, summary) = compact(&conversation());
        assert_eq!(users.len(), 2);
        let summary = summary.unwrap();
        assert_eq!(summary.items, 3);
        assert!(
            summary.text.contains("assistant to=functions.shell"),
            "{}",
            summary.text
        );
        assert!(
            summary.text.contains("1 failed at src/lib.rs:3"),
            "{}",
            summary.text
        );
        let (_, none) = compact(&users);
        assert!(none.is_none());
    }
}
