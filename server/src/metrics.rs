//! Prometheus exposition at `/metrics`: plain atomic counters rendered by hand, because the
//! handful of series we need do not justify a metrics framework.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// Which transport served a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Http,
    Sse,
    Ws,
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

/// The server's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    ws_connections_total: AtomicU64,
    ws_connections_active: AtomicI64,
    responses: [AtomicU64; 3],
    cache_lookups: [AtomicU64; 3],
    /// Classifier findings by rule (a handful of static names).
    classifier_findings: Mutex<BTreeMap<&'static str, u64>>,
}

impl Metrics {
    pub fn ws_connected(&self) {
        self.ws_connections_total.fetch_add(1, Ordering::Relaxed);
        self.ws_connections_active.fetch_add(1, Ordering::Relaxed);
    }

    pub fn ws_disconnected(&self) {
        self.ws_connections_active.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn response_served(&self, transport: Transport) {
        self.responses[transport as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn classifier_finding(&self, rule: &'static str) {
        let mut findings = self
            .classifier_findings
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        *findings.entry(rule).or_default() += 1;
    }

    pub fn cache_lookup(&self, lookup: CacheLookup) {
        self.cache_lookups[lookup as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// The Prometheus text exposition of every series.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "# HELP tether_ws_connections_total WebSocket connections accepted."
        );
        let _ = writeln!(out, "# TYPE tether_ws_connections_total counter");
        let _ = writeln!(
            out,
            "tether_ws_connections_total {}",
            get(&self.ws_connections_total)
        );
        let _ = writeln!(
            out,
            "# HELP tether_ws_connections_active WebSocket connections open now."
        );
        let _ = writeln!(out, "# TYPE tether_ws_connections_active gauge");
        let active = self.ws_connections_active.load(Ordering::Relaxed);
        let _ = writeln!(out, "tether_ws_connections_active {active}");
        let _ = writeln!(
            out,
            "# HELP tether_responses_total Responses served, by transport."
        );
        let _ = writeln!(out, "# TYPE tether_responses_total counter");
        for (label, counter) in ["http", "sse", "ws"].iter().zip(&self.responses) {
            let _ = writeln!(
                out,
                "tether_responses_total{{transport=\"{label}\"}} {}",
                get(counter)
            );
        }
        let _ = writeln!(
            out,
            "# HELP tether_cache_lookups_total WebSocket continuations by where the previous response was found."
        );
        let _ = writeln!(out, "# TYPE tether_cache_lookups_total counter");
        for (label, counter) in ["hit", "store", "miss"].iter().zip(&self.cache_lookups) {
            let _ = writeln!(
                out,
                "tether_cache_lookups_total{{result=\"{label}\"}} {}",
                get(counter)
            );
        }
        let _ = writeln!(
            out,
            "# HELP tether_classifier_findings_total Sensitive-content findings in request input, by rule."
        );
        let _ = writeln!(out, "# TYPE tether_classifier_findings_total counter");
        let findings = self
            .classifier_findings
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        for (rule, count) in findings.iter() {
            let _ = writeln!(
                out,
                "tether_classifier_findings_total{{rule=\"{rule}\"}} {count}"
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_series() {
        let metrics = Metrics::default();
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
