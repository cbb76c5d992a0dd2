//! The Tether server: the Responses API over HTTP (JSON and SSE) and WebSocket mode, with a
//! persistent store and the playground's static files served from the same origin.
//!
//! [`app`] builds the whole router from an [`AppState`] so tests drive it without a socket;
//! [`serve`] binds it and runs until a shutdown signal.

pub mod admin;
pub mod auth;
pub mod cache;
pub mod http;
pub mod ids;
pub mod metrics;
pub mod persist;
pub mod pipeline;
pub mod sim;
pub mod stages;
pub mod store;
pub mod timing;
pub mod ws;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::serve::ListenerExt;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeader;

use crate::metrics::Metrics;
use crate::persist::WriteBehindStore;
use crate::sim::{Model, ScenarioSet, Simulator, SimulatorConfig};
use crate::stages::classify::{Classifier, ClassifierPolicy};
use crate::store::{ResponseStore, SqliteStore};
use crate::timing::StageHistograms;

/// Server configuration; every field is a command-line flag with an environment fallback.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "tether-server",
    version,
    about = "Responses API server with WebSocket mode"
)]
pub struct Config {
    /// Address to listen on (port 0 picks a free port; the bound address is printed).
    #[arg(long, env = "TETHER_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Directory holding the built playground (`cargo xtask dist` writes it).
    #[arg(long, env = "TETHER_STATIC_DIR", default_value = "dist")]
    pub static_dir: PathBuf,
    /// Decoding speed of the simulated model, in tokens per second.
    #[arg(long, env = "TETHER_TOKENS_PER_SECOND", default_value_t = 1000.0)]
    pub tokens_per_second: f64,
    /// Directory of the SQLite store of `store:true` responses; `:memory:` keeps it in memory.
    #[arg(long, env = "TETHER_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,
    /// Largest WebSocket message (and HTTP body) accepted, in bytes.
    #[arg(long, env = "TETHER_MAX_FRAME_BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_frame_bytes: usize,
    /// Refuse WebSocket upgrades with 426, so clients such as Codex fall back to HTTP.
    #[arg(long, env = "TETHER_NO_WEBSOCKET", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub no_websocket: bool,
    /// Accepted API keys (repeat the flag, or comma-separate in the env); none means no auth.
    #[arg(long = "api-key", env = "TETHER_API_KEYS", value_delimiter = ',')]
    pub api_keys: Vec<String>,
    /// Lifetime of a WebSocket connection in seconds (the reference service allows 60 minutes).
    #[arg(long, env = "TETHER_WS_LIFETIME_SECONDS", default_value_t = 3600.0)]
    pub ws_lifetime_seconds: f64,
    /// Refuse requests for models the server does not list (404 `model_not_found`) instead of
    /// serving them with the default model, which is what clients such as Codex need.
    #[arg(long, env = "TETHER_REJECT_UNKNOWN_MODELS", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub reject_unknown_models: bool,
    /// What the safety classifier does with secrets or personal data in request input.
    #[arg(long, env = "TETHER_CLASSIFIER", value_enum, default_value = "flag")]
    pub classifier: ClassifierPolicy,
    /// Seed of the simulator's random choices (jitter, injected failures); random when absent.
    /// The server prints it at start so a run can be replayed.
    #[arg(long, env = "TETHER_SEED")]
    pub seed: Option<u64>,
    /// Directory of extra scenario files (`*.json`, the format of `server/scenarios/`).
    #[arg(long, env = "TETHER_SCENARIO_DIR")]
    pub scenario_dir: Option<PathBuf>,
    /// Simulator configuration file (JSON): model aliases, profile settings, failure rates.
    #[arg(long, env = "TETHER_SIM_CONFIG")]
    pub sim_config: Option<PathBuf>,
    /// Key of the admin endpoint (`/admin/simulator`, bearer token); without it the endpoint is
    /// off.
    #[arg(long, env = "TETHER_ADMIN_KEY")]
    pub admin_key: Option<String>,
    /// Capacity in tokens of a process-wide cache of rendered tokens for the HTTP path (blocks
    /// any earlier request rendered are not tokenized again); 0, the default, turns it off.
    #[arg(long, env = "TETHER_TOKEN_CACHE_TOKENS", default_value_t = 0)]
    pub token_cache_tokens: usize,
    /// Timer that paces the simulator's tokens: `precise` (due times rounded up to 0.25 ms, a
    /// clock thread wakes the streams) or `runtime` (tokio's millisecond timer: no extra thread,
    /// but tokens leave up to 1–2 ms late, bunched on the millisecond ticks).
    #[arg(long, env = "TETHER_SIM_CLOCK", value_enum, default_value = "precise")]
    pub sim_clock: sim::Clock,
}

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
    pub metrics: Arc<Metrics>,
    pub max_frame_bytes: usize,
    pub websocket_enabled: bool,
    pub api_keys: Arc<Vec<String>>,
    pub ws_lifetime: std::time::Duration,
    pub reject_unknown_models: bool,
    pub classifier: Arc<Classifier>,
    pub classifier_policy: ClassifierPolicy,
    pub stage_histograms: Arc<StageHistograms>,
    /// The HTTP path's process-wide token cache (`--token-cache-tokens`), if on.
    pub token_cache: Option<Arc<stages::render::TokenCache>>,
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
        let store = SqliteStore::open(&config.data_dir).map_err(|e| {
            anyhow::anyhow!(
                "cannot open the store in {}: {e}",
                config.data_dir.display()
            )
        })?;
        // The tokenizer's vocabulary (200k tokens) loads on first use, ~0.1 s: here, not in
        // the first request's time to first token.
        stages::render::tokenizer();
        let stage_histograms = Arc::new(StageHistograms::default());
        let records = Arc::new(WriteBehindStore::start(
            Arc::new(store),
            stage_histograms.clone(),
        ));
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
                (aliases, Some(settings))
            }
            None => Default::default(),
        };
        let simulator = Arc::new(Simulator::new(SimulatorConfig {
            seed: config.seed.unwrap_or_else(rand::random),
            tokens_per_second: config.tokens_per_second,
            scenarios,
            aliases,
            clock: config.sim_clock,
        }));
        if let (Some(settings), Some(path)) = (settings, &config.sim_config) {
            simulator
                .reconfigure(&settings)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        }
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
            metrics: Arc::new(Metrics::default()),
            max_frame_bytes: config.max_frame_bytes,
            reject_unknown_models: config.reject_unknown_models,
            classifier: Arc::new(Classifier::new()),
            classifier_policy: config.classifier,
            stage_histograms,
            token_cache: (config.token_cache_tokens > 0)
                .then(|| Arc::new(stages::render::TokenCache::new(config.token_cache_tokens))),
            websocket_enabled: !config.no_websocket,
            api_keys: Arc::new(
                config
                    .api_keys
                    .iter()
                    .filter(|k| !k.is_empty())
                    .cloned()
                    .collect(),
            ),
            ws_lifetime: std::time::Duration::try_from_secs_f64(config.ws_lifetime_seconds)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    anyhow::anyhow!("--ws-lifetime-seconds must be a positive number")
                })?,
        })
    }
}

