//! The engines' series, registered only when an engine is configured:
//! `tether_engine_requests_total{engine,upstream,outcome}` (`ok`, or how it failed),
//! `tether_engine_retries_total{engine,upstream}`, and, read at scrape time,
//! `tether_engine_up`, `tether_engine_running` and `tether_engine_waiting` by replica.

use std::sync::Arc;

use prometheus::{IntCounterVec, IntGaugeVec, Opts};

use super::health::State;
use super::replica::Replica;
use crate::metrics::{Metrics, OnScrape};

/// The counters every engine counts in.
#[derive(Debug, Clone)]
pub struct EngineMetrics {
    requests: IntCounterVec,
    retries: IntCounterVec,
}

impl EngineMetrics {
    pub fn register(metrics: &Metrics) -> Self {
        let requests = IntCounterVec::new(
            Opts::new(
                "tether_engine_requests_total",
                "Requests to upstream engines, by how they ended.",
            ),
            &["engine", "upstream", "outcome"],
        )
        .expect("valid metric");
        let retries = IntCounterVec::new(
            Opts::new(
                "tether_engine_retries_total",
                "Attempts made again after an upstream failed before streaming anything.",
            ),
            &["engine", "upstream"],
        )
        .expect("valid metric");
        metrics.register(requests.clone());
        metrics.register(retries.clone());
        EngineMetrics { requests, retries }
    }

    pub fn outcome(&self, engine: &str, upstream: &str, outcome: &str) {
        self.requests
            .with_label_values(&[engine, upstream, outcome])
            .inc();
    }

    pub fn retried(&self, engine: &str, upstream: &str) {
        self.retries.with_label_values(&[engine, upstream]).inc();
    }
}

/// The replicas' gauges, read at scrape time: `(engine, replica)` pairs.
pub fn register_gauges(metrics: &Metrics, replicas: Vec<(String, Arc<Replica>)>) {
    let replicas = Arc::new(replicas);
    let gauge = |name: &str, help: &str| {
        IntGaugeVec::new(Opts::new(name, help), &["engine", "upstream"]).expect("valid metric")
    };
    let read = |metric: IntGaugeVec, value: fn(&Replica) -> i64| {
        let replicas = replicas.clone();
        OnScrape::new(metric, move |gauge: &IntGaugeVec| {
            for (engine, replica) in replicas.iter() {
                gauge
                    .with_label_values(&[engine.as_str(), replica.label.as_str()])
                    .set(value(replica));
            }
        })
    };
    metrics.register(read(
        gauge(
            "tether_engine_up",
            "1 while the upstream replica answers (its /models probe or its last request).",
        ),
        |r| i64::from(r.health.state() == State::Up),
    ));
    metrics.register(read(
        gauge(
            "tether_engine_running",
            "Requests running on the upstream replica (at most its max_concurrency).",
        ),
        |r| r.limiter.running() as i64,
    ));
    metrics.register(read(
        gauge(
            "tether_engine_waiting",
            "Requests waiting for a slot on the upstream replica (at most its max_queue).",
        ),
        |r| r.limiter.waiting() as i64,
    ));
}
