//! One response from its first event to its terminal one, over one engine call or several.
//!
//! An ordinary response samples once and finishes ([`super::generate`]). A long-running one —
//! paused at client tool calls (`response.append`, v1 beta) or waiting for them
//! (`response.inject`, multi-agent beta) — samples, takes the client's tool outputs with
//! [`Running::extend`] (the incremental stages over the new items only: the prefix was
//! rendered, its tools compiled and its text scanned once), and samples again, on the same
//! sequence of events; it is persisted and billed once, when it finishes. Its usage adds up its
//! engine calls.

use std::time::{Duration, Instant};

use tether_protocol::{
    ApiError, CacheWriteDetails, Item, Response, ResponseStreamBuilder, ServerEvent, StreamEvent,
    Usage,
};
use tokio::sync::mpsc;

use super::steering::{QueuedSteer, Steering};
use super::stream::{self, send_all};
use super::{Disconnected, Generated, Prepared, RequestOptions, checks, record};
use crate::AppState;
use crate::cache::Ancestor;
use crate::error::ApiFailure;
use crate::ids::unix_now;
use crate::model::Context;
use crate::stages::{self, Conversation, Reusable};
use crate::store::outputs_marker;
use crate::timing::{Modelled, PathKind, Stage, StageTimings};
use crate::traces::Summary;

/// How one engine call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Sampled {
    /// The model answered without calling a tool (or sampled nothing).
    Answered,
    /// The model called these client tools (function or custom tool calls).
    Called(Vec<Item>),
    /// `max_output_tokens` was reached.
    CutShort,
    /// A steer stopped the output at a safe boundary.
    Steered,
    /// The engine failed with this status and error.
    Failed(u16, ApiError),
}

/// How a response ends.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    Completed,
    Incomplete(&'static str),
    Failed(u16, ApiError),
}

/// What the response used, over its engine calls.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    input: u64,
    cached: u64,
    written: u64,
    by_ttl: Option<(u64, u64)>,
    output: u64,
    reasoning: u64,
}

impl Tally {
    fn usage(&self) -> Usage {
        Usage::new(self.input, self.cached, self.output, self.reasoning).with_cache_writes(
            self.written,
            self.by_ttl
                .map(|(ttl_30m_tokens, ttl_12h_tokens)| CacheWriteDetails {
                    ttl_30m_tokens,
                    ttl_12h_tokens,
                }),
        )
    }
}

/// A response being generated.
pub struct Running {
    context: Context,
    builder: ResponseStreamBuilder,
    added_input: Vec<Item>,
    stored_parent: Option<String>,
    reusable: Reusable,
    lineage: std::collections::VecDeque<Ancestor>,
    timings: StageTimings,
    options: RequestOptions,
    tally: Tally,
    /// Output items already part of `context.items` (the rest came in the last engine call).
    outputs_in_context: usize,
    replica: usize,
    started: Instant,
    /// Time spent taking the client's input ([`Running::extend`]).
    extending: Duration,
    /// The response's steers.
    pub steering: Steering,
    /// The conversation it holds and appends to.
    conversation: Option<super::conversation::Bound>,
}

impl Running {
    /// Starts the response: `response.created` and `response.in_progress`.
    pub async fn start(
        prepared: Prepared,
        out: &mpsc::Sender<Box<ServerEvent>>,
    ) -> Result<Running, Disconnected> {
        let Prepared {
            context,
            added_input,
            stored_parent,
            reusable,
            lineage,
            timings,
            options,
            conversation,
            compacted,
            reasoning_seal,
            ..
        } = prepared;
        let request = &context.request;
        let steering = if request.conversation.is_some() || request.context_management.is_some() {
            Steering::refusing()
        } else {
            Steering::default()
        };
        // The previous response's tools when these are the same: one list for a connection's
        // conversation, not a copy a turn.
        let tools = match lineage.back() {
            Some(previous) if *previous.response.tools == *request.tools => {
                previous.response.tools.clone()
            }
            _ => request.tools.as_slice().into(),
        };
        let response =
            Response::in_progress_offering(context.response_id.clone(), unix_now(), request, tools);
        let mut builder = ResponseStreamBuilder::new(response, request.stream_id.clone());
        if let Some((sealer, project)) = reasoning_seal {
            // The summary sealed like a compaction item's: opaque to the client, and all the
            // reasoning the simulator has to carry into a stateless next turn.
            builder.seal_reasoning_with(move |summary| {
                let summary = crate::compaction::Summary {
                    items: 1,
                    text: summary.to_string(),
                };
                sealer.seal(&project, &summary)
            });
        }
        send_all(out, builder.start()).await?;
        // A compacted context: the compaction item leads the output (it is already the last
        // item of the context the model reads).
        let outputs_in_context = match compacted {
            Some(item) => {
                send_all(out, builder.whole_item(item)).await?;
                1
            }
            None => 0,
        };
        Ok(Running {
            context,
            builder,
            added_input,
            stored_parent,
            reusable,
            lineage,
            timings,
            options,
            tally: Tally::default(),
            outputs_in_context,
            replica: 0,
            started: Instant::now(),
            extending: Duration::ZERO,
            steering,
            conversation,
        })
    }

