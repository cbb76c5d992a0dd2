//! [`Sandbox`]: one agent's machine — a VFS, a working directory, environment variables,
//! [`Limits`], an optional [`JsRuntime`] and a [`Clock`] — and the two ways in: a shell command
//! line ([`Sandbox::run_shell`]: the directory, variables and functions persist like a
//! terminal; `set` options last one line) and a model tool call
//! ([`Sandbox::call_tool`], each call starts from the session's directory and environment, like
//! Codex spawning a fresh process).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::changes::ChangeSet;
use crate::js::JsRuntime;
use crate::limits::{Clock, Limits, truncate_middle};
use crate::plan::Plan;
use crate::shell::ShellState;
use crate::shell::exec::{Shell, Streams};
use crate::vfs::Vfs;

/// What a command line printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShellOutput {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i32,
    /// Files the command line added, modified or deleted.
    pub changes: ChangeSet,
}

/// One agent's machine. Not `Send`: it may hold a browser-side JS runtime, and wasm is
/// single-threaded anyway.
pub struct Sandbox {
    pub(crate) state: ShellState,
    pub(crate) plan: Plan,
}

impl Sandbox {
    /// A sandbox over `vfs`, in `/`, with default limits, the system clock and no JS runtime.
    pub fn new(vfs: Vfs) -> Self {
        Sandbox {
            state: ShellState::new(vfs),
            plan: Plan::default(),
        }
    }

    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.state.limits = limits;
        self
    }

    pub fn with_js_runtime(mut self, runtime: Box<dyn JsRuntime>) -> Self {
        self.state.js = Some(runtime);
        self
    }

    pub fn with_clock(mut self, clock: Box<dyn Clock>) -> Self {
        self.state.clock = clock;
        self
    }

    pub fn vfs(&self) -> &Vfs {
        &self.state.vfs
    }

    /// Direct access to the tree (the UI's editor); such edits are not in any change set.
    pub fn vfs_mut(&mut self) -> &mut Vfs {
        &mut self.state.vfs
    }

    pub fn into_vfs(self) -> Vfs {
        self.state.vfs
    }

    pub fn cwd(&self) -> &str {
        &self.state.cwd
    }

    pub fn limits(&self) -> &Limits {
        &self.state.limits
    }

    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.state.env
    }

    pub fn set_env(&mut self, name: &str, value: &str) {
        self.state.env.insert(name.into(), value.into());
    }

    /// The plan last sent with `update_plan`.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Runs a command line like a terminal would: `cd` and variables persist afterwards.
    pub async fn run_shell(&mut self, command_line: &str) -> ShellOutput {
        let budget = self.state.limits.wall_clock_ms;
        self.execute(command_line, budget).await
    }

    /// Runs a command line within `wall_clock_ms`, collecting output and changes.
    pub(crate) async fn execute(&mut self, command_line: &str, wall_clock_ms: u64) -> ShellOutput {
        self.state
            .vfs
            .set_byte_limit(self.state.limits.max_fs_bytes);
        self.state.vfs.take_changes();
        let mut io = Streams::default();
        let exit_code = match crate::shell::parse(command_line) {
            Ok(script) => {
                let mut shell = Shell::new(&mut self.state, wall_clock_ms);
                shell.run(&script, &mut io).await
            }
            Err(e) => {
                io.err
                    .extend_from_slice(format!("bash: line 1: {e}\n").as_bytes());
                2
            }
        };
        let max = self.state.limits.max_stream_bytes;
        ShellOutput {
            stdout: truncate_middle(&String::from_utf8_lossy(&io.out), max),
            stderr: truncate_middle(&String::from_utf8_lossy(&io.err), max),
            exit_code,
            changes: self.state.vfs.take_changes(),
        }
    }
}
