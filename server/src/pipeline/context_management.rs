//! `context_management: [{type: "compaction", compact_threshold: N}]` (docs/protocol.md §10):
//! when the rendered context of a request passes `N` tokens, the server compacts it before the
//! model reads it, as `POST /v1/responses/compact` does — the conversation's user messages, then
//! one sealed `compaction` item standing for the rest (`crate::sim::compact` writes the summary,
//! `crate::compaction` seals it) — and the response's output begins with that `compaction`
//! item, so a client chaining statelessly carries it forward.
//!
//! The check reads the length of the prompt the render stage produced — on a WebSocket cache hit
//! the cached token buffer extended with the new items — so it costs nothing more than the turn
//! already did; only a turn that compacts renders its (now small) context again.

use serde_json::Value;
use tether_protocol::{Item, ResponseCreate};

use crate::AppState;
use crate::compaction;
use crate::error::ApiFailure;
use crate::ids::new_id;
use crate::sim::compact;

/// The smallest `compact_threshold` the reference accepts.
pub const MIN_THRESHOLD: u64 = 1000;

/// The compaction threshold `request` asks for, if any: a list of at most one
/// `{type: "compaction", compact_threshold ≥ 1000}`; anything else is refused, naming it.
pub fn threshold(request: &ResponseCreate) -> Result<Option<u64>, ApiFailure> {
    let Some(entries) = &request.context_management else {
        return Ok(None);
    };
    let invalid = |param: &str, code: &str, message: String| {
        ApiFailure::bad_request(Some(code), message, Some(param))
    };
    let Some(entries) = entries.as_array() else {
        return Err(invalid(
            "context_management",
            "invalid_type",
            "Invalid type for 'context_management': expected an array of objects.".into(),
        ));
    };
    let mut threshold = None;
    for (index, entry) in entries.iter().enumerate() {
        let at = |field: &str| format!("context_management[{index}]{field}");
        let Some(entry) = entry.as_object() else {
            return Err(invalid(
                &at(""),
                "invalid_type",
                format!("Invalid type for '{}': expected an object.", at("")),
            ));
        };
        if let Some(unknown) = entry
            .keys()
            .find(|key| !matches!(key.as_str(), "type" | "compact_threshold"))
        {
            let param = at(&format!(".{unknown}"));
            return Err(invalid(
                &param,
                "unknown_parameter",
                format!("Unknown parameter: '{param}'."),
            ));
        }
        match entry.get("type").and_then(Value::as_str) {
            Some("compaction") => {}
            other => {
                return Err(invalid(
                    &at(".type"),
                    "invalid_value",
                    format!(
                        "Invalid value: {}. Supported values are: 'compaction'.",
                        other.map_or("none".to_string(), |t| format!("'{t}'"))
                    ),
                ));
            }
        }
        if threshold.is_some() {
            return Err(invalid(
                &at(""),
                "invalid_value",
                "'context_management' takes one 'compaction' entry.".into(),
            ));
        }
        let value = match entry.get("compact_threshold") {
            Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or_default(),
            None | Some(Value::Null) => {
                return Err(invalid(
                    &at(".compact_threshold"),
                    "missing_required_parameter",
                    format!(
                        "Missing required parameter: '{}': this server has no context window \
                         to derive a threshold from.",
                        at(".compact_threshold")
                    ),
                ));
            }
            Some(_) => {
                return Err(invalid(
                    &at(".compact_threshold"),
                    "invalid_type",
                    format!(
                        "Invalid type for '{}': expected an integer.",
                        at(".compact_threshold")
                    ),
                ));
            }
        };
        if value < MIN_THRESHOLD {
            return Err(invalid(
                &at(".compact_threshold"),
                "integer_below_min_value",
                format!(
                    "Invalid '{}': integer below minimum value. Expected a value >= \
                     {MIN_THRESHOLD}, but got {value} instead.",
                    at(".compact_threshold")
                ),
            ));
        }
        threshold = Some(value);
    }
    Ok(threshold)
}

/// `conversation` compacted for `project`: its user messages, then the sealed `compaction` item
/// for everything else; `None` when there is nothing but user messages to compact.
pub fn compact(
    state: &AppState,
    project: &str,
    conversation: &[Item],
) -> Option<(Vec<Item>, Item)> {
    let (users, summary) = compact::compact(conversation);
    let summary = summary?;
    let content = state.compaction.seal(project, &summary);
    let item: Item = serde_json::from_value(compaction::item(new_id("cmp"), content))
        .expect("a compaction item decodes");
    Some((users, item))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(value: Value) -> ResponseCreate {
        let mut request = ResponseCreate::new("m", "hi");
        request.context_management = Some(value);
        request
    }

    fn param(value: Value) -> Option<String> {
        threshold(&with(value)).err().and_then(|f| f.error.param)
    }

    #[test]
    fn the_threshold_is_read_and_checked() {
        assert_eq!(threshold(&ResponseCreate::new("m", "hi")).unwrap(), None);
        let ok = json!([{"type": "compaction", "compact_threshold": 2000}]);
        assert_eq!(threshold(&with(ok)).unwrap(), Some(2000));
        assert_eq!(
            param(json!([{"type": "compaction", "compact_threshold": 999}])).as_deref(),
            Some("context_management[0].compact_threshold")
        );
        assert_eq!(
            param(json!([{"type": "compaction"}])).as_deref(),
            Some("context_management[0].compact_threshold")
        );
        assert_eq!(
            param(json!([{"type": "truncate", "compact_threshold": 5000}])).as_deref(),
            Some("context_management[0].type")
        );
        assert_eq!(
            param(json!([{"type": "compaction", "compact_threshold": 5000, "x": 1}])).as_deref(),
            Some("context_management[0].x")
        );
        assert_eq!(
            param(json!({"type": "compaction"})).as_deref(),
            Some("context_management")
        );
    }
}
