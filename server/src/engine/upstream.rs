//! A live upstream engine as a [`Model`]: its replicas (each with its slots, its queue and its
//! health), the replica policy the simulator's replicas use (`crate::model::routing`: the
//! prompt's prefix and `prompt_cache_key`, kept per WebSocket connection, so the engine's prefix
//! cache is hit), and the dialect it speaks.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tether_protocol::{ApiError, ResponseCreate};
use tokio::time::Instant;

use super::body::Parts;
use super::call::{Shared, failed, upstream_stream};
use super::chat;
use super::client::{Secret, http_client};
use super::fixture::{Recorder, normalise};
use super::health::{State, spawn_probe};
use super::metrics::EngineMetrics;
use super::prefix::{Prefix, Prefixes, continues, fingerprint};
use super::replica::Replica;
use super::responses;
use super::spec::{BaseUrl, Dialect, EngineSpec};
use super::translate::Decoder;
use crate::model::routing::Router;
use crate::model::{Context, Model, ModelStream};

/// A live upstream engine.
pub struct Upstream {
    shared: Arc<Shared>,
    dialect: Dialect,
    upstream_model: Option<String>,
    router: Mutex<Router>,
    spill_per_minute: f64,
    recorder: Option<Arc<Recorder>>,
    /// The serialized conversations of recent requests, for their continuations.
    prefixes: Prefixes,
}

impl Upstream {
    /// The engine `spec` describes with `urls` as its replicas, its key `key`; each replica is
    /// probed from now on (so this runs inside a tokio runtime).
    pub fn new(
        spec: &EngineSpec,
        urls: &[BaseUrl],
        key: Option<Secret>,
        recorder: Option<Arc<Recorder>>,
        metrics: EngineMetrics,
    ) -> Self {
        let client = http_client(spec.timeouts.connect);
        let replicas: Vec<Arc<Replica>> = urls
            .iter()
            .map(|base| Arc::new(Replica::new(base, spec)))
            .collect();
        for replica in &replicas {
            spawn_probe(
                Arc::downgrade(replica),
                client.clone(),
                key.clone(),
                spec.timeouts.connect + Duration::from_secs(5),
            );
        }
        Upstream {
            shared: Arc::new(Shared {
                name: spec.name.clone(),
                client,
                key,
                replicas,
                idle: spec.timeouts.idle,
                retries: spec.retries,
                metrics,
            }),
            dialect: spec.dialect,
            upstream_model: spec.upstream_model.clone(),
            router: Mutex::new(Router::default()),
            spill_per_minute: spec.spill_requests_per_minute,
            recorder,
            prefixes: Prefixes::default(),
        }
    }

    pub fn replicas(&self) -> &[Arc<Replica>] {
        &self.shared.replicas
    }

    /// The replica for `context`: the routing policy's choice, or the next usable one when that
    /// one is down and another is not.
    fn route(&self, context: &Context) -> usize {
        let replicas = &self.shared.replicas;
        let chosen = self.router.lock().route(
            context,
            replicas.len(),
            self.spill_per_minute,
            Instant::now(),
        );
        if replicas[chosen].health.usable() {
            return chosen;
        }
        (1..replicas.len())
            .map(|step| (chosen + step) % replicas.len())
            .find(|r| replicas[*r].health.usable())
            .unwrap_or(chosen)
    }
}

/// A request's body in `dialect` for `model`, and the decoder of its answer.
pub fn build(
    dialect: Dialect,
    context: &Context,
    model: &str,
) -> Result<(serde_json::Value, Box<dyn Decoder>), ApiError> {
    let (parts, decoder, _) = encode(dialect, context, model, None)?;
    let body = serde_json::from_slice(&parts.to_vec())
        .map_err(|e| ApiError::server(format!("the engine request is not JSON: {e}")))?;
    Ok((body, decoder))
}

