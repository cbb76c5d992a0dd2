//! [`ShellState`]: what the shell runs against and what lasts from one command line to the
//! next — the VFS, the working directory, the variables (strings, arrays, attributes), the
//! functions — with the limits, the JavaScript runtime and the clock of the calls. A
//! [`Sandbox`](crate::Sandbox) owns one and lends it to the interpreter for a call; keeping it
//! here rather than in the sandbox keeps the arrows one way (sandbox → shell, never back).

use std::collections::BTreeMap;
use std::rc::Rc;

use super::ast::Command;
use super::vars::{Array, Attributes};
use crate::js::JsRuntime;
use crate::limits::{Clock, Limits, SystemClock};
use crate::vfs::Vfs;

pub struct ShellState {
    pub(crate) vfs: Vfs,
    pub(crate) cwd: String,
    /// String variables (shell and environment variables are one namespace).
    pub(crate) env: BTreeMap<String, String>,
    /// Arrays; a name is in `env` or here, never both.
    pub(crate) arrays: BTreeMap<String, Array>,
    /// Attributes set by `declare`, `readonly`, `export`.
    pub(crate) attributes: BTreeMap<String, Attributes>,
    /// Shell functions defined so far, shared (copy on write) with the scopes saved for
    /// subshells and pipeline stages, which restore them but seldom change them.
    pub(crate) functions: Rc<BTreeMap<String, Rc<Command>>>,
    /// `pushd`'s stack, its top last.
    pub(crate) dir_stack: Vec<String>,
    pub(crate) limits: Limits,
    pub(crate) js: Option<Box<dyn JsRuntime>>,
    pub(crate) clock: Box<dyn Clock>,
}

/// The part of the state a subshell, a pipeline stage or a tool call gives back when it ends.
pub(crate) struct Scope {
    cwd: String,
    env: BTreeMap<String, String>,
    arrays: BTreeMap<String, Array>,
    attributes: BTreeMap<String, Attributes>,
    functions: Rc<BTreeMap<String, Rc<Command>>>,
}

impl ShellState {
    /// A state over `vfs`, in `/`, with a few usual variables, default limits, the system
    /// clock and no JS runtime.
    pub fn new(vfs: Vfs) -> Self {
        let env = [
            ("HOME", "/"),
            ("PWD", "/"),
            ("PATH", "/usr/bin:/bin"),
            ("USER", "user"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        ShellState {
            vfs,
            cwd: "/".into(),
            env,
            arrays: BTreeMap::new(),
            attributes: BTreeMap::new(),
            functions: Rc::default(),
            dir_stack: Vec::new(),
            limits: Limits::default(),
            js: None,
            clock: Box::new(SystemClock::default()),
        }
    }

    pub(crate) fn save(&self) -> Scope {
        Scope {
            cwd: self.cwd.clone(),
            env: self.env.clone(),
            arrays: self.arrays.clone(),
            attributes: self.attributes.clone(),
            functions: self.functions.clone(),
        }
    }

    pub(crate) fn restore(&mut self, scope: Scope) {
        self.cwd = scope.cwd;
        self.env = scope.env;
        self.arrays = scope.arrays;
        self.attributes = scope.attributes;
        self.functions = scope.functions;
    }
}
