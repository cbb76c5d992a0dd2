//! The server's configuration: every field is a command-line flag with an environment variable
//! fallback (`tether-server --help` lists them; `docs/server.md` explains them).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::costs::{ApiCostPreset, ApiCosts};
use crate::engine::spec::{self, Dialect, EngineSpec};
use crate::engine::{self, replay};
use crate::server_secret::ServerSecret;
use crate::sim;
use crate::stages::classify::ClassifierPolicy;
use crate::store::{PostgresOptions, StoreUrl, WriteMode};

/// Server configuration.
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
    /// Means `--store sqlite://DIR/tether.sqlite3`; `--store` wins when both are given.
    #[arg(long, env = "TETHER_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,
    /// The store: `sqlite://PATH` (one process), `:memory:`, or `postgres://USER@HOST:PORT/DB`
    /// (shared by replicas). Default: `sqlite://DATA_DIR/tether.sqlite3`.
    #[arg(long, env = "TETHER_STORE")]
    pub store: Option<String>,
    /// PostgreSQL: connections in the pool (requests beyond it wait for one).
    #[arg(long, env = "TETHER_STORE_POOL_SIZE", default_value_t = 16)]
    pub store_pool_size: usize,
    /// PostgreSQL: the longest a statement may run (`statement_timeout`) and a request may wait
    /// for a pooled connection, in milliseconds; past it the request is answered 503.
    #[arg(
        long,
        env = "TETHER_STORE_STATEMENT_TIMEOUT_MS",
        default_value_t = 5000
    )]
    pub store_statement_timeout_ms: u64,
    /// PostgreSQL: attempts after the first when the database cannot be reached at start; then
    /// the server exits with an error.
    #[arg(long, env = "TETHER_STORE_CONNECT_RETRIES", default_value_t = 10)]
    pub store_connect_retries: u32,
    /// PostgreSQL: the pause between those attempts, in milliseconds.
    #[arg(long, env = "TETHER_STORE_CONNECT_RETRY_MS", default_value_t = 1000)]
    pub store_connect_retry_ms: u64,
    /// When WebSocket mode writes a response to the store: `durable` before `response.completed`
    /// is sent (it survives a SIGKILL and every replica finds it), `behind` after it (readable at
    /// once in this process only); `auto` is `durable` for PostgreSQL, `behind` for SQLite.
    #[arg(long, env = "TETHER_WS_WRITES", value_enum, default_value = "auto")]
    pub ws_writes: WsWrites,
    /// Largest WebSocket message (and HTTP body) accepted, in bytes.
    #[arg(long, env = "TETHER_MAX_FRAME_BYTES", default_value_t = 16 * 1024 * 1024)]
    pub max_frame_bytes: usize,
    /// Refuse WebSocket upgrades with 426, so clients such as Codex fall back to HTTP.
    #[arg(long, env = "TETHER_NO_WEBSOCKET", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub no_websocket: bool,
    /// Accepted API keys (repeat the flag, or comma-separate in the env), each its own project;
    /// none (and no keys file) means no auth.
    #[arg(long = "api-key", env = "TETHER_API_KEYS", value_delimiter = ',')]
    pub api_keys: Vec<String>,
    /// A JSON file grouping API keys into projects: `{"project": ["key", …], …}`; a project's
    /// keys share its stored responses, other projects see none of them.
    #[arg(long, env = "TETHER_KEYS_FILE")]
    pub keys_file: Option<PathBuf>,
    /// Requests creating a response (`POST /v1/responses`, each WebSocket `response.create`)
    /// one project may make per minute; beyond, 429 `rate_limit_exceeded`. 0: no limit.
    #[arg(
        long,
        env = "TETHER_RATE_LIMIT_REQUESTS_PER_MINUTE",
        default_value_t = 0
    )]
    pub rate_limit_requests_per_minute: u64,
    /// Tokens (`usage.total_tokens`, charged as each response finishes) one project may use
    /// per minute; while they are used up, its requests get 429. 0: no limit.
    #[arg(long, env = "TETHER_RATE_LIMIT_TOKENS_PER_MINUTE", default_value_t = 0)]
    pub rate_limit_tokens_per_minute: u64,
    /// Lifetime of a WebSocket connection in seconds (the reference service allows 60 minutes).
    #[arg(long, env = "TETHER_WS_LIFETIME_SECONDS", default_value_t = 3600.0)]
    pub ws_lifetime_seconds: f64,
    /// WebSocket connections open at once; beyond, an upgrade is refused with 503 (HTTP is
    /// still served).
    #[arg(long, env = "TETHER_MAX_CONNECTIONS", default_value_t = 16_384)]
    pub max_connections: usize,
    /// A connection with no response running and no message from the client (a pong counts)
    /// for this long is closed (code 1001, after an error frame saying why); 0: never.
    #[arg(long, env = "TETHER_IDLE_TIMEOUT_SECONDS", default_value_t = 600.0)]
    pub idle_timeout_seconds: f64,
    /// How often the server pings a quiet connection; a connection that answers nothing for
    /// two intervals is closed as gone; 0: no pings.
    #[arg(long, env = "TETHER_PING_INTERVAL_SECONDS", default_value_t = 30.0)]
    pub ping_interval_seconds: f64,
    /// Requests waiting on one connection, across its lanes; beyond, a `response.create` is
    /// refused with 429 `too_many_queued_requests`.
    #[arg(long, env = "TETHER_MAX_QUEUED_REQUESTS", default_value_t = 64)]
    pub max_queued_requests: usize,
    /// Responses one connection's cache holds at most: the latest of each lane, those waiting
    /// for their tool calls' outputs, and the superseded ones `--connection-cache-superseded`
    /// keeps.
    #[arg(long, env = "TETHER_CONNECTION_CACHE_ENTRIES", default_value_t = 64)]
    pub connection_cache_entries: usize,
    /// Finished responses (no client tool call to answer) one connection's cache keeps although
    /// a later response on their lane superseded them: the last responses of earlier
    /// conversations, for a client that comes back to one (with `store: false` the cache holds
    /// their only copy). 0 keeps the latest response of each lane, what the reference service
    /// promises, and those waiting for their tool calls' outputs.
    #[arg(long, env = "TETHER_CONNECTION_CACHE_SUPERSEDED", default_value_t = 0)]
    pub connection_cache_superseded: usize,
    /// Bytes one connection's cache holds at most (its newest response is always kept).
    #[arg(long, env = "TETHER_CONNECTION_CACHE_BYTES", default_value_t = 64 << 20)]
    pub connection_cache_bytes: usize,
    /// Bytes all connection caches hold together; beyond, the least recently used
    /// connection's oldest responses are evicted first.
    #[arg(long, env = "TETHER_CACHE_MEMORY_BYTES", default_value_t = 2 << 30)]
    pub cache_memory_bytes: usize,
    /// On SIGTERM or Ctrl-C, how long running responses may take to finish before they are
    /// ended with `response.failed`; a second signal exits at once.
    #[arg(long, env = "TETHER_SHUTDOWN_GRACE_SECONDS", default_value_t = 30.0)]
    pub shutdown_grace_seconds: f64,
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
    /// The server's secret: the compaction items of `/v1/responses/compact` are sealed and the
    /// client secrets of `/v1/responses/client_secrets` signed under keys derived from it, so
    /// replicas must share it. Without it, a SQLite store's directory keeps a generated one
    /// (`compaction.key`), and an in-memory or PostgreSQL store gets one per process.
    /// At least 16 bytes; whoever holds it can mint client secrets for every project.
    /// `--compaction-key` and `TETHER_COMPACTION_KEY`, its earlier names, still work.
    #[arg(
        long,
        visible_alias = "compaction-key",
        env = "TETHER_SERVER_SECRET",
        hide_env_values = true
    )]
    pub server_secret: Option<String>,
    /// `TETHER_COMPACTION_KEY`, the server secret's earlier environment variable, read when
    /// `TETHER_SERVER_SECRET` is unset or empty.
    #[arg(
        long = "legacy-compaction-key",
        hide = true,
        env = "TETHER_COMPACTION_KEY",
        hide_env_values = true
    )]
    pub legacy_compaction_key: Option<String>,
    /// This replica's name in the turn-state tokens (`x-codex-turn-state`) the server hands
    /// clients, which a balancer reads to send a turn's later requests back to it
    /// (docs/deployment.md): 1–64 characters of `[A-Za-z0-9_-]`, unique per replica.
    #[arg(long, env = "TETHER_REPLICA_ID", default_value = "tether")]
    pub replica_id: String,
    /// An OTLP/HTTP collector to export traces to, by its base URL (`http://localhost:4318`;
    /// traces go to its `/v1/traces`): a span per response, a child of the client's
    /// `traceparent`, with one per stage and engine call. Unset (the default): no traces.
    #[arg(long, env = "TETHER_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
    /// The export's encoding: `http/protobuf` or `http/json`.
    #[arg(
        long,
        env = "TETHER_OTLP_PROTOCOL",
        value_enum,
        default_value = "http/protobuf"
    )]
    pub otlp_protocol: crate::traces::OtlpProtocol,
    /// Capacity in tokens of a process-wide cache of rendered tokens for the HTTP path (blocks
    /// any earlier request rendered are not tokenized again); 0, the default, turns it off.
    #[arg(long, env = "TETHER_TOKEN_CACHE_TOKENS", default_value_t = 0)]
    pub token_cache_tokens: usize,
    /// Timer that paces the simulator's tokens: `precise` (due times rounded up to 0.25 ms, a
    /// clock thread wakes the streams) or `runtime` (tokio's millisecond timer: no extra thread,
    /// but tokens leave up to 1–2 ms late, bunched on the millisecond ticks).
    #[arg(long, env = "TETHER_SIM_CLOCK", value_enum, default_value = "precise")]
    pub sim_clock: sim::Clock,
    /// Modelled API services (docs/pipeline.md): `local` models none (only real, measured
    /// work); `hosted` adds a safety classifier's per-token latency and an engine hop.
    #[arg(long, env = "TETHER_API_COSTS", value_enum, default_value = "local")]
    pub api_costs: ApiCostPreset,
    /// Overrides the preset's classifier latency, in microseconds per scanned token.
    #[arg(long, env = "TETHER_CLASSIFIER_US_PER_TOKEN")]
    pub classifier_us_per_token: Option<f64>,
    /// Overrides the preset's API → engine hop, in milliseconds per engine call.
    #[arg(long, env = "TETHER_ENGINE_HOP_MS")]
    pub engine_hop_ms: Option<f64>,
    /// Let clients choose the conditions they are served under (an emulated link, the API-cost
    /// preset) with `tether_rtt_ms`, `tether_up_mbit`, `tether_down_mbit` and
    /// `tether_api_costs` on the URL or as headers (docs/server.md); refused with a 400
    /// otherwise. `cargo xtask run` turns it on.
    #[arg(long, env = "TETHER_ALLOW_CLIENT_CONDITIONS", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub allow_client_conditions: bool,
    /// An upstream engine serving every model instead of the simulator: the base URL of an
    /// OpenAI-compatible server as its SDKs take it (`http://127.0.0.1:8000/v1`; a URL without
    /// a path gets `/v1`), or `replay:DIR` to serve recorded exchanges. Repeat it (or
    /// comma-separate the env) for replicas of one engine (docs/engines.md).
    #[arg(long = "engine", env = "TETHER_ENGINE", value_delimiter = ',')]
    pub engines: Vec<String>,
    /// `NAME=URL`: the model NAME is served by the upstream at URL (repeat it for replicas);
    /// other models stay with `--engine`, or with the simulator.
    #[arg(
        long = "engine-model",
        env = "TETHER_ENGINE_MODELS",
        value_delimiter = ','
    )]
    pub engine_models: Vec<String>,
    /// How the `--engine` and `--engine-model` upstreams are spoken to: `chat`
    /// (`/chat/completions`) or `responses` (`/responses`, streamed).
    #[arg(
        long,
        env = "TETHER_ENGINE_DIALECT",
        value_enum,
        default_value = "chat"
    )]
    pub engine_dialect: Dialect,
    /// The environment variable holding the API key those upstreams want (sent as a bearer
    /// token; never logged or echoed).
    #[arg(long, env = "TETHER_ENGINE_API_KEY_ENV")]
    pub engine_api_key_env: Option<String>,
    /// Requests one upstream replica runs at once; more wait in its queue.
    #[arg(long, env = "TETHER_ENGINE_MAX_CONCURRENCY", default_value_t = spec::DEFAULT_MAX_CONCURRENCY)]
    pub engine_max_concurrency: usize,
    /// Requests that may wait for an upstream replica; beyond, a request fails with 429.
    #[arg(long, env = "TETHER_ENGINE_MAX_QUEUE", default_value_t = spec::DEFAULT_MAX_QUEUE)]
    pub engine_max_queue: usize,
    /// How long opening a connection to an upstream may take.
    #[arg(long, env = "TETHER_ENGINE_CONNECT_TIMEOUT_SECONDS", default_value_t = spec::DEFAULT_CONNECT_TIMEOUT_SECONDS)]
    pub engine_connect_timeout_seconds: f64,
    /// The longest an upstream may send nothing — before its answer, its first chunk, or
    /// between two — before the response fails with 504.
    #[arg(long, env = "TETHER_ENGINE_IDLE_TIMEOUT_SECONDS", default_value_t = spec::DEFAULT_IDLE_TIMEOUT_SECONDS)]
    pub engine_idle_timeout_seconds: f64,
    /// Attempts after the first when an upstream fails before anything streamed (connection
    /// refused, 429, 502–504, a timeout before its answer).
    #[arg(long, env = "TETHER_ENGINE_RETRIES", default_value_t = spec::DEFAULT_RETRIES)]
    pub engine_retries: u32,
    /// A JSON file of upstream engines, each with its models, URLs, dialect, API key variable
    /// and limits — instead of the `--engine*` flags (docs/engines.md).
    #[arg(long, env = "TETHER_ENGINE_CONFIG")]
    pub engine_config: Option<PathBuf>,
    /// Writes every engine exchange to DIR as a JSONL fixture, for `--engine replay:DIR`.
    #[arg(long, env = "TETHER_RECORD")]
    pub record: Option<PathBuf>,
    /// How `--engine replay:DIR` paces the recorded chunks: `recorded`, `instant`, or a speed
    /// factor (`2` is twice as fast).
    #[arg(long, env = "TETHER_REPLAY_TIMING", default_value = "recorded")]
    pub replay_timing: String,
    /// With `--engine replay:DIR`, a request no recording matches is served by the simulator
    /// instead of failing.
    #[arg(long, env = "TETHER_REPLAY_FALLBACK", value_parser = clap::builder::BoolishValueParser::new(), action = clap::ArgAction::SetTrue)]
    pub replay_fallback: bool,
}

