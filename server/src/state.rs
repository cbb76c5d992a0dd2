//! What every request handler shares, built once from the [`Config`] at start.

use std::sync::Arc;

use prometheus::{IntCounter, IntGauge};

use crate::cache::{CacheBudget, Limits};
use crate::compaction::Sealer;
use crate::config::Config;
use crate::costs::ApiCosts;
use crate::engine::{self, spec::EngineSpec};
use crate::lifecycle::Lifecycle;
use crate::metrics::{Metrics, OnScrape};
use crate::model::Model;
use crate::sim::{self, ScenarioSet, Simulator, SimulatorConfig};
use crate::stages::Scan;
use crate::stages::classify::{Classifier, ClassifierPolicy};
use crate::stages::render::TokenCache;
use crate::store::{self, ResponseStore, StoreUrl, WriteBehindStore, WriteMode};
use crate::tenancy::KeyRing;
use crate::tenancy::secrets::ClientSecrets;
use crate::tokenizer;
use crate::traces::Traces;
use crate::turn_state::TurnStates;

/// What every request handler shares.
#[derive(Clone)]
pub struct AppState {
    /// What generates: the simulator, or the upstream engines (`--engine`) in front of it.
    pub model: Arc<dyn Model>,
    /// The simulator, for its seed, profiles and failure rates (`model` when no engine is
    /// configured).
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
    /// Per-project rate limits (`--rate-limit-*`), off unless a limit is set.
    pub rate_limits: Arc<crate::tenancy::limits::RateLimits>,
    /// Mints and checks client secrets (signed with a key derived from `--server-secret`),
    /// accepted on the WebSocket upgrade.
    pub client_secrets: Arc<ClientSecrets>,
    pub ws_lifetime: std::time::Duration,
    pub reject_unknown_models: bool,
    pub classifier: Arc<Classifier>,
    pub classifier_policy: ClassifierPolicy,
    /// The HTTP path's process-wide token cache (`--token-cache-tokens`), if on.
    pub token_cache: Option<Arc<TokenCache>>,
    /// The modelled API services (`--api-costs`).
    pub api_costs: ApiCosts,
    /// Whether clients may choose an emulated link and the API-cost preset
    /// (`--allow-client-conditions`).
    pub allow_client_conditions: bool,
    /// Seals and opens compaction items (a key derived from `--server-secret`).
    pub compaction: Sealer,
    /// The WebSocket connections and the shutdown (`--max-connections`, SIGTERM).
    pub lifecycle: Arc<Lifecycle>,
    /// What each connection's cache may hold, and what all of them share.
    pub cache_limits: Limits,
    pub cache_budget: Arc<CacheBudget>,
    /// What one connection may do (`--max-queued-requests`, `--idle-timeout-seconds`,
    /// `--ping-interval-seconds`).
    pub connection_limits: ConnectionLimits,
    /// Issues and checks the turn-state tokens naming this replica (`--replica-id`).
    pub turn_states: Arc<TurnStates>,
    /// The trace exporter (`--otlp-endpoint`); `None`: traces are off.
    pub traces: Option<Arc<Traces>>,
    /// The background responses this process runs, with their events.
    pub background: Arc<crate::background::Runs>,
}

/// What one WebSocket connection may do.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Requests waiting across its lanes.
    pub max_queued: usize,
    /// Closed after this long with nothing running and nothing from the client.
    pub idle_timeout: Option<std::time::Duration>,
    /// Pinged after this long without a message from the client.
    pub ping_interval: Option<std::time::Duration>,
}

