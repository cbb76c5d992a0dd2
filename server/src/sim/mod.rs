//! The model behind the API. The pipeline only sees the [`Model`] trait — `generate(&Context)`
//! returning a stream of [`ModelEvent`]s — so the simulator can be replaced by a real upstream
//! model server without touching transports or the event builder.
//!
//! The [`Simulator`] behaves like a model server: the request's `model` picks a latency
//! [`Profile`] (unknown models get the default one, `tether-sim`), a bounded scheduler admits
//! it (or refuses it with 429), a generator decides what to answer — a scripted
//! [`scenario`] when `metadata.scenario` names one, else the deterministic [`echo`] generator —
//! and the answer streams token by token, paced by the profile. Everything random (jitter,
//! injected failures) draws from an RNG seeded by the server's seed and the conversation, so a
//! run with the same `--seed` replays exactly, whatever the interleaving of connections.

pub mod clock;
pub mod config;
pub mod echo;
pub mod failure;
pub mod latency;
pub mod metrics;
pub mod random;
pub mod scenario;
pub mod tokens;

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures_util::Stream;
use rand::SeedableRng;
use rand::rngs::StdRng;
use tether_protocol::{ApiError, Item, ResponseCreate, Role};
use tokio::time::Instant;

use crate::stages::validate::ToolChoice;

pub use clock::Clock;
pub use failure::{FailureKind, FailureRates};
pub use latency::{Profile, ProfileSlot, QueueFull};
pub use scenario::{Scenario, ScenarioSet};

/// What a model generates from: the request and its full logical input.
#[derive(Debug, Clone)]
pub struct Context {
    pub request: ResponseCreate,
    /// The whole conversation: previous context plus the request's new input.
    pub items: Vec<Item>,
    pub input_tokens: u64,
    /// Prompt tokens already in the server's cache (prefill skips them); 0 when unknown.
    pub cached_tokens: u64,
    /// A failure the transport asked for (`x-tether-fail`), overriding the configured rates.
    pub forced_failure: Option<FailureKind>,
}

impl Context {
    /// The context of a request without history.
    pub fn new(request: ResponseCreate) -> Self {
        let items = request.input.clone().into_items();
        Self::with_items(request, items)
    }

    /// The context of a request over a whole conversation.
    pub fn with_items(request: ResponseCreate, items: Vec<Item>) -> Self {
        let input_tokens = items
            .iter()
            .map(|item| tokens::count(&item_text(item)) as u64)
            .sum();
        Context {
            request,
            items,
            input_tokens,
            cached_tokens: 0,
            forced_failure: None,
        }
    }

    /// A string value of the request's `metadata`.
    pub fn metadata(&self, key: &str) -> Option<&str> {
        self.request.metadata.as_ref()?.get(key)?.as_str()
    }

    /// `metadata.sim_output_tokens`: the exact length of the answer's text, in tokens.
    pub fn sim_output_tokens(&self) -> Option<usize> {
        self.metadata("sim_output_tokens")?.trim().parse().ok()
    }

    /// `metadata.sim_reasoning_tokens`: a reasoning item of exactly this many summary tokens
    /// comes first.
    pub fn sim_reasoning_tokens(&self) -> Option<usize> {
        self.metadata("sim_reasoning_tokens")?.trim().parse().ok()
    }

    /// `metadata.sim_fail`: a failure to inject, like the `x-tether-fail` header but on every
    /// transport.
    pub fn sim_fail(&self) -> Option<FailureKind> {
        FailureKind::parse(self.metadata("sim_fail")?)
    }

    /// `metadata.sim_tool_calls`: the most tool calls to make (`0` suppresses them).
    pub fn sim_tool_calls(&self) -> Option<usize> {
        self.metadata("sim_tool_calls")?.trim().parse().ok()
    }

    /// The tool output that ends the conversation, if it ends with one.
    pub fn trailing_tool_output(&self) -> Option<String> {
        match self.items.last()? {
            Item::FunctionCallOutput(o) | Item::CustomToolCallOutput(o) => Some(o.output.text()),
            _ => None,
        }
    }

