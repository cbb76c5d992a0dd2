//! A Chat Completions stream read as model events: `delta.content` is the answer,
//! `delta.reasoning_content` (vLLM's reasoning parsers; `delta.reasoning` in newer vLLM and
//! Ollama) the reasoning, `delta.tool_calls` the calls — each by its `index`, its `id` and
//! `function.name` in its first delta and its arguments streamed after — `finish_reason`
//! `length` the output limit, and the last chunk's `usage` (with
//! `prompt_tokens_details.cached_tokens`) the engine's own count.

use std::collections::HashMap;

use serde_json::Value;

use super::request::{Called, ToolNames};
use crate::engine::failure::UpstreamError;
use crate::engine::translate::{Decoder, Emitter};
use crate::model::{EngineUsage, ModelEvent};

/// One tool call as it streams.
#[derive(Debug, Default)]
struct Call {
    id: Option<String>,
    name: String,
    /// Arguments that came before the call could begin (its name unknown yet), or all of a
    /// custom tool's (its `input` is read out of them at the end).
    pending: String,
    begun: bool,
    custom: bool,
}

/// Reads a Chat Completions stream.
pub struct ChatDecoder {
    names: ToolNames,
    out: Emitter,
    calls: HashMap<u64, Call>,
    finish: Option<String>,
    usage: Option<EngineUsage>,
    done: bool,
    chunks: usize,
    /// The terminal events (limit, usage) were emitted.
    closed: bool,
}

impl ChatDecoder {
    pub fn new(names: ToolNames) -> Self {
        ChatDecoder {
            names,
            out: Emitter::default(),
            calls: HashMap::new(),
            finish: None,
            usage: None,
            done: false,
            chunks: 0,
            closed: false,
        }
    }

    fn choice(&mut self, choice: &Value) -> Result<(), UpstreamError> {
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        let reasoning = delta
            .get("reasoning_content")
            .or_else(|| delta.get("reasoning"))
            .and_then(Value::as_str);
        if let Some(text) = reasoning {
            self.out.reasoning(text);
        }
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            self.out.text(text);
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (position, call) in calls.iter().enumerate() {
                self.tool_call(call, position as u64)?;
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_calls()?;
            self.out.close();
            self.finish = Some(reason.to_string());
        }
        Ok(())
    }

    fn tool_call(&mut self, delta: &Value, position: u64) -> Result<(), UpstreamError> {
        let index = delta
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or(position);
        let function = delta.get("function").unwrap_or(&Value::Null);
        let arguments = function
            .get("arguments")
            .and_then(Value::as_str)
            .unwrap_or("");
        let open = self.out.open_call();
        let call = self.calls.entry(index).or_default();
        if let Some(id) = delta
            .get("id")
            .and_then(Value::as_str)
            .filter(|i| !i.is_empty())
        {
            call.id.get_or_insert_with(|| id.to_string());
        }
        if let Some(name) = function.get("name").and_then(Value::as_str)
            && !call.begun
        {
            call.name.push_str(name);
        }
        if call.begun {
            if open != Some(index as usize) {
                return Err(UpstreamError::Malformed(format!(
                    "the arguments of tool call {index} continued after another call began \
                     (Tether streams one call at a time)"
                )));
            }
            if call.custom {
                call.pending.push_str(arguments);
            } else {
                self.out.arguments(arguments);
            }
            return Ok(());
        }
        call.pending.push_str(arguments);
        if call.name.is_empty() {
            // The name is still to come: the call begins with it.
            return Ok(());
        }
        // A new call closes the one before it.
        self.finish_calls()?;
        let call = self.calls.get_mut(&index).expect("inserted above");
        call.begun = true;
        let begin = match self.names.get(&call.name) {
            Some(Called::Custom { name }) => {
                call.custom = true;
                ModelEvent::BeginCustomToolCall {
                    name: name.clone(),
                    call_id: call.id.clone(),
                }
            }
            Some(Called::Function { name, namespace }) => ModelEvent::BeginFunctionCall {
                name: name.clone(),
                namespace: namespace.clone(),
                call_id: call.id.clone(),
            },
            // A name Tether did not offer is passed on as the model said it.
            None => ModelEvent::BeginFunctionCall {
                name: call.name.clone(),
                namespace: None,
                call_id: call.id.clone(),
            },
        };
        self.out.begin_call(index as usize, begin);
        let call = self.calls.get_mut(&index).expect("inserted above");
        if !call.custom {
            let pending = std::mem::take(&mut call.pending);
            self.out.arguments(&pending);
        }
        Ok(())
    }

