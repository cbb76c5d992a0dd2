//! llmsim (crates.io, installed by `cargo xtask setup` into `target/tools/llmsim`), an
//! OpenAI-compatible server nobody here wrote, started as Tether's upstream: on a free port, in
//! its `instant` latency profile, with a script of turns or a fixed answer; dropping it stops it.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The binary: `TETHER_LLMSIM_BIN`, else where `cargo xtask setup` installs it.
pub fn binary() -> PathBuf {
    match std::env::var_os("TETHER_LLMSIM_BIN") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/tools/llmsim/bin/llmsim"),
    }
}

/// What llmsim answers.
pub enum Answers {
    /// Its scripted mode: these turns (`{"type": "tool_calls" | "assistant", …}`), looping.
    Script(Value),
    /// The same text every time (its `fixed:` generator).
    Fixed(&'static str),
}

pub struct Llmsim {
    child: Child,
    pub port: u16,
    dir: PathBuf,
}

impl Llmsim {
    /// A running llmsim, or `None` (after saying why) when it is not installed.
    pub fn start(answers: Answers) -> Option<Llmsim> {
        let binary = binary();
        if !binary.is_file() {
            println!(
                "SKIPPED: llmsim is not installed at {} — run `cargo xtask setup`",
                binary.display()
            );
            return None;
        }
        let dir = std::env::temp_dir().join(format!("tether-llmsim-{}", rand::random::<u64>()));
        std::fs::create_dir_all(&dir).unwrap();
        let response = match &answers {
            Answers::Script(turns) => {
                let script = dir.join("script.json");
                std::fs::write(&script, turns.to_string()).unwrap();
                format!("script_path = {:?}", script.to_str().unwrap())
            }
            Answers::Fixed(text) => format!("generator = {:?}", format!("fixed:{text}")),
        };
        // llmsim binds the port it is given: one the OS just handed out, tried again if taken.
        for _ in 0..5 {
            let port = {
                let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                probe.local_addr().unwrap().port()
            };
            let config = dir.join("config.toml");
            std::fs::write(
                &config,
                format!(
                    "[server]\nport = {port}\nhost = \"127.0.0.1\"\n[latency]\nprofile = \
                     \"instant\"\n[response]\n{response}\n"
                ),
            )
            .unwrap();
            let mut child = Command::new(&binary)
                .args(["serve", "--config"])
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("llmsim starts");
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if let Some(status) = child.try_wait().unwrap() {
                    // The port was taken meanwhile: another one.
                    eprintln!("llmsim exited ({status}) on port {port}; trying another");
                    break;
                }
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Some(Llmsim { child, port, dir });
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("llmsim did not start listening within 20 s (five ports tried)");
    }

    /// Its OpenAI base URL, as `--engine` takes it.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/openai/v1", self.port)
    }
}

impl Drop for Llmsim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
