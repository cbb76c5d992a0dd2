//! Playing one turn of the agent loop: its request sent (`response.create` or
//! `response.append`, nothing for a successor the server starts), the events it streams back
//! applied to the run as they arrive, until its response completes, pauses or is steered; and
//! the page's own work on it measured. The loop around it is [`super::run`].

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::{Either, select};
use tether_protocol::{
    Item, Response, ResponseCreate, ServerEvent, StreamEvent, items::ItemStatus,
};

use crate::agent::StopSignal;
use crate::agent::frames::{Direction, Frame};
use crate::agent::record::{AgentRun, Entry, SentAs, TurnRecord};
use crate::agent::steer;
use crate::agent::thread::{Resumed, TurnEnd};
use crate::agent::timing::ServerTimings;
use crate::transport::{Received, Transport, TransportError, append_text, wire_text};

/// Why a turn ended without a completed response.
pub(super) enum TurnError {
    Stopped,
    Transport(TransportError),
    /// The server ended the response with an error (`failed`, `incomplete`, an error event).
    Response(String),
}

/// The loop's access to the shared state (a [`SharedRun`](super::SharedRun)'s): every change is
/// followed by a call to `observe`.
pub(super) struct Observed<'a> {
    pub(super) run: &'a RefCell<AgentRun>,
    pub(super) observe: &'a mut dyn FnMut(&AgentRun),
}

impl Observed<'_> {
    /// Applies `change` and reports the new state.
    pub(super) fn change<R>(&mut self, change: impl FnOnce(&mut AgentRun) -> R) -> R {
        let result = change(&mut self.run.borrow_mut());
        (self.observe)(&self.run.borrow());
        result
    }

    pub(super) fn read<R>(&self, read: impl FnOnce(&AgentRun) -> R) -> R {
        read(&self.run.borrow())
    }
}

/// A future's output with the clock at the start of the poll that produced it. From that moment
/// the data was there and the page was working on it — decoding a frame, a chunk of the body —
/// rather than waiting for it: what the page's own handling of an event costs is measured from
/// there.
struct LastPoll<'c, F> {
    future: F,
    clock: &'c dyn Fn() -> f64,
}

