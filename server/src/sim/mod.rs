//! The inference simulator: a [`Model`] that behaves like a model server.
//!
//! The request's `model` picks a latency [`Profile`] (unknown models get the default one,
//! `tether-sim`); a bounded scheduler admits it (or refuses it with 429); a generator decides
//! what to answer — a scripted [`scenario`] when `metadata.scenario` names one, else the
//! deterministic [`echo`] generator or the [`random`] one — failures are injected
//! ([`failure`]); and the answer streams token by token ([`events`]), paced by the profile
//! ([`pacing`], on the [`clock`]). Everything random draws from an RNG seeded by the server's
//! seed and the conversation ([`seed`]), so a run with the same `--seed` replays exactly.
//!
//! Its settings change at run time through [`config`] (the admin endpoint); its series are
//! [`metrics`].

pub mod clock;
pub mod compact;
pub mod config;
pub mod echo;
pub mod events;
pub mod failure;
pub mod latency;
pub mod metrics;
pub mod output;
pub mod pacing;
pub mod prompt_cache;
pub mod random;
pub mod request;
pub mod scenario;
pub mod scenario_set;
pub mod seed;

use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use rand::rngs::StdRng;
use tether_protocol::{ApiError, ResponseCreate};

use crate::metrics::Metrics;
use crate::model::{Context, FailureKind, Model, ModelStream};

pub use clock::Clock;
pub use failure::FailureRates;
pub use latency::{Profile, ProfileSlot, QueueFull};
pub use output::{Output, ToolCallPlan};
pub use request::SimRequest;
pub use scenario::Scenario;
pub use scenario_set::ScenarioSet;

/// The default model id, served with the default profile; `GET /v1/models` lists it with the
/// other profiles.
pub const MODEL_ID: &str = "tether-sim";

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

/// One profile: the model id it serves, its current settings and scheduler, its prompt
/// cache, its series.
#[derive(Debug)]
pub struct ProfileEntry {
    pub name: String,
    pub slot: ProfileSlot,
    caches: Arc<prompt_cache::PromptCaches>,
    metrics: Arc<metrics::ModelMetrics>,
}

impl ProfileEntry {
    /// Replaces the profile (already validated); its prompt cache follows the new settings.
    pub fn replace(&self, profile: Profile) {
        self.caches.reconfigure(&profile.cache_settings());
        self.slot.replace(profile);
    }
}

/// The inference simulator: latency profiles by model, generators, failure injection.
#[derive(Debug)]
pub struct Simulator {
    seed: u64,
    /// Profiles by model id, the default first; shared with the load gauges.
    profiles: Arc<[ProfileEntry]>,
    failures: RwLock<FailureRates>,
    scenarios: ScenarioSet,
    aliases: config::Aliases,
    clock: Clock,
    /// Serialises [`Simulator::reconfigure`].
    reconfiguring: Mutex<()>,
}

impl Simulator {
    /// A simulator whose series are registered in `metrics`.
    pub fn new(config: SimulatorConfig, metrics: &Metrics) -> Self {
        let families = metrics::SimulatorMetrics::register(metrics);
        let profiles: Arc<[ProfileEntry]> = Profile::builtin(config.tokens_per_second)
            .into_iter()
            .map(|(name, profile)| {
                let metrics = families.model(&name);
                ProfileEntry {
                    caches: Arc::new(prompt_cache::PromptCaches::new(
                        &profile.cache_settings(),
                        metrics.prompt_cache.clone(),
                    )),
                    metrics: Arc::new(metrics),
                    slot: ProfileSlot::new(profile),
                    name,
                }
            })
            .collect();
        let held = profiles.clone();
        metrics::register_cache_usage(metrics, move || {
            held.iter()
                .map(|entry| {
                    let (tokens, capacity) = entry.caches.held_tokens();
                    (entry.name.clone(), tokens, capacity)
                })
                .collect()
        });
        let load = profiles.clone();
        metrics::register_load_gauges(metrics, move || {
            load.iter()
                .map(|entry| {
                    let scheduler = entry.slot.scheduler();
                    (entry.name.clone(), scheduler.running(), scheduler.waiting())
                })
                .collect()
        });
        Simulator {
            seed: config.seed,
            profiles,
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

    /// The profile serving `model`: its own, its alias's, or the default one.
    fn entry_for(&self, model: &str) -> &ProfileEntry {
        let model = self.aliases.get(model).map_or(model, String::as_str);
        self.profiles
            .iter()
            .find(|entry| entry.name == model)
            .unwrap_or(&self.profiles[0])
    }

    /// The decoding rate of the profile serving `model` (`None`: it decodes without delay).
    pub fn tokens_per_second(&self, model: &str) -> Option<f64> {
        self.entry_for(model).slot.profile().tokens_per_second
    }

    /// Every profile, by model id.
    pub fn profiles(&self) -> impl Iterator<Item = &ProfileEntry> {
        self.profiles.iter()
    }

    pub fn failure_rates(&self) -> FailureRates {
        *self.failures.read()
    }

    /// Replaces the failure rates (already validated).
    pub fn set_failure_rates(&self, rates: FailureRates) {
        *self.failures.write() = rates;
    }

    /// What to answer, before failures are injected: the scenario `metadata.scenario` (or the
    /// model) names, else the generator `metadata.generator` names (`echo-tools`, the default,
    /// or `random`). [`Model::check`] has refused unknown names.
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
        let entry = self.entry_for(&context.request.model);
        entry.metrics.prompt_tokens.inc_by(context.input_tokens());
        let profile = entry.slot.profile();
        let lookup = entry
            .caches
            .lookup(context, &entry.name, &profile.cache_settings());
        let mut rng = seed::rng_for(self.seed, context);
        let failure = match context.forced_failure.or_else(|| context.sim_fail()) {
            Some(kind) => Some(kind),
            None => self.failure_rates().draw(&mut rng),
        };
        let mut outputs = if context.prewarm() {
            // `prompt_cache_options.prewarm`: the prompt is prefilled and cached, nothing sampled.
            Vec::new()
        } else {
            self.plan(context, &mut rng)
        };
        if let Some(count) = context
            .sim_reasoning_tokens()
            .filter(|_| !context.prewarm())
        {
            outputs.retain(|output| !matches!(output, Output::Reasoning(_)));
            outputs.insert(0, Output::Reasoning(random::text(count, &mut rng)));
        }
        if let Some(kind) = failure {
            outputs = failure::inject(outputs, kind, &mut rng);
        }
        pacing::Run::new(
            events::Events::new(outputs),
            profile,
            entry.slot.scheduler(),
            context.input_tokens(),
            Some((entry.caches.clone(), lookup)),
            rng,
            self.clock,
            entry.metrics.clone(),
        )
        .into_stream()
    }

    fn model_ids(&self) -> Vec<String> {
        self.profiles
            .iter()
            .map(|entry| entry.name.clone())
            .chain(self.aliases.keys().cloned())
            .collect()
    }

    fn scenario_names(&self) -> Option<Vec<String>> {
        let mut names: Vec<String> = self.scenarios.names().map(str::to_string).collect();
        names.sort_unstable();
        Some(names)
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

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
