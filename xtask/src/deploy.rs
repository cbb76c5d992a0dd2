//! `cargo xtask deploy`: Tether past one machine, on this one — a PostgreSQL server from
//! Debian's packages (initdb + pg_ctl in a temporary directory, a free port, no system service),
//! N `tether-server` replicas sharing it (`--store postgres://…`), and nginx in front
//! (round-robin for HTTP, WebSocket upgrades proxied, SSE unbuffered; `deploy/nginx.conf`).
//! It prints the URL and runs until Ctrl-C; a replica that dies is restarted on its port, as an
//! orchestrator would. `docs/deployment.md` explains the set-up.
//!
//! Whatever it started is stopped when it ends, however it ends: a watchdog shell, holding the
//! read end of a pipe only this process writes to, stops the replicas (SIGTERM, so they drain),
//! nginx and PostgreSQL and removes the directory once the pipe closes — at [`Deployment::stop`],
//! or when this process dies (Ctrl-C, a panic, SIGKILL).
//!
//! `cargo xtask deploy --test` is the test suite "deployment": the official-client conformance
//! suite pointed at nginx, then `tests/deploy/` (cross-replica chaining and hydration, each
//! replica directly and through nginx, a replica SIGKILLed mid-run), then everything stopped.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::step;

/// How `cargo xtask deploy` runs.
#[derive(Debug, PartialEq)]
pub struct Options {
    pub replicas: usize,
    /// nginx's port on 127.0.0.1 (0: a free one).
    pub port: u16,
    /// The tether-server binary; default: build it (release, or debug for `--test`).
    pub binary: Option<PathBuf>,
    /// Run the deployment suite against it, then stop.
    pub test: bool,
    /// Passed to every replica.
    pub server_args: Vec<String>,
}