    /// What `tool_choice` allows (the pipeline has refused a malformed one; `auto` if absent).
    pub fn tool_choice(&self) -> ToolChoice {
        ToolChoice::parse(self.request.tool_choice.as_ref()).unwrap_or(ToolChoice::Auto)
    }

    /// The tools to call now: the first callable tool `tool_choice` allows — or the first two
    /// when the request explicitly sets `parallel_tool_calls: true` (one when a tool is
    /// forced) —, at most `metadata.sim_tool_calls`; none when `tool_choice` is `none`, or when
    /// the conversation ends with a tool output unless `tool_choice` requires a call.
    pub fn tools_to_call(&self) -> Vec<ToolCallPlan> {
        let choice = self.tool_choice();
        if !choice.must_call() && self.trailing_tool_output().is_some() {
            return Vec::new();
        }
        let mut callable = echo::collect_callable(&self.request.tools);
        callable.retain(|plan| plan.name().is_some_and(|name| choice.allows(name)));
        let count = match choice {
            ToolChoice::Forced(_) => 1,
            _ if self.request.parallel_tool_calls == Some(true) => 2,
            _ => 1,
        };
        callable.truncate(count.min(self.sim_tool_calls().unwrap_or(count)));
        callable
    }

    /// The text of the last user message, if any.
    pub fn last_user_text(&self) -> Option<String> {
        self.items.iter().rev().find_map(|item| match item {
            Item::Message(m) if m.role == Role::User => Some(m.content.text()),
            _ => None,
        })
    }
}

/// The text an item contributes to the prompt.
pub fn item_text(item: &Item) -> String {
    match item {
        Item::Message(m) => m.content.text(),
        Item::FunctionCall(c) => format!("{} {}", c.name, c.arguments),
        Item::FunctionCallOutput(o) | Item::CustomToolCallOutput(o) => o.output.text(),
        Item::CustomToolCall(c) => format!("{} {}", c.name, c.input),
        Item::Reasoning(r) => r.summary.iter().map(|s| s.text.as_str()).collect(),
        Item::ItemReference { .. } | Item::Unknown(_) => String::new(),
    }
}

/// A tool call the model will make: how it begins and the text of its arguments or input.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallPlan {
    pub begin: ModelEvent,
    pub input: String,
}

impl ToolCallPlan {
    /// The name of the tool called.
    pub fn name(&self) -> Option<&str> {
        match &self.begin {
            ModelEvent::BeginFunctionCall { name, .. }
            | ModelEvent::BeginCustomToolCall { name } => Some(name),
            _ => None,
        }
    }
}

/// One output item a generator decided on, before it is tokenized and paced.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// A reasoning item with this summary.
    Reasoning(String),
    Message(String),
    Call(ToolCallPlan),
    /// The response fails here (after the outputs before it).
    Fail(FailureKind),
}

/// One step of generation, in stream order.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// The request got a decoding slot after waiting `queue_time` for one.
    Started {
        queue_time: Duration,
    },
    /// A reasoning item; its summary streams as [`ModelEvent::ReasoningDelta`]s.
    BeginReasoning,
    ReasoningDelta(Delta),
    BeginMessage,
    TextDelta(Delta),
    /// A function tool call; `namespace` names the namespace tool it belongs to, if any.
    BeginFunctionCall {
        name: String,
        namespace: Option<String>,
    },
    /// A custom (freeform) tool call.
    BeginCustomToolCall {
        name: String,
    },
    /// A piece of the open call's arguments (function) or input (custom).
    ArgumentsDelta(Delta),
    EndItem,
    /// The response fails: `error` (with `status` on WebSocket) then `response.failed`. Nothing
    /// follows.
    Fail {
        status: u16,
        error: ApiError,
    },
}

/// Decoded text: whole tokens, cut at a token boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delta {
    pub text: String,
    /// How many tokens `text` is (one, unless a character spans tokens or deltas were merged).
    pub tokens: usize,
}

impl Delta {
    /// One streamed piece of text: `tokens` tokens.
    pub fn new(text: impl Into<String>, tokens: usize) -> Self {
        Delta {
            text: text.into(),
            tokens,
        }
    }

