//! The Tether server: the Responses API over HTTP (JSON and SSE) and WebSocket mode, with a
//! connection cache, a persistent store, an inference simulator behind the engine seam, and the
//! playground's static files served from the same origin.
//!
//! A request flows one way through the modules: a [`transport`] (HTTP, SSE, WebSocket) decodes
//! it and hands it to the [`pipeline`], which takes the previous context from the connection
//! [`cache`] or the [`store`], runs the [`stages`] (render with the [`tokenizer`], validate,
//! classify) over what is new, and asks the [`model`] — the [`sim`]ulator, or a real [`engine`]
//! behind `--engine` — to generate.
//! Underneath sit the wire types (`tether-protocol`), the one [`error`] type, the [`items`]
//! projection to text, the [`timing`] of each stage and the [`metrics`] registry.
//!
//! [`app`] builds the whole router from an [`AppState`] so tests drive it without a socket;
//! [`serve`] binds it and runs until a shutdown signal. `docs/architecture.md` draws the map.

pub mod background;
pub mod cache;
pub mod compaction;
pub mod conditions;
pub mod config;
pub mod costs;
pub mod engine;
pub mod error;
pub mod ids;
pub mod items;
pub mod lifecycle;
pub mod metrics;
pub mod model;
pub mod pipeline;
pub mod server_secret;
pub mod sim;
pub mod stages;
pub mod state;
pub mod store;
pub mod tenancy;
pub mod timing;
pub mod tokenizer;
pub mod traces;
pub mod transport;
pub mod turn_state;

use std::future::Future;

pub use config::Config;
pub use state::AppState;
pub use transport::router as app;

/// Binds `config.addr`, prints the URL, and serves until `shutdown` resolves.
pub async fn serve(
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let state = AppState::open(&config).await?;
    // Background responses a killed or restarted server left running end `failed` now — every
    // one left, when no other process shares the store — and whenever a lease runs out later.
    let shared = config
        .store_url()
        .map(|url| url.is_shared())
        .unwrap_or(false);
    pipeline::background::sweep(&state, !shared).await;
    let sweeping = state.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(pipeline::background::RENEW_EVERY);
        every.tick().await;
        loop {
            every.tick().await;
            pipeline::background::sweep(&sweeping, false).await;
        }
    });
    let seed = state.simulator.seed();
    let records = state.records.clone();
    let traces = state.traces.clone();
    let lifecycle = state.lifecycle.clone();
    let grace = std::time::Duration::from_secs_f64(config.shutdown_grace_seconds.max(0.0));
    let router = app(state, &config.static_dir);
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.addr))?;
    let addr = listener.local_addr()?;
    // The first line of stdout is the contract with scripts and tests that start the server.
    println!("Tether listening on http://{addr}");
    println!("Simulator seed: {seed} (replay with --seed {seed})");
    raise_open_file_limit(config.max_connections);
    if !config.static_dir.join("index.html").is_file() {
        tracing::warn!(
            "no playground at {}: run `cargo xtask dist`",
            config.static_dir.display()
        );
    }
    // Every socket can carry the link a request asks for (`transport/link.rs`), with
    // TCP_NODELAY.
    let listener = transport::link::Listener::new(listener);
    let signalled = lifecycle.clone();
    let mut serving = tokio::spawn(async move {
        axum::serve(listener, transport::link::service(router))
            .with_graceful_shutdown(async move {
                shutdown.await;
                // No new connection nor request from here on (lifecycle.rs).
                signalled.drain();
            })
            .await
    });
    // The signal drains the lifecycle before axum stops: draining first, then the rest.
    tokio::select! {
        biased;
        () = lifecycle.draining() => {}
        served = &mut serving => return Ok(served??),
    }
    tracing::info!(
        "shutting down: {} WebSocket connections open, running responses may finish within {:?}",
        lifecycle.open_connections(),
        grace
    );
    // HTTP requests and WebSocket connections finish (axum does not track upgraded ones).
    let finished = async {
        let served = (&mut serving).await;
        lifecycle.all_closed().await;
        served
    };
    tokio::pin!(finished);
    let served = match tokio::time::timeout(grace, &mut finished).await {
        Ok(served) => served,
        Err(_) => {
            tracing::warn!(
                "shutdown deadline: ending what still runs ({} WebSocket connections open)",
                lifecycle.open_connections()
            );
            lifecycle.abort();
            match tokio::time::timeout(ABORT_WAIT, &mut finished).await {
                Ok(served) => served,
                Err(_) => {
                    tracing::warn!("connections still open after the deadline; exiting anyway");
                    Ok(Ok(()))
                }
            }
        }
    };
    // Responses already answered may still be queued for the store and the ledger.
    records.drain().await;
    // The last responses' spans (and their writes') go out before the process exits.
    if let Some(traces) = traces
        && let Ok(Err(error)) = tokio::task::spawn_blocking(move || traces.shutdown()).await
    {
        tracing::warn!("exporting the last spans: {error}");
    }
    served??;
    Ok(())
}

/// How long ended responses may take to say so and their connections to close, after the
/// shutdown deadline.
const ABORT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Raises the soft limit on open files toward the hard one, so `--max-connections` sockets fit
/// (each is a file descriptor).
fn raise_open_file_limit(connections: usize) {
    #[cfg(unix)]
    {
        // Beyond the sockets: the store, the listener, the playground's files.
        let wanted = connections as u64 + 256;
        match rlimit::increase_nofile_limit(wanted) {
            Ok(limit) if limit < wanted => tracing::warn!(
                "open files are limited to {limit}: fewer than --max-connections {connections} \
                 WebSocket connections can open (raise the hard limit: ulimit -Hn)"
            ),
            Ok(_) => {}
            Err(error) => tracing::warn!("cannot raise the open-file limit: {error}"),
        }
    }
}
