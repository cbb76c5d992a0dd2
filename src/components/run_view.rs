//! How a view reads a run: where the agent loop keeps it ([`SharedRun`]) plus a tick the session
//! bumps when it changed — at most once per animation frame while the run streams
//! ([`crate::agent::Screen::refresh`]). Nothing is copied per event or per frame: each component
//! reads just what it shows, in memos that only wake the DOM where a value changed.

use leptos::prelude::*;

use crate::agent::{AgentRun, SharedRun};

/// A run on screen. Copy: a handle to the run and its tick.
#[derive(Clone, Copy)]
pub struct RunView {
    run: StoredValue<SharedRun, LocalStorage>,
    tick: RwSignal<u64>,
}

impl RunView {
    /// A view of `run`, kept by the view alone.
    pub fn new(run: AgentRun) -> Self {
        RunView {
            run: StoredValue::new_local(SharedRun::new(run)),
            tick: RwSignal::new(0),
        }
    }

    /// Reads the run, and re-runs the reader (an effect, a memo) whenever it changes.
    pub fn with<R>(&self, read: impl FnOnce(&AgentRun) -> R) -> R {
        self.tick.track();
        self.with_untracked(read)
    }

    /// Reads the run without subscribing to it.
    pub fn with_untracked<R>(&self, read: impl FnOnce(&AgentRun) -> R) -> R {
        match self.run.try_get_value() {
            Some(shared) => shared.with(read),
            // The view is gone (a run winding down after a tab switch): nothing to read.
            None => read(&AgentRun::default()),
        }
    }

    /// Subscribes the caller to every change.
    pub fn track(&self) {
        self.tick.track();
    }

    /// Shows `shared` — the loop's own state — from now on.
    pub fn attach(&self, shared: &SharedRun) {
        self.run.try_set_value(shared.clone());
        self.changed();
    }

    /// Shows `run` from now on (a run the view alone keeps).
    pub fn set(&self, run: AgentRun) {
        self.attach(&SharedRun::new(run));
    }

    /// The run changed: whatever reads it reads it again.
    pub fn changed(&self) {
        self.tick.try_update(|tick| *tick = tick.wrapping_add(1));
    }
}
