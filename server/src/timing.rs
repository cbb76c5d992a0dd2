//! Per-stage timings of the request pipeline: what each stage cost on one request, by path
//! (`http`, `ws_hit`, `ws_miss`). The client can ask for them (`x-tether-timing: 1`), and
//! `crate::metrics` keeps histograms of them, so the difference between the full and the
//! incremental path is visible in production, not only in the benchmark.

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

impl Stage {
    pub const ALL: [Stage; 8] = [
        Stage::Load,
        Stage::Resolve,
        Stage::Render,
        Stage::Validate,
        Stage::Classify,
        Stage::Generate,
        Stage::Persist,
        Stage::Bill,
    ];

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

impl PathKind {
    pub const ALL: [PathKind; 3] = [PathKind::Http, PathKind::WsHit, PathKind::WsMiss];

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_add_up_and_serialize_in_microseconds() {
        let mut timings = StageTimings::new(PathKind::WsHit);
        timings.record(Stage::Render, Duration::from_micros(300));
        timings.record(Stage::Render, Duration::from_millis(3));
        assert_eq!(timings.total(), Duration::from_micros(3300));
        let json = serde_json::to_value(&timings).unwrap();
        assert_eq!(json["path"], "ws_hit");
        assert_eq!(json["stages"]["render_us"], 3000);
    }
}
