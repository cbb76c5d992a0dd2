//! An upstream's Responses stream read as model events: `response.output_item.added` opens an
//! item (message, reasoning, function or custom tool call — its `call_id` kept), the text,
//! reasoning (summary or raw), arguments and custom input deltas stream into it,
//! `response.output_item.done` closes it (supplying what was not streamed as deltas), and
//! `response.completed` / `response.incomplete` / `response.failed` end the stream with the
//! engine's usage, its output limit or its error.

use serde_json::Value;

use crate::engine::chat::stream::preview;
use crate::engine::failure::UpstreamError;
use crate::engine::translate::{Decoder, Emitter};
use crate::model::{EngineUsage, ModelEvent};

/// Reads a Responses stream.
#[derive(Default)]
pub struct ResponsesDecoder {
    out: Emitter,
    /// The open item streamed deltas (so its `done` adds nothing).
    streamed_open: bool,
    /// An item of a type Tether does not stream (a hosted tool's call) is open: its events are
    /// skipped.
    skipping: bool,
    finished: bool,
    chunks: usize,
    items: usize,
}

fn usage(response: &Value) -> Option<EngineUsage> {
    let usage = response.get("usage").filter(|u| u.is_object())?;
    let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    Some(EngineUsage {
        input_tokens: number("/input_tokens"),
        cached_tokens: number("/input_tokens_details/cached_tokens"),
        output_tokens: number("/output_tokens"),
        reasoning_tokens: number("/output_tokens_details/reasoning_tokens"),
    })
}

impl ResponsesDecoder {
    fn added(&mut self, item: &Value) {
        self.streamed_open = false;
        self.items += 1;
        let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_string);
        let begin = match item.get("type").and_then(Value::as_str) {
            Some("message") => ModelEvent::BeginMessage,
            Some("reasoning") => ModelEvent::BeginReasoning,
            Some("function_call") => ModelEvent::BeginFunctionCall {
                name: text("name").unwrap_or_default(),
                namespace: text("namespace"),
                call_id: text("call_id"),
            },
            Some("custom_tool_call") => ModelEvent::BeginCustomToolCall {
                name: text("name").unwrap_or_default(),
                call_id: text("call_id"),
            },
            _ => {
                self.out.close();
                self.skipping = true;
                return;
            }
        };
        self.skipping = false;
        self.out.begin(begin);
    }

    fn delta(&mut self, kind: &str, delta: &str) {
        if self.skipping || !self.out.is_open() {
            return;
        }
        self.streamed_open = true;
        match kind {
            "reasoning" => {
                self.out
                    .push(ModelEvent::ReasoningDelta(crate::engine::translate::delta(
                        delta,
                    )))
            }
            "text" => self
                .out
                .push(ModelEvent::TextDelta(crate::engine::translate::delta(
                    delta,
                ))),
            _ => self.out.arguments(delta),
        }
    }

    /// An item's end; what it holds and no delta streamed is streamed now.
    fn done(&mut self, item: &Value) {
        if self.skipping {
            self.skipping = false;
            return;
        }
        if !self.streamed_open {
            match item.get("type").and_then(Value::as_str) {
                Some("message") => {
                    let text: String = item
                        .get("content")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|p| {
                            p.get("text")
                                .or_else(|| p.get("refusal"))
                                .and_then(Value::as_str)
                        })
                        .collect();
                    self.delta("text", &text);
                }
                Some("reasoning") => {
                    let parts = item
                        .get("summary")
                        .and_then(Value::as_array)
                        .filter(|s| !s.is_empty())
                        .or_else(|| item.get("content").and_then(Value::as_array));
                    let text: String = parts
                        .into_iter()
                        .flatten()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .collect();
                    self.delta("reasoning", &text);
                }
                Some("function_call") => {
                    let arguments = item.get("arguments").and_then(Value::as_str).unwrap_or("");
                    self.delta("arguments", arguments);
                }
                Some("custom_tool_call") => {
                    let input = item.get("input").and_then(Value::as_str).unwrap_or("");
                    self.delta("arguments", input);
                }
                _ => {}
            }
        }
        self.out.close();
        self.streamed_open = false;
    }
}