/// `--ws-writes`: when WebSocket mode's store writes happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WsWrites {
    /// `durable` with a shared store (PostgreSQL), `behind` with SQLite.
    Auto,
    /// Committed before `response.completed` is sent.
    Durable,
    /// Queued before `response.completed`, written after it.
    Behind,
}

impl Config {
    /// The store these flags name: `--store`, else `--data-dir`'s SQLite file.
    pub fn store_url(&self) -> Result<StoreUrl, String> {
        match &self.store {
            Some(url) => StoreUrl::parse(url),
            None => Ok(StoreUrl::from_data_dir(&self.data_dir)),
        }
    }

    /// How the PostgreSQL store connects (`--store-*`).
    pub fn postgres_options(&self) -> PostgresOptions {
        PostgresOptions {
            pool_size: self.store_pool_size.max(1),
            statement_timeout: Duration::from_millis(self.store_statement_timeout_ms.max(1)),
            connect_retries: self.store_connect_retries,
            connect_retry_delay: Duration::from_millis(self.store_connect_retry_ms),
            ..PostgresOptions::default()
        }
    }

    /// When WebSocket mode writes to `store`.
    pub fn write_mode(&self, store: &StoreUrl) -> WriteMode {
        match self.ws_writes {
            WsWrites::Durable => WriteMode::Durable,
            WsWrites::Behind => WriteMode::Behind,
            WsWrites::Auto if store.is_shared() => WriteMode::Durable,
            WsWrites::Auto => WriteMode::Behind,
        }
    }

