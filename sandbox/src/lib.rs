//! `tether-sandbox`: the agent's tools as a plain library — a virtual file system, a small
//! bash-compatible shell, Codex's `apply_patch`, and Codex-compatible tool schemas and dispatch.
//!
//! The library does no I/O of its own and compiles for `wasm32-unknown-unknown` and native
//! targets alike: the playground runs it in the browser, tests and the `tether-sandbox` CLI run
//! it natively. JavaScript (`node FILE`) is delegated to a [`JsRuntime`] the host provides; the
//! `native` feature adds [`native::NodeProcessRuntime`] (the real `node` binary) and disk
//! loading for the CLI and tests. See README.md for the shell subset and the tool formats.
//!
//! This crate is the facade over the sandbox's crates, each one idea, the arrows pointing one
//! way: [`vfs`] (tether-vfs: the tree, change sets, globbing) ← [`patch`]
//! (tether-apply-patch) ← [`commands`] (tether-coreutils: the command table) ← [`shell`] (the
//! interpreter, here, as it runs on a [`Sandbox`]) ← [`tools`] (the model's tool calls).

#[cfg(feature = "native")]
pub mod corpus;
pub mod js;
pub mod limits;
mod long_task;
#[cfg(feature = "native")]
pub mod native;
mod plan;
mod sample;
mod sandbox;
pub mod shell;
pub mod tools;

/// `apply_patch` (tether-apply-patch).
pub use tether_apply_patch as patch;
/// The commands (tether-coreutils).
pub use tether_coreutils as commands;
/// The virtual file system (tether-vfs).
pub use tether_vfs as vfs;
pub use tether_vfs::changes;

pub use changes::{ChangeKind, ChangeSet, FileChange};
pub use js::{JsEntry, JsOutcome, JsRequest, JsRuntime};
pub use limits::{Clock, LIMIT_EXIT_CODE, LimitExceeded, Limits, ManualClock, SystemClock};
pub use long_task::{
    CI_LOG_PATH, FAILURES, LINES_PER_SHARD, LONG_TASK_PROMPT, SHARDS, ci_log, long_task_project,
    shard_counts, shard_lines,
};
pub use patch::{PatchError, PatchSummary};
pub use sample::{SAMPLE_FIX_PATCH, sample_project};
pub use sandbox::{Sandbox, ShellOutput};
pub use tools::{ApplyPatchForm, Plan, PlanStep, StepStatus, ToolResult, tool_specs};
pub use vfs::{EntryKind, Vfs, VfsError};
