//! `tether-server`: the Tether Responses API server.
//!
//! ```text
//! tether-server [--addr 127.0.0.1:8080] [--static-dir dist] [--tokens-per-second 1000]
//! ```
//! Every flag also reads an environment variable (`TETHER_ADDR`, …); `--help` lists them.

use clap::Parser;
use tether_server::Config;

/// jemalloc rather than the system's malloc: with glibc's per-thread arenas an idle WebSocket
/// connection cost 30.6 KiB of RSS, with jemalloc 23.9 KiB (BENCHMARKS.md, "Load").
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Logs go to stderr: stdout's first line is the contract with scripts ("Tether listening on").
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "tether_server=info".into()),
        )
        .init();
    let config = Config::parse();
    // The first signal drains the server (docs/server.md, "Shutting down"); a second one ends
    // the process at once.
    let (first, signalled) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        shutdown_signal().await;
        tracing::info!("shutting down: finishing in-flight responses (a second signal exits now)");
        let _ = first.send(());
        shutdown_signal().await;
        tracing::warn!("second signal: exiting now");
        std::process::exit(1);
    });
    tether_server::serve(config, async move {
        let _ = signalled.await;
    })
    .await
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}
