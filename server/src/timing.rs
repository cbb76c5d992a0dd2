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

/// Time a request spent waiting on a modelled service (`--api-costs`), apart from measured
/// work: the safety classifier's per-token latency, the hop to the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modelled {
    Classify,
    EngineHop,
}

impl Modelled {
    pub fn name(self) -> &'static str {
        match self {
            Modelled::Classify => "classify",
            Modelled::EngineHop => "engine_hop",
        }
    }
}

/// The engine's part in a response, as the API measured it: `service_*` from the engine call
/// on, `iapi_*` from the API's engine request on (so they include the modelled hop).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EngineTiming {
    /// Engine calls the response made (0 when it sampled nothing).
    pub calls: u32,
    /// The replica that served it.
    pub replica: usize,
    /// Waiting for a decoding slot.
    pub queue: Duration,
    /// From admission to the first token: prefill of the uncached prompt tokens.
    pub prefill: Duration,
    /// From the first token to the last: the time between tokens, across engine calls.
    pub decode: Duration,
    pub service_total: Duration,
    pub service_ttft: Duration,
    pub iapi_ttft: Duration,
    pub iapi_total: Duration,
}

/// Where a prompt's tokens came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenCounts {
    pub input: u64,
    /// Read from the engine's prompt cache (`cached_tokens`).
    pub cached: u64,
    /// Written to it (`cache_write_tokens`).
    pub cache_write: u64,
    /// Rendered tokens the connection cache supplied, so the API did not tokenize them again.
    pub reused_by_connection: u64,
}

/// When each stage, modelled wait and engine call of one request began, kept only for a request
/// that is traced (`--otlp-endpoint`): the spans of its trace (`crate::traces`).
#[derive(Debug, Clone, Default)]
pub struct Marks {
    pub stages: Vec<(Stage, Instant, Duration)>,
    pub modelled: Vec<(Modelled, Instant, Duration)>,
    pub engine_calls: Vec<EngineCall>,
}

/// One engine call of a traced request.
#[derive(Debug, Clone)]
pub struct EngineCall {
    /// When the engine was called (after the modelled hop).
    pub called: Instant,
    pub first_token: Option<Instant>,
    pub ended: Instant,
    pub replica: usize,
    /// Waiting for a decoding slot.
    pub queue: Duration,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
}

/// The conditions a response was served under (`crate::conditions`): the link, the API-cost
/// preset, the model and its decoding rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub rtt_ms: f64,
    /// `None`: unlimited.
    pub up_mbit: Option<f64>,
    pub down_mbit: Option<f64>,
    /// `local`, `hosted`, or `custom` (the server's flags changed a preset).
    pub api_costs: &'static str,
    /// Whether the client chose them (else they are the server's defaults).
    pub chosen_by_client: bool,
    pub model: String,
    /// The model's decoding rate; `None` for a profile without delay (`instant`), or a model
    /// the simulator does not serve.
    pub tokens_per_second: Option<f64>,
}

/// What an emulated link cost a response on the way up: its request's bytes and how much later
/// the last of them arrived. The way down is known only as its terminal message is written:
/// the transport adds it to the summary then ([`set_download`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkAccount {
    pub up_bytes: u64,
    pub up: Duration,
}

/// What one request cost: its pipeline stages in the order they ran, the modelled services it
/// waited on, the engine's part, and the API's own time — the one record behind the timing
/// summary (`x-tether-timing`), the `responsesapi.websocket_timing` event and the stage
/// histograms.
#[derive(Debug, Clone)]
pub struct StageTimings {
    pub path: PathKind,
    pub stages: Vec<(Stage, Duration)>,
    pub modelled: Vec<(Modelled, Duration)>,
    pub engine: EngineTiming,
    pub tokens: TokenCounts,
    /// When the pipeline received the request.
    pub received: Instant,
    /// The response's time in the API, excluding the engine: set once the terminal event is
    /// ready ([`StageTimings::finish`]).
    pub api: Duration,
    /// Time a long-running response waited for its client's tool outputs: neither the API's
    /// nor the engine's.
    pub client_wait: Duration,
    /// Time the response's events waited to be taken by a client reading slower than they
    /// came (its connection's queue full): the network's and the client's, not the API's nor
    /// the engine's.
    pub delivery: Duration,
    /// When each stage began, for a traced request ([`StageTimings::keep_marks`]); `None`, and
    /// nothing kept, otherwise.
    pub marks: Option<Box<Marks>>,
    /// The conditions it was served under.
    pub conditions: Option<Applied>,
    /// What the emulated link cost its request, when a link applied.
    pub link: Option<LinkAccount>,
}

