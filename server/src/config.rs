//! The server's configuration: every field is a command-line flag with an environment variable
//! fallback (`tether-server --help` lists them; `docs/server.md` explains them).

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::costs::{ApiCostPreset, ApiCosts};
use crate::sim;
use crate::stages::classify::ClassifierPolicy;

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
    #[arg(long, env = "TETHER_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,
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
}

impl Config {
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
