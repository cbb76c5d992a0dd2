//! One replica of a live upstream engine: where its generations are posted, its slots and queue
//! ([`super::limiter`]) and its health ([`super::health`]) — what the engine's calls, its
//! probes and its gauges all read.

use super::health::{Health, Probed};
use super::limiter::Limiter;
use super::spec::{BaseUrl, EngineSpec};

/// One replica of an upstream.
#[derive(Debug)]
pub struct Replica {
    /// Its base URL, as messages name it.
    pub label: String,
    /// Where generations are posted.
    pub url: String,
    models_url: String,
    pub limiter: Limiter,
    pub health: Health,
}

impl Replica {
    /// The replica of engine `spec` at `base`, healthy until a probe or a request says not.
    pub fn new(base: &BaseUrl, spec: &EngineSpec) -> Self {
        Replica {
            label: base.to_string(),
            url: base.join(spec.dialect.path()),
            models_url: base.join("/models"),
            limiter: Limiter::new(spec.max_concurrency, spec.max_queue),
            health: Health::default(),
        }
    }
}

impl Probed for Replica {
    fn health(&self) -> &Health {
        &self.health
    }

    fn models_url(&self) -> String {
        self.models_url.clone()
    }
}