fn micros(duration: Duration) -> u64 {
    duration.as_micros() as u64
}

fn millis(duration: Duration) -> f64 {
    (duration.as_secs_f64() * 1e6).round() / 1e3
}

impl StageTimings {
    pub fn new(path: PathKind) -> Self {
        StageTimings {
            path,
            stages: Vec::new(),
            modelled: Vec::new(),
            engine: EngineTiming::default(),
            tokens: TokenCounts::default(),
            received: Instant::now(),
            api: Duration::ZERO,
            client_wait: Duration::ZERO,
            delivery: Duration::ZERO,
            marks: None,
            conditions: None,
            link: None,
        }
    }

    /// Keeps when each stage begins from now on: the request is traced.
    pub fn keep_marks(&mut self) {
        self.marks.get_or_insert_with(Box::default);
    }

    /// Runs `work` as `stage`, recording how long it took.
    pub fn time<T>(&mut self, stage: Stage, work: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let result = work();
        self.record_at(stage, started, started.elapsed());
        result
    }

    /// Records a stage timed elsewhere (an async one) that has just ended.
    pub fn record(&mut self, stage: Stage, duration: Duration) {
        if self.marks.is_some() {
            let started = Instant::now()
                .checked_sub(duration)
                .unwrap_or(self.received);
            self.record_at(stage, started, duration);
        } else {
            self.stages.push((stage, duration));
        }
    }

    /// Records a stage that began at `started` and took `duration`.
    pub fn record_at(&mut self, stage: Stage, started: Instant, duration: Duration) {
        self.stages.push((stage, duration));
        if let Some(marks) = self.marks.as_deref_mut() {
            marks.stages.push((stage, started, duration));
        }
    }

    /// Adds `other`'s stages (a write's: persist, bill) to these.
    pub fn absorb(&mut self, other: StageTimings) {
        self.stages.extend(other.stages);
        if let (Some(marks), Some(other)) = (self.marks.as_deref_mut(), other.marks) {
            marks.stages.extend(other.stages);
        }
    }

    /// Records time spent waiting on a modelled service, which has just ended.
    pub fn record_modelled(&mut self, service: Modelled, duration: Duration) {
        self.modelled.push((service, duration));
        if let Some(marks) = self.marks.as_deref_mut() {
            let started = Instant::now()
                .checked_sub(duration)
                .unwrap_or(self.received);
            marks.modelled.push((service, started, duration));
        }
    }

    /// Records an engine call of a traced request (nothing otherwise).
    pub fn record_engine_call(&mut self, call: impl FnOnce() -> EngineCall) {
        if let Some(marks) = self.marks.as_deref_mut() {
            marks.engine_calls.push(call());
        }
    }

    /// The total of the recorded stages.
    pub fn total(&self) -> Duration {
        self.stages.iter().map(|(_, d)| *d).sum()
    }

    /// Sets the API's time: since the request was received, less the engine's.
    pub fn finish(&mut self) {
        self.api = self
            .received
            .elapsed()
            .saturating_sub(self.engine.iapi_total + self.client_wait + self.delivery);
    }

    /// The timing summary a client asks for with `x-tether-timing: 1`: the measured stages and
    /// the modelled waits in microseconds, the engine's part, the tokens, the API's own time.
    pub fn summary(&self) -> serde_json::Value {
        // A response over several engine calls (append, inject) runs a stage once per call:
        // its time is the sum.
        let mut stages = serde_json::Map::new();
        for (stage, d) in &self.stages {
            add_micros(&mut stages, stage.name(), *d);
        }
        let mut modelled = serde_json::Map::new();
        for (service, d) in &self.modelled {
            add_micros(&mut modelled, service.name(), *d);
        }
        let engine = &self.engine;
        let mut summary = serde_json::json!({
            "path": self.path,
            "stages": stages,
            "modelled": modelled,
            "api_us": micros(self.api),
            "client_wait_us": micros(self.client_wait),
            "delivery_us": micros(self.delivery),
            "engine": {
                "calls": engine.calls,
                "replica": engine.replica,
                "queue_us": micros(engine.queue),
                "prefill_us": micros(engine.prefill),
                "decode_us": micros(engine.decode),
                "service_total_us": micros(engine.service_total),
                "service_ttft_us": micros(engine.service_ttft),
                "iapi_ttft_us": micros(engine.iapi_ttft),
                "iapi_total_us": micros(engine.iapi_total),
            },
            "tokens": {
                "input": self.tokens.input,
                "cached": self.tokens.cached,
                "cache_write": self.tokens.cache_write,
                "reused_by_connection": self.tokens.reused_by_connection,
            },
        });
        if let Some(applied) = &self.conditions {
            summary["conditions"] = serde_json::json!({
                "rtt_ms": applied.rtt_ms,
                "up_mbit": applied.up_mbit,
                "down_mbit": applied.down_mbit,
                "api_costs": applied.api_costs,
                "chosen_by": if applied.chosen_by_client { "client" } else { "server" },
                "model": applied.model,
                "tokens_per_second": applied.tokens_per_second,
            });
        }
        if let Some(link) = &self.link {
            summary["link"] = serde_json::json!({
                "up_bytes": link.up_bytes,
                "up_us": micros(link.up),
                "down_bytes": 0,
                "down_us": 0,
                "budget_exhausted": false,
            });
        }
        summary
    }

