//! The reference: a corpus line run by `/bin/bash` on a fresh copy of its project.
//!
//! The environment is fixed — only `PATH=/usr/bin:/bin`, `LC_ALL=C` and `HOME=/` — so sorting
//! and messages are byte-order and ASCII on every machine; stdin is empty; a line that runs
//! longer than [`BASH_TIMEOUT`] is stopped and reported as exit 124, as the sandbox's limits do.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::{Case, Outcome};

/// How long a line may run in bash.
pub const BASH_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs corpus lines in real bash, each on its own copy of `tree`.
#[derive(Debug)]
pub struct BashRunner {
    tree: PathBuf,
    scratch: PathBuf,
    next: AtomicUsize,
}

impl BashRunner {
    /// A runner copying `tree` under a scratch directory (removed on drop) of the system's temp
    /// dir, or of `/var/tmp` where that allocates as the corpus's `du` lines expect.
    pub fn new(tree: &Path) -> io::Result<BashRunner> {
        let scratch = scratch_base().join(format!(
            "tether-corpus-{}-{}",
            std::process::id(),
            RUNNERS.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch)?;
        Ok(BashRunner {
            tree: tree.to_path_buf(),
            scratch,
            next: AtomicUsize::new(0),
        })
    }

    /// Runs `case` (its script, in its workdir) on a fresh copy of its project.
    pub fn run(&self, case: &Case) -> io::Result<Outcome> {
        let dir = self
            .scratch
            .join(self.next.fetch_add(1, Ordering::Relaxed).to_string());
        copy_tree(&self.tree.join(case.project()), &dir)?;
        let outcome = run_bash(&case.script, &dir.join(case.cwd().trim_start_matches('/')));
        std::fs::remove_dir_all(&dir)?;
        outcome
    }
}

impl Drop for BashRunner {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

static RUNNERS: AtomicUsize = AtomicUsize::new(0);

/// Where the copies go: the system's temp dir, or `/var/tmp` (disk-backed by convention) when the
/// temp dir's file system does not allocate as ext4 does. `du`'s answers depend on it, and the
/// corpus's `du` lines were recorded on ext4 (a tmpfs, for one, gives a directory no block).
fn scratch_base() -> PathBuf {
    let candidates = [std::env::temp_dir(), PathBuf::from("/var/tmp")];
    candidates
        .iter()
        .find(|base| allocates_like_ext4(base))
        .unwrap_or(&candidates[0])
        .clone()
}

/// Whether a directory holding a 1-byte file takes 8 KiB in `du` under `base`: a 4 KiB block for
/// the directory and one for the file, as on ext4.
fn allocates_like_ext4(base: &Path) -> bool {
    let probe = base.join(format!("tether-corpus-probe-{}", std::process::id()));
    let answer = (|| -> io::Result<bool> {
        std::fs::create_dir_all(&probe)?;
        std::fs::write(probe.join("file"), b"x")?;
        let output = Command::new("du")
            .args(["-sk", "."])
            .current_dir(&probe)
            .env("LC_ALL", "C")
            .output()?;
        Ok(String::from_utf8_lossy(&output.stdout)
            .split_whitespace()
            .next()
            == Some("8"))
    })()
    .unwrap_or(false);
    let _ = std::fs::remove_dir_all(&probe);
    answer
}

/// Copies a directory tree, entries in name order (so that on file systems which list a small
/// directory in creation order, `find` and `grep -r` see byte order, as the sandbox does).
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    std::fs::create_dir_all(to)?;
    let mut entries: Vec<_> = std::fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// `bash -c SCRIPT` in `dir`, stdout and stderr captured, stopped after [`BASH_TIMEOUT`].
fn run_bash(script: &str, dir: &Path) -> io::Result<Outcome> {
    let mut child = Command::new("/bin/bash")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .env("HOME", "/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        stdout.read_to_end(&mut buffer).map(|_| buffer)
    });
    let err = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        stderr.read_to_end(&mut buffer).map(|_| buffer)
    });
    let started = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait()? {
            break status.code().unwrap_or(-1);
        }
        if started.elapsed() > BASH_TIMEOUT {
            child.kill()?;
            child.wait()?;
            break 124;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let stdout = out.join().expect("reader thread")?;
    let stderr = err.join().expect("reader thread")?;
    Ok(Outcome {
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        exit_code: code,
    })
}