    /// The server secret these flags describe: `--server-secret` (`TETHER_SERVER_SECRET`), else
    /// `TETHER_COMPACTION_KEY`, else the SQLite store's `compaction.key`, else a random one. An
    /// empty value counts as none; a short one is refused.
    pub fn server_secret(&self) -> anyhow::Result<ServerSecret> {
        let named = [&self.server_secret, &self.legacy_compaction_key]
            .into_iter()
            .flatten()
            .find(|s| !s.trim().is_empty());
        if let Some(secret) = named {
            return ServerSecret::new(secret).map_err(|e| {
                anyhow::anyhow!(
                    "--server-secret: {e} (a new one makes the compaction items and client \
                     secrets made with the old one stop being accepted)"
                )
            });
        }
        let database = match self.store_url().map_err(|e| anyhow::anyhow!(e))? {
            StoreUrl::Sqlite(path) if path != Path::new(":memory:") => path,
            url => {
                if url.is_shared() {
                    tracing::warn!(
                        "no --server-secret: compaction items open and client secrets are \
                         accepted only in this process (replicas sharing a store must share it)"
                    );
                }
                return Ok(random_secret());
            }
        };
        // Beside the database: compaction items and client secrets outlive a restart as the
        // responses do.
        let dir = database.parent().unwrap_or(Path::new("."));
        let path = dir.join("compaction.key");
        let secret = match std::fs::read_to_string(&path) {
            Ok(secret) => secret,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir)?;
                let secret = random_secret();
                write_private(&path, secret.expose())
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
                return Ok(secret);
            }
            Err(err) => anyhow::bail!("cannot read {}: {err}", path.display()),
        };
        // The file's own newline is not part of the secret (as it never was).
        ServerSecret::new(secret.trim()).map_err(|e| {
            anyhow::anyhow!(
                "{}: {e}; delete the file to have a new one generated (compaction items and \
                 client secrets made with the old one then stop being accepted)",
                path.display()
            )
        })
    }

    /// The upstream engines these flags (or `--engine-config`) describe; none: the simulator.
    pub fn engine_specs(&self) -> anyhow::Result<Vec<EngineSpec>> {
        let flags_used = !self.engines.is_empty() || !self.engine_models.is_empty();
        if let Some(path) = &self.engine_config {
            anyhow::ensure!(
                !flags_used,
                "--engine-config and --engine/--engine-model at once: describe every engine in                  the file"
            );
            let text = std::fs::read_to_string(path)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
            return spec::from_file(path, &text).map_err(|e| anyhow::anyhow!(e));
        }
        spec::from_flags(
            &self.engines,
            &self.engine_models,
            &spec::Shared {
                dialect: self.engine_dialect,
                api_key_env: self.engine_api_key_env.clone(),
                max_concurrency: self.engine_max_concurrency,
                max_queue: self.engine_max_queue,
                connect_timeout_seconds: self.engine_connect_timeout_seconds,
                idle_timeout_seconds: self.engine_idle_timeout_seconds,
                retries: self.engine_retries,
            },
        )
        .map_err(|e| anyhow::anyhow!(e))
        .and_then(|specs| {
            anyhow::ensure!(
                self.engine_max_concurrency > 0,
                "--engine-max-concurrency must be at least 1"
            );
            Ok(specs)
        })
    }

    /// Recording and replaying (`--record`, `--replay-timing`, `--replay-fallback`).
    pub fn engine_options(&self) -> anyhow::Result<engine::Options> {
        Ok(engine::Options {
            record: self.record.clone(),
            replay_timing: replay::Timing::parse(&self.replay_timing)
                .map_err(|e| anyhow::anyhow!(e))?,
            replay_fallback: self.replay_fallback,
        })
    }

    /// The modelled API services these flags describe.
    pub fn api_costs(&self) -> ApiCosts {
        let mut costs = ApiCosts::preset(self.api_costs);
        if let Some(us) = self.classifier_us_per_token {
            costs.classifier_seconds_per_token = us / 1e6;
        }
        if let Some(ms) = self.engine_hop_ms {
            costs.engine_hop_seconds = ms / 1e3;
        }
        costs
    }
}

