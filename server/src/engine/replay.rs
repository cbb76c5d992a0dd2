//! `--engine replay:DIR`: recorded exchanges ([`super::fixture`]) served as the engine. A
//! request is built as it would be for the upstream, normalised, and matched on that exactly;
//! its recorded chunks then go through the same dialect decoder a live stream does, paced as
//! recorded, at once, or sped up. The n-th identical request gets the n-th recording (the last
//! one again after that). A request no recording matches fails with a message naming the closest
//! recording and the first field that differs — or, with `--replay-fallback`, is served by the
//! simulator.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use tether_protocol::{ApiError, ResponseCreate};

use super::call::{Events, failed, forward, spawn_stream, wait_until};
use super::failure::UpstreamError;
use super::fixture::{self, Ending, Fixture, first_difference, normalise, shared_prefix};
use super::metrics::EngineMetrics;
use super::spec::Dialect;
use super::translate::Decoder;
use super::upstream::{build, check};
use crate::model::{Admission, Context, Model, ModelEvent, ModelStream};

/// How recorded chunks are paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timing {
    /// As they came.
    Recorded,
    /// All at once.
    Instant,
    /// This many times faster than recorded.
    Scaled(f64),
}

impl Timing {
    /// `recorded`, `instant`, or a speed factor (`2`: twice as fast).
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "recorded" => Ok(Timing::Recorded),
            "instant" => Ok(Timing::Instant),
            other => match other.parse::<f64>() {
                Ok(scale) if scale.is_finite() && scale > 0.0 => Ok(Timing::Scaled(scale)),
                _ => Err(format!(
                    "--replay-timing {other}: expected recorded, instant or a positive speed \
                     factor (2 = twice as fast)"
                )),
            },
        }
    }

    fn scale(self) -> Option<f64> {
        match self {
            Timing::Recorded => Some(1.0),
            Timing::Instant => None,
            Timing::Scaled(scale) => Some(scale),
        }
    }
}

/// Recorded exchanges served as an engine.
pub struct Replay {
    label: String,
    name: String,
    dialect: Dialect,
    upstream_model: Option<String>,
    by_key: HashMap<String, Vec<Arc<Fixture>>>,
    all: Vec<Arc<Fixture>>,
    uses: Mutex<HashMap<String, usize>>,
    timing: Timing,
    fallback: Option<Arc<dyn Model>>,
    metrics: EngineMetrics,
}

impl Replay {
    /// The fixtures of `dir`; all of one dialect.
    pub fn load(
        name: &str,
        dir: &Path,
        upstream_model: Option<String>,
        timing: Timing,
        fallback: Option<Arc<dyn Model>>,
        metrics: EngineMetrics,
    ) -> Result<Self, String> {
        let fixtures = fixture::load_dir(dir)?;
        let dialect = fixtures[0].dialect;
        if let Some(other) = fixtures.iter().find(|f| f.dialect != dialect) {
            return Err(format!(
                "replay:{}: {} is a {} exchange, {} a {} one: one directory replays one dialect",
                dir.display(),
                fixtures[0].file.display(),
                dialect.name(),
                other.file.display(),
                other.dialect.name()
            ));
        }
        let all: Vec<Arc<Fixture>> = fixtures.into_iter().map(Arc::new).collect();
        let mut by_key: HashMap<String, Vec<Arc<Fixture>>> = HashMap::new();
        for fixture in &all {
            by_key
                .entry(fixture.key.clone())
                .or_default()
                .push(fixture.clone());
        }
        // `KEY.jsonl` before `KEY.2.jsonl` … before `KEY.10.jsonl`.
        for list in by_key.values_mut() {
            list.sort_by_key(|f| {
                let stem = f.file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                stem.rsplit_once('.')
                    .and_then(|(_, n)| n.parse::<usize>().ok())
                    .unwrap_or(1)
            });
        }
        Ok(Replay {
            label: format!("replay:{}", dir.display()),
            name: name.to_string(),
            dialect,
            upstream_model,
            by_key,
            all,
            uses: Mutex::new(HashMap::new()),
            timing,
            fallback,
            metrics,
        })
    }

