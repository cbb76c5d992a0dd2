//! What the harness's benchmarks share: the machine line they print, and a server started
//! in-process on 127.0.0.1 port 0 without the link layer.

// Each benchmark includes this file and uses a part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::Path;

use axum::serve::ListenerExt;
use tether_server::{AppState, Config, app};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// `N cores, CPU model`, for the header every benchmark prints.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{cores} cores, {cpu}")
}

/// The server's flags for a benchmark: its data directory and seed 1, the rest defaults.
pub fn seeded_config(data_dir: &Path) -> Config {
    use clap::Parser;
    Config::try_parse_from([
        "tether-server".as_ref(),
        "--data-dir".as_ref(),
        data_dir.as_os_str(),
        "--seed".as_ref(),
        "1".as_ref(),
    ] as [&std::ffi::OsStr; 5])
    .expect("the server's flags")
}

/// The real router over `config`'s state (its data directory created).
pub fn router(config: &Config) -> axum::Router {
    std::fs::create_dir_all(&config.data_dir).expect("a data directory");
    let state = AppState::new(config).expect("the server's state");
    app(state, Path::new("does-not-exist"))
}

/// Serves `router` on `listener` as plain TCP with TCP_NODELAY (no link layer), until dropped.
pub async fn serve_plain(listener: TcpListener, router: axum::Router) {
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router).await.expect("the server");
}

/// A listener on 127.0.0.1 port 0.
pub async fn bind() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").await.expect("a port")
}

/// Starts `config`'s server on a task: its address and the task.
pub async fn start_plain(config: &Config) -> (SocketAddr, JoinHandle<()>) {
    let router = router(config);
    let listener = bind().await;
    let addr = listener.local_addr().expect("its address");
    (addr, tokio::spawn(serve_plain(listener, router)))
}
