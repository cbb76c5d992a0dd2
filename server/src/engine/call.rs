//! One engine call as a model stream: it waits for a slot on the replica, sends the request
//! (again, while nothing has streamed, after a failure another attempt may cure), and reads the
//! event stream through the dialect's decoder — all inside the stream the pipeline polls, so no
//! task hop sits between the engine's chunks and the client's events. Dropping the stream (the
//! client disconnected, cancelled, or steered the response) drops the upstream's response body
//! and closes its connection, and the engine stops generating. (A replay, which paces itself,
//! runs as a task its stream owns: [`spawn_stream`].)

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use hyper::body::Incoming;
use tether_protocol::sse::SseDecoder;
use tokio::sync::mpsc;

use super::body::Parts;
use super::client::{HttpClient, Secret};
use super::failure::UpstreamError;
use super::fixture::Recording;
use super::limiter::Slot;
use super::metrics::EngineMetrics;
use super::replica::Replica;
use super::translate::Decoder;
use crate::model::{Admission, ModelEvent, ModelStream};

/// What a call's task needs of its engine.
pub struct Shared {
    pub name: String,
    pub client: HttpClient,
    pub key: Option<Secret>,
    pub replicas: Vec<Arc<Replica>>,
    pub idle: Duration,
    pub retries: u32,
    pub metrics: EngineMetrics,
}

/// Events buffered between the call's task and the pipeline.
const BUFFER: usize = 64;

/// The longest `retry-after` Tether waits out itself before another attempt; a longer one
/// fails the response with the upstream's 429 (the client may wait that long, Tether will not
/// hold a slot for it).
const MAX_RETRY_WAIT: Duration = Duration::from_secs(5);

/// Aborts the call's task when the stream that reads it goes away.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Where a call's task sends its events; `Err` once the stream was dropped.
pub type Events = mpsc::Sender<ModelEvent>;

/// The model stream of the task `run` builds: it is started now and aborted when the stream is
/// dropped.
pub fn spawn_stream<F, Fut>(run: F) -> ModelStream
where
    F: FnOnce(Events) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = mpsc::channel(BUFFER);
    let guard = AbortOnDrop(tokio::spawn(run(tx)));
    let events = futures_util::stream::unfold((rx, guard), |(mut rx, guard)| async move {
        rx.recv().await.map(|event| (event, (rx, guard)))
    });
    Box::pin(events)
}

/// A stream that only fails.
pub fn failed(status: u16, error: tether_protocol::ApiError) -> ModelStream {
    Box::pin(futures_util::stream::once(async move {
        ModelEvent::Fail { status, error }
    }))
}

/// Sends `events`; false when nobody reads any more.
pub async fn forward(tx: &Events, events: Vec<ModelEvent>) -> bool {
    for event in events {
        if tx.send(event).await.is_err() {
            return false;
        }
    }
    true
}

/// The wait before attempt `attempt + 1` (0-based): the upstream's `retry-after`, else 100 ms
/// doubling; `None` when the upstream asked for longer than Tether waits.
fn backoff(attempt: u32, error: &UpstreamError) -> Option<Duration> {
    match error {
        UpstreamError::Status {
            retry_after: Some(wait),
            ..
        } => (*wait <= MAX_RETRY_WAIT).then_some(*wait),
        _ => Some(Duration::from_millis(100) * 2u32.saturating_pow(attempt)),
    }
}

/// Where a live call is.
enum Phase {
    /// Not sent yet: a slot to wait for, attempts to make.
    Start,
    /// The engine answered; its stream is read.
    Streaming {
        body: Incoming,
        sse: SseDecoder,
        chunks: usize,
        /// The replica's slot, held while its stream runs.
        _slot: Slot,
    },
    Over,
}

/// One call to a live upstream, read as a stream by the pipeline's own task (no task of its
/// own between the engine and the client): dropping the stream drops the engine's response
/// body, which closes its connection.
struct Call {
    shared: Arc<Shared>,
    replica: usize,
    body: Parts,
    decoder: Box<dyn Decoder>,
    recording: Option<Recording>,
    phase: Phase,
    ready: VecDeque<ModelEvent>,
}

/// The model stream of one call: `body` posted to replica `replica` of `shared`.
pub fn upstream_stream(
    shared: Arc<Shared>,
    replica: usize,
    body: Parts,
    decoder: Box<dyn Decoder>,
    recording: Option<Recording>,
) -> ModelStream {
    let call = Call {
        shared,
        replica,
        body,
        decoder,
        recording,
        phase: Phase::Start,
        ready: VecDeque::new(),
    };
    Box::pin(futures_util::stream::unfold(call, |mut call| async move {
        loop {
            if let Some(event) = call.ready.pop_front() {
                return Some((event, call));
            }
            if matches!(call.phase, Phase::Over) {
                return None;
            }
            call.advance().await;
        }
    }))
}

impl Call {
    fn target(&self) -> &Arc<Replica> {
        &self.shared.replicas[self.replica]
    }

    /// The response fails with `error` (counted, and recorded as cut when the engine had
    /// answered).
    fn fail(&mut self, error: &UpstreamError) {
        let target = self.target().clone();
        let key = self.shared.key.as_ref().map(|k| k.expose());
        self.shared
            .metrics
            .outcome(&self.shared.name, &target.label, error.outcome());
        let (status, api) = error.to_api(&target.label, key);
        if let Some(recording) = self.recording.take() {
            recording.finish("cut", Some(&api.message));
        }
        self.ready
            .push_back(ModelEvent::Fail { status, error: api });
        self.phase = Phase::Over;
    }