impl Decoder for ResponsesDecoder {
    fn data(&mut self, event: Option<&str>, data: &str) -> Result<Vec<ModelEvent>, UpstreamError> {
        self.chunks += 1;
        if data.trim() == "[DONE]" {
            return Ok(self.out.take());
        }
        let value: Value = serde_json::from_str(data).map_err(|e| {
            UpstreamError::Malformed(format!("an event is not JSON ({e}): {}", preview(data)))
        })?;
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .or(event)
            .unwrap_or("");
        let delta = value.get("delta").and_then(Value::as_str).unwrap_or("");
        match kind {
            "response.output_item.added" => {
                if let Some(item) = value.get("item") {
                    self.added(item);
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => self.delta("text", delta),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.delta("reasoning", delta)
            }
            "response.function_call_arguments.delta" | "response.custom_tool_call_input.delta" => {
                self.delta("arguments", delta)
            }
            "response.output_item.done" => {
                if let Some(item) = value.get("item") {
                    self.done(item);
                }
            }
            "response.completed" | "response.incomplete" => {
                self.out.close();
                let response = value.get("response").unwrap_or(&Value::Null);
                let reason = response
                    .pointer("/incomplete_details/reason")
                    .and_then(Value::as_str);
                if kind == "response.incomplete" && reason == Some("max_output_tokens") {
                    self.out.push(ModelEvent::CutShort);
                }
                if let Some(usage) = usage(response) {
                    self.out.push(ModelEvent::Usage(usage));
                }
                self.finished = true;
            }
            "response.failed" => {
                let error = value.pointer("/response/error").unwrap_or(&Value::Null);
                return Err(in_stream(error));
            }
            "error" => {
                let error = value.get("error").unwrap_or(&value);
                return Err(in_stream(error));
            }
            _ => {}
        }
        Ok(self.out.take())
    }

    fn end(&mut self) -> Result<Vec<ModelEvent>, UpstreamError> {
        if !self.finished {
            return Err(UpstreamError::Cut {
                chunks: self.chunks,
                reason: "the stream ended before response.completed".into(),
            });
        }
        Ok(self.out.take())
    }

    fn finished(&self) -> bool {
        self.finished
    }

    fn streamed(&self) -> bool {
        self.out.any()
    }
}

fn in_stream(error: &Value) -> UpstreamError {
    UpstreamError::InStream {
        message: error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("(no message)")
            .to_string(),
        code: error
            .get("code")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(events: &[Value]) -> Result<Vec<ModelEvent>, UpstreamError> {
        let mut decoder = ResponsesDecoder::default();
        let mut out = Vec::new();
        for event in events {
            out.extend(decoder.data(None, &event.to_string())?);
        }
        out.extend(decoder.end()?);
        Ok(out)
    }

    #[test]
    fn items_stream_and_the_usage_ends_it() {
        let events = run(&[
            json!({"type": "response.created", "response": {}}),
            json!({"type": "response.output_item.added", "item": {"type": "reasoning"}}),
            json!({"type": "response.reasoning_text.delta", "delta": "hmm"}),
            json!({"type": "response.output_item.done", "item": {"type": "reasoning"}}),
            json!({"type": "response.output_item.added", "item": {"type": "function_call", "call_id": "call_9", "name": "f"}}),
            json!({"type": "response.output_item.done", "item": {"type": "function_call", "call_id": "call_9", "name": "f", "arguments": "{\"a\":1}"}}),
            json!({"type": "response.output_item.added", "item": {"type": "message", "role": "assistant", "content": []}}),
            json!({"type": "response.output_text.delta", "delta": "Hi"}),
            json!({"type": "response.output_item.done", "item": {"type": "message", "content": [{"type": "output_text", "text": "Hi"}]}}),
            json!({"type": "response.incomplete", "response": {"incomplete_details": {"reason": "max_output_tokens"},
                "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 32}, "output_tokens": 7}}}),
        ])
        .unwrap();
        assert_eq!(events[0], ModelEvent::BeginReasoning);
        assert!(matches!(&events[1], ModelEvent::ReasoningDelta(d) if d.text == "hmm"));
        assert_eq!(events[2], ModelEvent::EndItem);
        assert_eq!(
            events[3],
            ModelEvent::BeginFunctionCall {
                name: "f".into(),
                namespace: None,
                call_id: Some("call_9".into())
            }
        );
        assert!(matches!(&events[4], ModelEvent::ArgumentsDelta(d) if d.text == "{\"a\":1}"));
        assert_eq!(events[5], ModelEvent::EndItem);
        assert_eq!(events[6], ModelEvent::BeginMessage);
        assert!(matches!(&events[7], ModelEvent::TextDelta(d) if d.text == "Hi"));
        assert_eq!(events[8], ModelEvent::EndItem);
        assert_eq!(events[9], ModelEvent::CutShort);
        assert_eq!(
            events[10],
            ModelEvent::Usage(EngineUsage {
                input_tokens: 50,
                cached_tokens: 32,
                output_tokens: 7,
                reasoning_tokens: 0
            })
        );
    }

    #[test]
    fn failures_and_cut_streams() {
        let failed = run(&[json!({"type": "response.failed", "response": {"error": {"code": "server_error", "message": "boom"}}})])
            .unwrap_err();
        assert_eq!(
            failed,
            UpstreamError::InStream {
                message: "boom".into(),
                code: Some("server_error".into())
            }
        );
        let cut = run(&[
            json!({"type": "response.output_item.added", "item": {"type": "message"}}),
            json!({"type": "response.output_text.delta", "delta": "Hi"}),
        ])
        .unwrap_err();
        assert!(matches!(cut, UpstreamError::Cut { chunks: 2, .. }));
    }
}