    /// Ends the open call: a custom tool's input is its `input` argument.
    fn finish_calls(&mut self) -> Result<(), UpstreamError> {
        let Some(index) = self.out.open_call() else {
            return Ok(());
        };
        if let Some(call) = self.calls.get_mut(&(index as u64))
            && call.custom
        {
            let arguments = std::mem::take(&mut call.pending);
            let input = serde_json::from_str::<Value>(&arguments)
                .ok()
                .and_then(|v| v.get("input").and_then(Value::as_str).map(str::to_string))
                // Not the shape asked for: the model's text is the input as it is.
                .unwrap_or(arguments);
            self.out.arguments(&input);
        }
        self.out.close();
        Ok(())
    }

    /// The limit and the usage, once the upstream is done.
    fn close(&mut self) {
        if self.closed {
            return;
        }
        self.closed = true;
        if self.finish.as_deref() == Some("length") {
            self.out.push(ModelEvent::CutShort);
        }
        if let Some(usage) = self.usage {
            self.out.push(ModelEvent::Usage(usage));
        }
    }
}

/// `usage` as the engine's count.
fn usage(value: &Value) -> Option<EngineUsage> {
    let number = |pointer: &str| value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    value.get("prompt_tokens")?;
    Some(EngineUsage {
        input_tokens: number("/prompt_tokens"),
        cached_tokens: number("/prompt_tokens_details/cached_tokens"),
        output_tokens: number("/completion_tokens"),
        reasoning_tokens: number("/completion_tokens_details/reasoning_tokens"),
    })
}

impl Decoder for ChatDecoder {
    fn data(&mut self, _event: Option<&str>, data: &str) -> Result<Vec<ModelEvent>, UpstreamError> {
        self.chunks += 1;
        if data.trim() == "[DONE]" {
            self.done = true;
            self.finish_calls()?;
            self.out.close();
            self.close();
            return Ok(self.out.take());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            UpstreamError::Malformed(format!("a chunk is not JSON ({e}): {}", preview(data)))
        })?;
        if let Some(error) = chunk.get("error") {
            let (message, code) = crate::engine::failure::error_body(
                serde_json::json!({ "error": error }).to_string().as_bytes(),
            );
            return Err(UpstreamError::InStream { message, code });
        }
        if let Some(choices) = chunk.get("choices").and_then(Value::as_array) {
            // One choice is asked for (no `n`): the first is the answer.
            if let Some(choice) = choices
                .iter()
                .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            {
                self.choice(choice)?;
            }
        }
        if let Some(found) = chunk.get("usage").and_then(usage) {
            self.usage = Some(found);
            if self.finish.is_some() {
                // The usage chunk is the last: vLLM and OpenAI send it after the finish.
                self.close();
            }
        }
        Ok(self.out.take())
    }

    fn end(&mut self) -> Result<Vec<ModelEvent>, UpstreamError> {
        if self.finish.is_none() && !self.done {
            return Err(UpstreamError::Cut {
                chunks: self.chunks,
                reason: "the stream ended without a finish_reason".into(),
            });
        }
        self.finish_calls()?;
        self.out.close();
        self.close();
        Ok(self.out.take())
    }

    fn finished(&self) -> bool {
        self.done
    }

    fn streamed(&self) -> bool {
        self.out.any()
    }
}

