//! Pacing: one response as a model server would stream it — admitted by its profile's scheduler
//! (or refused with 429 when the queue is full), silent until its time to first token, then each
//! token at its due time, at the profile's rate slowed by the load at that moment. The events
//! come from [`Events`]; the timer is the configured [`Clock`].

use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use tokio::time::Instant;

use super::clock::Clock;
use super::events::Events;
use super::latency::{self, Profile, QueueFull};
use super::metrics::ModelMetrics;
use super::prompt_cache::{Lookup, PromptCaches};
use crate::model::{Admission, ModelEvent, ModelStream, rate_limit_exceeded};

/// The shortest time between two deltas of a stream faster than 1,000 tokens/s: the tokens due
/// within it share a delta, so a 4,000 tokens/s stream is 1,000 frames a second of about four
/// tokens, each token at most this late.
const MIN_DELTA_INTERVAL: Duration = Duration::from_millis(1);

/// When the delta whose (last) token is due at `next_due` goes out, the previous delta having
/// been due at `last_delta`: at `next_due`, except that a profile faster than one token per
/// [`MIN_DELTA_INTERVAL`] waits out that interval (its tokens due meanwhile join the delta). A
/// profile at or below that rate — `spark`'s jitter included — keeps every token's own time.
fn delta_due(
    next_due: Instant,
    last_delta: Option<Instant>,
    tokens_per_second: Option<f64>,
) -> Instant {
    let fast = tokens_per_second.is_some_and(|rate| rate * MIN_DELTA_INTERVAL.as_secs_f64() > 1.0);
    match last_delta {
        Some(last) if fast => next_due.max(last + MIN_DELTA_INTERVAL),
        _ => next_due,
    }
}

/// Where a paced run is.
enum RunState {
    /// Not admitted yet.
    Waiting,
    /// Decoding: the first token is due at `first_due`, the next one at `next_due`; the last
    /// delta was due at `last_delta`.
    Decoding {
        _slot: latency::Slot,
        first_due: Instant,
        next_due: Instant,
        last_delta: Option<Instant>,
    },
    Done,
}

/// One response being paced: admission, TTFT, then each token at its due time.
pub struct Run {
    events: Events,
    profile: Arc<Profile>,
    scheduler: Arc<latency::Scheduler>,
    /// What the prompt cache supplies and keeps; written at admission.
    cache: Option<(Arc<PromptCaches>, Lookup)>,
    uncached_tokens: u64,
    rng: StdRng,
    state: RunState,
    clock: Clock,
    metrics: Arc<ModelMetrics>,
    arrived: Instant,
    last_token: Option<Instant>,
}