/// `tether_token_cache_{hits,misses}_total` and `tether_token_cache_tokens`, when the cache is on.
fn token_cache_metrics(cache: Option<&stages::render::TokenCache>) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    let Some(cache) = cache else {
        return String::new();
    };
    format!(
        "# HELP tether_token_cache_hits_total Rendered blocks found in the HTTP path's token cache.\n\
         # TYPE tether_token_cache_hits_total counter\n\
         tether_token_cache_hits_total {}\n\
         # HELP tether_token_cache_misses_total Rendered blocks tokenized and added to the token cache.\n\
         # TYPE tether_token_cache_misses_total counter\n\
         tether_token_cache_misses_total {}\n\
         # HELP tether_token_cache_tokens Tokens held by the token cache.\n\
         # TYPE tether_token_cache_tokens gauge\n\
         tether_token_cache_tokens {}\n",
        cache.hits.load(Relaxed),
        cache.misses.load(Relaxed),
        cache.len_tokens()
    )
}

/// The router: API routes, health, and the playground as the fallback.
pub fn app(state: AppState, static_dir: &std::path::Path) -> Router {
    let body_limit = state.max_frame_bytes;
    let api = Router::new()
        .route("/v1/models", get(http::models))
        .route("/v1/responses", get(ws::upgrade).post(http::create))
        .route(
            "/v1/responses/{id}",
            get(http::retrieve).delete(http::delete),
        )
        .route("/v1/responses/{id}/input_items", get(http::input_items))
        .route_layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::require_api_key,
        ))
        .route("/admin/simulator", get(admin::show).patch(admin::update))
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/metrics",
            get(|State(state): State<AppState>| async move {
                state.metrics.render()
                    + &state.stage_histograms.render()
                    + &token_cache_metrics(state.token_cache.as_deref())
                    + &state.simulator.render_metrics()
            }),
        )
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            http::json_errors,
        ))
        // A playground (or any page) served from another origin may call the API: no cookies
        // are involved (keys go in `Authorization`), and WebSocket upgrades are not subject to
        // CORS anyway. Preflights are answered before authentication.
        .layer(
            tower_http::cors::CorsLayer::new()
                .allow_origin(tower_http::cors::Any)
                .allow_methods([
                    axum::http::Method::GET,
                    axum::http::Method::POST,
                    axum::http::Method::DELETE,
                    axum::http::Method::PATCH,
                ])
                // Mirrored, not `*`: a wildcard does not cover `Authorization` (Fetch spec).
                .allow_headers(tower_http::cors::AllowHeaders::mirror_request())
                .max_age(std::time::Duration::from_secs(600)),
        )
        .with_state(state);
    if static_dir.join("index.html").is_file() {
        // `no-cache`: the browser revalidates every file (a 304 when unchanged) instead of
        // reusing a heuristically fresh copy. The playground is several files that must come
        // from one build — its JS glue, its main wasm and the agent view's wasm chunk, which
        // links to the main module's internals — and a mix of two builds would fail to start.
        // (A page opened before a rebuild asks for its own chunk by content hash: `xtask dist`.)
        api.fallback_service(SetResponseHeader::overriding(
            ServeDir::new(static_dir),
            axum::http::header::CACHE_CONTROL,
            axum::http::HeaderValue::from_static("no-cache"),
        ))
    } else {
        let hint = format!(
            "The playground is not built: {} has no index.html.\n\
             Run `cargo xtask run` (builds it and starts the server) or `cargo xtask dist`.\n",
            static_dir.display()
        );
        api.fallback(move || async move { (StatusCode::NOT_FOUND, hint).into_response() })
    }
}

/// Binds `config.addr`, prints the URL, and serves until `shutdown` resolves.
pub async fn serve(
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let state = AppState::new(&config)?;
    let seed = state.simulator.seed();
    let records = state.records.clone();
    let router = app(state, &config.static_dir);
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.addr))?;
    let addr = listener.local_addr()?;
    // The first line of stdout is the contract with scripts and tests that start the server.
    println!("Tether listening on http://{addr}");
    println!("Simulator seed: {seed} (replay with --seed {seed})");
    if !config.static_dir.join("index.html").is_file() {
        tracing::warn!(
            "no playground at {}: run `cargo xtask dist`",
            config.static_dir.display()
        );
    }
    // Events are small frames written one at a time: without TCP_NODELAY, Nagle's algorithm
    // holds each behind the client's delayed ACK (tens of milliseconds per turn).
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {error}");
        }
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await?;
    // Responses already answered may still be queued for the store and the ledger.
    records.drain().await;
    Ok(())
}