impl<F: Future + Unpin> Future for LastPoll<'_, F> {
    type Output = (F::Output, f64);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let started = (self.clock)();
        match Pin::new(&mut self.future).poll(cx) {
            Poll::Ready(output) => Poll::Ready((output, started)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// What a turn sends.
#[derive(Clone, Copy)]
pub(super) struct Sending<'a> {
    pub(super) request: &'a ResponseCreate,
    pub(super) sent_as: SentAs,
    /// What an append carries: the tool outputs.
    pub(super) new_items: &'a [Item],
    pub(super) resumed: Resumed,
}

/// A turn's output items, in `output_index` order, how it ended and the response's snapshot.
pub(super) struct TurnOutput {
    pub(super) items: Vec<Item>,
    pub(super) end: TurnEnd,
    pub(super) response: Response,
}

/// Sends the turn's frame (none for a successor, which the server starts) and consumes its
/// events into `run` until its response ends. The turn's `client_ms` gets the page's own work:
/// encoding the request, and each event from the moment its data was there to the moment the
/// run's state had it.
pub(super) async fn play_turn(
    transport: &mut dyn Transport,
    sending: Sending<'_>,
    run: &mut Observed<'_>,
    clock: &dyn Fn() -> f64,
    stop: &StopSignal,
) -> Result<TurnOutput, TurnError> {
    let (frames, turn) = run.read(|run| (run.frames.clone(), run.turns.len()));
    if sending.sent_as != SentAs::Successor {
        let encoding = clock();
        let (kind, text) = match sending.sent_as {
            SentAs::Append => ("response.append", append_text(sending.new_items)),
            _ => (
                "response.create",
                wire_text(transport.kind(), sending.request),
            ),
        };
        let encoded = clock();
        frames.push(Frame {
            direction: Direction::Sent,
            at_ms: encoded,
            turn,
            kind,
            json: text.clone(),
        });
        run.change(|run| {
            if let Some(record) = run.turns.last_mut() {
                record.client_ms += encoded - encoding;
                record.sent_bytes += text.len() as u64;
            }
        });
        transport
            .send(sending.request, &text)
            .await
            .map_err(TurnError::Transport)?;
    }
    let mut stream = TurnStream {
        resumed: sending.resumed,
        ..TurnStream::default()
    };
    loop {
        // Checked between events (a busy stream) and raced against the wait (a quiet one).
        if stop.is_stopped() {
            return Err(TurnError::Stopped);
        }
        let waiting = select(transport.next_event(), stop.stopped());
        let (next, now) = LastPoll {
            future: waiting,
            clock,
        }
        .await;
        let next = match next {
            Either::Left((next, _)) => next,
            Either::Right(((), _)) => return Err(TurnError::Stopped),
        };
        let Received { event, text } = next.map_err(TurnError::Transport)?;
        let received = text.len() as u64;
        frames.push(Frame {
            direction: Direction::Received,
            at_ms: now,
            turn,
            kind: event.type_name(),
            json: text,
        });
        let is_delta = matches!(
            event.event,
            StreamEvent::OutputTextDelta { .. }
                | StreamEvent::FunctionCallArgumentsDelta { .. }
                | StreamEvent::CustomToolCallInputDelta { .. }
        );
        let done = run.change(|run| {
            let applied = stream.apply(run, &event, now);
            if let Some(record) = run.turns.last_mut() {
                let spent = clock() - now;
                record.events += 1;
                record.received_bytes += received;
                record.client_ms += spent;
                if is_delta {
                    record.delta_client_ms += spent;
                }
            }
            applied
        })?;
        if let Some((end, response)) = done {
            // Items the stream never closed with `output_item.done` come from the response —
            // those this turn added to it.
            let mut output = std::mem::take(&mut stream.done);
            for (index, item) in response
                .output
                .iter()
                .enumerate()
                .skip(stream.resumed.output)
            {
                output.entry(index).or_insert_with(|| item.clone());
            }
            return Ok(TurnOutput {
                items: output.into_values().collect(),
                end,
                response,
            });
        }
    }
}

/// Per-turn bookkeeping: which conversation entry each open output item streams into.
#[derive(Default)]
struct TurnStream {
    entries: std::collections::BTreeMap<usize, usize>,
    done: std::collections::BTreeMap<usize, Item>,
    resumed: Resumed,
}

impl TurnStream {
    /// Applies one event; `Some` once the response ended (completed, paused or steered).
    fn apply(
        &mut self,
        run: &mut AgentRun,
        event: &ServerEvent,
        now: f64,
    ) -> Result<Option<(TurnEnd, Response)>, TurnError> {
        // An answer to a steer is about the run, not this turn's response: it may even arrive
        // before the response starts (`response.steer.pending` follows the last one's end).
        if steer::apply_event(run, &event.event, now) {
            return Ok(None);
        }
        let record = run.turns.last_mut().expect("a turn is running");
        record.first_event_at.get_or_insert(now);
        if let Some(summary) = &event.tether_timing {
            record.server = ServerTimings::parse(summary);
        }
        match &event.event {
            StreamEvent::Created { response } => record.response_id = Some(response.id.clone()),
            StreamEvent::OutputItemAdded { output_index, item } => {
                if let Some(entry) = Entry::from_item(item) {
                    run.entries.push(entry);
                    self.entries.insert(*output_index, run.entries.len() - 1);
                }
            }
            StreamEvent::OutputTextDelta {
                output_index,
                delta,
                ..
            }
            | StreamEvent::FunctionCallArgumentsDelta {
                output_index,
                delta,
                ..
            }
            | StreamEvent::CustomToolCallInputDelta {
                output_index,
                delta,
                ..
            } => {
                record.token(now);
                if let Some(&at) = self.entries.get(output_index) {
                    run.entries[at].push_delta(delta);
                }
            }
            StreamEvent::OutputItemDone { output_index, item } => {
                let is_shown = matches!(
                    item,
                    Item::Message(_) | Item::FunctionCall(_) | Item::CustomToolCall(_)
                );
                if let Some(entry) = Entry::from_item(item) {
                    match self.entries.get(output_index) {
                        Some(&at) => run.entries[at] = entry,
                        None if is_shown => run.entries.push(entry),
                        None => {}
                    }
                }
                self.done.insert(*output_index, completed(item.clone()));
            }
            StreamEvent::Completed { response } => {
                self.ended(record, response, now);
                return Ok(Some((TurnEnd::Completed, response.clone())));
            }
            StreamEvent::Done { response } => {
                self.ended(record, response, now);
                record.paused = true;
                return Ok(Some((TurnEnd::Paused, response.clone())));
            }
            StreamEvent::Incomplete { response }
                if response
                    .incomplete_details
                    .as_ref()
                    .is_some_and(|d| d.reason == STEERED) =>
            {
                self.ended(record, response, now);
                record.steered = true;
                return Ok(Some((TurnEnd::Steered, response.clone())));
            }
            StreamEvent::Incomplete { response } => {
                let reason = response
                    .incomplete_details
                    .as_ref()
                    .map_or("unknown reason", |d| d.reason.as_str());
                return Err(TurnError::Response(format!(
                    "the response ended incomplete: {reason}"
                )));
            }
            StreamEvent::Failed { response } => {
                let message = response
                    .error
                    .as_ref()
                    .map_or("no details", |e| e.message.as_str());
                return Err(TurnError::Response(format!(
                    "the response failed: {message}"
                )));
            }
            StreamEvent::Error(frame) => {
                let error = frame.api_error();
                let status = frame.status.map(|s| format!(" ({s})")).unwrap_or_default();
                return Err(TurnError::Response(format!(
                    "server error{status}: {}",
                    error.message
                )));
            }
            _ => {}
        }
        Ok(None)
    }

    /// Records the end of the turn's part of `response`: when, and its usage — for a resumed
    /// long-running response, what this turn added to it.
    fn ended(&self, record: &mut TurnRecord, response: &Response, now: f64) {
        record.completed_at = Some(now);
        if let Some(usage) = &response.usage {
            let before = self.resumed;
            record.input_tokens = usage.input_tokens.saturating_sub(before.input_tokens);
            record.cached_tokens = usage
                .input_tokens_details
                .cached_tokens
                .saturating_sub(before.cached_tokens);
            record.output_tokens = usage.output_tokens.saturating_sub(before.output_tokens);
        }
    }
}

/// `incomplete_details.reason` of a response a steer ended.
const STEERED: &str = "steered";

/// An output item as it goes back into the conversation: completed.
fn completed(mut item: Item) -> Item {
    match &mut item {
        Item::FunctionCall(call) => call.status = Some(ItemStatus::Completed),
        Item::CustomToolCall(call) => call.status = Some(ItemStatus::Completed),
        _ => {}
    }
    item
}
