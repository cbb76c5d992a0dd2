//! Builds the event sequence of one response: sequence numbers, output indexes, item ids and the
//! final Response object, so every producer emits the full sequence docs/protocol.md §3 requires
//! (`created` first, `output_item.added` before content, `output_item.done` for every item, one
//! terminal event).

use crate::error::{ApiError, ErrorFrame};
use crate::events::{Part, ServerEvent, StreamEvent};
use crate::items::{
    CustomToolCall, FunctionCall, Item, ItemStatus, OutputText, Reasoning, SummaryText,
};
use crate::response::{IncompleteDetails, Response, ResponseStatus, Usage};

/// The item currently being streamed.
#[derive(Debug)]
enum OpenItem {
    Message { id: String, text: String },
    FunctionCall { call: FunctionCall },
    CustomToolCall { call: CustomToolCall },
    Reasoning { id: String, summary: String },
}

/// Produces the events of one response, in order.
#[derive(Debug)]
pub struct ResponseStreamBuilder {
    response: Response,
    stream_id: Option<String>,
    next_sequence: u64,
    open: Option<OpenItem>,
    reasoning_seal: Option<ReasoningSeal>,
}

/// What a reasoning item's `encrypted_content` is made from its summary (the server's seal).
struct ReasoningSeal(Box<dyn Fn(&str) -> String + Send + Sync>);

impl std::fmt::Debug for ReasoningSeal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReasoningSeal")
    }
}

impl ResponseStreamBuilder {
    /// Starts a response; `response` should be `in_progress` with empty output.
    pub fn new(response: Response, stream_id: Option<String>) -> Self {
        ResponseStreamBuilder {
            response,
            stream_id,
            next_sequence: 0,
            open: None,
            reasoning_seal: None,
        }
    }

    /// Every reasoning item closed from now on carries `encrypted_content`, `seal` of its
    /// summary (`include: ["reasoning.encrypted_content"]`).
    pub fn seal_reasoning_with(&mut self, seal: impl Fn(&str) -> String + Send + Sync + 'static) {
        self.reasoning_seal = Some(ReasoningSeal(Box::new(seal)));
    }

    /// The response as built so far.
    pub fn response(&self) -> &Response {
        &self.response
    }

    /// The response as built, without a copy (the builder is done).
    pub fn into_response(self) -> Response {
        self.response
    }

    /// The response, to set what the server learned while generating (e.g. the prompt cache's
    /// diagnostics) before the terminal event carries it.
    pub fn response_mut(&mut self) -> &mut Response {
        &mut self.response
    }

    /// An event outside the numbered sequence (no `sequence_number`), on this response's lane.
    pub fn unnumbered(&self, event: StreamEvent) -> ServerEvent {
        ServerEvent {
            event,
            sequence_number: None,
            stream_id: self.stream_id.clone(),
            tether_timing: None,
        }
    }

    fn emit(&mut self, event: StreamEvent) -> ServerEvent {
        let sequence_number = Some(self.next_sequence);
        self.next_sequence += 1;
        ServerEvent {
            event,
            sequence_number,
            stream_id: self.stream_id.clone(),
            tether_timing: None,
        }
    }

    /// `response.created` then `response.in_progress`.
    pub fn start(&mut self) -> Vec<ServerEvent> {
        let response = self.response.clone();
        vec![
            self.emit(StreamEvent::Created {
                response: response.clone(),
            }),
            self.emit(StreamEvent::InProgress { response }),
        ]
    }

    fn output_index(&self) -> usize {
        self.response.output.len()
    }

    /// Opens an assistant message: `output_item.added` and `content_part.added`.
    ///
    /// # Panics
    /// If another item is still open (a bug in the producer).
    pub fn begin_message(&mut self, id: impl Into<String>) -> Vec<ServerEvent> {
        assert!(self.open.is_none(), "an item is already open");
        let id = id.into();
        let output_index = self.output_index();
        let item = Item::assistant_text(&id, "", ItemStatus::InProgress);
        let Item::Message(mut message) = item else {
            unreachable!()
        };
        message.content = crate::items::MessageContent::Parts(Vec::new());
        self.open = Some(OpenItem::Message {
            id: id.clone(),
            text: String::new(),
        });
        vec![
            self.emit(StreamEvent::OutputItemAdded {
                output_index,
                item: Item::Message(message),
            }),
            self.emit(StreamEvent::ContentPartAdded {
                item_id: id,
                output_index,
                content_index: 0,
                part: Part::OutputText(OutputText::new("")),
            }),
        ]
    }

