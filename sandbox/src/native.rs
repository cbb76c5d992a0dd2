//! Native-only helpers behind the `native` feature, for the CLI, tests and benchmarks: the
//! [`NodeProcessRuntime`] (the real `node` binary), a [`block_on`] executor for the sandbox's
//! futures, and loading a directory into the VFS and writing it back. The playground never
//! enables this feature, so its wasm build contains no process or disk code.
//!
//! `NodeProcessRuntime` is a real JavaScript runtime but not a security boundary: the script
//! runs as the current user on a temporary copy of the project's script files. Writes the script
//! makes to disk are not carried back into the VFS.

use std::future::Future;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use crate::js::{JsEntry, JsOutcome, JsRequest, JsRuntime};
use crate::vfs::{self, Vfs};

/// Runs a future to completion on the current thread.
pub fn block_on<F: Future>(future: F) -> F::Output {
    struct ThreadWaker(std::thread::Thread);
    impl Wake for ThreadWaker {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

/// Runs `node` on a temporary directory holding the request's file snapshot.
#[derive(Debug, Clone)]
pub struct NodeProcessRuntime {
    program: PathBuf,
}

impl Default for NodeProcessRuntime {
    fn default() -> Self {
        NodeProcessRuntime {
            program: PathBuf::from("node"),
        }
    }
}

static RUN_COUNTER: AtomicUsize = AtomicUsize::new(0);

impl NodeProcessRuntime {
    /// Uses the given `node` executable instead of the one on `PATH`.
    pub fn with_program(program: impl Into<PathBuf>) -> Self {
        NodeProcessRuntime {
            program: program.into(),
        }
    }

    fn run_blocking(&self, request: &JsRequest) -> JsOutcome {
        let dir = std::env::temp_dir().join(format!(
            "tether-node-{}-{}",
            std::process::id(),
            RUN_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let outcome = self.run_in(&dir, request).unwrap_or_else(|e| JsOutcome {
            stderr: if e.kind() == io::ErrorKind::NotFound {
                format!("node: cannot run `{}`: Node.js is not installed (NodeProcessRuntime runs the real node binary)\n", self.program.display())
            } else {
                format!("node: {e}\n")
            },
            exit_code: 127,
            ..JsOutcome::default()
        });
        let _ = std::fs::remove_dir_all(&dir);
        outcome
    }

    fn run_in(&self, dir: &Path, request: &JsRequest) -> io::Result<JsOutcome> {
        let on_disk = |path: &str| dir.join(path.trim_start_matches('/'));
        for (path, text) in &request.files {
            let target = on_disk(path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(target, text)?;
        }
        let cwd = on_disk(request.cwd);
        std::fs::create_dir_all(&cwd)?;
        let mut command = Command::new(&self.program);
        match request.entry {
            JsEntry::File(path) => command.arg(on_disk(path)),
            JsEntry::Eval(code) => command.arg("-e").arg(code),
        };
        let mut child = command
            .args(request.args)
            .current_dir(&cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(request.stdin);
        }
        let cap = request.max_output_bytes;
        let reader = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut data = Vec::new();
                if let Some(pipe) = pipe {
                    let _ = pipe.take(cap as u64 + 1).read_to_end(&mut data);
                }
                data.truncate(cap);
                String::from_utf8_lossy(&data).into_owned()
            })
        };
        let stdout = reader(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let stderr = reader(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let deadline = Instant::now() + Duration::from_millis(request.timeout_ms);
        let (exit_code, timed_out) = loop {
            if let Some(status) = child.try_wait()? {
                break (status.code().unwrap_or(1), false);
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                break (124, true);
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        Ok(JsOutcome {
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
            exit_code,
            timed_out,
        })
    }
}

impl JsRuntime for NodeProcessRuntime {
    fn run<'a>(&'a self, request: JsRequest<'a>) -> Pin<Box<dyn Future<Output = JsOutcome> + 'a>> {
        Box::pin(async move { self.run_blocking(&request) })
    }
}

/// Loads every file below `dir` (symlinks and `.git` skipped) into a new VFS rooted at `/`.
pub fn load_dir(dir: &Path) -> io::Result<Vfs> {
    let mut vfs = Vfs::new();
    load_into(&mut vfs, dir, "/")?;
    vfs.take_changes();
    Ok(vfs)
}

fn load_into(vfs: &mut Vfs, dir: &Path, at: &str) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type()?;
        let path = vfs::join(at, &name);
        if kind.is_dir() && name != ".git" {
            vfs.mkdir_all(&path).map_err(io::Error::other)?;
            load_into(vfs, &entry.path(), &path)?;
        } else if kind.is_file() {
            vfs.write(&path, std::fs::read(entry.path())?)
                .map_err(io::Error::other)?;
        }
    }
    Ok(())
}

/// Makes `dir` mirror the VFS: writes every file and directory, and removes files and
/// directories (outside `.git`) that the VFS no longer has.
pub fn write_back(vfs: &Vfs, dir: &Path) -> io::Result<()> {
    remove_missing(vfs, dir, "/")?;
    for path in vfs.dirs() {
        std::fs::create_dir_all(dir.join(path.trim_start_matches('/')))?;
    }
    for (path, data) in vfs.files() {
        let target = dir.join(path.trim_start_matches('/'));
        if std::fs::read(&target).ok().as_deref() != Some(data) {
            std::fs::write(target, data)?;
        }
    }
    Ok(())
}

fn remove_missing(vfs: &Vfs, dir: &Path, at: &str) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type()?;
        let path = vfs::join(at, &name);
        if kind.is_dir() && name != ".git" {
            if vfs.is_dir(&path) {
                remove_missing(vfs, &entry.path(), &path)?;
            } else {
                std::fs::remove_dir_all(entry.path())?;
            }
        } else if kind.is_file() && !vfs.is_file(&path) {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}
