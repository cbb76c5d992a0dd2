//! `tether_stage_duration_seconds{stage,path}`: how long each pipeline stage took, by the path
//! the request went (a histogram per stage and path, every combination present from the start).

use prometheus::{HistogramOpts, HistogramVec};

use crate::timing::{PathKind, Stage, StageTimings};

/// Histogram bucket bounds, in seconds: 25 µs to 1 s.
const BUCKETS: [f64; 14] = [
    0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1,
    0.25, 1.0,
];

/// The stage histograms; cloning shares them.
#[derive(Clone)]
pub struct StageHistograms {
    histograms: HistogramVec,
}

impl Default for StageHistograms {
    fn default() -> Self {
        Self::new()
    }
}

impl StageHistograms {
    pub fn new() -> Self {
        let histograms = HistogramVec::new(
            HistogramOpts::new(
                "tether_stage_duration_seconds",
                "Time spent in each pipeline stage, by path.",
            )
            .buckets(BUCKETS.to_vec()),
            &["stage", "path"],
        )
        .expect("valid metric");
        for stage in Stage::ALL {
            for path in PathKind::ALL {
                histograms.with_label_values(&[stage.name(), path.name()]);
            }
        }
        StageHistograms { histograms }
    }

    /// Adds one request's stages.
    pub fn observe(&self, timings: &StageTimings) {
        for (stage, duration) in &timings.stages {
            self.histograms
                .with_label_values(&[stage.name(), timings.path.name()])
                .observe(duration.as_secs_f64());
        }
    }

    /// How many times `stage` was observed on `path`.
    pub fn observed(&self, stage: Stage, path: PathKind) -> u64 {
        self.histograms
            .with_label_values(&[stage.name(), path.name()])
            .get_sample_count()
    }

    /// The histograms, for the registry.
    pub(super) fn collector(&self) -> HistogramVec {
        self.histograms.clone()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::metrics::Metrics;

    #[test]
    fn observations_land_in_cumulative_buckets() {
        let metrics = Metrics::new();
        let mut timings = StageTimings::new(PathKind::WsHit);
        timings.record(Stage::Render, Duration::from_micros(300));
        timings.record(Stage::Render, Duration::from_millis(3));
        metrics.stages.observe(&timings);
        let text = metrics.render();
        let line = |le: &str| {
            format!(
                "tether_stage_duration_seconds_bucket{{path=\"ws_hit\",stage=\"render\",le=\"{le}\"}} "
            )
        };
        assert!(text.contains(&(line("0.00025") + "0\n")), "{text}");
        assert!(text.contains(&(line("0.0005") + "1\n")));
        assert!(text.contains(&(line("0.005") + "2\n")));
        assert!(text.contains(&(line("+Inf") + "2\n")));
        assert!(
            text.contains(
                "tether_stage_duration_seconds_count{path=\"ws_hit\",stage=\"render\"} 2\n"
            )
        );
        assert!(
            text.contains(
                "tether_stage_duration_seconds_count{path=\"http\",stage=\"render\"} 0\n"
            )
        );
    }
}
