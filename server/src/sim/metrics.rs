//! The simulator's Prometheus series, named like vLLM's (`vllm:…` with a `model_name` label) so
//! dashboards and load-test tooling built for a real vLLM server read them unchanged: time to
//! first token, inter-token latency, end-to-end latency and queue time histograms, running and
//! waiting gauges, prompt and generation token counters, and the prompt cache's queries, hits,
//! usage, writes and evictions. They live in the server's one registry
//! (`crate::metrics`).

use prometheus::{
    GaugeVec, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts,
};

use super::prompt_cache::CacheCounters;
use crate::metrics::{Metrics, OnScrape};

const TTFT_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0,
];
const ITL_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3,
    0.4, 0.5, 0.75, 1.0, 2.5,
];
const E2E_BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
    60.0, 120.0,
];

/// The series of one model (profile): the children of the families for its `model_name`.
#[derive(Debug, Clone)]
pub struct ModelMetrics {
    pub time_to_first_token: Histogram,
    pub inter_token_latency: Histogram,
    pub e2e_request_latency: Histogram,
    pub request_queue_time: Histogram,
    pub prompt_tokens: IntCounter,
    pub generation_tokens: IntCounter,
    pub request_success: IntCounter,
    /// The prompt cache's counters.
    pub prompt_cache: CacheCounters,
}

/// The vLLM-named families, registered once.
#[derive(Clone)]
pub struct SimulatorMetrics {
    time_to_first_token: HistogramVec,
    inter_token_latency: HistogramVec,
    e2e_request_latency: HistogramVec,
    request_queue_time: HistogramVec,
    prompt_tokens: IntCounterVec,
    generation_tokens: IntCounterVec,
    request_success: IntCounterVec,
    prefix_cache_queries: IntCounterVec,
    prefix_cache_hits: IntCounterVec,
    prompt_cache_written: IntCounterVec,
    prompt_cache_requests: IntCounterVec,
    prompt_cache_evictions: IntCounterVec,
}

fn histogram(name: &str, help: &str, buckets: &[f64]) -> HistogramVec {
    HistogramVec::new(
        HistogramOpts::new(name, help).buckets(buckets.to_vec()),
        &["model_name"],
    )
    .expect("valid metric")
}

fn counter(name: &str, help: &str) -> IntCounterVec {
    IntCounterVec::new(Opts::new(name, help), &["model_name"]).expect("valid metric")
}

impl SimulatorMetrics {
    /// The families, registered in `metrics`' registry.
    pub fn register(metrics: &Metrics) -> Self {
        let families = SimulatorMetrics {
            time_to_first_token: histogram(
                "vllm:time_to_first_token_seconds",
                "Time from arrival to the first token.",
                TTFT_BUCKETS,
            ),
            inter_token_latency: histogram(
                "vllm:inter_token_latency_seconds",
                "Time between consecutive tokens.",
                ITL_BUCKETS,
            ),
            e2e_request_latency: histogram(
                "vllm:e2e_request_latency_seconds",
                "Time from arrival to the last token.",
                E2E_BUCKETS,
            ),
            request_queue_time: histogram(
                "vllm:request_queue_time_seconds",
                "Time spent waiting for a decoding slot.",
                E2E_BUCKETS,
            ),
            prompt_tokens: counter("vllm:prompt_tokens_total", "Prompt tokens processed."),
            generation_tokens: counter("vllm:generation_tokens_total", "Tokens generated."),
            request_success: counter(
                "vllm:request_success_total",
                "Requests that finished generating.",
            ),
            prefix_cache_queries: counter(
                "vllm:prefix_cache_queries_total",
                "Prompt tokens looked up in the prefix (prompt) cache.",
            ),
            prefix_cache_hits: counter(
                "vllm:prefix_cache_hits_total",
                "Prompt tokens found in the prefix (prompt) cache.",
            ),
            prompt_cache_written: counter(
                "tether_prompt_cache_written_tokens_total",
                "Prompt tokens written to the engine's prompt cache.",
            ),
            prompt_cache_requests: IntCounterVec::new(
                Opts::new(
                    "tether_prompt_cache_requests_total",
                    "Requests by what the prompt cache did: hit, miss, or ineligible (too short to cache).",
                ),
                &["model_name", "result"],
            )
            .expect("valid metric"),
            prompt_cache_evictions: IntCounterVec::new(
                Opts::new(
                    "tether_prompt_cache_evictions_total",
                    "Cached prefixes dropped, by reason: capacity (least recently used) or expired.",
                ),
                &["model_name", "reason"],
            )
            .expect("valid metric"),
        };
        metrics.register(families.time_to_first_token.clone());
        metrics.register(families.inter_token_latency.clone());
        metrics.register(families.e2e_request_latency.clone());
        metrics.register(families.request_queue_time.clone());
        metrics.register(families.prompt_tokens.clone());
        metrics.register(families.generation_tokens.clone());
        metrics.register(families.request_success.clone());
        metrics.register(families.prefix_cache_queries.clone());
        metrics.register(families.prefix_cache_hits.clone());
        metrics.register(families.prompt_cache_written.clone());
        metrics.register(families.prompt_cache_requests.clone());
        metrics.register(families.prompt_cache_evictions.clone());
        families
    }