/// `cargo xtask deploy`.
pub fn run(root: &Path, options: &Options) -> Result<ExitCode> {
    let binary = match &options.binary {
        Some(binary) => binary.clone(),
        None if options.test => {
            step("building tether-server (debug) for the deployment");
            crate::cargo(&["build", "-p", "tether-server"])?;
            root.join("target/debug/tether-server")
        }
        None => {
            step("building tether-server (release) for the deployment");
            crate::cargo(&["build", "--release", "-p", "tether-server"])?;
            root.join("target/release/tether-server")
        }
    };
    let mut server_args = options.server_args.clone();
    if options.test {
        // What the conformance suite's servers are started with, on every replica.
        server_args.extend(
            [
                "--tokens-per-second",
                "100000",
                "--scenario-dir",
                "tests/conformance/codex/scenarios",
            ]
            .map(String::from),
        );
    } else if root.join("dist/index.html").is_file() {
        server_args.extend([
            "--static-dir".to_string(),
            root.join("dist").display().to_string(),
        ]);
    }
    let started = Instant::now();
    let deployment =
        Deployment::start(root, &binary, options.replicas, options.port, &server_args)?;
    step(&format!(
        "deployment up in {:.1} s: PostgreSQL {}, {} replica(s) {}, nginx",
        started.elapsed().as_secs_f64(),
        deployment.postgres_url,
        options.replicas,
        deployment.replica_urls().join(" ")
    ));
    println!("Tether deployment on {}", deployment.url);
    if !options.test {
        println!(
            "(WebSocket upgrades refused, for clients' HTTP fallback: {})",
            deployment.no_websocket_url
        );
        println!("Ctrl-C stops everything.");
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    let passed = deployment.run_suite(root);
    let stopping = Instant::now();
    let (pids, dir) = deployment.started();
    deployment.stop();
    // Whatever the deployment started must be gone: a test that leaves servers behind fails.
    let left: Vec<u32> = pids
        .into_iter()
        .filter(|pid| Path::new(&format!("/proc/{pid}")).exists())
        .collect();
    let stopped = left.is_empty() && !dir.exists();
    if stopped {
        step(&format!(
            "deployment stopped in {:.1} s: replicas, nginx, PostgreSQL, {}",
            stopping.elapsed().as_secs_f64(),
            dir.display()
        ));
    } else {
        eprintln!(
            "deploy: not everything stopped: processes {left:?} still run, or {} remains",
            dir.display()
        );
    }
    Ok(if passed && stopped {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// A running deployment: PostgreSQL, the replicas, nginx, and the watchdog that stops them.
pub struct Deployment {
    pub url: String,
    pub no_websocket_url: String,
    pub postgres_url: String,
    dir: PathBuf,
    replicas: Arc<Mutex<Vec<ReplicaInfo>>>,
    supervisors: Vec<std::thread::JoinHandle<()>>,
    nginx: Option<Child>,
    stopping: Arc<AtomicBool>,
    watchdog: Option<(Child, ChildStdin)>,
    /// A secret every replica of this deployment shares (`TETHER_SERVER_SECRET`).
    shared_secret: String,
}

#[derive(Clone, Debug, serde::Serialize)]
struct ReplicaInfo {
    url: String,
    pid: u32,
    restarts: u32,
}

/// A free port of 127.0.0.1 (free now: whoever binds it later may find it taken).
pub(crate) fn free_port() -> Result<u16> {
    Ok(free_ports(1)?[0])
}

/// `count` free ports of 127.0.0.1, all different: each is held until the last is chosen, so
/// the system cannot hand out one twice (a port chosen and released can be chosen again).
pub(crate) fn free_ports(count: usize) -> Result<Vec<u16>> {
    let held = (0..count)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()?;
    held.iter()
        .map(|listener| Ok(listener.local_addr()?.port()))
        .collect()
}

/// Debian's PostgreSQL server binaries: `TETHER_PG_BIN`, else the newest
/// `/usr/lib/postgresql/*/bin`.
pub fn postgres_binaries() -> Option<PathBuf> {
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
    versions.pop().map(|(_, bin)| bin)
}

/// Debian's nginx.
pub fn nginx_binary() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
}

fn is_root() -> bool {
    crate::output_of(Command::new("id").arg("-u")).as_deref() == Some("0")
}

/// The unprivileged user PostgreSQL runs as when we are root (it refuses to run as root).
fn postgres_user() -> Option<&'static str> {
    if !is_root() {
        return None;
    }
    let exists = |user: &str| crate::output_of(Command::new("id").arg(user)).is_some();
    Some(if exists("postgres") {
        "postgres"
    } else {
        "nobody"
    })
}

/// `program` of the PostgreSQL binaries, run as `user` when set.
fn pg_command(bin: &Path, program: &str, user: Option<&str>) -> Command {
    let mut command = match user {
        Some(user) => {
            let mut command = Command::new("runuser");
            command.args(["-u", user, "--"]).arg(bin.join(program));
            command
        }
        None => Command::new(bin.join(program)),
    };
    command.stdin(Stdio::null());
    command
}

/// A shell word: `text` in single quotes.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The watchdog: waits for its stdin to close, then stops the replicas (SIGTERM, then SIGKILL
/// after 10 s), nginx and PostgreSQL, and removes `dir`. It ignores the terminal's signals, so
/// a Ctrl-C that ends this process starts the clean-up rather than interrupting it.
fn watchdog_script(dir: &Path, pg_ctl: &str) -> String {
    let dir = quoted(&dir.display().to_string());
    format!(
        r#"trap '' INT TERM HUP
read _
pids() {{ for f in {dir}/run/replica-*.pid; do [ -f "$f" ] && echo "$(cat "$f")"; done; }}
for p in $(pids); do kill -TERM "$p" 2>/dev/null; done
[ -f {dir}/nginx/nginx.pid ] && kill -QUIT "$(cat {dir}/nginx/nginx.pid)" 2>/dev/null
i=0
while [ $i -lt 100 ]; do
  alive=
  for p in $(pids); do kill -0 "$p" 2>/dev/null && alive=1; done
  [ -z "$alive" ] && break
  sleep 0.1; i=$((i+1))
done
for p in $(pids); do kill -KILL "$p" 2>/dev/null; done
{pg_ctl} -D {dir}/pg/data stop -m fast -w >/dev/null 2>&1
rm -rf {dir}
"#
    )
}

/// nginx's configuration: `deploy/nginx.conf` with its placeholders filled in.
fn nginx_config(
    template: &str,
    prefix: &Path,
    port: u16,
    no_websocket_port: u16,
    replicas: &[u16],
) -> String {
    let upstreams: String = replicas
        .iter()
        .map(|port| format!("        server 127.0.0.1:{port} max_fails=1 fail_timeout=2s;\n"))
        .collect();
    // Replica i (`--replica-id r<i>`) first in its own group, the others its backups.
    let replica_upstreams: String = replicas
        .iter()
        .enumerate()
        .map(|(index, port)| {
            let backups: String = replicas
                .iter()
                .filter(|other| *other != port)
                .map(|other| format!("        server 127.0.0.1:{other} backup;\n"))
                .collect();
            format!(
                "    upstream tether_{id} {{\n        server 127.0.0.1:{port} max_fails=1 \
                 fail_timeout=2s;\n{backups}        keepalive 16;\n    }}\n",
                id = replica_id(index)
            )
        })
        .collect();
    let routes: String = (0..replicas.len())
        .map(|index| {
            let id = replica_id(index);
            format!("        \"~^t1\\.{id}\\.\" tether_{id};\n")
        })
        .collect();
    // Comment lines are for readers of the template (and name the placeholders themselves).
    let template: String = template
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .map(|line| format!("{line}\n"))
        .collect();
    template
        .replace("@PREFIX@", &prefix.display().to_string())
        .replace("@PORT@", &port.to_string())
        .replace("@NO_WEBSOCKET_PORT@", &no_websocket_port.to_string())
        .replace("        @UPSTREAMS@\n", &upstreams)
        .replace("    @REPLICA_UPSTREAMS@\n", &replica_upstreams)
        .replace("        @TURN_STATE_ROUTES@\n", &routes)
}

/// The `--replica-id` of replica `index`: the name its turn-state tokens carry.
pub fn replica_id(index: usize) -> String {
    format!("r{index}")
}

impl Deployment {
    /// Starts PostgreSQL, `replicas` replicas of `binary` (with `server_args`) and nginx on
    /// `port`; returns once each of them answers.
    pub fn start(
        root: &Path,
        binary: &Path,
        replicas: usize,
        port: u16,
        server_args: &[String],
    ) -> Result<Deployment> {
        if !binary.is_file() {
            bail!("{} is missing: build tether-server first", binary.display());
        }
        let bin = postgres_binaries().context(
            "the PostgreSQL server binaries are missing (/usr/lib/postgresql/*/bin): \
             `cargo xtask setup` installs Debian's postgresql",
        )?;
        let nginx = nginx_binary()
            .context("nginx is missing: `cargo xtask setup` installs Debian's nginx")?;
        let template = std::fs::read_to_string(root.join("deploy/nginx.conf"))
            .context("cannot read deploy/nginx.conf")?;
        let dir = std::env::temp_dir().join(format!(
            "tether-deploy-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        ));
        for sub in ["run", "nginx", "pg"] {
            std::fs::create_dir_all(dir.join(sub))
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let user = postgres_user();
        if let Some(user) = user {
            crate::check(
                Command::new("chown")
                    .arg(format!("{user}:"))
                    .arg(dir.join("pg")),
            )?;
        }
        let pg_ctl = match user {
            Some(user) => format!(
                "runuser -u {user} -- {}",
                quoted(&bin.join("pg_ctl").display().to_string())
            ),
            None => quoted(&bin.join("pg_ctl").display().to_string()),
        };
        let mut watchdog = Command::new("sh")
            .args(["-c", &watchdog_script(&dir, &pg_ctl)])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start the watchdog shell")?;
        let watchdog_stdin = watchdog.stdin.take().context("the watchdog's stdin")?;
        let mut deployment = Deployment {
            url: String::new(),
            no_websocket_url: String::new(),
            postgres_url: String::new(),
            dir: dir.clone(),
            replicas: Arc::default(),
            supervisors: Vec::new(),
            nginx: None,
            stopping: Arc::default(),
            watchdog: Some((watchdog, watchdog_stdin)),
            shared_secret: random_hex(16)?,
        };
        // From here on, an error drops `deployment`, which stops what was started.
        let pg_port = deployment.start_postgres(&bin, user)?;
        deployment.postgres_url = format!("postgres://tether@127.0.0.1:{pg_port}/tether");
        // nginx's two ports and the replicas', all different.
        let mut ports = free_ports(replicas + 2)?;
        let no_websocket_port = ports.pop().context("a port for nginx")?;
        let chosen = ports.pop().context("a port for nginx")?;
        let port = if port == 0 { chosen } else { port };
        deployment.url = format!("http://127.0.0.1:{port}");
        deployment.no_websocket_url = format!("http://127.0.0.1:{no_websocket_port}");
        deployment
            .replicas
            .lock()
            .unwrap()
            .extend(ports.iter().map(|port| ReplicaInfo {
                url: format!("http://127.0.0.1:{port}"),
                pid: 0,
                restarts: 0,
            }));
        for (index, port) in ports.iter_mut().enumerate() {
            deployment.start_replica(root, binary, index, port, server_args)?;
        }
        let prefix = dir.join("nginx");
        let config = nginx_config(&template, &prefix, port, no_websocket_port, &ports);
        std::fs::write(prefix.join("nginx.conf"), config)?;
        let test = Command::new(&nginx)
            .arg("-p")
            .arg(&prefix)
            .args(["-c", "nginx.conf", "-t", "-q"])
            .output()
            .context("cannot run nginx -t")?;
        if !test.status.success() {
            bail!(
                "nginx rejects its configuration: {}",
                String::from_utf8_lossy(&test.stderr)
            );
        }
        let child = Command::new(&nginx)
            .arg("-p")
            .arg(&prefix)
            .args(["-c", "nginx.conf", "-g", "daemon off;"])
            .stdin(Stdio::null())
            .spawn()
            .context("cannot start nginx")?;
        deployment.nginx = Some(child);
        wait_for(&deployment.url, "/readyz", Duration::from_secs(20))
            .context("nginx did not answer on /readyz")?;
        deployment.write_state()?;
        Ok(deployment)
    }

    /// initdb, pg_ctl start on a free port, the `tether` database; returns the port.
    fn start_postgres(&mut self, bin: &Path, user: Option<&str>) -> Result<u16> {
        let pg = self.dir.join("pg");
        step("starting PostgreSQL (initdb, pg_ctl) in a temporary directory");
        let initdb = pg_command(bin, "initdb", user)
            .arg("-D")
            .arg(pg.join("data"))
            .args(["--auth=trust", "--username=tether", "--encoding=UTF8"])
            .output()
            .context("cannot run initdb")?;
        if !initdb.status.success() {
            bail!("initdb failed: {}", String::from_utf8_lossy(&initdb.stderr));
        }
        for _ in 0..5 {
            let port = free_port()?;
            let options = format!(
                "-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} \
                 -c max_connections=200",
                pg.display()
            );
            let started = pg_command(bin, "pg_ctl", user)
                .arg("-D")
                .arg(pg.join("data"))
                .arg("-l")
                .arg(pg.join("log"))
                .args(["-o", &options, "-w", "-t", "30", "start"])
                .stdout(Stdio::null())
                .status()
                .context("cannot run pg_ctl")?;
            if started.success() {
                crate::check(
                    pg_command(bin, "createdb", user)
                        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "tether"])
                        .arg("tether"),
                )?;
                return Ok(port);
            }
        }
        bail!(
            "PostgreSQL did not start: {}",
            std::fs::read_to_string(pg.join("log")).unwrap_or_default()
        )
    }

    /// Starts replica `index` on `port` and a thread that restarts it whenever it exits while
    /// the deployment runs; returns once it listens. Should the port have been taken since it
    /// was chosen, the replica starts on another free one (`port` says which), up to
    /// [`PORT_ATTEMPTS`] times; any other failure ends the start.
    fn start_replica(
        &mut self,
        root: &Path,
        binary: &Path,
        index: usize,
        port: &mut u16,
        server_args: &[String],
    ) -> Result<()> {
        let mut attempt = 1;
        let (mut command, child) = loop {
            let mut command = Command::new(binary);
            command
                .current_dir(root)
                .args(["--addr", &format!("127.0.0.1:{port}")])
                .args(["--store", &self.postgres_url])
                .args(["--replica-id", &replica_id(index)])
                .args(["--static-dir", "/nonexistent"])
                .args(server_args)
                .env(
                    "RUST_LOG",
                    std::env::var("RUST_LOG").unwrap_or("tether_server=warn".into()),
                )
                // A start-up error's message, not its backtrace (a panic keeps RUST_BACKTRACE's).
                .env("RUST_LIB_BACKTRACE", "0")
                // Whatever one replica seals or signs for a client (compaction items, client
                // secrets), the others must open.
                .env("TETHER_SERVER_SECRET", &self.shared_secret)
                .stdin(Stdio::null())
                .stdout(Stdio::piped());
            match spawn_replica(&mut command, index) {
                Ok(child) => break (command, child),
                Err(error)
                    if attempt < PORT_ATTEMPTS
                        && error
                            .downcast_ref::<ReplicaFailed>()
                            .is_some_and(ReplicaFailed::port_taken) =>
                {
                    let taken = *port;
                    *port = free_port()?;
                    eprintln!(
                        "deploy: replica {index}'s port {taken} was taken before it bound it; \
                         on {port} instead"
                    );
                    self.replicas.lock().unwrap()[index].url = format!("http://127.0.0.1:{port}");
                    attempt += 1;
                }
                Err(error) => return Err(error),
            }
        };
        let (replicas, stopping, dir) = (
            self.replicas.clone(),
            self.stopping.clone(),
            self.dir.clone(),
        );
        record_pid(&dir, &replicas, index, child.id(), false);
        let url = format!("http://127.0.0.1:{port}");
        wait_for(&url, "/readyz", Duration::from_secs(30))
            .with_context(|| format!("replica {index} did not become ready"))?;
        let state = self.state_file();
        let supervisor = std::thread::spawn(move || {
            let mut child = child;
            loop {
                let status = child.wait();
                if stopping.load(Ordering::SeqCst) {
                    return;
                }
                eprintln!("deploy: replica {index} exited ({status:?}); restarting it");
                std::thread::sleep(Duration::from_millis(200));
                if stopping.load(Ordering::SeqCst) {
                    return;
                }
                match spawn_replica(&mut command, index) {
                    Ok(next) => {
                        child = next;
                        record_pid(&dir, &replicas, index, child.id(), true);
                        let _ = write_state_file(&state, &replicas);
                    }
                    Err(error) => {
                        eprintln!("deploy: cannot restart replica {index}: {error:#}");
                        return;
                    }
                }
            }
        });
        self.supervisors.push(supervisor);
        Ok(())
    }

    fn state_file(&self) -> StateFile {
        StateFile {
            path: self.dir.join("deployment.json"),
            url: self.url.clone(),
            no_websocket_url: self.no_websocket_url.clone(),
            postgres_url: self.postgres_url.clone(),
        }
    }

    fn write_state(&mut self) -> Result<()> {
        write_state_file(&self.state_file(), &self.replicas)
    }

    /// The replicas' and nginx's current PIDs, and the directory: what [`Deployment::stop`]
    /// must leave gone.
    pub(crate) fn started(&self) -> (Vec<u32>, PathBuf) {
        let mut pids: Vec<u32> = self
            .replicas
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.pid)
            .collect();
        pids.extend(self.nginx.as_ref().map(Child::id));
        (pids, self.dir.clone())
    }

    /// Where the deployment's state is written (`deployment.json`: URLs and current PIDs).
    pub fn state_path(&self) -> PathBuf {
        self.dir.join("deployment.json")
    }

    pub fn replica_urls(&self) -> Vec<String> {
        self.replicas
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.url.clone())
            .collect()
    }

    /// The deployment suite: conformance through nginx, then `tests/deploy/`. Whether both
    /// passed.
    fn run_suite(&self, root: &Path) -> bool {
        let replicas = self.replica_urls().join(",");
        let started = Instant::now();
        step(&format!(
            "conformance (openai-python, openai-node, the Agents SDKs, Codex CLI) through nginx at {}",
            self.url
        ));
        let conformance = Command::new("bash")
            .arg("tests/conformance/run.sh")
            .current_dir(root)
            .env("TETHER_BASE_URL", &self.url)
            .env("TETHER_NO_WEBSOCKET_URL", &self.no_websocket_url)
            .env("TETHER_METRICS_URLS", &replicas)
            .env("PYTHONUNBUFFERED", "1")
            .status()
            .is_ok_and(|s| s.success());
        step(&format!(
            "conformance through nginx: {} in {:.1} s",
            if conformance { "passed" } else { "FAILED" },
            started.elapsed().as_secs_f64()
        ));
        let started = Instant::now();
        step("cross-replica tests (tests/deploy/)");
        let replica_tests = Command::new("node")
            .args([
                "--test",
                "--test-reporter=spec",
                "--test-concurrency=1",
                "tests/deploy/",
            ])
            .current_dir(root)
            .env("TETHER_BASE_URL", &self.url)
            .env("TETHER_REPLICA_URLS", &replicas)
            .env("TETHER_POSTGRES_URL", &self.postgres_url)
            .env("TETHER_DEPLOYMENT_FILE", self.state_path())
            .status()
            .is_ok_and(|s| s.success());
        step(&format!(
            "cross-replica tests: {} in {:.1} s",
            if replica_tests { "passed" } else { "FAILED" },
            started.elapsed().as_secs_f64()
        ));
        println!(
            "deployment: {} passed, {} failed",
            [conformance, replica_tests].iter().filter(|p| **p).count(),
            [conformance, replica_tests].iter().filter(|p| !**p).count()
        );
        conformance && replica_tests
    }

    /// Stops everything (the watchdog does, as it would if this process died) and waits.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        if let Some((mut watchdog, mut stdin)) = self.watchdog.take() {
            let _ = stdin.write_all(b"stop\n");
            drop(stdin);
            let _ = watchdog.wait();
        }
        if let Some(mut nginx) = self.nginx.take() {
            let _ = nginx.wait();
        }
        for supervisor in self.supervisors.drain(..) {
            let _ = supervisor.join();
        }
    }
}

