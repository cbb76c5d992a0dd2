//! A throwaway PostgreSQL cluster for the PostgreSQL tests: Debian's server binaries
//! (`initdb`, `pg_ctl`), a data directory under the system's temp directory, a free port on
//! 127.0.0.1, trust authentication for the superuser `tether`, no system service.
//!
//! The cluster is stopped and its directory removed when the test process exits, however it
//! exits (a failed assertion, a panic, even SIGKILL): a watchdog shell started with it waits on
//! a pipe whose write end only this process holds, and cleans up when the pipe closes. As root
//! (CI), the server runs as the `postgres` user, since PostgreSQL refuses to run as root.
//!
//! Without the binaries (`cargo xtask setup` installs Debian's `postgresql`) [`Cluster::start`]
//! returns `None` and the test says it is skipped.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Cluster {
    pub port: u16,
    bin: PathBuf,
    dir: PathBuf,
    /// The user the server runs as, when we are root.
    run_as: Option<String>,
    /// Held until the process exits: closing it tells the watchdog to clean up.
    watchdog: Mutex<Option<(Child, ChildStdin)>>,
    databases: AtomicUsize,
}

/// Where Debian's PostgreSQL server binaries are: `TETHER_PG_BIN`, else the newest
/// `/usr/lib/postgresql/*/bin`, else `initdb` on `PATH`.
pub fn binaries() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TETHER_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).find(|dir| dir.join("initdb").is_file())
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Cluster {
    /// A new cluster, started; `None` (with a message) when the binaries are missing.
    pub fn start(test: &str) -> Option<Cluster> {
        let Some(bin) = binaries() else {
            eprintln!(
                "SKIPPED {test}: the PostgreSQL server binaries (initdb, pg_ctl) are not \
                 installed; `cargo xtask setup` installs Debian's postgresql"
            );
            return None;
        };
        let dir = std::env::temp_dir().join(format!(
            "tether-pg-test-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let run_as = is_root().then(|| {
            let user = if Command::new("id")
                .arg("postgres")
                .output()
                .is_ok_and(|o| o.status.success())
            {
                "postgres"
            } else {
                "nobody"
            };
            let status = Command::new("chown")
                .args([&format!("{user}:"), dir.to_str().unwrap()])
                .status()
                .unwrap();
            assert!(status.success(), "chown {user} {}", dir.display());
            user.to_string()
        });
        let mut cluster = Cluster {
            port: 0,
            bin,
            dir,
            run_as,
            watchdog: Mutex::new(None),
            databases: AtomicUsize::new(0),
        };
        cluster.start_watchdog();
        let initdb = cluster
            .command("initdb")
            .args(["-D", cluster.data().to_str().unwrap()])
            .args([
                "--auth=trust",
                "--username=tether",
                "--encoding=UTF8",
                "--no-sync",
            ])
            .output()
            .expect("initdb runs");
        assert!(
            initdb.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&initdb.stderr)
        );
        // A port picked free can be taken before the server binds it: try a few.
        for attempt in 0.. {
            cluster.port = free_port();
            if cluster.pg_ctl_start() {
                break;
            }
            assert!(attempt < 5, "PostgreSQL did not start: {}", cluster.log());
        }
        Some(cluster)
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn command(&self, program: &str) -> Command {
        let binary = self.bin.join(program);
        let mut command = match &self.run_as {
            Some(user) => {
                let mut command = Command::new("runuser");
                command.args(["-u", user, "--"]).arg(binary);
                command
            }
            None => Command::new(binary),
        };
        command.stdin(Stdio::null());
        command
    }

    fn start_watchdog(&mut self) {
        let pg_ctl = self.command_line("pg_ctl");
        let script = format!(
            "read _; {pg_ctl} -D '{}' stop -m immediate >/dev/null 2>&1; rm -rf '{}'",
            self.data().display(),
            self.dir.display()
        );
        let mut child = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the watchdog starts");
        let stdin = child.stdin.take().unwrap();
        *self.watchdog.lock().unwrap() = Some((child, stdin));
    }

    fn command_line(&self, program: &str) -> String {
        let binary = self.bin.join(program).display().to_string();
        match &self.run_as {
            Some(user) => format!("runuser -u {user} -- '{binary}'"),
            None => format!("'{binary}'"),
        }
    }

    fn pg_ctl_start(&self) -> bool {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories='{}' \
             -c fsync=off -c full_page_writes=off -c max_connections=200",
            self.port,
            self.dir.display()
        );
        self.command("pg_ctl")
            .args(["-D", self.data().to_str().unwrap()])
            .args(["-l", self.dir.join("log").to_str().unwrap()])
            .args(["-o", &options, "-w", "-t", "30", "start"])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }

    /// Stops the server now (`-m immediate`: as if it crashed, connections cut).
    pub fn stop(&self) {
        let status = self
            .command("pg_ctl")
            .args([
                "-D",
                self.data().to_str().unwrap(),
                "stop",
                "-m",
                "immediate",
            ])
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "pg_ctl stop");
    }

    /// Starts the stopped server again, on the same port.
    pub fn restart(&self) {
        assert!(self.pg_ctl_start(), "restart: {}", self.log());
    }

    /// The URL of database `name`.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://tether@127.0.0.1:{}/{name}", self.port)
    }

    /// A new, empty database of its own for one test; its URL.
    pub async fn fresh_database(&self, prefix: &str) -> String {
        let n = self.databases.fetch_add(1, Ordering::SeqCst);
        let name = format!("{prefix}_{n}");
        let (client, connection) =
            tokio_postgres::connect(&self.url("postgres"), tokio_postgres::NoTls)
                .await
                .expect("connect to the cluster");
        tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("CREATE DATABASE");
        self.url(&name)
    }

    /// Stops the cluster and removes its directory now, instead of at exit.
    pub fn shut_down(&self) {
        if let Some((mut child, mut stdin)) = self.watchdog.lock().unwrap().take() {
            let _ = stdin.write_all(b"stop\n");
            drop(stdin);
            let _ = child.wait();
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.shut_down();
    }
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
    );
    hasher.finish()
}