impl AppState {
    /// How the classify stage scans a request: this server's classifier and policy, findings
    /// counted in its metrics.
    pub fn scan(&self) -> Scan<'_> {
        Scan {
            classifier: &self.classifier,
            policy: self.classifier_policy,
            metrics: &self.metrics,
        }
    }

    /// State built from `config`; starts the store's background writer, so it must be called
    /// inside a tokio runtime. Opens a SQLite store only: a PostgreSQL one connects
    /// asynchronously, through [`AppState::open`].
    pub fn new(config: &Config) -> anyhow::Result<Self> {
        let checked = Checked::new(config)?;
        let url = store_url(config)?;
        let store: Arc<dyn ResponseStore> =
            match &url {
                StoreUrl::Sqlite(path) => Arc::new(store::open_sqlite(path).map_err(|e| {
                    anyhow::anyhow!("cannot open the store {}: {e}", url.redacted())
                })?),
                StoreUrl::Postgres(_) => anyhow::bail!(
                    "{} is a PostgreSQL store: open it with AppState::open",
                    url.redacted()
                ),
            };
        Self::build(config, checked, store, config.write_mode(&url))
    }

    /// State built from `config`, whichever store it names: a PostgreSQL one is connected to
    /// (retried as `--store-connect-retries` says: then a clear error) and migrated first.
    pub async fn open(config: &Config) -> anyhow::Result<Self> {
        let checked = Checked::new(config)?;
        let url = store_url(config)?;
        let store = store::open(&url, &config.postgres_options())
            .await
            .map_err(|e| anyhow::anyhow!("cannot open the store {}: {e}", url.redacted()))?;
        Self::build(config, checked, store, config.write_mode(&url))
    }

    /// The state around an opened `store`, written as `mode` says.
    fn build(
        config: &Config,
        checked: Checked,
        store: Arc<dyn ResponseStore>,
        mode: WriteMode,
    ) -> anyhow::Result<Self> {
        let Checked {
            keys,
            api_costs,
            ws_lifetime,
            compaction,
            client_secrets,
            connection_limits,
            turn_states,
            engines,
            engine_options,
        } = checked;
        // The tokenizer's vocabulary (200k tokens) loads on first use, ~0.1 s: here, not in
        // the first request's time to first token.
        tokenizer::load();
        let metrics = Metrics::new();
        let records = Arc::new(WriteBehindStore::start_with_mode(
            store,
            metrics.stages.clone(),
            mode,
        ));
        let simulator = Arc::new(simulator(config, &metrics)?);
        let traces = match config.otlp_endpoint.as_deref().filter(|e| !e.is_empty()) {
            Some(endpoint) => Some(Arc::new(
                Traces::start(endpoint, config.otlp_protocol, &config.replica_id)
                    .map_err(|e| anyhow::anyhow!("--otlp-endpoint: {e}"))?,
            )),
            None => None,
        };
        let model = engine::build(
            &engines,
            &engine_options,
            simulator.clone(),
            &metrics,
            |name| std::env::var(name).ok(),
        )
        .map_err(|e| anyhow::anyhow!(e))?;
        let metrics_for_budget = metrics.clone();
        Ok(AppState {
            model,
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
            rate_limits: Arc::new(crate::tenancy::limits::RateLimits::new(
                config.rate_limit_requests_per_minute,
                config.rate_limit_tokens_per_minute,
            )),
            client_secrets,
            ws_lifetime,
            api_costs,
            allow_client_conditions: config.allow_client_conditions,
            compaction,
            lifecycle: Lifecycle::new(config.max_connections),
            cache_limits: Limits {
                entries: config.connection_cache_entries,
                superseded: config.connection_cache_superseded,
                bytes: config.connection_cache_bytes,
            },
            cache_budget: cache_budget(config.cache_memory_bytes, &metrics_for_budget),
            connection_limits,
            turn_states: Arc::new(turn_states),
            traces,
            background: Arc::default(),
        })
    }
}

/// What is checked in `config` before anything is opened.
struct Checked {
    keys: KeyRing,
    api_costs: ApiCosts,
    ws_lifetime: std::time::Duration,
    compaction: Sealer,
    client_secrets: Arc<ClientSecrets>,
    connection_limits: ConnectionLimits,
    turn_states: TurnStates,
    engines: Vec<EngineSpec>,
    engine_options: engine::Options,
}

impl Checked {
    fn new(config: &Config) -> anyhow::Result<Self> {
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
        let server_secret = config.server_secret()?;
        let compaction = Sealer::new(server_secret.compaction_key());
        // With no keys, every request is the open project's (secrets are never checked).
        let projects = if keys.is_empty() {
            vec![crate::tenancy::Project::open()]
        } else {
            keys.projects()
        };
        let client_secrets = Arc::new(ClientSecrets::new(
            server_secret.client_secret_key(),
            projects,
        ));
        let turn_states = TurnStates::new(&config.replica_id, server_secret.turn_state_key())
            .map_err(|e| anyhow::anyhow!("--replica-id: {e}"))?;
        // A duration flag: positive, or 0 for "never".
        let optional = |flag: &str, seconds: f64| match seconds {
            0.0 => Ok(None),
            s => std::time::Duration::try_from_secs_f64(s)
                .map(Some)
                .map_err(|_| anyhow::anyhow!("{flag} must be 0 or a positive number, got {s}")),
        };
        anyhow::ensure!(
            config.max_queued_requests > 0,
            "--max-queued-requests must be at least 1"
        );
        anyhow::ensure!(
            config.connection_cache_entries > 0,
            "--connection-cache-entries must be at least 1"
        );
        let connection_limits = ConnectionLimits {
            max_queued: config.max_queued_requests,
            idle_timeout: optional("--idle-timeout-seconds", config.idle_timeout_seconds)?,
            ping_interval: optional("--ping-interval-seconds", config.ping_interval_seconds)?,
        };
        std::time::Duration::try_from_secs_f64(config.shutdown_grace_seconds).map_err(|_| {
            anyhow::anyhow!(
                "--shutdown-grace-seconds must be a non-negative number, got {}",
                config.shutdown_grace_seconds
            )
        })?;
        let engines = config.engine_specs()?;
        let engine_options = config.engine_options()?;
        Ok(Checked {
            keys,
            api_costs,
            ws_lifetime,
            compaction,
            client_secrets,
            connection_limits,
            turn_states,
            engines,
            engine_options,
        })
    }
}

/// The store `config` names (`--store`, else `--data-dir`).
fn store_url(config: &Config) -> anyhow::Result<StoreUrl> {
    config
        .store_url()
        .map_err(|e| anyhow::anyhow!("--store: {e}"))
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

/// The budget all connection caches share (`--cache-memory-bytes`), its use on `/metrics`.
fn cache_budget(limit: usize, metrics: &Metrics) -> Arc<CacheBudget> {
    let budget = CacheBudget::new(limit);
    let held = budget.clone();
    metrics.register(OnScrape::new(
        IntGauge::new(
            "tether_connection_cache_bytes",
            "Bytes all WebSocket connection caches hold, estimated (--cache-memory-bytes caps it).",
        )
        .expect("valid metric"),
        move |gauge: &IntGauge| gauge.set(held.used() as i64),
    ));
    budget
}