impl Drop for Deployment {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// What `deployment.json` is written from.
#[derive(Clone)]
struct StateFile {
    path: PathBuf,
    url: String,
    no_websocket_url: String,
    postgres_url: String,
}

/// `deployment.json`: where the deployment answers, and each replica's current PID.
#[derive(serde::Serialize)]
struct StateJson<'a> {
    url: &'a str,
    no_websocket_url: &'a str,
    postgres_url: &'a str,
    replicas: &'a [ReplicaInfo],
}

/// Writes `deployment.json` (atomically: a reader never sees half of it).
fn write_state_file(state: &StateFile, replicas: &Mutex<Vec<ReplicaInfo>>) -> Result<()> {
    let replicas = replicas.lock().unwrap();
    let json = StateJson {
        url: &state.url,
        no_websocket_url: &state.no_websocket_url,
        postgres_url: &state.postgres_url,
        replicas: &replicas,
    };
    let mut text = serde_json::to_vec_pretty(&json)?;
    text.push(b'\n');
    let temporary = state.path.with_extension("json.tmp");
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, &state.path)?;
    Ok(())
}

fn record_pid(
    dir: &Path,
    replicas: &Mutex<Vec<ReplicaInfo>>,
    index: usize,
    pid: u32,
    restart: bool,
) {
    let _ = std::fs::write(
        dir.join(format!("run/replica-{index}.pid")),
        pid.to_string(),
    );
    let mut replicas = replicas.lock().unwrap();
    replicas[index].pid = pid;
    if restart {
        replicas[index].restarts += 1;
    }
}