    /// The fixture for the `key`'s next use.
    fn take(&self, key: &str) -> Option<Arc<Fixture>> {
        let list = self.by_key.get(key)?;
        let mut uses = self.uses.lock();
        let used = uses.entry(key.to_string()).or_insert(0);
        let fixture = list[(*used).min(list.len() - 1)].clone();
        *used += 1;
        Some(fixture)
    }

    /// Why nothing matches `request`: the closest recording and where it differs.
    fn miss(&self, request: &serde_json::Value) -> ApiError {
        let closest = self
            .all
            .iter()
            .max_by_key(|f| shared_prefix(self.dialect, &f.request, request));
        let detail = match closest.and_then(|f| Some((f, first_difference(&f.request, request)?))) {
            Some((fixture, (path, recorded, sent))) => format!(
                " The closest, {}, differs at {path}: recorded {recorded}, this request {sent}.",
                fixture.file.display()
            ),
            None => String::new(),
        };
        ApiError::invalid_request(
            Some("replay_miss"),
            format!(
                "No recorded exchange in {} matches this request ({} recordings).{detail} \
                 Record it with --record, or serve misses with the simulator \
                 (--replay-fallback).",
                self.label,
                self.all.len()
            ),
            None,
        )
    }
}

impl Model for Replay {
    /// A recording's timing holds the hop to the engine it was recorded from.
    fn real_engine(&self, _model: &str) -> bool {
        true
    }

    fn generate(&self, context: &Context) -> ModelStream {
        let model = self
            .upstream_model
            .clone()
            .unwrap_or_else(|| context.request.model.clone());
        let (body, decoder) = match build(self.dialect, context, &model) {
            Ok(built) => built,
            Err(error) => return failed(400, error),
        };
        let normalised = normalise(self.dialect, &body);
        let Some(fixture) = self.take(&fixture::key(&normalised)) else {
            if let Some(fallback) = &self.fallback {
                self.metrics.outcome(&self.name, &self.label, "fallback");
                return fallback.generate(context);
            }
            self.metrics.outcome(&self.name, &self.label, "miss");
            return failed(404, self.miss(&normalised));
        };
        self.metrics.outcome(&self.name, &self.label, "replayed");
        let (label, scale) = (self.label.clone(), self.timing.scale());
        spawn_stream(move |tx| play(fixture, decoder, label, scale, tx))
    }

    fn model_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .all
            .iter()
            .filter_map(|f| f.request.get("model")?.as_str().map(str::to_string))
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }

    fn check(&self, request: &ResponseCreate) -> Result<(), ApiError> {
        check(self.dialect, request)
    }
}

/// Plays `fixture` through `decoder`.
async fn play(
    fixture: Arc<Fixture>,
    mut decoder: Box<dyn Decoder>,
    label: String,
    scale: Option<f64>,
    tx: Events,
) {
    let start = Instant::now();
    let fail = |error: UpstreamError| {
        let (status, error) = error.to_api(&label, None);
        ModelEvent::Fail { status, error }
    };
    if let Ending::Error {
        status,
        retry_after,
        body,
    } = &fixture.ending
    {
        wait_until(start, fixture.answered_at, scale).await;
        let (message, code) = super::failure::error_body(body.as_bytes());
        let _ = tx
            .send(fail(UpstreamError::Status {
                status: *status,
                message,
                code,
                retry_after: *retry_after,
            }))
            .await;
        return;
    }
    wait_until(start, fixture.answered_at, scale).await;
    if tx
        .send(ModelEvent::Started(Admission::default()))
        .await
        .is_err()
    {
        return;
    }
    for (index, chunk) in fixture.chunks.iter().enumerate() {
        wait_until(start, chunk.at, scale).await;
        match decoder.data(chunk.event.as_deref(), &chunk.data) {
            Ok(events) => {
                if !forward(&tx, events).await {
                    return;
                }
            }
            Err(error) => {
                let _ = tx.send(fail(error)).await;
                return;
            }
        }
        if decoder.finished() && index + 1 < fixture.chunks.len() {
            break;
        }
    }
    let ended = match &fixture.ending {
        Ending::Cut(reason) => Err(UpstreamError::Cut {
            chunks: fixture.chunks.len(),
            reason: reason.clone(),
        }),
        _ => decoder.end(),
    };
    match ended {
        Ok(events) => {
            forward(&tx, events).await;
        }
        Err(error) => {
            let _ = tx.send(fail(error)).await;
        }
    }
}
