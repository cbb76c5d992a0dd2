//! `tether-sandbox`: the agent's tools as a plain library — a virtual file system, a small
//! bash-compatible shell, Codex's `apply_patch`, and Codex-compatible tool schemas and dispatch.
//!
//! The library does no I/O of its own and compiles for `wasm32-unknown-unknown` and native
//! targets alike: the playground runs it in the browser, tests and the `tether-sandbox` CLI run
//! it natively. JavaScript (`node FILE`) is delegated to a [`JsRuntime`] the host provides; the
//! `native` feature adds [`native::NodeProcessRuntime`] (the real `node` binary) and disk
//! loading for the CLI and tests. See README.md for the shell subset and the tool formats.

mod base64;
pub mod changes;
pub mod commands;
pub mod js;
pub mod limits;
mod line_diff;
#[cfg(feature = "native")]
pub mod native;
pub mod patch;
mod sample;
mod sandbox;
pub mod shell;
pub mod tools;
pub mod vfs;

pub use changes::{ChangeKind, ChangeSet, FileChange};
pub use js::{JsEntry, JsOutcome, JsRequest, JsRuntime};
pub use limits::{Clock, LIMIT_EXIT_CODE, LimitExceeded, Limits, ManualClock, SystemClock};
pub use patch::{PatchError, PatchSummary};
pub use sample::{SAMPLE_FIX_PATCH, sample_project};
pub use sandbox::{Sandbox, ShellOutput};
pub use tools::{ApplyPatchForm, Plan, PlanStep, StepStatus, ToolResult, tool_specs};
pub use vfs::{EntryKind, Vfs, VfsError};
