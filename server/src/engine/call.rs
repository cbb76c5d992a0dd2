//! One engine call as a model stream: a task drives it — waits for a slot on the replica,
//! sends the request (again, while nothing has streamed, after a failure another attempt may
//! cure), reads the event stream through the dialect's decoder and forwards its events — and
//! the stream the pipeline reads owns that task: dropping the stream (the client disconnected,
//! cancelled, or steered the response) aborts it, which drops the upstream's response body and
//! closes its connection, and the engine stops generating.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use tether_protocol::sse::SseDecoder;
use tokio::sync::mpsc;

use super::failure::UpstreamError;
use super::fixture::Recording;
use super::translate::Decoder;
use super::upstream::Shared;
use crate::model::{Admission, ModelEvent, ModelStream};

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

/// One call to a live upstream: `body` posted to replica `replica` of `shared`.
pub async fn run_upstream(
    shared: Arc<Shared>,
    replica: usize,
    body: Bytes,
    mut decoder: Box<dyn Decoder>,
    mut recording: Option<Recording>,
    tx: Events,
) {
    let target = shared.replicas[replica].clone();
    let fail = |error: &UpstreamError| {
        shared
            .metrics
            .outcome(&shared.name, &target.label, error.outcome());
        let (status, error) = error.to_api(&target.label, shared.key.as_ref().map(|k| k.expose()));
        ModelEvent::Fail { status, error }
    };
    let (_slot, queued) = match target.limiter.acquire().await {
        Ok(slot) => slot,
        Err(full) => {
            let error = UpstreamError::QueueFull {
                running: full.running,
                waiting: full.waiting,
            };
            let _ = tx.send(fail(&error)).await;
            return;
        }
    };
    let mut attempt = 0;
    let response = loop {
        let sent = super::client::post(
            &shared.client,
            &target.url,
            body.clone(),
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
                ) = (recording.take(), &error)
                {
                    recording.error(*status, *retry_after, message);
                }
                let _ = tx.send(fail(&error)).await;
                return;
            }
        }
    };
    if let Some(recording) = &mut recording {
        recording.answered(response.status().as_u16());
    }
    let admission = Admission {
        queue_time: queued,
        replica,
        ..Admission::default()
    };
    if tx.send(ModelEvent::Started(admission)).await.is_err() {
        return;
    }
    let mut body = response.into_body();
    let mut sse = SseDecoder::new();
    let mut chunks = 0usize;
    let outcome = loop {
        let frame = match tokio::time::timeout(shared.idle, body.frame()).await {
            Err(_) => {
                break Err(UpstreamError::Timeout {
                    waited: shared.idle,
                    streamed: decoder.streamed(),
                });
            }
            Ok(None) => match decoder.end() {
                Ok(events) => {
                    if !forward(&tx, events).await {
                        return;
                    }
                    break Ok(());
                }
                Err(error) => break Err(error),
            },
            Ok(Some(Err(error))) => {
                break Err(UpstreamError::Cut {
                    chunks,
                    reason: error.to_string(),
                });
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let mut failed = None;
        for message in sse.push(&data) {
            chunks += 1;
            if let Some(recording) = &mut recording {
                recording.chunk(message.event.as_deref(), &message.data);
            }
            match decoder.data(message.event.as_deref(), &message.data) {
                Ok(events) => {
                    if !forward(&tx, events).await {
                        return;
                    }
                }
                Err(error) => {
                    failed = Some(error);
                    break;
                }
            }
        }
        if let Some(error) = failed {
            break Err(error);
        }
        if decoder.finished() {
            match decoder.end() {
                Ok(events) => {
                    if !forward(&tx, events).await {
                        return;
                    }
                    // The rest of the body (its last chunk) is read apart, so the connection
                    // goes back to the pool instead of closing with the stream.
                    tokio::spawn(async move {
                        let drain = async { while let Some(Ok(_)) = body.frame().await {} };
                        let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
                    });
                    break Ok(());
                }
                Err(error) => break Err(error),
            }
        }
    };
    match outcome {
        Ok(()) => {
            shared.metrics.outcome(&shared.name, &target.label, "ok");
            if let Some(recording) = recording {
                recording.finish("done", None);
            }
        }
        Err(error) => {
            if let Some(recording) = recording {
                let (_, api) = error.to_api(&target.label, shared.key.as_ref().map(|k| k.expose()));
                recording.finish("cut", Some(&api.message));
            }
            let _ = tx.send(fail(&error)).await;
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