/// A new random server secret: 256 bits in hex.
fn random_secret() -> ServerSecret {
    let hex = format!(
        "{:032x}{:032x}",
        rand::random::<u128>(),
        rand::random::<u128>()
    );
    ServerSecret::new(&hex).expect("64 hex digits are long enough")
}

/// Writes `contents` to a new file at `path` that only its owner may read.
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(contents.as_bytes())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::Config;

    /// `args` parsed with none of the secret's or the store's environment variables counted,
    /// whatever the environment running the tests holds.
    fn parse(args: &[&str]) -> Config {
        let mut config =
            Config::parse_from(std::iter::once("tether-server").chain(args.iter().copied()));
        if !args.contains(&"--server-secret") && !args.contains(&"--compaction-key") {
            config.server_secret = None;
        }
        if !args.contains(&"--legacy-compaction-key") {
            config.legacy_compaction_key = None;
        }
        if !args.contains(&"--store") {
            config.store = None;
        }
        config
    }

    const LONG: &str = "0123456789abcdef-long-enough";

    #[test]
    fn the_server_secret_answers_to_its_earlier_names_too() {
        for flag in ["--server-secret", "--compaction-key"] {
            let config = parse(&[flag, LONG, "--store", "sqlite://:memory:"]);
            assert_eq!(config.server_secret().unwrap().expose(), LONG, "{flag}");
        }
        // TETHER_COMPACTION_KEY (the hidden flag stands for it) when the new name is unset or
        // empty, not over it.
        let mut config = parse(&["--legacy-compaction-key", LONG, "--store", ":memory:"]);
        assert_eq!(config.server_secret().unwrap().expose(), LONG);
        for unset in ["", "  "] {
            config.server_secret = Some(unset.into());
            let secret = config.server_secret().unwrap();
            assert_eq!(secret.expose(), LONG, "{unset:?} is unset");
        }
        config.server_secret = Some("the-new-name-wins-0123".into());
        assert_eq!(
            config.server_secret().unwrap().expose(),
            "the-new-name-wins-0123"
        );
    }

    #[test]
    fn a_short_server_secret_is_refused() {
        let config = parse(&["--server-secret", "s3cret", "--store", ":memory:"]);
        let error = config.server_secret().unwrap_err().to_string();
        assert!(
            error.contains("--server-secret") && error.contains("at least 16"),
            "{error}"
        );
    }

    #[test]
    fn without_a_server_secret_a_sqlite_directory_keeps_one() {
        let path = std::env::temp_dir().join(format!("tether-secret-{}", rand::random::<u64>()));
        let dir = path.to_str().unwrap();
        let kept = parse(&["--data-dir", dir]).server_secret().unwrap();
        assert_eq!(kept.expose().len(), 64, "{kept:?}");
        let again = parse(&["--data-dir", dir]).server_secret().unwrap();
        assert_eq!(again.expose(), kept.expose(), "the same after a restart");
        let memory = parse(&["--store", "sqlite://:memory:"])
            .server_secret()
            .unwrap();
        assert_ne!(memory.expose(), kept.expose(), "a fresh one in memory");
        // A file cut short (a crash while it was written) is refused, not used.
        std::fs::write(path.join("compaction.key"), "").unwrap();
        let error = parse(&["--data-dir", dir])
            .server_secret()
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("compaction.key") && error.contains("delete the file"),
            "{error}"
        );
        std::fs::remove_dir_all(&path).unwrap();
    }
}
