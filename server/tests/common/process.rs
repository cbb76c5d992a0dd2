//! A real `tether-server` process for the tests that need one (signals, SIGKILL): started on
//! 127.0.0.1 port 0, its address read from its first stdout line; dropping it kills it.

use std::io::BufRead;
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

pub struct ServerProcess {
    pub child: Child,
    pub addr: SocketAddr,
}

impl ServerProcess {
    /// Starts `tether-server` with `args` after the test defaults (no playground).
    pub fn start(args: &[&str]) -> ServerProcess {
        let command = Command::new(env!("CARGO_BIN_EXE_tether-server"));
        Self::start_command(command, args)
    }

    /// Starts it with `env` set as well, logging at `debug`; what it writes to stderr is kept
    /// in the returned buffer.
    pub fn start_logged(
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (ServerProcess, std::sync::Arc<std::sync::Mutex<String>>) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tether-server"));
        command
            .envs(env.iter().copied())
            .env("RUST_LOG", "tether_server=debug");
        command.stderr(Stdio::piped());
        let mut server = Self::start_command(command, args);
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let stderr = server.child.stderr.take().unwrap();
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let mut log = kept.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        (server, log)
    }

    fn start_command(mut command: Command, args: &[&str]) -> ServerProcess {
        if command.get_envs().all(|(name, _)| name != "RUST_LOG") {
            command.env("RUST_LOG", "tether_server=warn");
        }
        let mut child = command
            .args(["--addr", "127.0.0.1:0", "--static-dir", "/nonexistent"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("tether-server starts");
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().expect("a first line").unwrap();
        let base = first
            .strip_prefix("Tether listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"));
        let addr = base.parse().unwrap();
        // Keep reading, so the pipe never fills.
        std::thread::spawn(move || for _ in lines.by_ref() {});
        ServerProcess { child, addr }
    }

    /// Sends `signal` (`TERM`, `INT`, `KILL`) to the process.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([format!("-{signal}"), self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} failed");
    }

    /// The exit status, if the process ends within `timeout`.
    pub fn wait_for(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