    /// The response's id.
    pub fn id(&self) -> &str {
        &self.context.response_id
    }

    /// The request it answers.
    pub fn request(&self) -> &tether_protocol::ResponseCreate {
        &self.context.request
    }

    /// One engine call over the conversation so far, its events streamed to `out`.
    pub async fn sample(
        &mut self,
        state: &AppState,
        out: &mpsc::Sender<Box<ServerEvent>>,
    ) -> Result<Sampled, Disconnected> {
        let request = &self.context.request;
        let prewarm = request
            .prompt_cache_options
            .as_ref()
            .and_then(|o| o.get("prewarm"))
            .and_then(|p| p.as_bool())
            == Some(true);
        if !(request.generates() || prewarm) {
            return Ok(Sampled::Answered);
        }
        let limit = request
            .max_output_tokens
            .unwrap_or(u64::MAX)
            .saturating_sub(self.tally.output);
        let outputs_before = self.builder.response().output.len();
        let requested = Instant::now();
        // In front of a real engine the hop to it is real, and measured: none is modelled.
        let hop = if state.model.real_engine(&request.model) {
            Duration::ZERO
        } else {
            self.options
                .conditions
                .api_costs(&state.api_costs)
                .engine_hop()
        };
        if !hop.is_zero() {
            tokio::time::sleep(hop).await;
            self.timings.record_modelled(Modelled::EngineHop, hop);
        }
        let called = Instant::now();
        let events = state.model.generate(&self.context);
        let streamed = stream::stream(
            events,
            &mut self.builder,
            limit,
            &self.steering,
            &state.lifecycle,
            out,
        )
        .await?;
        let ended = Instant::now();
        let first = streamed.first_token_at.unwrap_or(ended);
        let input_tokens = self.context.input_tokens();
        self.timings
            .record_engine_call(|| crate::timing::EngineCall {
                called,
                first_token: streamed.first_token_at,
                ended,
                replica: streamed.admission.replica,
                queue: streamed.admission.queue_time,
                input_tokens,
                cached_tokens: streamed.admission.cache.cached_tokens,
                output_tokens: streamed.output_tokens,
            });
        // Time the stream waited for a slow client is not the engine's (it kept decoding).
        let delivery = streamed.delivery;
        self.timings.delivery += delivery;
        let engine = &mut self.timings.engine;
        engine.calls += 1;
        engine.replica = streamed.admission.replica;
        engine.queue += streamed.admission.queue_time;
        engine.prefill += streamed
            .admitted_at
            .map_or(Duration::ZERO, |admitted| first - admitted);
        engine.decode += streamed.last_token_at.map_or(Duration::ZERO, |last| {
            (last - first).saturating_sub(delivery)
        });
        engine.service_total += (ended - called).saturating_sub(delivery);
        engine.service_ttft += first - called;
        engine.iapi_ttft += first - requested;
        engine.iapi_total += (ended - requested).saturating_sub(delivery);
        self.replica = streamed.admission.replica;
        let cache = &streamed.admission.cache;
        // A real engine's own count, when it gave one, is the usage: its tokenizer's tokens and
        // its prefix cache's hits. Else the API's count of the prompt and of the deltas.
        let (input, cached, output, reasoning) = match streamed.engine_usage {
            Some(usage) => (
                usage.input_tokens,
                usage.cached_tokens,
                usage.output_tokens,
                usage.reasoning_tokens,
            ),
            None => (
                self.context.input_tokens(),
                cache.cached_tokens,
                streamed.output_tokens,
                streamed.reasoning_tokens,
            ),
        };
        self.tally.input += input;
        self.tally.cached += cached;
        self.tally.written += cache.written_tokens;
        if let Some((m30, h12)) = cache.written_by_ttl {
            let (a, b) = self.tally.by_ttl.unwrap_or_default();
            self.tally.by_ttl = Some((a + m30, b + h12));
        }
        self.tally.output += output;
        self.tally.reasoning += reasoning;
        if cache.diagnostics.is_some() {
            self.builder.response_mut().prompt_cache_diagnostics = cache.diagnostics.clone();
        }
        Ok(if let Some((status, error)) = streamed.failure {
            Sampled::Failed(status, error)
        } else if streamed.cut_short {
            Sampled::CutShort
        } else if streamed.steered {
            Sampled::Steered
        } else {
            let calls: Vec<Item> = self.builder.response().output[outputs_before..]
                .iter()
                .filter(|item| matches!(item, Item::FunctionCall(_) | Item::CustomToolCall(_)))
                .cloned()
                .collect();
            if calls.is_empty() {
                Sampled::Answered
            } else {
                Sampled::Called(calls)
            }
        })
    }