    /// The series of model `name` (present, at zero, from now on).
    pub fn model(&self, name: &str) -> ModelMetrics {
        let labels = [name];
        ModelMetrics {
            time_to_first_token: self.time_to_first_token.with_label_values(&labels),
            inter_token_latency: self.inter_token_latency.with_label_values(&labels),
            e2e_request_latency: self.e2e_request_latency.with_label_values(&labels),
            request_queue_time: self.request_queue_time.with_label_values(&labels),
            prompt_tokens: self.prompt_tokens.with_label_values(&labels),
            generation_tokens: self.generation_tokens.with_label_values(&labels),
            request_success: self.request_success.with_label_values(&labels),
            prompt_cache: CacheCounters {
                queried_tokens: self.prefix_cache_queries.with_label_values(&labels),
                hit_tokens: self.prefix_cache_hits.with_label_values(&labels),
                written_tokens: self.prompt_cache_written.with_label_values(&labels),
                requests_hit: self.prompt_cache_requests.with_label_values(&[name, "hit"]),
                requests_miss: self
                    .prompt_cache_requests
                    .with_label_values(&[name, "miss"]),
                requests_ineligible: self
                    .prompt_cache_requests
                    .with_label_values(&[name, "ineligible"]),
                evicted_capacity: self
                    .prompt_cache_evictions
                    .with_label_values(&[name, "capacity"]),
                evicted_expired: self
                    .prompt_cache_evictions
                    .with_label_values(&[name, "expired"]),
            },
        }
    }
}

/// Registers `vllm:kv_cache_usage_perc`, the fraction of each model's prompt cache in use, read
/// from `usage` — `(model_name, held tokens, capacity)` — at each scrape.
pub fn register_cache_usage(
    metrics: &Metrics,
    usage: impl Fn() -> Vec<(String, u64, u64)> + Send + Sync + 'static,
) {
    metrics.register(OnScrape::new(
        GaugeVec::new(
            Opts::new(
                "vllm:kv_cache_usage_perc",
                "Fraction of the prompt cache's capacity in use (1 = 100%).",
            ),
            &["model_name"],
        )
        .expect("valid metric"),
        move |gauges: &GaugeVec| {
            for (model, held, capacity) in usage() {
                let fraction = if capacity == 0 {
                    0.0
                } else {
                    held as f64 / capacity as f64
                };
                gauges.with_label_values(&[&model]).set(fraction);
            }
        },
    ));
}

/// Registers `vllm:num_requests_running` and `vllm:num_requests_waiting`, read from `load` —
/// `(model_name, running, waiting)` of every model — at each scrape.
pub fn register_load_gauges(
    metrics: &Metrics,
    load: impl Fn() -> Vec<(String, usize, usize)> + Send + Sync + Clone + 'static,
) {
    let gauge = |name: &str, help: &str| {
        IntGaugeVec::new(Opts::new(name, help), &["model_name"]).expect("valid metric")
    };
    let read_running = load.clone();
    metrics.register(OnScrape::new(
        gauge("vllm:num_requests_running", "Requests decoding now."),
        move |gauges: &IntGaugeVec| {
            for (model, running, _) in read_running() {
                gauges.with_label_values(&[&model]).set(running as i64);
            }
        },
    ));
    metrics.register(OnScrape::new(
        gauge(
            "vllm:num_requests_waiting",
            "Requests waiting for a decoding slot.",
        ),
        move |gauges: &IntGaugeVec| {
            for (model, _, waiting) in load() {
                gauges.with_label_values(&[&model]).set(waiting as i64);
            }
        },
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_are_cumulative_and_gauges_read_at_scrape() {
        let metrics = Metrics::new();
        let model = SimulatorMetrics::register(&metrics).model("spark");
        register_load_gauges(&metrics, || vec![("spark".into(), 2, 1)]);
        model.time_to_first_token.observe(0.003);
        model.time_to_first_token.observe(0.090);
        model.generation_tokens.inc_by(5);
        let text = metrics.render();
        let line = |prefix: &str| {
            text.lines()
                .find(|l| l.starts_with(prefix))
                .unwrap_or_else(|| panic!("no {prefix} in {text}"))
                .to_string()
        };
        assert!(
            line("vllm:time_to_first_token_seconds_bucket{model_name=\"spark\",le=\"0.005\"}")
                .ends_with(" 1")
        );
        assert!(
            line("vllm:time_to_first_token_seconds_bucket{model_name=\"spark\",le=\"0.1\"}")
                .ends_with(" 2")
        );
        assert!(
            line("vllm:time_to_first_token_seconds_bucket{model_name=\"spark\",le=\"+Inf\"}")
                .ends_with(" 2")
        );
        assert!(line("vllm:time_to_first_token_seconds_sum").ends_with(" 0.093"));
        assert_eq!(
            line("vllm:num_requests_running"),
            "vllm:num_requests_running{model_name=\"spark\"} 2"
        );
        assert_eq!(
            line("vllm:num_requests_waiting"),
            "vllm:num_requests_waiting{model_name=\"spark\"} 1"
        );
        assert_eq!(
            line("vllm:generation_tokens_total"),
            "vllm:generation_tokens_total{model_name=\"spark\"} 5"
        );
    }
}
