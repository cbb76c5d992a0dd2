//! Real engines behind Tether: any OpenAI-compatible server as the [`Model`] instead of the
//! simulator — spoken to in Chat Completions ([`chat`]) or Responses over HTTP ([`responses`]),
//! its stream translated to model events as it comes ([`translate`]), through a pooled HTTP
//! client ([`client`]) with bounded concurrency and a queue per replica ([`limiter`]), health
//! probes ([`health`]), failures that name the upstream ([`failure`]), the replica policy the
//! simulator uses, the call's task cancelled with its stream ([`call`]), and each
//! continuation serializing only its new items after its previous request's ([`prefix`]). Every exchange can
//! be recorded as JSONL fixtures and replayed as the engine ([`fixture`], [`replay`]); which
//! engine serves a model is [`dispatch`]'s, what the operator configured [`spec`]'s.
//!
//! Tether's own stages run as they do in front of the simulator, so WebSocket mode, the
//! connection cache, lanes, append/inject/steer and the store work the same in front of a real
//! engine; `docs/engines.md` says how to put one behind it.

pub mod body;
pub mod call;
pub mod chat;
pub mod client;
pub mod dispatch;
pub mod failure;
pub mod fixture;
pub mod health;
pub mod limiter;
pub mod metrics;
pub mod prefix;
pub mod quick_ack;
pub mod replay;
pub mod replica;
pub mod responses;
pub mod spec;
pub mod translate;
pub mod upstream;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::metrics::Metrics;
use crate::model::Model;
use client::Secret;
use fixture::Recorder;
use spec::{ConfigError, EngineSpec, Source};

/// What to do besides serving: record, and how to replay.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--record DIR`.
    pub record: Option<PathBuf>,
    /// `--replay-timing`.
    pub replay_timing: replay::Timing,
    /// `--replay-fallback`: a replay miss is served by the simulator.
    pub replay_fallback: bool,
}

/// The model the server serves with: the simulator alone when `specs` is empty, else the
/// engines (and the simulator for the models none of them serves, when none is the default).
/// `env` reads the environment (API keys); upstreams are probed from now on, so this runs
/// inside a tokio runtime.
pub fn build(
    specs: &[EngineSpec],
    options: &Options,
    simulator: Arc<dyn Model>,
    metrics: &Metrics,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Model>, ConfigError> {
    if specs.is_empty() {
        if let Some(dir) = &options.record {
            return Err(ConfigError::NothingToRecord { dir: dir.clone() });
        }
        return Ok(simulator);
    }
    let replaying = specs.iter().any(|s| matches!(s.source, Source::Replay(_)));
    if replaying && options.record.is_some() {
        return Err(ConfigError::RecordingAReplay);
    }
    let recorder = match &options.record {
        Some(dir) => Some(Arc::new(Recorder::new(dir).map_err(ConfigError::Fixtures)?)),
        None => None,
    };
    let engine_metrics = metrics::EngineMetrics::register(metrics);
    let mut replicas = Vec::new();
    let mut named: HashMap<String, Arc<dyn Model>> = HashMap::new();
    let mut default = None;
    let mut engines: Vec<Arc<dyn Model>> = Vec::new();
    for spec in specs {
        let engine: Arc<dyn Model> = match &spec.source {
            Source::Upstream(urls) => {
                let key = match &spec.api_key_env {
                    None => None,
                    Some(variable) => match env(variable).filter(|k| !k.trim().is_empty()) {
                        Some(key) => Some(Secret::new(key.trim())),
                        None => {
                            return Err(ConfigError::NoApiKey {
                                engine: spec.name.clone(),
                                variable: variable.clone(),
                            });
                        }
                    },
                };
                let upstream = upstream::Upstream::new(
                    spec,
                    urls,
                    key,
                    recorder.clone(),
                    engine_metrics.clone(),
                );
                for replica in upstream.replicas() {
                    replicas.push((spec.name.clone(), replica.clone()));
                }
                let replicas = urls
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ");
                let label = if spec.name == replicas {
                    String::new()
                } else {
                    format!(" {}", spec.name)
                };
                tracing::info!(
                    "engine{label}: {replicas} over {} ({}), models: {}",
                    spec.dialect.name(),
                    if spec.api_key_env.is_some() {
                        "with an API key"
                    } else {
                        "no API key"
                    },
                    if spec.models.is_empty() {
                        "every model".to_string()
                    } else {
                        spec.models.join(", ")
                    }
                );
                Arc::new(upstream)
            }
            Source::Replay(dir) => {
                let replay = replay::Replay::load(
                    &spec.name,
                    dir,
                    spec.upstream_model.clone(),
                    options.replay_timing,
                    options.replay_fallback.then(|| simulator.clone()),
                    engine_metrics.clone(),
                )
                .map_err(ConfigError::Fixtures)?;
                tracing::info!("engine {}: replaying {}", spec.name, dir.display());
                Arc::new(replay)
            }
        };
        if spec.models.is_empty() {
            default = Some(engine.clone());
        }
        for model in &spec.models {
            named.insert(model.clone(), engine.clone());
        }
        engines.push(engine);
    }
    metrics::register_gauges(metrics, replicas);
    Ok(Arc::new(dispatch::Dispatch::new(
        named,
        default.unwrap_or(simulator),
        engines,
    )))
}