    /// Opens a reasoning item with one summary part: `output_item.added` and
    /// `reasoning_summary_part.added`; the summary then streams through
    /// [`Self::reasoning_summary_delta`].
    ///
    /// # Panics
    /// If another item is still open.
    pub fn begin_reasoning(&mut self, id: impl Into<String>) -> Vec<ServerEvent> {
        assert!(self.open.is_none(), "an item is already open");
        let id = id.into();
        let output_index = self.output_index();
        self.open = Some(OpenItem::Reasoning {
            id: id.clone(),
            summary: String::new(),
        });
        let item = Item::Reasoning(Reasoning {
            id: Some(id.clone()),
            summary: Vec::new(),
            content: None,
            encrypted_content: None,
            status: None,
        });
        vec![
            self.emit(StreamEvent::OutputItemAdded { output_index, item }),
            self.emit(StreamEvent::ReasoningSummaryPartAdded {
                item_id: id,
                output_index,
                summary_index: 0,
                part: SummaryText {
                    text: String::new(),
                },
            }),
        ]
    }

    /// One `reasoning_summary_text.delta` of the open reasoning item.
    ///
    /// # Panics
    /// If no reasoning item is open.
    pub fn reasoning_summary_delta(&mut self, delta: &str) -> ServerEvent {
        let output_index = self.output_index();
        let Some(OpenItem::Reasoning { id, summary }) = &mut self.open else {
            panic!("no reasoning item is open");
        };
        summary.push_str(delta);
        let item_id = id.clone();
        self.emit(StreamEvent::ReasoningSummaryTextDelta {
            item_id,
            output_index,
            summary_index: 0,
            delta: delta.to_string(),
        })
    }

    /// One `output_text.delta` of the open message.
    ///
    /// # Panics
    /// If no message is open.
    pub fn text_delta(&mut self, delta: &str) -> ServerEvent {
        let output_index = self.output_index();
        let Some(OpenItem::Message { id, text }) = &mut self.open else {
            panic!("no message is open");
        };
        text.push_str(delta);
        let item_id = id.clone();
        self.emit(StreamEvent::OutputTextDelta {
            item_id,
            output_index,
            content_index: 0,
            delta: delta.to_string(),
            logprobs: Vec::new(),
        })
    }

    /// Opens a function call: `output_item.added` with empty arguments.
    ///
    /// # Panics
    /// If another item is still open.
    pub fn begin_function_call(
        &mut self,
        id: impl Into<String>,
        call_id: impl Into<String>,
        name: impl Into<String>,
    ) -> ServerEvent {
        self.begin_tool_call(Item::FunctionCall(FunctionCall {
            id: Some(id.into()),
            call_id: call_id.into(),
            name: name.into(),
            arguments: String::new(),
            namespace: None,
            status: None,
        }))
    }

    /// Opens a tool call — a `function_call` (possibly in a namespace) or a `custom_tool_call`
    /// — whose arguments or input then stream through [`Self::arguments_delta`].
    ///
    /// # Panics
    /// If another item is still open, or `call` is not a tool call.
    pub fn begin_tool_call(&mut self, call: Item) -> ServerEvent {
        assert!(self.open.is_none(), "an item is already open");
        let output_index = self.output_index();
        let (open, item) = match call {
            Item::FunctionCall(mut call) => {
                call.arguments.clear();
                call.status = Some(ItemStatus::InProgress);
                (
                    OpenItem::FunctionCall { call: call.clone() },
                    Item::FunctionCall(call),
                )
            }
            Item::CustomToolCall(mut call) => {
                call.input.clear();
                call.status = Some(ItemStatus::InProgress);
                (
                    OpenItem::CustomToolCall { call: call.clone() },
                    Item::CustomToolCall(call),
                )
            }
            other => panic!("not a tool call: {}", other.type_name()),
        };
        self.open = Some(open);
        self.emit(StreamEvent::OutputItemAdded { output_index, item })
    }

