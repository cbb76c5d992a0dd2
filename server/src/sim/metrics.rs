//! The simulator's Prometheus series, named like vLLM's (`vllm:…` with a `model_name` label) so
//! dashboards and load-test tooling built for a real vLLM server read them unchanged:
//! time to first token, inter-token latency, end-to-end latency and queue time histograms,
//! running and waiting gauges, prompt and generation token counters.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

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

/// A cumulative histogram with fixed buckets; the sum is kept in nanoseconds.
#[derive(Debug)]
pub struct Histogram {
    bounds: &'static [f64],
    counts: Vec<AtomicU64>,
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Self {
        Histogram {
            bounds,
            counts: bounds.iter().map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            sum_nanos: AtomicU64::new(0),
        }
    }

    pub fn observe(&self, value: Duration) {
        let seconds = value.as_secs_f64();
        if let Some(index) = self.bounds.iter().position(|bound| seconds <= *bound) {
            self.counts[index].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.sum_nanos
            .fetch_add(value.as_nanos() as u64, Ordering::Relaxed);
    }

    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    fn render(&self, out: &mut String, name: &str, model: &str) {
        let mut cumulative = 0;
        for (bound, count) in self.bounds.iter().zip(&self.counts) {
            cumulative += count.load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "{name}_bucket{{model_name=\"{model}\",le=\"{bound}\"}} {cumulative}"
            );
        }
        let count = self.count();
        let _ = writeln!(
            out,
            "{name}_bucket{{model_name=\"{model}\",le=\"+Inf\"}} {count}"
        );
        let sum = self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        let _ = writeln!(out, "{name}_sum{{model_name=\"{model}\"}} {sum}");
        let _ = writeln!(out, "{name}_count{{model_name=\"{model}\"}} {count}");
    }
}

/// The series of one model (profile).
#[derive(Debug)]
pub struct ModelMetrics {
    pub time_to_first_token: Histogram,
    pub inter_token_latency: Histogram,
    pub e2e_request_latency: Histogram,
    pub request_queue_time: Histogram,
    pub prompt_tokens: AtomicU64,
    pub generation_tokens: AtomicU64,
    pub request_success: AtomicU64,
}

impl Default for ModelMetrics {
    fn default() -> Self {
        ModelMetrics {
            time_to_first_token: Histogram::new(TTFT_BUCKETS),
            inter_token_latency: Histogram::new(ITL_BUCKETS),
            e2e_request_latency: Histogram::new(E2E_BUCKETS),
            request_queue_time: Histogram::new(E2E_BUCKETS),
            prompt_tokens: AtomicU64::new(0),
            generation_tokens: AtomicU64::new(0),
            request_success: AtomicU64::new(0),
        }
    }
}

/// One model's live state for rendering.
pub struct ModelSeries<'a> {
    pub model: &'a str,
    pub metrics: &'a ModelMetrics,
    pub running: usize,
    pub waiting: usize,
}

/// A series: its name, its help text, and how to read it.
struct Series<F> {
    name: &'static str,
    help: &'static str,
    read: F,
}
type GaugeRead = fn(&ModelSeries<'_>) -> u64;
type CounterRead = fn(&ModelMetrics) -> &AtomicU64;
type HistogramRead = fn(&ModelMetrics) -> &Histogram;

/// The Prometheus text of every model's series, grouped by metric.
pub fn render(models: &[ModelSeries<'_>]) -> String {
    let mut out = String::new();
    let gauges: [Series<GaugeRead>; 2] = [
        Series {
            name: "vllm:num_requests_running",
            help: "Requests decoding now.",
            read: |m| m.running as u64,
        },
        Series {
            name: "vllm:num_requests_waiting",
            help: "Requests waiting for a decoding slot.",
            read: |m| m.waiting as u64,
        },
    ];
    for series in gauges {
        header(&mut out, &series, "gauge");
        for model in models {
            let value = (series.read)(model);
            let _ = writeln!(
                out,
                "{}{{model_name=\"{}\"}} {value}",
                series.name, model.model
            );
        }
    }
    let counters: [Series<CounterRead>; 3] = [
        Series {
            name: "vllm:prompt_tokens_total",
            help: "Prompt tokens processed.",
            read: |m| &m.prompt_tokens,
        },
        Series {
            name: "vllm:generation_tokens_total",
            help: "Tokens generated.",
            read: |m| &m.generation_tokens,
        },
        Series {
            name: "vllm:request_success_total",
            help: "Requests that finished generating.",
            read: |m| &m.request_success,
        },
    ];
    for series in counters {
        header(&mut out, &series, "counter");
        for model in models {
            let value = (series.read)(model.metrics).load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "{}{{model_name=\"{}\"}} {value}",
                series.name, model.model
            );
        }
    }
    let histograms: [Series<HistogramRead>; 4] = [
        Series {
            name: "vllm:time_to_first_token_seconds",
            help: "Time from arrival to the first token.",
            read: |m| &m.time_to_first_token,
        },
        Series {
            name: "vllm:inter_token_latency_seconds",
            help: "Time between consecutive tokens.",
            read: |m| &m.inter_token_latency,
        },
        Series {
            name: "vllm:e2e_request_latency_seconds",
            help: "Time from arrival to the last token.",
            read: |m| &m.e2e_request_latency,
        },
        Series {
            name: "vllm:request_queue_time_seconds",
            help: "Time spent waiting for a decoding slot.",
            read: |m| &m.request_queue_time,
        },
    ];
    for series in histograms {
        header(&mut out, &series, "histogram");
        for model in models {
            (series.read)(model.metrics).render(&mut out, series.name, model.model);
        }
    }
    out
}

fn header<F>(out: &mut String, series: &Series<F>, kind: &str) {
    let _ = writeln!(out, "# HELP {} {}", series.name, series.help);
    let _ = writeln!(out, "# TYPE {} {kind}", series.name);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_are_cumulative() {
        let metrics = ModelMetrics::default();
        metrics
            .time_to_first_token
            .observe(Duration::from_millis(3));
        metrics
            .time_to_first_token
            .observe(Duration::from_millis(90));
        metrics.generation_tokens.fetch_add(5, Ordering::Relaxed);
        let text = render(&[ModelSeries {
            model: "spark",
            metrics: &metrics,
            running: 2,
            waiting: 1,
        }]);
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
