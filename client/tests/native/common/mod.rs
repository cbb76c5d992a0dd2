//! A real Tether server on 127.0.0.1 port 0, in the test's process, and the `/metrics` counter
//! a test reads to see what the server did.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::Path;

use clap::Parser;
use tether_client::{Endpoint, Http};
use tether_server::{AppState, Config, app};
use tokio::sync::oneshot;

pub struct Server {
    pub addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    /// A server with an in-memory store, seed 1, a fast default profile (100,000 tokens/s), plus
    /// `extra` flags.
    pub async fn start(extra: &[&str]) -> Server {
        let mut args = vec![
            "tether-server",
            "--addr",
            "127.0.0.1:0",
            "--data-dir",
            ":memory:",
            "--static-dir",
            "does-not-exist",
            "--seed",
            "1",
        ];
        if !extra.contains(&"--tokens-per-second") {
            args.extend(["--tokens-per-second", "100000"]);
        }
        args.extend_from_slice(extra);
        let config = Config::parse_from(args);
        let router = app(AppState::new(&config).unwrap(), Path::new("does-not-exist"));
        let listener = tokio::net::TcpListener::bind(config.addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        // As `tether_server::serve` does: sockets that can carry the link a client asks for
        // (`tether_rtt_ms=…`), with TCP_NODELAY.
        let listener = tether_server::transport::link::Listener::new(listener);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, tether_server::transport::link::service(router))
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Server { addr, stop, task }
    }

    pub fn endpoint(&self) -> Endpoint {
        Endpoint::new(&format!("http://{}", self.addr)).unwrap()
    }

    /// The value of a series in `/metrics` (`tether_cache_lookups_total{result="hit"}`).
    pub async fn metric(&self, series: &str) -> u64 {
        let text = Http::new(&self.endpoint())
            .get("/metrics")
            .await
            .unwrap()
            .text();
        text.lines()
            .find_map(|line| {
                line.strip_prefix(series)?
                    .strip_prefix(' ')?
                    .trim()
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no series {series} in /metrics"))
    }

    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = tokio::time::timeout(std::time::Duration::from_secs(10), self.task).await;
    }
}