impl Run {
    /// A run of `events` on a server with `profile` and `scheduler`, for a prompt of
    /// `input_tokens` of which `cache`'s lookup supplies some (prefill is charged for the
    /// rest).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        events: Events,
        profile: Arc<Profile>,
        scheduler: Arc<latency::Scheduler>,
        input_tokens: u64,
        cache: Option<(Arc<PromptCaches>, Lookup)>,
        rng: StdRng,
        clock: Clock,
        metrics: Arc<ModelMetrics>,
    ) -> Self {
        let cached = cache
            .as_ref()
            .map_or(0, |(_, lookup)| lookup.usage.cached_tokens);
        Run {
            events,
            profile,
            scheduler,
            cache,
            uncached_tokens: input_tokens.saturating_sub(cached),
            rng,
            state: RunState::Waiting,
            clock,
            metrics,
            arrived: Instant::now(),
            last_token: None,
        }
    }

    /// The run as a model stream.
    pub fn into_stream(self) -> ModelStream {
        // Boxed: the state moves in and out of the step's future at every event, and `Run`
        // (its RNG, its queue) is several hundred bytes; a box moves as a pointer.
        Box::pin(futures_util::stream::unfold(
            Box::new(self),
            |mut run| async move {
                let event = run.next().await?;
                Some((event, run))
            },
        ))
    }

    /// Records the token just emitted: TTFT for the first, inter-token latency for the others.
    /// (Fields, not `self`: the caller holds the run state borrowed.)
    fn record_token(metrics: &ModelMetrics, last_token: &mut Option<Instant>, arrived: Instant) {
        let now = Instant::now();
        match *last_token {
            None => metrics
                .time_to_first_token
                .observe((now - arrived).as_secs_f64()),
            Some(last) => metrics
                .inter_token_latency
                .observe((now - last).as_secs_f64()),
        }
        *last_token = Some(now);
        metrics.generation_tokens.inc();
    }

    async fn next(&mut self) -> Option<ModelEvent> {
        match &mut self.state {
            RunState::Done => None,
            RunState::Waiting => {
                let queued_at = Instant::now();
                match self.scheduler.admit().await {
                    Ok(slot) => {
                        let started = Instant::now();
                        self.metrics
                            .request_queue_time
                            .observe((started - queued_at).as_secs_f64());
                        let first_due = started + self.profile.ttft(self.uncached_tokens);
                        self.state = RunState::Decoding {
                            _slot: slot,
                            first_due,
                            next_due: first_due,
                            last_delta: None,
                        };
                        let mut admission = Admission {
                            queue_time: started - queued_at,
                            ..Admission::default()
                        };
                        if let Some((caches, lookup)) = self.cache.take() {
                            caches.commit(&lookup);
                            admission.replica = lookup.replica;
                            admission.cache = lookup.usage;
                        }
                        Some(ModelEvent::Started(admission))
                    }
                    Err(QueueFull) => {
                        self.state = RunState::Done;
                        Some(ModelEvent::Fail {
                            status: 429,
                            error: rate_limit_exceeded(
                                "The server is overloaded: every slot is busy and the queue is full. Retry later.",
                            ),
                        })
                    }
                }
            }
            RunState::Decoding {
                first_due,
                next_due,
                last_delta,
                ..
            } => {
                let Some(event) = self.events.pop_front() else {
                    self.state = RunState::Done;
                    self.metrics
                        .e2e_request_latency
                        .observe(self.arrived.elapsed().as_secs_f64());
                    self.metrics.request_success.inc();
                    return None;
                };
                if matches!(event, ModelEvent::Fail { .. }) {
                    // Nothing follows a failure, and it does not wait for a token's time.
                    self.state = RunState::Done;
                    return Some(event);
                }
                // Nothing is visible before the first token is due (TTFT); each token is due an
                // interval after the previous one was *due*, not sent, so the rate holds even
                // when a send is delayed. The interval follows the load at that moment.
                let mut event = event;
                let tokens = event.tokens();
                if tokens > 0 {
                    // A piece of several tokens (a character split over tokens) is visible once
                    // its last token is decoded.
                    for _ in 1..tokens {
                        *next_due += self
                            .profile
                            .interval(self.scheduler.running(), &mut self.rng);
                    }
                    let send_at = delta_due(*next_due, *last_delta, self.profile.tokens_per_second);
                    self.clock.sleep_until(send_at).await;
                    *last_delta = Some(send_at);
                    *next_due += self
                        .profile
                        .interval(self.scheduler.running(), &mut self.rng);
                    for _ in 0..tokens {
                        Self::record_token(&self.metrics, &mut self.last_token, self.arrived);
                    }
                    // Single tokens of the same item already due by now join this delta: at
                    // thousands of tokens a second several fall due per delta interval, and one
                    // frame for them keeps the connection and the client at the model's pace.
                    // Each token still draws its own interval, so a seed replays the same way.
                    while self.profile.tokens_per_second.is_some()
                        && *next_due <= Instant::now()
                        && self
                            .events
                            .front()
                            .is_some_and(|next| next.tokens() == 1 && event.absorb(next))
                    {
                        self.events.pop_front();
                        *next_due += self
                            .profile
                            .interval(self.scheduler.running(), &mut self.rng);
                        Self::record_token(&self.metrics, &mut self.last_token, self.arrived);
                    }
                } else {
                    self.clock.sleep_until(*first_due).await;
                }
                Some(event)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_stream_faster_than_a_token_a_millisecond_waits_for_its_delta() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let us = Duration::from_micros;
        // 4,000 tokens/s: the token due 0.25 ms after the last delta waits for the millisecond.
        assert_eq!(
            delta_due(start + us(250), Some(start), Some(4_000.0)),
            start + ms(1)
        );
        // ... but one due later than that goes at its own time.
        assert_eq!(
            delta_due(start + us(1_250), Some(start), Some(4_000.0)),
            start + us(1_250)
        );
        // The first delta never waits.
        assert_eq!(delta_due(start, None, Some(4_000.0)), start);
        // 1,000 tokens/s with jitter (`spark`): an interval under 1 ms keeps its own time.
        assert_eq!(
            delta_due(start + us(800), Some(start), Some(1_000.0)),
            start + us(800)
        );
        // `instant` (no rate): nothing waits.
        assert_eq!(delta_due(start, Some(start), None), start);
    }
}