    /// The reference's split of a turn, `responsesapi.websocket_timing`'s `timing_metrics`, in
    /// milliseconds: the API's time excluding the engine (and the client's tools, which are
    /// between turns), the engine's total, its time to first token and its time between tokens
    /// as the engine service and as the API's inference client saw them, and the newer fields
    /// Tether can fill truthfully.
    pub fn websocket_timing(&self) -> serde_json::Value {
        let engine = &self.engine;
        let pre_inference: Duration = self
            .stages
            .iter()
            .filter(|(stage, _)| {
                matches!(
                    stage,
                    Stage::Load
                        | Stage::Resolve
                        | Stage::Render
                        | Stage::Validate
                        | Stage::Classify
                )
            })
            .map(|(_, d)| *d)
            .chain(
                self.modelled
                    .iter()
                    .filter(|(service, _)| *service == Modelled::Classify)
                    .map(|(_, d)| *d),
            )
            .sum();
        serde_json::json!({
            "responses_duration_excl_engine_and_client_tool_time_ms": millis(self.api),
            "engine_service_total_ms": millis(engine.service_total),
            "engine_iapi_ttft_total_ms": millis(engine.iapi_ttft),
            "engine_service_ttft_total_ms": millis(engine.service_ttft),
            "engine_iapi_tbt_across_engine_calls_ms": millis(engine.decode),
            "engine_service_tbt_across_engine_calls_ms": millis(engine.decode),
            "pre_inference_ms": millis(pre_inference),
            "num_engine_calls": engine.calls,
            "engine_uncached_prompt_tokens_total": self.tokens.input - self.tokens.cached,
            "engine_cached_prompt_tokens_total": self.tokens.cached,
            "engine_total_prompt_tokens_total": self.tokens.input,
            "timing_scope": "response",
        })
    }
}

/// Whether a timing `summary` carries a link account whose way down is still to be filled in.
pub fn has_link(summary: &serde_json::Value) -> bool {
    summary
        .get("link")
        .is_some_and(serde_json::Value::is_object)
}

/// Fills in the way down of a summary's link account, as the transport writes the response's
/// terminal message: the response's bytes through the link (the message's included) and how
/// much later the message reaches the client than it is written; and whether the link's
/// serialisation budget was spent.
pub fn set_download(
    summary: &mut serde_json::Value,
    bytes: u64,
    lag: Duration,
    budget_exhausted: bool,
) {
    if let Some(link) = summary.get_mut("link").and_then(|l| l.as_object_mut()) {
        link.insert("down_bytes".into(), bytes.into());
        link.insert("down_us".into(), micros(lag).into());
        link.insert("budget_exhausted".into(), budget_exhausted.into());
    }
}

/// Adds `duration` to the `<name>_us` entry of `map`.
fn add_micros(
    map: &mut serde_json::Map<String, serde_json::Value>,
    name: &str,
    duration: Duration,
) {
    let entry = map
        .entry(format!("{name}_us"))
        .or_insert_with(|| 0u64.into());
    *entry = (entry.as_u64().unwrap_or(0) + micros(duration)).into();
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
        let json = timings.summary();
        assert_eq!(json["path"], "ws_hit");
        assert_eq!(
            json["stages"]["render_us"], 3300,
            "a stage run twice: the sum"
        );
    }
}