    /// Makes progress: events into `ready`, or the phase moves on.
    async fn advance(&mut self) {
        match std::mem::replace(&mut self.phase, Phase::Over) {
            Phase::Over => {}
            Phase::Start => self.send().await,
            Phase::Streaming {
                body,
                sse,
                chunks,
                _slot,
            } => self.read(body, sse, chunks, _slot).await,
        }
    }

    /// Waits for a slot, posts the request (again, after a failure nothing has streamed in,
    /// while attempts are left), and starts reading the answer.
    async fn send(&mut self) {
        let target = self.target().clone();
        let shared = self.shared.clone();
        let (slot, queued) = match target.limiter.acquire().await {
            Ok(slot) => slot,
            Err(full) => {
                // Nothing was exchanged: nothing to record.
                self.recording = None;
                return self.fail(&UpstreamError::QueueFull {
                    running: full.running,
                    waiting: full.waiting,
                });
            }
        };
        let mut attempt = 0;
        let response = loop {
            let sent = super::client::post(
                &shared.client,
                &target.url,
                self.body.clone(),
                shared.key.as_ref(),
                shared.idle,
            )
            .await;
            target.health.observe(sent.as_ref().map(|_| ()));
            match sent {
                Ok(response) => break response,
                Err(error) => {
                    let wait = (error.retryable() && attempt < shared.retries)
                        .then(|| backoff(attempt, &error))
                        .flatten();
                    if let Some(wait) = wait {
                        shared.metrics.retried(&shared.name, &target.label);
                        tracing::debug!(
                            "engine {}: {} failed ({}), attempt {} in {wait:?}",
                            shared.name,
                            target.label,
                            error.outcome(),
                            attempt + 2
                        );
                        tokio::time::sleep(wait).await;
                        attempt += 1;
                        continue;
                    }
                    if let (
                        Some(recording),
                        UpstreamError::Status {
                            status,
                            message,
                            retry_after,
                            ..
                        },
                    ) = (self.recording.take(), &error)
                    {
                        recording.error(*status, *retry_after, message);
                    }
                    // A connection refused or a timeout exchanged nothing to record.
                    self.recording = None;
                    return self.fail(&error);
                }
            }
        };
        if let Some(recording) = &mut self.recording {
            recording.answered(response.status().as_u16());
        }
        self.ready.push_back(ModelEvent::Started(Admission {
            queue_time: queued,
            replica: self.replica,
            ..Admission::default()
        }));
        self.phase = Phase::Streaming {
            body: response.into_body(),
            sse: SseDecoder::new(),
            chunks: 0,
            _slot: slot,
        };
    }

    /// Reads the next frame of the answer and decodes what it completes.
    async fn read(
        &mut self,
        mut body: Incoming,
        mut sse: SseDecoder,
        mut chunks: usize,
        slot: Slot,
    ) {
        let idle = self.shared.idle;
        let frame = match tokio::time::timeout(idle, body.frame()).await {
            Err(_) => {
                let streamed = self.decoder.streamed();
                return self.fail(&UpstreamError::Timeout {
                    waited: idle,
                    streamed,
                });
            }
            Ok(None) => return self.end(None),
            Ok(Some(Err(error))) => {
                return self.fail(&UpstreamError::Cut {
                    chunks,
                    reason: error.to_string(),
                });
            }
            Ok(Some(Ok(frame))) => frame,
        };
        if let Ok(data) = frame.into_data() {
            for message in sse.push(&data) {
                chunks += 1;
                if let Some(recording) = &mut self.recording {
                    recording.chunk(message.event.as_deref(), &message.data);
                }
                match self.decoder.data(message.event.as_deref(), &message.data) {
                    Ok(events) => self.ready.extend(events),
                    Err(error) => return self.fail(&error),
                }
            }
        }
        if self.decoder.finished() {
            return self.end(Some(body));
        }
        self.phase = Phase::Streaming {
            body,
            sse,
            chunks,
            _slot: slot,
        };
    }

    /// The engine said it is done (or its body ended): the closing events; the rest of the
    /// body, if any, is read apart so that its connection goes back to the pool.
    fn end(&mut self, body: Option<Incoming>) {
        match self.decoder.end() {
            Ok(events) => {
                self.ready.extend(events);
                let label = self.target().label.clone();
                self.shared.metrics.outcome(&self.shared.name, &label, "ok");
                if let Some(recording) = self.recording.take() {
                    recording.finish("done", None);
                }
                if let Some(mut body) = body {
                    tokio::spawn(async move {
                        let drain = async { while let Some(Ok(_)) = body.frame().await {} };
                        let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
                    });
                }
                self.phase = Phase::Over;
            }
            Err(error) => self.fail(&error),
        }
    }
}

/// Waits until `at` after `start`, sped up `scale` times (`None`: no wait at all).
pub async fn wait_until(start: Instant, at: Duration, scale: Option<f64>) {
    if let Some(scale) = scale {
        let due = start + at.div_f64(scale);
        tokio::time::sleep_until(due.into()).await;
    }
}