    /// `response.done` (v1 beta): the response pauses at its client tool calls.
    pub async fn pause(
        &mut self,
        out: &mpsc::Sender<Box<ServerEvent>>,
    ) -> Result<(), Disconnected> {
        send_all(out, self.builder.pause(self.tally.usage())).await
    }

    /// An event of this response, numbered in its sequence (e.g. `response.inject.created`).
    pub async fn announce(
        &mut self,
        event: StreamEvent,
        out: &mpsc::Sender<Box<ServerEvent>>,
    ) -> Result<(), Disconnected> {
        send_all(out, vec![self.builder.numbered(event)]).await
    }

    /// Records time the response waited for its client (its tools), which is neither the
    /// API's nor the engine's.
    pub fn waited(&mut self, duration: Duration) {
        self.timings.client_wait += duration;
    }

    /// Takes more input — the client's tool outputs — into the conversation, running the
    /// stages over the new items only: the last engine call's output and `input` are rendered
    /// onto the prompt, checked against the compiled tools, and `input` is classified.
    pub async fn extend(&mut self, state: &AppState, input: Vec<Item>) -> Result<(), ApiFailure> {
        let started = Instant::now();
        // The frame that brought the input came over the link too.
        if let (Some(link), Some(more)) = (
            self.timings.link.as_mut(),
            self.options.conditions.take_upload(),
        ) {
            link.up_bytes += more.up_bytes;
            link.up += more.up;
        }
        let taken = self.take_input(state, input).await;
        // Its stages are recorded on their own; `generate` is the rest.
        self.extending += started.elapsed();
        taken
    }

    async fn take_input(&mut self, state: &AppState, input: Vec<Item>) -> Result<(), ApiFailure> {
        let outputs = self.builder.response().output[self.outputs_in_context..].to_vec();
        let mut items = std::mem::take(&mut self.context.items);
        let before = items.len();
        items.extend(outputs.iter().cloned());
        let mut new_items = outputs.clone();
        new_items.extend(input.iter().cloned());
        let processed = checks::request(&self.context.request, &items, &input).and_then(|()| {
            // The last call's output and the input rendered onto the prompt and checked; the
            // input alone scanned (the output is the model's).
            let conversation = Conversation {
                prior: &items[..before],
                new: &new_items,
                hit: true,
                rendered: true,
                own_output: outputs.len(),
            };
            stages::process(
                &self.context.request,
                &conversation,
                &mut self.reusable,
                None,
                state.scan(),
                &mut self.timings,
            )
        });
        let scanned = match processed {
            Ok(processed) => processed.scanned_tokens,
            Err(failure) => {
                self.context.items = items;
                return Err(failure);
            }
        };
        let modelled = self
            .options
            .conditions
            .api_costs(&state.api_costs)
            .classifier(scanned);
        if !modelled.is_zero() {
            tokio::time::sleep(modelled).await;
            self.timings.record_modelled(Modelled::Classify, modelled);
        }
        if self.context.request.stores() {
            self.added_input.push(outputs_marker(outputs.len()));
            self.added_input.extend(input.iter().cloned());
        }
        if let Some(bound) = &mut self.conversation {
            bound.input.push(outputs_marker(outputs.len()));
            bound.input.extend(input.iter().cloned());
        }
        items.extend(input);
        self.context.items = items;
        self.context.prompt = self.reusable.rendered.prompt();
        self.outputs_in_context = self.builder.response().output.len();
        Ok(())
    }

