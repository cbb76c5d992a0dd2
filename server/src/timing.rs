//! Per-stage timings of the request pipeline: what each stage cost on one request, and
//! Prometheus histograms of them by stage and by path (`http`, `ws_hit`, `ws_miss`), so the
//! difference between the full and the incremental path is visible in production, not only in
//! the benchmark.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

/// A pipeline stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Loading the previous context from the store.
    Load,
    Resolve,
    Render,
    Validate,
    Classify,
    Generate,
    Persist,
    Bill,
}

const STAGES: [Stage; 8] = [
    Stage::Load,
    Stage::Resolve,
    Stage::Render,
    Stage::Validate,
    Stage::Classify,
    Stage::Generate,
    Stage::Persist,
    Stage::Bill,
];

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Load => "load",
            Stage::Resolve => "resolve",
            Stage::Render => "render",
            Stage::Validate => "validate",
            Stage::Classify => "classify",
            Stage::Generate => "generate",
            Stage::Persist => "persist",
            Stage::Bill => "bill",
        }
    }
}

/// Which way through the pipeline a request went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PathKind {
    /// HTTP: everything from the store and from scratch.
    Http,
    /// WebSocket, previous response in the connection cache: only the new items.
    WsHit,
    /// WebSocket without a cached previous response: the full path.
    WsMiss,
}

const PATHS: [PathKind; 3] = [PathKind::Http, PathKind::WsHit, PathKind::WsMiss];

impl PathKind {
    pub fn name(self) -> &'static str {
        match self {
            PathKind::Http => "http",
            PathKind::WsHit => "ws_hit",
            PathKind::WsMiss => "ws_miss",
        }
    }
}

/// What the stages of one request cost, in the order they ran.
#[derive(Debug, Clone, Serialize)]
pub struct StageTimings {
    pub path: PathKind,
    #[serde(serialize_with = "micros")]
    pub stages: Vec<(Stage, Duration)>,
}

fn micros<S: serde::Serializer>(stages: &[(Stage, Duration)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(stages.len()))?;
    for (stage, duration) in stages {
        map.serialize_entry(
            &format!("{}_us", stage.name()),
            &(duration.as_micros() as u64),
        )?;
    }
    map.end()
}

impl StageTimings {
    pub fn new(path: PathKind) -> Self {
        StageTimings {
            path,
            stages: Vec::new(),
        }
    }

    /// Runs `work` as `stage`, recording how long it took.
    pub fn time<T>(&mut self, stage: Stage, work: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let result = work();
        self.record(stage, started.elapsed());
        result
    }

    /// Records a stage timed elsewhere (an async one).
    pub fn record(&mut self, stage: Stage, duration: Duration) {
        self.stages.push((stage, duration));
    }

    /// The total of the recorded stages.
    pub fn total(&self) -> Duration {
        self.stages.iter().map(|(_, d)| *d).sum()
    }
}

/// Histogram bucket bounds, in seconds: 25 µs to 1 s.
const BUCKETS: [f64; 14] = [
    0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1,
    0.25, 1.0,
];

/// `tether_stage_duration_seconds{stage,path}` histograms.
pub struct StageHistograms {
    /// [stage][path][bucket + 1 for +Inf]
    counts: Vec<AtomicU64>,
    /// [stage][path] sums in nanoseconds.
    sums: Vec<AtomicU64>,
}

impl Default for StageHistograms {
    fn default() -> Self {
        let cells = STAGES.len() * PATHS.len();
        StageHistograms {
            counts: (0..cells * (BUCKETS.len() + 1))
                .map(|_| AtomicU64::new(0))
                .collect(),
            sums: (0..cells).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

impl StageHistograms {
    /// Adds one request's stages.
    pub fn observe(&self, timings: &StageTimings) {
        let path = PATHS
            .iter()
            .position(|p| *p == timings.path)
            .expect("known path");
        for (stage, duration) in &timings.stages {
            let stage = STAGES.iter().position(|s| s == stage).expect("known stage");
            let cell = stage * PATHS.len() + path;
            let seconds = duration.as_secs_f64();
            let bucket = BUCKETS
                .iter()
                .position(|b| seconds <= *b)
                .unwrap_or(BUCKETS.len());
            self.counts[cell * (BUCKETS.len() + 1) + bucket].fetch_add(1, Ordering::Relaxed);
            self.sums[cell].fetch_add(duration.as_nanos() as u64, Ordering::Relaxed);
        }
    }

    /// The Prometheus text exposition (cumulative buckets, `_sum`, `_count`).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# HELP tether_stage_duration_seconds Time spent in each pipeline stage, by path."
        );
        let _ = writeln!(out, "# TYPE tether_stage_duration_seconds histogram");
        for (s, stage) in STAGES.iter().enumerate() {
            for (p, path) in PATHS.iter().enumerate() {
                let cell = s * PATHS.len() + p;
                let labels = format!("stage=\"{}\",path=\"{}\"", stage.name(), path.name());
                let mut cumulative = 0;
                for (b, bound) in BUCKETS.iter().enumerate() {
                    cumulative +=
                        self.counts[cell * (BUCKETS.len() + 1) + b].load(Ordering::Relaxed);
                    let _ = writeln!(
                        out,
                        "tether_stage_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                    );
                }
                cumulative +=
                    self.counts[cell * (BUCKETS.len() + 1) + BUCKETS.len()].load(Ordering::Relaxed);
                let _ = writeln!(
                    out,
                    "tether_stage_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {cumulative}"
                );
                let sum = self.sums[cell].load(Ordering::Relaxed) as f64 / 1e9;
                let _ = writeln!(out, "tether_stage_duration_seconds_sum{{{labels}}} {sum}");
                let _ = writeln!(
                    out,
                    "tether_stage_duration_seconds_count{{{labels}}} {cumulative}"
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_cumulative_buckets() {
        let histograms = StageHistograms::default();
        let mut timings = StageTimings::new(PathKind::WsHit);
        timings.record(Stage::Render, Duration::from_micros(300));
        timings.record(Stage::Render, Duration::from_millis(3));
        histograms.observe(&timings);
        let text = histograms.render();
        let line = |le: &str| {
            format!(
                "tether_stage_duration_seconds_bucket{{stage=\"render\",path=\"ws_hit\",le=\"{le}\"}} "
            )
        };
        assert!(text.contains(&(line("0.00025") + "0\n")));
        assert!(text.contains(&(line("0.0005") + "1\n")));
        assert!(text.contains(&(line("0.005") + "2\n")));
        assert!(text.contains(&(line("+Inf") + "2\n")));
        assert!(
            text.contains(
                "tether_stage_duration_seconds_count{stage=\"render\",path=\"ws_hit\"} 2\n"
            )
        );
        assert!(
            text.contains(
                "tether_stage_duration_seconds_count{stage=\"render\",path=\"http\"} 0\n"
            )
        );
        assert_eq!(timings.total(), Duration::from_micros(3300));
        let json = serde_json::to_value(&timings).unwrap();
        assert_eq!(json["path"], "ws_hit");
    }
}
