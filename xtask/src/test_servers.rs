//! The servers a browser suite talks to: `tether-server` processes of this tree's debug build,
//! each on 127.0.0.1 port 0 with an in-memory store, its address read from its first line of
//! output. They stop when [`TestServers`] is dropped, however the suite ended.
//!
//! The client's browser suite (`client/tests/web.rs`) needs three: one with the defaults (and
//! client-chosen conditions allowed), one with WebSocket mode off, one keyed with a short
//! connection lifetime. A wasm test cannot read the environment at run time, so their URLs
//! reach it at build time
//! (`option_env!("TETHER_CLIENT_TEST_URL")`, …).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result, bail};

/// Running servers, each with the environment variable that names its URL.
pub struct TestServers {
    running: Vec<(&'static str, String, Child)>,
}

/// The client's browser suite: (variable, flags) of each server it needs.
pub const CLIENT_BROWSER_SERVERS: [(&str, &[&str]); 3] = [
    (
        "TETHER_CLIENT_TEST_URL",
        &["--tokens-per-second", "100000", "--allow-client-conditions"],
    ),
    (
        "TETHER_CLIENT_TEST_NO_WS_URL",
        &["--tokens-per-second", "100000", "--no-websocket"],
    ),
    (
        "TETHER_CLIENT_TEST_KEYED_URL",
        &[
            "--tokens-per-second",
            "100",
            "--api-key",
            "sk-client-test",
            "--ws-lifetime-seconds",
            "1.5",
        ],
    ),
];

impl TestServers {
    /// Starts `binary` once for each of `servers`, and waits until each one listens.
    pub fn start(binary: &Path, servers: &[(&'static str, &[&str])]) -> Result<TestServers> {
        let mut started = TestServers {
            running: Vec::new(),
        };
        for (variable, flags) in servers {
            let (child, url) = start_one(binary, flags)?;
            started.running.push((variable, url, child));
        }
        Ok(started)
    }

    /// Names each server's URL in `command`'s environment.
    pub fn export(&self, command: &mut Command) {
        for (variable, url, _) in &self.running {
            command.env(variable, url);
        }
    }
}

impl Drop for TestServers {
    fn drop(&mut self) {
        for (_, _, child) in &mut self.running {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn start_one(binary: &Path, flags: &[&str]) -> Result<(Child, String)> {
    if !binary.is_file() {
        bail!("{} is missing: build tether-server first", binary.display());
    }
    let mut child = Command::new(binary)
        .args(["--addr", "127.0.0.1:0", "--static-dir", "/nonexistent"])
        .args(["--data-dir", ":memory:", "--seed", "1"])
        .args(flags)
        .env("RUST_LOG", "tether_server=warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let mut lines = BufReader::new(child.stdout.take().context("the server's stdout")?).lines();
    let first = match lines.next() {
        Some(Ok(line)) => line,
        _ => {
            let _ = child.kill();
            let status = child.wait();
            bail!("tether-server {flags:?} exited before listening ({status:?})");
        }
    };
    let Some(url) = first.strip_prefix("Tether listening on ") else {
        let _ = child.kill();
        let _ = child.wait();
        bail!("tether-server {flags:?} began with {first:?}, not its address");
    };
    let url = url.trim().to_string();
    // Keep reading, so the pipe never fills.
    std::thread::spawn(move || for _ in lines.by_ref() {});
    Ok((child, url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_binary_is_named() {
        let error = TestServers::start(Path::new("/nonexistent/tether-server"), &[("X", &[])])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("/nonexistent/tether-server is missing"),
            "{error}"
        );
    }
}
