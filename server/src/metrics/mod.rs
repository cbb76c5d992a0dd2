//! Prometheus exposition at `/metrics`: one registry for the whole server, encoded by the
//! `prometheus` crate in the classic text format. The server's own series are here; the pipeline
//! stages' histograms are in [`stages`], the simulator registers its vLLM-named series
//! (`crate::sim::metrics`) and the HTTP token cache its counters in the same registry, so one
//! scrape sees everything.

mod on_scrape;
mod stages;

pub use on_scrape::OnScrape;
pub use stages::StageHistograms;

use prometheus::{Encoder, IntCounter, IntCounterVec, IntGauge, Opts, Registry, TextEncoder};

/// Which transport served a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Http,
    Sse,
    Ws,
}

impl Transport {
    fn label(self) -> &'static str {
        match self {
            Transport::Http => "http",
            Transport::Sse => "sse",
            Transport::Ws => "ws",
        }
    }
}

/// Where a WebSocket continuation found its previous response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheLookup {
    /// In the connection cache.
    Hit,
    /// Not cached, hydrated from the persistent store.
    Store,
    /// Nowhere: `previous_response_not_found`.
    Miss,
}

impl CacheLookup {
    fn label(self) -> &'static str {
        match self {
            CacheLookup::Hit => "hit",
            CacheLookup::Store => "store",
            CacheLookup::Miss => "miss",
        }
    }
}

/// The registry and the server's own series.
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    ws_connections_total: IntCounter,
    ws_connections_active: IntGauge,
    responses: IntCounterVec,
    cache_lookups: IntCounterVec,
    classifier_findings: IntCounterVec,
    /// `tether_stage_duration_seconds{stage,path}`.
    pub stages: StageHistograms,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A registry with the server's series, every label value of a fixed set already present
    /// (so a dashboard sees zeros, not gaps).
    pub fn new() -> Self {
        let registry = Registry::new();
        let ws_connections_total = IntCounter::new(
            "tether_ws_connections_total",
            "WebSocket connections accepted.",
        )
        .expect("valid metric");
        let ws_connections_active = IntGauge::new(
            "tether_ws_connections_active",
            "WebSocket connections open now.",
        )
        .expect("valid metric");
        let counters = |name: &str, help: &str, label: &str| {
            IntCounterVec::new(Opts::new(name, help), &[label]).expect("valid metric")
        };
        let responses = counters(
            "tether_responses_total",
            "Responses served, by transport.",
            "transport",
        );
        let cache_lookups = counters(
            "tether_cache_lookups_total",
            "WebSocket continuations by where the previous response was found.",
            "result",
        );
        let classifier_findings = counters(
            "tether_classifier_findings_total",
            "Sensitive-content findings in request input, by rule.",
            "rule",
        );
        for transport in [Transport::Http, Transport::Sse, Transport::Ws] {
            responses.with_label_values(&[transport.label()]);
        }
        for lookup in [CacheLookup::Hit, CacheLookup::Store, CacheLookup::Miss] {
            cache_lookups.with_label_values(&[lookup.label()]);
        }
        let stages = StageHistograms::new();
        let metrics = Metrics {
            registry,
            ws_connections_total,
            ws_connections_active,
            responses,
            cache_lookups,
            classifier_findings,
            stages,
        };
        metrics.register(metrics.ws_connections_total.clone());
        metrics.register(metrics.ws_connections_active.clone());
        metrics.register(metrics.responses.clone());
        metrics.register(metrics.cache_lookups.clone());
        metrics.register(metrics.classifier_findings.clone());
        metrics.register(metrics.stages.collector());
        metrics
    }

    /// Adds `collector`'s series to the registry.
    ///
    /// # Panics
    /// If its names clash with series already registered: that is a programming error.
    pub fn register(&self, collector: impl prometheus::core::Collector + 'static) {
        self.registry
            .register(Box::new(collector))
            .expect("metric names are unique");
    }

    pub fn ws_connected(&self) {
        self.ws_connections_total.inc();
        self.ws_connections_active.inc();
    }

    pub fn ws_disconnected(&self) {
        self.ws_connections_active.dec();
    }

    pub fn response_served(&self, transport: Transport) {
        self.responses.with_label_values(&[transport.label()]).inc();
    }

    pub fn classifier_finding(&self, rule: &'static str) {
        self.classifier_findings.with_label_values(&[rule]).inc();
    }

    pub fn cache_lookup(&self, lookup: CacheLookup) {
        self.cache_lookups
            .with_label_values(&[lookup.label()])
            .inc();
    }

    /// The Prometheus text exposition of every registered series.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        if let Err(error) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::error!("encoding /metrics: {error}");
        }
        String::from_utf8(out).unwrap_or_default()
    }

    /// The content type of [`Metrics::render`]'s text.
    pub fn content_type(&self) -> &'static str {
        prometheus::TEXT_FORMAT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_series() {
        let metrics = Metrics::new();
        metrics.ws_connected();
        metrics.response_served(Transport::Sse);
        metrics.cache_lookup(CacheLookup::Store);
        let text = metrics.render();
        assert!(text.contains("tether_ws_connections_total 1\n"));
        assert!(text.contains("tether_ws_connections_active 1\n"));
        assert!(text.contains("tether_responses_total{transport=\"sse\"} 1\n"));
        assert!(text.contains("tether_responses_total{transport=\"ws\"} 0\n"));
        assert!(text.contains("tether_cache_lookups_total{result=\"store\"} 1\n"));
        metrics.ws_disconnected();
        assert!(
            metrics
                .render()
                .contains("tether_ws_connections_active 0\n")
        );
    }
}