    /// Appends the next piece of the same stream.
    pub fn push(&mut self, next: &Delta) {
        self.text.push_str(&next.text);
        self.tokens += next.tokens;
    }
}

impl ModelEvent {
    /// The tokens the event carries (each costs decoding time); 0 for structure events.
    pub fn tokens(&self) -> usize {
        match self {
            ModelEvent::TextDelta(d)
            | ModelEvent::ArgumentsDelta(d)
            | ModelEvent::ReasoningDelta(d) => d.tokens,
            _ => 0,
        }
    }

    /// Whether the event carries a token (and so costs decoding time).
    pub fn is_token(&self) -> bool {
        self.tokens() > 0
    }

    /// Appends `next` to this delta when both stream text into the same item (one frame
    /// instead of two); false, and nothing changed, otherwise.
    pub fn absorb(&mut self, next: &ModelEvent) -> bool {
        match (self, next) {
            (ModelEvent::TextDelta(a), ModelEvent::TextDelta(b))
            | (ModelEvent::ArgumentsDelta(a), ModelEvent::ArgumentsDelta(b))
            | (ModelEvent::ReasoningDelta(a), ModelEvent::ReasoningDelta(b)) => {
                a.push(b);
                true
            }
            _ => false,
        }
    }
}

/// The default model id, served with the default profile; `GET /v1/models` lists it with the
/// other profiles.
pub const MODEL_ID: &str = "tether-sim";

/// A stream of model events.
pub type ModelStream = Pin<Box<dyn Stream<Item = ModelEvent> + Send>>;

/// Generates output for a context.
pub trait Model: Send + Sync + 'static {
    fn generate(&self, context: &Context) -> ModelStream;

    /// The model ids the server lists and, with `--reject-unknown-models`, accepts.
    fn model_ids(&self) -> Vec<String> {
        vec![MODEL_ID.to_string()]
    }

    /// Whether `model` is served with `--reject-unknown-models`: a listed id, or another name
    /// the model answers to.
    fn serves(&self, model: &str) -> bool {
        self.model_ids().iter().any(|id| id == model)
    }

    /// Refuses a request the model cannot answer as asked (a `400` before the response starts),
    /// such as one naming a scenario or generator that does not exist.
    fn check(&self, _request: &ResponseCreate) -> Result<(), ApiError> {
        Ok(())
    }
}

/// The generators `metadata.generator` may name ([`Simulator::plan`] dispatches on them).
const GENERATORS: [&str; 2] = ["echo-tools", "random"];

/// How to build a [`Simulator`].
#[derive(Debug, Clone)]
pub struct SimulatorConfig {
    /// Seed of every random choice.
    pub seed: u64,
    /// Decoding rate of the default profile (`tether-sim`).
    pub tokens_per_second: f64,
    pub scenarios: ScenarioSet,
    /// Other model ids served by a profile (configuration file).
    pub aliases: config::Aliases,
    /// The timer that paces tokens: [`Clock::Precise`] in the server.
    pub clock: Clock,
}

/// The inference simulator: latency profiles by model, generators, failure injection.
#[derive(Debug)]
pub struct Simulator {
    seed: u64,
    /// Profiles and their series by model id, the default first.
    profiles: Vec<(String, ProfileSlot, Arc<metrics::ModelMetrics>)>,
    failures: RwLock<FailureRates>,
    scenarios: ScenarioSet,
    aliases: config::Aliases,
    clock: Clock,
    /// Serialises [`Simulator::reconfigure`].
    reconfiguring: Mutex<()>,
}

