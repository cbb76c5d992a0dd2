//! What every request handler shares, built once from the [`Config`] at start.

use std::sync::Arc;

use prometheus::{IntCounter, IntGauge};

use crate::config::Config;
use crate::costs::ApiCosts;
use crate::metrics::{Metrics, OnScrape};
use crate::model::Model;
use crate::sim::{self, ScenarioSet, Simulator, SimulatorConfig};
use crate::stages::classify::{Classifier, ClassifierPolicy};
use crate::stages::render::TokenCache;
use crate::store::{ResponseStore, SqliteStore, WriteBehindStore};
use crate::tenancy::KeyRing;
use crate::tokenizer;

/// What every request handler shares.
#[derive(Clone)]
pub struct AppState {
    pub model: Arc<dyn Model>,
    /// The same simulator as `model`, for its seed, profiles and failure rates.
    pub simulator: Arc<Simulator>,
    /// Key of the admin endpoint; `None` disables it.
    pub admin_key: Option<Arc<str>>,
    /// The store as every reader sees it (queued writes included).
    pub store: Arc<dyn ResponseStore>,
    /// The same store, for writing now or behind the response.
    pub records: Arc<WriteBehindStore>,
    /// The one metrics registry, with the server's own series.
    pub metrics: Metrics,
    pub max_frame_bytes: usize,
    pub websocket_enabled: bool,
    /// The accepted API keys and their projects; empty: authentication is off.
    pub keys: KeyRing,
    pub ws_lifetime: std::time::Duration,
    pub reject_unknown_models: bool,
    pub classifier: Arc<Classifier>,
    pub classifier_policy: ClassifierPolicy,
    /// The HTTP path's process-wide token cache (`--token-cache-tokens`), if on.
    pub token_cache: Option<Arc<TokenCache>>,
    /// The modelled API services (`--api-costs`).
    pub api_costs: ApiCosts,
}

impl AppState {
    /// State built from `config`; starts the store's background writer, so it must be called
    /// inside a tokio runtime.
    pub fn new(config: &Config) -> anyhow::Result<Self> {
        anyhow::ensure!(
            config.tokens_per_second.is_finite() && config.tokens_per_second > 0.0,
            "--tokens-per-second must be a positive number, got {}",
            config.tokens_per_second
        );
        let keys = KeyRing::new(&config.api_keys, config.keys_file.as_deref())
            .map_err(|e| anyhow::anyhow!("API keys: {e}"))?;
        if let Some(admin) = config.admin_key.as_deref().filter(|k| !k.is_empty()) {
            anyhow::ensure!(
                !keys.contains(admin),
                "the admin key must not also be an API key (--admin-key, --api-key, --keys-file)"
            );
        }
        let api_costs = config.api_costs();
        api_costs.validate().map_err(|e| anyhow::anyhow!(e))?;
        let ws_lifetime = std::time::Duration::try_from_secs_f64(config.ws_lifetime_seconds)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| anyhow::anyhow!("--ws-lifetime-seconds must be a positive number"))?;
        let store = SqliteStore::open(&config.data_dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot open the store in {}: {e}",
                config.data_dir.display()
            )
        })?;
        // The tokenizer's vocabulary (200k tokens) loads on first use, ~0.1 s: here, not in
        // the first request's time to first token.
        tokenizer::tokenizer();
        let metrics = Metrics::new();
        let records = Arc::new(WriteBehindStore::start(
            Arc::new(store),
            metrics.stages.clone(),
        ));
        let simulator = Arc::new(simulator(config, &metrics)?);
        Ok(AppState {
            model: simulator.clone(),
            simulator,
            admin_key: config
                .admin_key
                .as_deref()
                .filter(|k| !k.is_empty())
                .map(Arc::from),
            store: records.clone(),
            records,
            max_frame_bytes: config.max_frame_bytes,
            reject_unknown_models: config.reject_unknown_models,
            classifier: Arc::new(Classifier::new()),
            classifier_policy: config.classifier,
            token_cache: (config.token_cache_tokens > 0)
                .then(|| token_cache(config.token_cache_tokens, &metrics)),
            metrics,
            websocket_enabled: !config.no_websocket,
            keys,
            ws_lifetime,
            api_costs,
        })
    }
}

/// The simulator `config` describes: the shipped scenarios and `--scenario-dir`'s, the
/// aliases and settings of `--sim-config`, its series in `metrics`.
fn simulator(config: &Config, metrics: &Metrics) -> anyhow::Result<Simulator> {
    let mut scenarios = ScenarioSet::builtin();
    if let Some(dir) = &config.scenario_dir {
        scenarios
            .load_dir(dir)
            .map_err(|e| anyhow::anyhow!("cannot load scenarios: {e}"))?;
    }
    let (aliases, settings) = match &config.sim_config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
            let names = sim::Profile::builtin(config.tokens_per_second);
            let names: Vec<&str> = names.iter().map(|(name, _)| name.as_str()).collect();
            let (aliases, settings) = sim::config::parse_file(&text, &names)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            (aliases, Some((settings, path)))
        }
        None => Default::default(),
    };
    let simulator = Simulator::new(
        SimulatorConfig {
            seed: config.seed.unwrap_or_else(rand::random),
            tokens_per_second: config.tokens_per_second,
            scenarios,
            aliases,
            clock: config.sim_clock,
        },
        metrics,
    );
    if let Some((settings, path)) = settings {
        simulator
            .reconfigure(&settings)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    }
    Ok(simulator)
}

/// The HTTP path's token cache of `capacity` tokens, its series in `metrics`:
/// `tether_token_cache_{hits,misses}_total` and `tether_token_cache_tokens`.
fn token_cache(capacity: usize, metrics: &Metrics) -> Arc<TokenCache> {
    let counter = |name: &str, help: &str| {
        let counter = IntCounter::new(name, help).expect("valid metric");
        metrics.register(counter.clone());
        counter
    };
    let cache = Arc::new(TokenCache::new(
        capacity,
        counter(
            "tether_token_cache_hits_total",
            "Rendered blocks found in the HTTP path's token cache.",
        ),
        counter(
            "tether_token_cache_misses_total",
            "Rendered blocks tokenized and added to the token cache.",
        ),
    ));
    let held = cache.clone();
    metrics.register(OnScrape::new(
        IntGauge::new(
            "tether_token_cache_tokens",
            "Tokens held by the token cache.",
        )
        .expect("valid metric"),
        move |gauge: &IntGauge| gauge.set(held.len_tokens() as i64),
    ));
    cache
}