    /// One delta of the open call: `function_call_arguments.delta` for a function call,
    /// `custom_tool_call_input.delta` for a custom tool call.
    ///
    /// # Panics
    /// If no tool call is open.
    pub fn arguments_delta(&mut self, delta: &str) -> ServerEvent {
        let output_index = self.output_index();
        let delta = delta.to_string();
        let event = match &mut self.open {
            Some(OpenItem::FunctionCall { call }) => {
                call.arguments.push_str(&delta);
                let item_id = call.id.clone().unwrap_or_default();
                StreamEvent::FunctionCallArgumentsDelta {
                    item_id,
                    output_index,
                    delta,
                }
            }
            Some(OpenItem::CustomToolCall { call }) => {
                call.input.push_str(&delta);
                let item_id = call.id.clone().unwrap_or_default();
                StreamEvent::CustomToolCallInputDelta {
                    item_id,
                    output_index,
                    delta,
                }
            }
            _ => panic!("no tool call is open"),
        };
        self.emit(event)
    }

    /// An item that comes whole (a `compaction` item): `response.output_item.added` and
    /// `response.output_item.done` with it, and it joins the output.
    ///
    /// # Panics
    /// If another item is still open.
    pub fn whole_item(&mut self, item: Item) -> Vec<ServerEvent> {
        assert!(self.open.is_none(), "an item is already open");
        let output_index = self.output_index();
        self.response.output.push(item.clone());
        vec![
            self.emit(StreamEvent::OutputItemAdded {
                output_index,
                item: item.clone(),
            }),
            self.emit(StreamEvent::OutputItemDone { output_index, item }),
        ]
    }

    /// Closes the open item with its `.done` events and appends it to the output.
    ///
    /// # Panics
    /// If no item is open.
    pub fn end_item(&mut self) -> Vec<ServerEvent> {
        self.close_item(ItemStatus::Completed)
    }

    /// Closes the open item with `status` (`incomplete` when the output was cut short).
    fn close_item(&mut self, status: ItemStatus) -> Vec<ServerEvent> {
        let output_index = self.output_index();
        match self.open.take().expect("no item is open") {
            OpenItem::Message { id, text } => {
                let item = Item::assistant_text(&id, &text, status);
                self.response.output.push(item.clone());
                vec![
                    self.emit(StreamEvent::OutputTextDone {
                        item_id: id.clone(),
                        output_index,
                        content_index: 0,
                        text: text.clone(),
                        logprobs: Vec::new(),
                    }),
                    self.emit(StreamEvent::ContentPartDone {
                        item_id: id,
                        output_index,
                        content_index: 0,
                        part: Part::OutputText(OutputText::new(text)),
                    }),
                    self.emit(StreamEvent::OutputItemDone { output_index, item }),
                ]
            }
            OpenItem::FunctionCall { mut call } => {
                call.status = Some(status);
                let item = Item::FunctionCall(call.clone());
                self.response.output.push(item.clone());
                vec![
                    self.emit(StreamEvent::FunctionCallArgumentsDone {
                        item_id: call.id.clone().unwrap_or_default(),
                        output_index,
                        name: Some(call.name.clone()),
                        arguments: call.arguments.clone(),
                    }),
                    self.emit(StreamEvent::OutputItemDone { output_index, item }),
                ]
            }
            OpenItem::Reasoning { id, summary } => {
                let encrypted_content = self.reasoning_seal.as_ref().map(|seal| (seal.0)(&summary));
                let part = SummaryText { text: summary };
                let item = Item::Reasoning(Reasoning {
                    id: Some(id.clone()),
                    summary: vec![part.clone()],
                    content: None,
                    encrypted_content,
                    status: None,
                });
                self.response.output.push(item.clone());
                vec![
                    self.emit(StreamEvent::ReasoningSummaryTextDone {
                        item_id: id.clone(),
                        output_index,
                        summary_index: 0,
                        text: part.text.clone(),
                    }),
                    self.emit(StreamEvent::ReasoningSummaryPartDone {
                        item_id: id,
                        output_index,
                        summary_index: 0,
                        part,
                    }),
                    self.emit(StreamEvent::OutputItemDone { output_index, item }),
                ]
            }
            OpenItem::CustomToolCall { mut call } => {
                call.status = Some(status);
                let item = Item::CustomToolCall(call.clone());
                self.response.output.push(item.clone());
                vec![
                    self.emit(StreamEvent::CustomToolCallInputDone {
                        item_id: call.id.clone().unwrap_or_default(),
                        output_index,
                        input: call.input.clone(),
                    }),
                    self.emit(StreamEvent::OutputItemDone { output_index, item }),
                ]
            }
        }
    }