/// The beginning of `text`, for an error message.
pub fn preview(text: &str) -> String {
    let cut: String = text.chars().take(120).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Delta;
    use serde_json::json;

    fn run(names: ToolNames, chunks: &[Value]) -> Result<Vec<ModelEvent>, UpstreamError> {
        let mut decoder = ChatDecoder::new(names);
        let mut events = Vec::new();
        for chunk in chunks {
            let data = match chunk {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            events.extend(decoder.data(None, &data)?);
        }
        events.extend(decoder.end()?);
        Ok(events)
    }

    fn text(event: &ModelEvent) -> Option<&str> {
        match event {
            ModelEvent::TextDelta(Delta { text, .. })
            | ModelEvent::ReasoningDelta(Delta { text, .. })
            | ModelEvent::ArgumentsDelta(Delta { text, .. }) => Some(text),
            _ => None,
        }
    }

    #[test]
    fn text_reasoning_and_usage_with_cached_tokens() {
        let events = run(
            ToolNames::new(),
            &[
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
                json!({"choices": [{"index": 0, "delta": {"reasoning_content": "Let me think."}}]}),
                json!({"choices": [{"index": 0, "delta": {"content": "Hello"}}]}),
                json!({"choices": [{"index": 0, "delta": {"content": " there"}, "finish_reason": "stop"}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 1200, "completion_tokens": 9,
                    "prompt_tokens_details": {"cached_tokens": 1024},
                    "completion_tokens_details": {"reasoning_tokens": 4}}}),
                json!("[DONE]"),
            ],
        )
        .unwrap();
        assert_eq!(events[0], ModelEvent::BeginReasoning);
        assert_eq!(text(&events[1]), Some("Let me think."));
        assert_eq!(events[2], ModelEvent::EndItem);
        assert_eq!(events[3], ModelEvent::BeginMessage);
        assert_eq!(text(&events[4]), Some("Hello"));
        assert_eq!(text(&events[5]), Some(" there"));
        assert_eq!(events[6], ModelEvent::EndItem);
        assert_eq!(
            events[7],
            ModelEvent::Usage(EngineUsage {
                input_tokens: 1200,
                cached_tokens: 1024,
                output_tokens: 9,
                reasoning_tokens: 4
            })
        );
        assert_eq!(events.len(), 8);
    }

    #[test]
    fn parallel_tool_calls_keep_their_ids_and_stream_their_arguments() {
        let mut names = ToolNames::new();
        names.insert(
            "mcp__lookup".into(),
            Called::Function {
                name: "lookup".into(),
                namespace: Some("mcp".into()),
            },
        );
        names.insert(
            "apply_patch".into(),
            Called::Custom {
                name: "apply_patch".into(),
            },
        );
        let call = |index: u64, id: Option<&str>, name: Option<&str>, args: &str| {
            let mut function = json!({"arguments": args});
            if let Some(name) = name {
                function["name"] = name.into();
            }
            let mut call = json!({"index": index, "function": function});
            if let Some(id) = id {
                call["id"] = id.into();
                call["type"] = "function".into();
            }
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
        };
        let events = run(
            names,
            &[
                call(0, Some("call_1"), Some("shell"), ""),
                call(0, None, None, "{\"cmd\":"),
                call(0, None, None, "\"ls\"}"),
                call(1, Some("call_2"), Some("mcp__lookup"), "{}"),
                call(
                    2,
                    Some("call_3"),
                    Some("apply_patch"),
                    "{\"input\": \"*** Begin",
                ),
                call(2, None, None, " Patch\"}"),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                json!("[DONE]"),
            ],
        )
        .unwrap();
        assert_eq!(
            events[0],
            ModelEvent::BeginFunctionCall {
                name: "shell".into(),
                namespace: None,
                call_id: Some("call_1".into())
            }
        );
        assert_eq!(text(&events[1]), Some("{\"cmd\":"));
        assert_eq!(text(&events[2]), Some("\"ls\"}"));
        assert_eq!(events[3], ModelEvent::EndItem);
        assert_eq!(
            events[4],
            ModelEvent::BeginFunctionCall {
                name: "lookup".into(),
                namespace: Some("mcp".into()),
                call_id: Some("call_2".into())
            }
        );
        assert_eq!(text(&events[5]), Some("{}"));
        assert_eq!(events[6], ModelEvent::EndItem);
        assert_eq!(
            events[7],
            ModelEvent::BeginCustomToolCall {
                name: "apply_patch".into(),
                call_id: Some("call_3".into())
            }
        );
        assert_eq!(text(&events[8]), Some("*** Begin Patch"));
        assert_eq!(events[9], ModelEvent::EndItem);
        assert_eq!(events.len(), 10);
    }

    #[test]
    fn the_output_limit_a_cut_stream_and_errors() {
        let events = run(
            ToolNames::new(),
            &[
                json!({"choices": [{"delta": {"content": "Once upon"}, "finish_reason": "length"}],
                       "usage": {"prompt_tokens": 5, "completion_tokens": 2}}),
            ],
        )
        .unwrap();
        assert_eq!(events[2], ModelEvent::EndItem);
        assert_eq!(events[3], ModelEvent::CutShort);
        assert!(matches!(events[4], ModelEvent::Usage(u) if u.output_tokens == 2));
        let cut = run(
            ToolNames::new(),
            &[json!({"choices": [{"delta": {"content": "Once"}}]})],
        )
        .unwrap_err();
        assert!(
            matches!(cut, UpstreamError::Cut { chunks: 1, .. }),
            "{cut:?}"
        );
        let error = run(
            ToolNames::new(),
            &[json!({"error": {"message": "CUDA out of memory", "code": 500}})],
        )
        .unwrap_err();
        assert_eq!(
            error,
            UpstreamError::InStream {
                message: "CUDA out of memory".into(),
                code: Some("500".into())
            }
        );
        let garbage = run(ToolNames::new(), &[json!("not json")]).unwrap_err();
        assert!(matches!(garbage, UpstreamError::Malformed(_)));
        let interleaved = run(
            ToolNames::new(),
            &[
                json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{"}}]}}]}),
                json!({"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "g", "arguments": "{"}}]}}]}),
                json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}}]}),
            ],
        )
        .unwrap_err();
        assert!(
            matches!(interleaved, UpstreamError::Malformed(m) if m.contains("one call at a time"))
        );
    }
}
