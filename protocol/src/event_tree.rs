//! The general path of [`ServerEvent::from_json`]: an event read as a JSON tree and taken apart
//! by its `type`, a line per variant, the nested types (a response, an item, a part) by their
//! own derives.
//!
//! Why not serde's derive of [`ServerEvent`] (the server's tests and tools still use it): its
//! flattened, `type`-tagged enum makes serde buffer every field into owned values and keep a
//! visitor for each of its thirty-odd variants over that buffer — about 60 KB of the
//! playground's wasm for one function. The tree does the buffering once. `tests` hold it to the
//! derive on an event of every kind; a frame the derive refuses is refused, with the event and
//! the field named. One difference: a field given twice counts once, its last value (the
//! derive refuses it; no server sends one).

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::events::{ServerEvent, StreamEvent};

/// A frame's fields, each taken once by the variant its `type` names.
struct Fields(Map<String, Value>);

impl Fields {
    fn value(&mut self, name: &str) -> Result<Value, String> {
        self.0
            .remove(name)
            .ok_or_else(|| format!("missing field `{name}`"))
    }

    fn string(&mut self, name: &str) -> Result<String, String> {
        match self.value(name)? {
            Value::String(text) => Ok(text),
            other => Err(wrong(name, &other, "a string")),
        }
    }

    /// A string that may be absent or `null`.
    fn maybe_string(&mut self, name: &str) -> Result<Option<String>, String> {
        match self.0.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(wrong(name, &other, "a string")),
        }
    }

    /// A non-negative integer that fits the page's `usize`.
    fn index(&mut self, name: &str) -> Result<usize, String> {
        let value = self.value(name)?;
        value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| wrong(name, &value, "a non-negative integer"))
    }

    /// A list that may be absent (`#[serde(default)]` in the protocol's types).
    fn list(&mut self, name: &str) -> Result<Vec<Value>, String> {
        match self.0.remove(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(wrong(name, &other, "a list")),
        }
    }

    /// A value of one of the protocol's types (a response, an item, a part), by its own derive.
    fn typed<T: DeserializeOwned>(&mut self, name: &str) -> Result<T, String> {
        serde_json::from_value(self.value(name)?).map_err(|e| format!("{name}: {e}"))
    }
}

/// `name` is not what the event needs.
fn wrong(name: &str, value: &Value, expected: &str) -> String {
    let found = match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    };
    format!("{name}: expected {expected}, found {found}")
}

/// The event in a frame's JSON tree: the fields every event may carry, then the variant its
/// `type` names (an unknown type is [`StreamEvent::Unknown`], as the derive has it).
pub(crate) fn from_tree(tree: Value) -> Result<ServerEvent, String> {
    let Value::Object(map) = tree else {
        return Err(wrong("the event", &tree, "an object"));
    };
    let mut f = Fields(map);
    let sequence_number = match f.0.remove("sequence_number") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .ok_or_else(|| wrong("sequence_number", &value, "a non-negative integer"))?,
        ),
    };
    let stream_id = f.maybe_string("stream_id")?;
    let tether_timing = f.0.remove("tether_timing").filter(|v| !v.is_null());
    let kind = f.string("type")?;
    let event = variant(&kind, &mut f).map_err(|e| format!("{kind}: {e}"))?;
    Ok(ServerEvent {
        event,
        sequence_number,
        stream_id,
        tether_timing,
    })
}

