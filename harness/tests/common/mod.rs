//! A real Tether server on 127.0.0.1 port 0, in the test's process; stopped by `stop`.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::Path;

use clap::Parser;
use tether_harness::load::{LoadArgs, Report};
use tether_server::{AppState, Config, app};
use tokio::sync::oneshot;

pub struct Server {
    pub addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    /// A server with an in-memory store and the default options, plus `extra` flags.
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
        args.extend_from_slice(extra);
        let config = Config::parse_from(args);
        let router = app(AppState::new(&config).unwrap(), Path::new("does-not-exist"));
        let listener = tokio::net::TcpListener::bind(config.addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        // As `tether_server::serve` does: small event frames must not wait behind Nagle.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Server { addr, stop, task }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = tokio::time::timeout(std::time::Duration::from_secs(10), self.task).await;
    }
}

/// Runs the load generator with `tether-load` flags.
pub async fn load(args: &[&str]) -> Report {
    let mut argv = vec!["tether-load"];
    argv.extend_from_slice(args);
    tether_harness::load::run(LoadArgs::parse_from(argv))
        .await
        .expect("the run completes")
}

/// Asserts a run completed `turns` turns without any error.
pub fn assert_clean(report: &Report, turns: u64) {
    assert!(
        report.errors.is_empty(),
        "errors: {:?}\n{}",
        report.errors,
        report.to_text()
    );
    assert_eq!(report.turns_failed, 0, "{}", report.to_text());
    assert_eq!(report.turns_ok, turns, "{}", report.to_text());
    assert_eq!(report.round_trip.count, turns);
}
