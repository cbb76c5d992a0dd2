//! The Tether server: the Responses API over WebSocket mode (and, later, HTTP and SSE), with the
//! playground's static files served from the same origin.
//!
//! [`app`] builds the whole router from an [`AppState`] so tests drive it without a socket;
//! [`serve`] binds it and runs until a shutdown signal.

pub mod ids;
pub mod sim;
pub mod ws;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use tower_http::services::ServeDir;

use crate::sim::{Model, TextModel};

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
}

/// What every request handler shares.
#[derive(Clone)]
pub struct AppState {
    pub model: Arc<dyn Model>,
}

impl AppState {
    /// State built from `config`.
    pub fn new(config: &Config) -> anyhow::Result<Self> {
        anyhow::ensure!(
            config.tokens_per_second.is_finite() && config.tokens_per_second > 0.0,
            "--tokens-per-second must be a positive number, got {}",
            config.tokens_per_second
        );
        Ok(AppState {
            model: Arc::new(TextModel::new(config.tokens_per_second)),
        })
    }
}

/// The router: API routes, health, and the playground as the fallback.
pub fn app(state: AppState, static_dir: &std::path::Path) -> Router {
    let api = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/v1/responses", get(ws::upgrade))
        .with_state(state);
    if static_dir.join("index.html").is_file() {
        api.fallback_service(ServeDir::new(static_dir))
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
    let router = app(state, &config.static_dir);
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.addr))?;
    let addr = listener.local_addr()?;
    // The first line of stdout is the contract with scripts and tests that start the server.
    println!("Tether listening on http://{addr}");
    if !config.static_dir.join("index.html").is_file() {
        tracing::warn!(
            "no playground at {}: run `cargo xtask dist`",
            config.static_dir.display()
        );
    }
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await?;
    Ok(())
}