/// Why a replica did not start: its exit status and what it said on stderr before that.
#[derive(Debug)]
pub(crate) struct ReplicaFailed {
    index: usize,
    status: String,
    said: Vec<String>,
}

impl ReplicaFailed {
    /// Whether it failed because its port was taken between choosing and binding it (another
    /// process's connection can hold a port `free_port` just returned).
    pub(crate) fn port_taken(&self) -> bool {
        self.said
            .iter()
            .any(|line| line.contains("cannot listen on") && line.contains("in use"))
    }
}

impl std::fmt::Display for ReplicaFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "replica {} did not start listening ({})",
            self.index, self.status
        )?;
        if !self.said.is_empty() {
            write!(f, "; it said:\n  {}", self.said.join("\n  "))?;
        }
        Ok(())
    }
}

impl std::error::Error for ReplicaFailed {}

/// How many ports a replica is tried on at start when the one chosen for it was taken.
const PORT_ATTEMPTS: u32 = 3;

/// The most lines of a replica's stderr a [`ReplicaFailed`] repeats.
const LINES_KEPT: usize = 20;

/// Spawns a replica and returns once it printed its `listening on` line; the rest of its
/// output, stdout and stderr, is passed on to stderr, each line marked with the replica. When
/// it exits (or stays silent for 60 s) first, the error repeats its last lines of stderr —
/// up to an error's backtrace, whose frames say less than its message.
pub(crate) fn spawn_replica(command: &mut Command, index: usize) -> Result<Child> {
    let mut child = command
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {command:?}"))?;
    let stdout = child.stdout.take().context("the replica's stdout")?;
    let stderr = child.stderr.take().context("the replica's stderr")?;
    let said = Arc::new(Mutex::new(std::collections::VecDeque::new()));
    let stderr_done = std::thread::spawn({
        let said = said.clone();
        move || {
            let mut backtrace = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                eprintln!("[replica {index}] {line}");
                backtrace |= line.trim_start().starts_with("Stack backtrace:");
                if !backtrace {
                    let mut said = said.lock().unwrap();
                    if said.len() == LINES_KEPT {
                        said.pop_front();
                    }
                    said.push_back(line);
                }
            }
        }
    });
    let (listening, heard) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut told = false;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if !told && line.contains("listening on") {
                told = true;
                let _ = listening.send(());
            } else {
                eprintln!("[replica {index}] {line}");
            }
        }
    });
    match heard.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => Ok(child),
        Err(_) => {
            let _ = child.kill();
            let status = match child.wait() {
                Ok(status) => status.to_string(),
                Err(error) => format!("cannot wait for it: {error}"),
            };
            // Its stderr closes with it: everything it said is read.
            let _ = stderr_done.join();
            let said = said.lock().unwrap().drain(..).collect();
            Err(ReplicaFailed {
                index,
                status,
                said,
            }
            .into())
        }
    }
}