/// A tokio-postgres client of `url`, its connection driven on the current runtime.
pub async fn client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    client
}

/// A replica: a server on 127.0.0.1 port 0 in this process, on the store `config` names
/// (opened as `tether_server::serve` opens it); dropping it does not stop it, [`Replica::stop`]
/// does.
pub struct Replica {
    pub addr: std::net::SocketAddr,
    pub state: tether_server::AppState,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// The test configuration (`common::config`) on the store `url`.
pub fn config(url: &str) -> tether_server::Config {
    use clap::Parser;
    let mut config = tether_server::Config::parse_from(["tether-server"]);
    config.addr = "127.0.0.1:0".parse().unwrap();
    config.static_dir = "does-not-exist".into();
    config.tokens_per_second = 100_000.0;
    config.store = Some(url.to_string());
    config.seed = Some(1);
    config
}

impl Replica {
    pub async fn start(config: tether_server::Config) -> Replica {
        let state = tether_server::AppState::open(&config).await.unwrap();
        let router = tether_server::app(state.clone(), Path::new("does-not-exist"));
        let listener = tokio::net::TcpListener::bind(config.addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let records = state.records.clone();
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
            records.drain().await;
        });
        Replica {
            addr,
            state,
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.take().unwrap().await.unwrap();
    }
}

/// `METHOD path` on `addr` over HTTP/1.1 with an optional JSON body: the status and the body
/// (JSON when it parses, else a string).
pub async fn http(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
) -> (u16, serde_json::Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(20),
        stream.read_to_string(&mut response),
    )
    .await
    .expect("an answer within 20 s")
    .unwrap();
    let (head, payload) = response.split_once("\r\n\r\n").expect("an HTTP response");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    let value = serde_json::from_str(payload)
        .unwrap_or_else(|_| serde_json::Value::String(payload.to_string()));
    (status, value)
}

/// The value of a Prometheus series on `addr`'s `/metrics`.
pub async fn metric(addr: std::net::SocketAddr, series: &str) -> u64 {
    let (_, text) = http(addr, "GET", "/metrics", None).await;
    let text = text.as_str().unwrap_or_default().to_string();
    text.lines()
        .find_map(|line| {
            line.strip_prefix(series)?
                .strip_prefix(' ')?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no series {series} in {text}"))
}