/// An engine request ready to send: its body, the reader of its answer, and its conversation
/// serialized (for the next request to continue from).
pub type Encoded = (Parts, Box<dyn Decoder>, Prefix);

/// A request's body in `dialect` for `model` as it is sent, the decoder of its answer, and its
/// conversation serialized, continuing `from` ([`super::prefix`]).
pub fn encode(
    dialect: Dialect,
    context: &Context,
    model: &str,
    from: Option<&Prefix>,
) -> Result<Encoded, ApiError> {
    let (bytes, decoder, mut prefix): (_, Box<dyn Decoder>, _) = match dialect {
        Dialect::Chat => {
            let (bytes, names, prefix) = chat::request::encode(context, model, from)?;
            (
                bytes,
                Box::new(chat::stream::ChatDecoder::new(names)),
                prefix,
            )
        }
        Dialect::Responses => {
            let (bytes, prefix) = responses::request::encode(context, model, from)?;
            (
                bytes,
                Box::new(responses::stream::ResponsesDecoder::default()),
                prefix,
            )
        }
    };
    prefix.last = context.items.last().map(fingerprint);
    Ok((Parts::new(bytes), decoder, prefix))
}

/// Refuses what `dialect` cannot carry.
pub fn check(dialect: Dialect, request: &ResponseCreate) -> Result<(), ApiError> {
    match dialect {
        Dialect::Chat => chat::request::check(request),
        Dialect::Responses => responses::request::check(request),
    }
}

impl Model for Upstream {
    fn real_engine(&self, _model: &str) -> bool {
        true
    }

    fn generate(&self, context: &Context) -> ModelStream {
        let model = self
            .upstream_model
            .clone()
            .unwrap_or_else(|| context.request.model.clone());
        // The conversation serialized for this response's earlier engine call (a long-running
        // response extended) or for the response it continues: only the new items are
        // serialized now.
        let from = self
            .prefixes
            .get(&context.response_id)
            .or_else(|| {
                let previous = context.request.previous_response_id.as_deref()?;
                self.prefixes.get(previous)
            })
            .filter(|prefix| continues(prefix, &context.items));
        let (body, decoder, prefix) = match encode(self.dialect, context, &model, from.as_deref()) {
            Ok(built) => built,
            Err(error) => return failed(400, error),
        };
        self.prefixes
            .put(context.response_id.clone(), Arc::new(prefix));
        let replica = self.route(context);
        let recording = self.recorder.as_ref().and_then(|recorder| {
            let value = serde_json::from_slice(&body.to_vec()).ok()?;
            Some(recorder.start(self.dialect, normalise(self.dialect, &value)))
        });
        upstream_stream(self.shared.clone(), replica, body, decoder, recording)
    }

    /// The ids the replicas list (`GET /models`).
    fn model_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .shared
            .replicas
            .iter()
            .flat_map(|r| r.health.models())
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }

    /// A listed model; any model when requests are sent as one upstream model, or while no
    /// replica has listed its models yet.
    fn serves(&self, model: &str) -> bool {
        let ids = self.model_ids();
        self.upstream_model.is_some() || ids.is_empty() || ids.iter().any(|id| id == model)
    }

    fn check(&self, request: &ResponseCreate) -> Result<(), ApiError> {
        check(self.dialect, request)
    }

    fn readiness(&self) -> Result<(), String> {
        let states: Vec<(String, State)> = self
            .shared
            .replicas
            .iter()
            .map(|r| (r.label.clone(), r.health.state()))
            .collect();
        if states.iter().any(|(_, state)| *state == State::Up) {
            return Ok(());
        }
        let each: Vec<String> = states
            .into_iter()
            .map(|(label, state)| match state {
                State::Unknown => format!("{label} not probed yet"),
                State::Down(why) => format!("{label} {why}"),
                State::Up => unreachable!("checked above"),
            })
            .collect();
        Err(format!(
            "engine {}: no replica answers ({})",
            self.shared.name,
            each.join("; ")
        ))
    }
}