impl Simulator {
    pub fn new(config: SimulatorConfig) -> Self {
        Simulator {
            seed: config.seed,
            profiles: Profile::builtin(config.tokens_per_second)
                .into_iter()
                .map(|(name, profile)| (name, ProfileSlot::new(profile), Arc::default()))
                .collect(),
            failures: RwLock::new(FailureRates::default()),
            scenarios: config.scenarios,
            aliases: config.aliases,
            clock: config.clock,
            reconfiguring: Mutex::new(()),
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Model ids served by another profile.
    pub fn aliases(&self) -> &config::Aliases {
        &self.aliases
    }

    /// The profile slot serving `model`: its own, its alias's, or the default one.
    pub fn profile_for(&self, model: &str) -> &ProfileSlot {
        &self.entry_for(model).1
    }

    fn entry_for(&self, model: &str) -> &(String, ProfileSlot, Arc<metrics::ModelMetrics>) {
        let model = self.aliases.get(model).map_or(model, String::as_str);
        self.profiles
            .iter()
            .find(|(name, _, _)| name == model)
            .unwrap_or(&self.profiles[0])
    }

    /// Every profile, by model id.
    pub fn profiles(&self) -> impl Iterator<Item = (&str, &ProfileSlot)> {
        self.profiles
            .iter()
            .map(|(name, slot, _)| (name.as_str(), slot))
    }

    /// The vLLM-named series of every profile, in the Prometheus text format.
    pub fn render_metrics(&self) -> String {
        let series: Vec<_> = self
            .profiles
            .iter()
            .map(|(name, slot, metrics)| {
                let scheduler = slot.scheduler();
                metrics::ModelSeries {
                    model: name,
                    metrics,
                    running: scheduler.running(),
                    waiting: scheduler.waiting(),
                }
            })
            .collect();
        metrics::render(&series)
    }

    pub fn failure_rates(&self) -> FailureRates {
        *self.failures.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces the failure rates (already validated).
    pub fn set_failure_rates(&self, rates: FailureRates) {
        *self.failures.write().unwrap_or_else(|e| e.into_inner()) = rates;
    }

    /// The RNG of one request: the server's seed mixed with the conversation, so the same
    /// conversation draws the same numbers in every run with this seed. The conversation is
    /// identified by its length, its first item and its last two — not hashed whole, which
    /// would make every turn cost time proportional to the history.
    fn rng_for(&self, context: &Context) -> StdRng {
        let mut hash = Fnv1a::new(self.seed);
        hash.write(context.request.model.as_bytes());
        hash.write(&(context.items.len() as u64).to_le_bytes());
        let tail = context.items.len().saturating_sub(2);
        for item in context
            .items
            .first()
            .into_iter()
            .chain(&context.items[tail..])
        {
            hash.write(item.type_name().as_bytes());
            hash.write(item_text(item).as_bytes());
        }
        StdRng::seed_from_u64(hash.finish())
    }

    /// What to answer, before failures are injected: the scenario `metadata.scenario` (or the
    /// model) names, else the generator `metadata.generator` names (`echo-tools`, the default,
    /// or `random`).
    fn plan(&self, context: &Context, rng: &mut StdRng) -> Vec<Output> {
        let scenario = context.metadata("scenario").or_else(|| {
            Some(context.request.model.as_str()).filter(|m| self.scenarios.get(m).is_some())
        });
        match scenario {
            Some(name) => match self.scenarios.get(name) {
                Some(scenario) => scenario.plan(context),
                None => vec![Output::Fail(FailureKind::InvalidRequest)],
            },
            None => match context.metadata("generator") {
                None | Some("echo-tools") => echo::plan(context),
                Some("random") => random::plan(context, rng),
                Some(_) => vec![Output::Fail(FailureKind::InvalidRequest)],
            },
        }
    }
}

impl Model for Simulator {
    fn generate(&self, context: &Context) -> ModelStream {
        let (_, slot, series) = self.entry_for(&context.request.model);
        series
            .prompt_tokens
            .fetch_add(context.input_tokens, Ordering::Relaxed);
        let mut rng = self.rng_for(context);
        let failure = match context.forced_failure.or_else(|| context.sim_fail()) {
            Some(kind) => Some(kind),
            None => self.failure_rates().draw(&mut rng),
        };
        let mut outputs = self.plan(context, &mut rng);
        if let Some(count) = context.sim_reasoning_tokens() {
            outputs.retain(|output| !matches!(output, Output::Reasoning(_)));
            outputs.insert(0, Output::Reasoning(random::text(count, &mut rng)));
        }
        if let Some(kind) = failure {
            outputs = inject(outputs, kind, &mut rng);
        }
        let run = Run {
            events: Events::new(outputs),
            profile: slot.profile(),
            scheduler: slot.scheduler(),
            uncached_tokens: context.input_tokens.saturating_sub(context.cached_tokens),
            rng,
            state: RunState::Waiting,
            clock: self.clock,
            metrics: series.clone(),
            arrived: Instant::now(),
            last_token: None,
        };
        // Boxed: the state moves in and out of the step's future at every event, and `Run`
        // (its RNG, its queue) is several hundred bytes; a box moves as a pointer.
        Box::pin(futures_util::stream::unfold(
            Box::new(run),
            |mut run| async move {
                let event = run.next().await?;
                Some((event, run))
            },
        ))
    }

    fn model_ids(&self) -> Vec<String> {
        self.profiles
            .iter()
            .map(|(name, _, _)| name.clone())
            .chain(self.aliases.keys().cloned())
            .collect()
    }

    /// Profiles, aliases and scenario names (a `model` equal to a scenario's name plays it).
    fn serves(&self, model: &str) -> bool {
        self.scenarios.get(model).is_some() || self.model_ids().iter().any(|id| id == model)
    }

    fn check(&self, request: &ResponseCreate) -> Result<(), ApiError> {
        let metadata = |key: &str| request.metadata.as_ref()?.get(key)?.as_str();
        if let Some(name) = metadata("scenario")
            && self.scenarios.get(name).is_none()
        {
            let mut known: Vec<&str> = self.scenarios.names().collect();
            known.sort_unstable();
            return Err(ApiError::invalid_request(
                Some("unknown_scenario"),
                format!(
                    "No scenario is named '{name}' (metadata.scenario). Scenarios: {}.",
                    known.join(", ")
                ),
                Some("metadata.scenario"),
            ));
        }
        if let Some(name) = metadata("generator")
            && !GENERATORS.contains(&name)
        {
            return Err(ApiError::invalid_request(
                Some("unknown_generator"),
                format!(
                    "No generator is named '{name}' (metadata.generator). Generators: {}.",
                    GENERATORS.join(", ")
                ),
                Some("metadata.generator"),
            ));
        }
        Ok(())
    }
}

/// Puts failure `kind` into the outputs: before anything for refusals, somewhere inside the
/// output for a mid-stream failure.
fn inject(mut outputs: Vec<Output>, kind: FailureKind, rng: &mut StdRng) -> Vec<Output> {
    use rand::RngExt;
    if !kind.is_mid_stream() {
        return vec![Output::Fail(kind)];
    }
    // Cut the first output's text at a random token so part of it streams before the error.
    let Some(first) = outputs.first_mut() else {
        return vec![Output::Fail(kind)];
    };
    let text = match first {
        Output::Message(text) | Output::Reasoning(text) => text,
        Output::Call(call) => &mut call.input,
        Output::Fail(_) => return outputs,
    };
    let pieces: Vec<&str> = tokens::split(text).collect();
    let keep = if pieces.len() > 1 {
        rng.random_range(1..pieces.len())
    } else {
        pieces.len()
    };
    *text = pieces[..keep].concat();
    outputs.truncate(1);
    outputs.push(Output::Fail(kind));
    outputs
}

/// The events of a response's outputs, produced as they are consumed: each item opens, streams
/// its text a token at a time, and closes; a failure ends the stream (the item it interrupts
/// stays open). The text is tokenized one pre-tokenized word at a time as the stream goes, so a
/// long answer's tokenization is spread over its decoding instead of added to its time to first
/// token (the tokens are the same as a whole-text tokenization: see `tokens`).
struct Events {
    outputs: std::vec::IntoIter<Output>,
    ready: VecDeque<ModelEvent>,
    streaming: Option<Streaming>,
}

/// The item whose text is streaming.
struct Streaming {
    text: String,
    /// Byte offset of the next word.
    at: usize,
    delta: fn(Delta) -> ModelEvent,
    /// Whether the item closes (not when a mid-stream failure interrupts it).
    closes: bool,
}

impl Events {
    fn new(outputs: Vec<Output>) -> Self {
        Events {
            outputs: outputs.into_iter(),
            ready: VecDeque::new(),
            streaming: None,
        }
    }

    /// The next event, without consuming it.
    fn front(&mut self) -> Option<&ModelEvent> {
        self.fill();
        self.ready.front()
    }

    fn pop_front(&mut self) -> Option<ModelEvent> {
        self.fill();
        self.ready.pop_front()
    }

    /// Makes at least one event ready, unless the stream is over.
    fn fill(&mut self) {
        while self.ready.is_empty() {
            if let Some(item) = &mut self.streaming {
                match tokens::first_word(&item.text[item.at..]) {
                    Some(word) => {
                        let delta = item.delta;
                        self.ready.extend(
                            tokens::word_pieces(word)
                                .into_iter()
                                .map(|(piece, n)| delta(Delta::new(piece, n))),
                        );
                        item.at += word.len();
                    }
                    None => {
                        if item.closes {
                            self.ready.push_back(ModelEvent::EndItem);
                        }
                        self.streaming = None;
                    }
                }
                continue;
            }
            let Some(output) = self.outputs.next() else {
                return;
            };
            let (begin, text, delta): (_, _, fn(Delta) -> ModelEvent) = match output {
                Output::Reasoning(text) => {
                    (ModelEvent::BeginReasoning, text, ModelEvent::ReasoningDelta)
                }
                Output::Message(text) => (ModelEvent::BeginMessage, text, ModelEvent::TextDelta),
                Output::Call(call) => (call.begin, call.input, ModelEvent::ArgumentsDelta),
                Output::Fail(kind) => {
                    let (status, error) = kind.error();
                    self.ready.push_back(ModelEvent::Fail { status, error });
                    // Nothing follows a failure.
                    self.outputs = Vec::new().into_iter();
                    return;
                }
            };
            self.ready.push_back(begin);
            let closes = !matches!(
                self.outputs.as_slice().first(),
                Some(Output::Fail(kind)) if kind.is_mid_stream()
            );
            self.streaming = Some(Streaming {
                text,
                at: 0,
                delta,
                closes,
            });
        }
    }
}

/// The shortest time between two deltas of a stream faster than 1,000 tokens/s: the tokens due
/// within it share a delta, so a 4,000 tokens/s stream is 1,000 frames a second of about four
/// tokens, each token at most this late.
const MIN_DELTA_INTERVAL: Duration = Duration::from_millis(1);

/// When the delta whose (last) token is due at `next_due` goes out, the previous delta having
/// been due at `last_delta`: at `next_due`, except that a profile faster than one token per
/// [`MIN_DELTA_INTERVAL`] waits out that interval (its tokens due meanwhile join the delta). A
/// profile at or below that rate — `spark`'s jitter included — keeps every token's own time.
fn delta_due(
    next_due: Instant,
    last_delta: Option<Instant>,
    tokens_per_second: Option<f64>,
) -> Instant {
    let fast = tokens_per_second.is_some_and(|rate| rate * MIN_DELTA_INTERVAL.as_secs_f64() > 1.0);
    match last_delta {
        Some(last) if fast => next_due.max(last + MIN_DELTA_INTERVAL),
        _ => next_due,
    }
}

/// Where a paced run is.
enum RunState {
    /// Not admitted yet.
    Waiting,
    /// Decoding: the first token is due at `first_due`, the next one at `next_due`; the last
    /// delta was due at `last_delta`.
    Decoding {
        _slot: latency::Slot,
        first_due: Instant,
        next_due: Instant,
        last_delta: Option<Instant>,
    },
    Done,
}

/// One response being paced: admission, TTFT, then each token at its due time.
struct Run {
    events: Events,
    profile: Arc<Profile>,
    scheduler: Arc<latency::Scheduler>,
    uncached_tokens: u64,
    rng: StdRng,
    state: RunState,
    clock: Clock,
    metrics: Arc<metrics::ModelMetrics>,
    arrived: Instant,
    last_token: Option<Instant>,
}

impl Run {
    /// Records the token just emitted: TTFT for the first, inter-token latency for the others.
    /// (Fields, not `self`: the caller holds the run state borrowed.)
    fn record_token(
        metrics: &metrics::ModelMetrics,
        last_token: &mut Option<Instant>,
        arrived: Instant,
    ) {
        let now = Instant::now();
        match *last_token {
            None => metrics.time_to_first_token.observe(now - arrived),
            Some(last) => metrics.inter_token_latency.observe(now - last),
        }
        *last_token = Some(now);
        metrics.generation_tokens.fetch_add(1, Ordering::Relaxed);
    }

    async fn next(&mut self) -> Option<ModelEvent> {
        match &mut self.state {
            RunState::Done => None,
            RunState::Waiting => {
                let queued_at = Instant::now();
                match self.scheduler.admit().await {
                    Ok(slot) => {
                        let started = Instant::now();
                        self.metrics.request_queue_time.observe(started - queued_at);
                        let first_due = started + self.profile.ttft(self.uncached_tokens);
                        self.state = RunState::Decoding {
                            _slot: slot,
                            first_due,
                            next_due: first_due,
                            last_delta: None,
                        };
                        Some(ModelEvent::Started {
                            queue_time: started - queued_at,
                        })
                    }
                    Err(QueueFull) => {
                        self.state = RunState::Done;
                        Some(ModelEvent::Fail {
                            status: 429,
                            error: failure::rate_limit_exceeded(
                                "The server is overloaded: every slot is busy and the queue is full. Retry later.",
                            ),
                        })
                    }
                }
            }
            RunState::Decoding {
                first_due,
                next_due,
                last_delta,
                ..
            } => {
                let Some(event) = self.events.pop_front() else {
                    self.state = RunState::Done;
                    self.metrics
                        .e2e_request_latency
                        .observe(self.arrived.elapsed());
                    self.metrics.request_success.fetch_add(1, Ordering::Relaxed);
                    return None;
                };
                if matches!(event, ModelEvent::Fail { .. }) {
                    // Nothing follows a failure, and it does not wait for a token's time.
                    self.state = RunState::Done;
                    return Some(event);
                }
                // Nothing is visible before the first token is due (TTFT); each token is due an
                // interval after the previous one was *due*, not sent, so the rate holds even
                // when a send is delayed. The interval follows the load at that moment.
                let mut event = event;
                let tokens = event.tokens();
                if tokens > 0 {
                    // A piece of several tokens (a character split over tokens) is visible once
                    // its last token is decoded.
                    for _ in 1..tokens {
                        *next_due += self
                            .profile
                            .interval(self.scheduler.running(), &mut self.rng);
                    }
                    let send_at = delta_due(*next_due, *last_delta, self.profile.tokens_per_second);
                    self.clock.sleep_until(send_at).await;
                    *last_delta = Some(send_at);
                    *next_due += self
                        .profile
                        .interval(self.scheduler.running(), &mut self.rng);
                    for _ in 0..tokens {
                        Self::record_token(&self.metrics, &mut self.last_token, self.arrived);
                    }
                    // Single tokens of the same item already due by now join this delta: at
                    // thousands of tokens a second several fall due per delta interval, and one
                    // frame for them keeps the connection and the client at the model's pace.
                    // Each token still draws its own interval, so a seed replays the same way.
                    while self.profile.tokens_per_second.is_some()
                        && *next_due <= Instant::now()
                        && self
                            .events
                            .front()
                            .is_some_and(|next| next.tokens() == 1 && event.absorb(next))
                    {
                        self.events.pop_front();
                        *next_due += self
                            .profile
                            .interval(self.scheduler.running(), &mut self.rng);
                        Self::record_token(&self.metrics, &mut self.last_token, self.arrived);
                    }
                } else {
                    self.clock.sleep_until(*first_due).await;
                }
                Some(event)
            }
        }
    }
}

/// FNV-1a: a hash that is the same in every build, so seeds replay across binaries.
struct Fnv1a(u64);

impl Fnv1a {
    fn new(seed: u64) -> Self {
        let mut hash = Fnv1a(0xcbf2_9ce4_8422_2325);
        hash.write(&seed.to_le_bytes());
        hash
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Separates fields so ("ab", "c") and ("a", "bc") differ.
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0000_0100_0000_01b3);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests;