    /// `response.completed` with `usage`; closes an item left open first.
    pub fn complete(&mut self, usage: Usage, completed_at: u64) -> Vec<ServerEvent> {
        let mut events = self.close_open_item();
        self.response.status = ResponseStatus::Completed;
        self.response.completed_at = Some(completed_at);
        self.response.usage = Some(usage);
        let response = self.response.clone();
        events.push(self.emit(StreamEvent::Completed { response }));
        events
    }

    /// `response.incomplete` (e.g. `max_output_tokens` reached) with `usage`; an item left open
    /// is closed as `incomplete`.
    pub fn incomplete(&mut self, reason: &str, usage: Usage) -> Vec<ServerEvent> {
        let mut events = if self.open.is_some() {
            self.close_item(ItemStatus::Incomplete)
        } else {
            Vec::new()
        };
        self.response.status = ResponseStatus::Incomplete;
        self.response.incomplete_details = Some(IncompleteDetails {
            reason: reason.into(),
        });
        self.response.usage = Some(usage);
        let response = self.response.clone();
        events.push(self.emit(StreamEvent::Incomplete { response }));
        events
    }

    /// An `error` event (with `status` when `status` is given, the WebSocket shape) followed by
    /// `response.failed` carrying the error — with a string `code` either way (the failure's
    /// own, else its type: [`ApiError::with_code`]), as Open Responses' `Error` requires.
    pub fn fail(&mut self, status: Option<u16>, error: ApiError) -> Vec<ServerEvent> {
        let error = error.with_code(status);
        let frame = match status {
            Some(status) => ErrorFrame::websocket(status, error.clone()),
            None => ErrorFrame::sse(error.clone()),
        };
        self.open = None;
        self.response.status = ResponseStatus::Failed;
        self.response.error = Some(error);
        let response = self.response.clone();
        vec![
            self.emit(StreamEvent::Error(frame)),
            self.emit(StreamEvent::Failed { response }),
        ]
    }

    /// `response.done` (v1 beta): the response pauses at client tool calls, still in progress,
    /// with `usage` so far; `response.append` resumes it on the same sequence.
    pub fn pause(&mut self, usage: Usage) -> Vec<ServerEvent> {
        let mut events = self.close_open_item();
        self.response.usage = Some(usage);
        let response = self.response.clone();
        events.push(self.emit(StreamEvent::Done { response }));
        events
    }

    /// Another event of this response, numbered in its sequence (e.g. `response.steer.accepted`,
    /// `response.inject.created`).
    pub fn numbered(&mut self, event: StreamEvent) -> ServerEvent {
        self.emit(event)
    }

    /// The sequence number the next event of this response gets.
    pub fn next_sequence(&self) -> u64 {
        self.next_sequence
    }

    fn close_open_item(&mut self) -> Vec<ServerEvent> {
        if self.open.is_some() {
            self.end_item()
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ResponseCreate;

    #[test]
    fn reasoning_items_stream_their_summary() {
        let request = ResponseCreate::new("m", "hi");
        let response = Response::in_progress("resp_1", 1, &request);
        let mut builder = ResponseStreamBuilder::new(response, None);
        let mut events = builder.begin_reasoning("rs_1");
        events.push(builder.reasoning_summary_delta("Think"));
        events.push(builder.reasoning_summary_delta("ing"));
        events.extend(builder.end_item());
        let types: Vec<_> = events.iter().map(ServerEvent::type_name).collect();
        assert_eq!(
            types,
            [
                "response.output_item.added",
                "response.reasoning_summary_part.added",
                "response.reasoning_summary_text.delta",
                "response.reasoning_summary_text.delta",
                "response.reasoning_summary_text.done",
                "response.reasoning_summary_part.done",
                "response.output_item.done",
            ]
        );
        let Item::Reasoning(item) = &builder.response().output[0] else {
            panic!("a reasoning item");
        };
        assert_eq!(item.summary[0].text, "Thinking");
        assert_eq!(
            serde_json::to_value(&builder.response().output[0]).unwrap(),
            serde_json::json!({"type": "reasoning", "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Thinking"}]})
        );
    }
}