/// The variant of `kind`, from its fields.
fn variant(kind: &str, f: &mut Fields) -> Result<StreamEvent, String> {
    use StreamEvent as E;
    Ok(match kind {
        "response.created" => E::Created {
            response: f.typed("response")?,
        },
        "response.queued" => E::Queued {
            response: f.typed("response")?,
        },
        "response.in_progress" => E::InProgress {
            response: f.typed("response")?,
        },
        "response.completed" => E::Completed {
            response: f.typed("response")?,
        },
        "response.failed" => E::Failed {
            response: f.typed("response")?,
        },
        "response.incomplete" => E::Incomplete {
            response: f.typed("response")?,
        },
        "response.done" => E::Done {
            response: f.typed("response")?,
        },
        "response.steer.accepted" => E::SteerAccepted {
            steer: f.typed("steer")?,
        },
        "response.steer.pending" => E::SteerPending {
            reason: f.string("reason")?,
            required_input: f.typed("required_input")?,
            steer: f.typed("steer")?,
        },
        "response.steer.failed" => E::SteerFailed {
            error: f.typed("error")?,
            steer: f.typed("steer")?,
        },
        "response.inject.created" => E::InjectCreated {
            response_id: f.string("response_id")?,
        },
        "response.inject.failed" => E::InjectFailed {
            error: f.typed("error")?,
            input: f.typed("input")?,
            response_id: f.string("response_id")?,
        },
        "response.output_item.added" => E::OutputItemAdded {
            output_index: f.index("output_index")?,
            item: f.typed("item")?,
        },
        "response.output_item.done" => E::OutputItemDone {
            output_index: f.index("output_index")?,
            item: f.typed("item")?,
        },
        "response.content_part.added" => E::ContentPartAdded {
            item_id: f.string("item_id")?,
            output_index: f.index("output_index")?,
            content_index: f.index("content_index")?,
            part: f.typed("part")?,
        },
        "response.content_part.done" => E::ContentPartDone {
            item_id: f.string("item_id")?,
            output_index: f.index("output_index")?,
            content_index: f.index("content_index")?,
            part: f.typed("part")?,
        },
        "response.output_text.delta" => E::OutputTextDelta {
            item_id: f.string("item_id")?,
            output_index: f.index("output_index")?,
            content_index: f.index("content_index")?,
            delta: f.string("delta")?,
            logprobs: f.list("logprobs")?,
        },
        "response.output_text.done" => E::OutputTextDone {
            item_id: f.string("item_id")?,
            output_index: f.index("output_index")?,
            content_index: f.index("content_index")?,
            text: f.string("text")?,
            logprobs: f.list("logprobs")?,
        },
        "response.function_call_arguments.delta" => E::FunctionCallArgumentsDelta {
            item_id: f.string("item_id")?,
            output_index: f.index("output_index")?,
            delta: f.string("delta")?,
        },
        "response.function_call_arguments.done" => E::FunctionCallArgumentsDone {
            item_id: f.string("item_id")?,
            output_index: f.index("output_index")?,
            name: f.maybe_string("name")?,
            arguments: f.string("arguments")?,
        },
        "response.custom_tool_call_input.delta" => E::CustomToolCallInputDelta {
            item_id: f.string("item_id")?,
            output_index: f.index("output_index")?,
            delta: f.string("delta")?,
        },
        "response.custom_tool_call_input.done" => E::CustomToolCallInputDone {
            item_id: f.string("item_id")?,
            output_index: f.index("output_index")?,
            input: f.string("input")?,
        },
        "response.reasoning_summary_part.added" => E::ReasoningSummaryPartAdded {
            item_id: f.string("item_id")?,
            output_index: f.index("output_index")?,
            summary_index: f.index("summary_index")?,
            part: f.typed("part")?,
        },
        "response.reasoning_summary_part.done" => E::ReasoningSummaryPartDone {
            item_id: f.string("item_id")?,
            output_index: f.index("output_index")?,
            summary_index: f.index("summary_index")?,
            part: f.typed("part")?,
        },
        "response.reasoning_summary_text.delta" => E::ReasoningSummaryTextDelta {
            item_id: f.string("item_id")?,
            output_index: f.index("output_index")?,
            summary_index: f.index("summary_index")?,
            delta: f.string("delta")?,
        },
        "response.reasoning_summary_text.done" => E::ReasoningSummaryTextDone {
            item_id: f.string("item_id")?,
            output_index: f.index("output_index")?,
            summary_index: f.index("summary_index")?,
            text: f.string("text")?,
        },
        // The error's own fields are the frame's (its shapes: `ErrorFrame`).
        "error" => E::Error(
            serde_json::from_value(Value::Object(std::mem::take(&mut f.0)))
                .map_err(|e| e.to_string())?,
        ),
        "responsesapi.websocket_timing" => E::WebsocketTiming {
            timing_metrics: f.value("timing_metrics")?,
        },
        _ => E::Unknown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ApiError, ErrorFrame, FailedSteer, Item, Response, ResponseCreate, Steer};

    /// serde's derive, which the tree is held to.
    fn derived(text: &str) -> Result<ServerEvent, String> {
        serde_json::from_str::<ServerEvent>(text).map_err(|e| e.to_string())
    }

    fn tree(text: &str) -> Result<ServerEvent, String> {
        from_tree(serde_json::from_str(text).map_err(|e| e.to_string())?)
    }

    #[test]
    fn every_event_of_every_kind_decodes_as_the_protocol_decodes_it() {
        let request = ResponseCreate::new("m", "x");
        let response = Response::in_progress("resp_e", 1, &request);
        let steer = Steer {
            id: "steer_1".into(),
            previous_response_id: "resp_e".into(),
        };
        let error = ApiError::invalid_request(Some("bad_input"), "bad", Some("input"));
        let events = [
            StreamEvent::Queued {
                response: response.clone(),
            },
            StreamEvent::Failed {
                response: response.clone(),
            },
            StreamEvent::Incomplete {
                response: response.clone(),
            },
            StreamEvent::Done { response },
            StreamEvent::SteerAccepted {
                steer: steer.clone(),
            },
            StreamEvent::SteerPending {
                reason: "waiting_for_required_input".into(),
                required_input: vec![serde_json::json!({"call_id": "c"})],
                steer,
            },
            StreamEvent::SteerFailed {
                error: error.clone(),
                steer: FailedSteer {
                    input: serde_json::json!("hi"),
                    previous_response_id: "resp_e".into(),
                    id: None,
                },
            },
            StreamEvent::InjectCreated {
                response_id: "resp_e".into(),
            },
            StreamEvent::InjectFailed {
                error: error.clone(),
                input: vec![Item::user_text("again")],
                response_id: "resp_e".into(),
            },
            StreamEvent::FunctionCallArgumentsDone {
                item_id: "fc".into(),
                output_index: 1,
                name: None,
                arguments: "{}".into(),
            },
            StreamEvent::CustomToolCallInputDone {
                item_id: "c".into(),
                output_index: 0,
                input: "patch".into(),
            },
            StreamEvent::ReasoningSummaryTextDelta {
                item_id: "r".into(),
                output_index: 0,
                summary_index: 0,
                delta: "think".into(),
            },
            StreamEvent::ReasoningSummaryTextDone {
                item_id: "r".into(),
                output_index: 0,
                summary_index: 1,
                text: "thought".into(),
            },
            StreamEvent::Error(ErrorFrame::websocket(400, error)),
            StreamEvent::WebsocketTiming {
                timing_metrics: serde_json::json!({"api_ms": 1.5}),
            },
        ];
        for (i, event) in events.into_iter().enumerate() {
            let wrapped = ServerEvent {
                event,
                sequence_number: Some(i as u64),
                stream_id: (i % 2 == 0).then(|| "lane".to_string()),
                tether_timing: (i == 3).then(|| serde_json::json!({"path": "ws_hit"})),
            };
            let text = wrapped.to_json();
            assert_eq!(tree(&text), derived(&text), "{text}");
            assert_eq!(tree(&text).unwrap(), wrapped, "{text}");
        }
        // An event type the protocol does not know is kept as unknown, not refused.
        let unknown = r#"{"type":"response.something_new","sequence_number":4,"x":[1]}"#;
        assert_eq!(tree(unknown), derived(unknown));
        assert_eq!(tree(unknown).unwrap().event, StreamEvent::Unknown);
        // The error shapes of SSE decode alike (flat fields, and nested).
        let flat = r#"{"type":"error","code":"rate_limit","message":"slow down","param":null}"#;
        assert_eq!(tree(flat), derived(flat));
        assert_eq!(
            tree(r#"[1]"#).unwrap_err(),
            "the event: expected an object, found a list"
        );
        assert_eq!(
            tree(r#"{"sequence_number":1}"#).unwrap_err(),
            "missing field `type`"
        );
    }

    #[test]
    fn an_error_names_the_event_and_the_field() {
        assert_eq!(
            tree(
                r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"x"}"#
            ),
            Err("response.output_text.delta: missing field `item_id`".into())
        );
        assert_eq!(
            tree(r#"{"type":"response.function_call_arguments.delta","item_id":"fc","output_index":"one","delta":"x"}"#),
            Err("response.function_call_arguments.delta: output_index: expected a non-negative integer, found a string".into())
        );
        assert_eq!(
            tree(r#"{"type":"response.created","response":{"id":3}}"#)
                .map(drop)
                .unwrap_err()[..26],
            *"response.created: response"
        );
    }
}