    /// Ends the response: its terminal event (with the timing the client asked for), its
    /// record written (over HTTP before the event, over WebSocket queued before and written
    /// after), and what the connection cache keeps of it.
    pub async fn finish(
        mut self,
        state: &AppState,
        out: &mpsc::Sender<Box<ServerEvent>>,
        end: End,
    ) -> Result<Generated, Disconnected> {
        // No steer is taken from here on; the ones taken are announced before the end.
        let (announcements, steers) = self
            .steering
            .close(&mut self.builder, &self.context.response_id);
        send_all(out, announcements).await?;
        let usage = self.tally.usage();
        // Traced (`--otlp-endpoint`): the response's span, ended once the terminal event is out.
        let span = self.options.trace.as_ref().and_then(|parent| {
            let traces = state.traces.as_ref()?;
            Some(traces.begin(parent, self.timings.received, "tether.response"))
        });
        let mut terminal = match &end {
            End::Failed(status, error) => {
                if let Some(bound) = self.conversation.take() {
                    bound.finish(&self.context.project, None).await;
                }
                // The WebSocket shape (with `status`); the SSE transport flattens it.
                let events = self.builder.fail(Some(*status), error.clone());
                send_all(out, events).await?;
                if let Some(span) = span {
                    let summary = self.summary("failed", &usage, Some(error.message.clone()));
                    span.end(&self.timings, &summary);
                }
                return Ok(self.into_generated(steers));
            }
            End::Incomplete(reason) => self.builder.incomplete(reason, usage.clone()),
            End::Completed => self.builder.complete(usage.clone(), unix_now()),
        };
        self.timings.tokens.input = self.tally.input;
        self.timings.tokens.cached = self.tally.cached;
        self.timings.tokens.cache_write = self.tally.written;
        self.timings.record_at(
            Stage::Generate,
            self.started,
            self.started
                .elapsed()
                .saturating_sub(self.timings.client_wait + self.extending),
        );
        if let Some(bound) = self.conversation.take() {
            // Its input and output, and the conversation free again, before the terminal
            // event: the next response on the conversation reads them.
            bound
                .finish(&self.context.project, Some(&self.builder.response().output))
                .await;
        }
        let request = &self.context.request;
        let transport = match self.timings.path {
            PathKind::Http if request.stream == Some(true) => "sse",
            PathKind::Http => "http",
            PathKind::WsHit | PathKind::WsMiss => "ws",
        };
        let mut record = record::record(
            &self.context.project,
            self.builder.response(),
            &usage,
            std::mem::take(&mut self.added_input),
            self.stored_parent.take(),
            transport,
        );
        // Over HTTP the writes are stages of the response; over WebSocket they are its own.
        if self.timings.path != PathKind::Http {
            record.trace = span.as_ref().map(|span| span.writes());
        }
        // What the ledger bills, the project's tokens-per-minute limit is charged.
        state
            .rate_limits
            .charge(&self.context.project, usage.total_tokens);
        if self.timings.path == PathKind::Http {
            // Over HTTP the response is final once stored and billed.
            state.records.write_now(record, &mut self.timings).await;
        } else {
            // Queued before the terminal event, so a continuation can always find it.
            state.records.write_later(record, self.timings.path).await;
        }
        state.metrics.stages.observe(&self.timings);
        self.timings.finish();
        if self.options.timing_metrics {
            let timing = StreamEvent::WebsocketTiming {
                timing_metrics: self.timings.websocket_timing(),
            };
            send_all(out, vec![self.builder.unnumbered(timing)]).await?;
        }
        if self.options.report_timing
            && let Some(last) = terminal.last_mut()
        {
            last.tether_timing = Some(self.timings.summary());
        }
        send_all(out, terminal).await?;
        if let Some(span) = span {
            let status = match end {
                End::Completed => "completed",
                _ => "incomplete",
            };
            span.end(&self.timings, &self.summary(status, &usage, None));
        }
        Ok(self.into_generated(steers))
    }

    /// What the response's span says of it.
    fn summary(&self, status: &str, usage: &Usage, error: Option<String>) -> Summary {
        let request = &self.context.request;
        Summary {
            response_id: self.context.response_id.clone(),
            model: request.model.clone(),
            transport: match self.timings.path {
                PathKind::Http if request.stream == Some(true) => "sse",
                PathKind::Http => "http",
                PathKind::WsHit | PathKind::WsMiss => "ws",
            },
            status: status.to_string(),
            input_tokens: usage.input_tokens,
            cached_tokens: usage.input_tokens_details.cached_tokens,
            output_tokens: usage.output_tokens,
            error,
        }
    }

    /// Announces the steers taken (and refused) since the last announcement.
    pub async fn announce_steers(
        &mut self,
        out: &mpsc::Sender<Box<ServerEvent>>,
    ) -> Result<(), Disconnected> {
        let events = self
            .steering
            .announcements(&mut self.builder, &self.context.response_id);
        send_all(out, events).await
    }

    /// The outcome: the response, the conversation after it, what the cache may keep of it,
    /// the steers it took.
    fn into_generated(self, steers: Vec<QueuedSteer>) -> Generated {
        let next_sequence = self.builder.next_sequence();
        let response = self.builder.into_response();
        let mut items = self.context.items;
        let pending = response.output[self.outputs_in_context..].to_vec();
        items.extend(pending.iter().cloned());
        Generated {
            response,
            request: Some(self.context.request),
            context: std::sync::Arc::new(items),
            reusable: self.reusable,
            pending_outputs: pending,
            lineage: self.lineage,
            replica: self.replica,
            next_sequence,
            steers,
        }
    }
}