/// Waits until `GET path` on the server at `base` answers 200, or fails after `limit`.
pub(crate) fn wait_for(base: &str, path: &str, limit: Duration) -> Result<()> {
    let endpoint = tether_client::Endpoint::new(base)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start a tokio runtime")?;
    let deadline = Instant::now() + limit;
    runtime.block_on(async {
        loop {
            // A new connection each time: the last one may have gone with a restarting server.
            let mut http = tether_client::Http::new(&endpoint);
            let answer = tokio::time::timeout(Duration::from_secs(5), http.get(path)).await;
            match answer {
                Ok(Ok(reply)) if reply.status == 200 => return Ok(()),
                Ok(Ok(reply)) if Instant::now() >= deadline => {
                    bail!("{} answered {}", endpoint.url(path), reply.status)
                }
                Ok(Err(error)) if Instant::now() >= deadline => return Err(error.into()),
                Err(_) if Instant::now() >= deadline => {
                    bail!("{} did not answer within 5 s", endpoint.url(path))
                }
                _ => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    })
}

/// `bytes` random bytes (`/dev/urandom`) in hex.
fn random_hex(bytes: usize) -> Result<String> {
    use std::io::Read;
    let mut buffer = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut buffer))
        .context("cannot read /dev/urandom")?;
    Ok(buffer.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_chosen_together_differ() {
        let ports = free_ports(64).unwrap();
        let distinct: std::collections::HashSet<_> = ports.iter().collect();
        assert_eq!(distinct.len(), 64, "{ports:?}");
        assert!(ports.iter().all(|&port| port != 0));
    }

    /// A replica that exits before listening: the error repeats what it said, up to its
    /// backtrace, and tells a taken port from other failures.
    #[test]
    fn a_replica_that_does_not_start_says_why() {
        let fails = |script: &str| {
            let mut command = Command::new("sh");
            command
                .args(["-c", script])
                .stdin(Stdio::null())
                .stdout(Stdio::piped());
            let error = spawn_replica(&mut command, 1).expect_err("it exits before listening");
            let failed = error.downcast::<ReplicaFailed>().expect("a ReplicaFailed");
            (failed.to_string(), failed.port_taken())
        };
        let (message, taken) = fails(
            "echo 'Error: cannot listen on 127.0.0.1:9: Address already in use (os error 98)' >&2; \
             echo >&2; echo 'Stack backtrace:' >&2; echo '   0: frame' >&2; exit 1",
        );
        assert!(taken, "{message}");
        assert!(
            message.starts_with("replica 1 did not start listening (exit status: 1)"),
            "{message}"
        );
        assert!(message.contains("Address already in use"), "{message}");
        assert!(!message.contains("frame"), "{message}");
        let (message, taken) = fails("echo 'Error: cannot open the store' >&2; exit 1");
        assert!(!taken, "{message}");
        assert!(message.contains("cannot open the store"), "{message}");
        // One that listens is handed back running.
        let mut command = Command::new("sh");
        command
            .args([
                "-c",
                "echo 'Tether listening on 127.0.0.1:9'; exec sleep 30",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        let mut child = spawn_replica(&mut command, 0).unwrap();
        assert!(child.try_wait().unwrap().is_none());
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn the_nginx_template_fills_in() {
        let root = crate::workspace_root();
        let template = std::fs::read_to_string(root.join("deploy/nginx.conf")).unwrap();
        let config = nginx_config(&template, Path::new("/tmp/x"), 8080, 8081, &[9001, 9002]);
        assert!(!config.contains('@'), "{config}");
        assert!(config.contains("server 127.0.0.1:9001 max_fails=1 fail_timeout=2s;"));
        assert!(config.contains("server 127.0.0.1:9002 max_fails=1 fail_timeout=2s;"));
        assert!(config.contains("listen 127.0.0.1:8080;"));
        assert!(config.contains("listen 127.0.0.1:8081;"));
        for needed in [
            "proxy_http_version 1.1;",
            "proxy_set_header Upgrade $http_upgrade;",
            "proxy_set_header Connection $connection_upgrade;",
            "proxy_buffering off;",
            "proxy_read_timeout 3700s;",
            "proxy_pass http://$tether_upstream;",
            "map $http_x_codex_turn_state $tether_upstream {",
        ] {
            assert!(config.contains(needed), "{needed}");
        }
        // Each replica's turns go to it first, to the other when it is gone.
        for (id, own, other) in [("r0", 9001, 9002), ("r1", 9002, 9001)] {
            let group = format!(
                "upstream tether_{id} {{\n        server 127.0.0.1:{own} max_fails=1 \
                 fail_timeout=2s;\n        server 127.0.0.1:{other} backup;\n"
            );
            assert!(config.contains(&group), "{group}\n{config}");
            let route = format!("\"~^t1\\.{id}\\.\" tether_{id};");
            assert!(config.contains(&route), "{route}\n{config}");
        }
    }

    #[test]
    fn waiting_ends_at_the_first_200_or_names_what_did_not_answer() {
        // A one-shot server that answers 503, then 200.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            use std::io::{Read, Write as _};
            for status in ["503 Service Unavailable", "200 OK"] {
                let (mut socket, _) = listener.accept().unwrap();
                let mut request = [0u8; 1024];
                let _ = socket.read(&mut request).unwrap();
                write!(socket, "HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n").unwrap();
            }
        });
        wait_for(&base, "/readyz", Duration::from_secs(20)).unwrap();
        server.join().unwrap();

        let port = free_port().unwrap();
        let error = wait_for(
            &format!("http://127.0.0.1:{port}"),
            "/readyz",
            Duration::from_millis(300),
        )
        .unwrap_err()
        .to_string();
        assert!(error.contains("nothing answered at"), "{error}");
    }

    #[test]
    fn shell_words_are_quoted() {
        assert_eq!(quoted("a'b"), r"'a'\''b'");
    }

    #[test]
    fn the_state_file_is_json_a_reader_can_take_at_any_time() {
        let dir = std::env::temp_dir().join(format!("tether-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let state = StateFile {
            path: dir.join("deployment.json"),
            url: "http://127.0.0.1:1".into(),
            no_websocket_url: "http://127.0.0.1:2".into(),
            postgres_url: "postgres://tether@127.0.0.1:3/te\"st".into(),
        };
        let replicas = Mutex::new(vec![ReplicaInfo {
            url: "http://127.0.0.1:4".into(),
            pid: 42,
            restarts: 1,
        }]);
        write_state_file(&state, &replicas).unwrap();
        let read: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&state.path).unwrap()).unwrap();
        assert_eq!(read["postgres_url"], "postgres://tether@127.0.0.1:3/te\"st");
        assert_eq!(read["replicas"][0]["pid"], 42);
        assert_eq!(read["replicas"][0]["restarts"], 1);
        assert!(!state.path.with_extension("json.tmp").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
