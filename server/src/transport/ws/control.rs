//! The frames that reach a response already running on the connection — `response.append`,
//! `response.inject`, `response.steer` — arrive on the reader, not on the response's lane: this
//! is where the reader finds the response they are for, and how they get to it.
//!
//! Every response running on the connection has a [`Handle`] here while it runs: its steers
//! ([`Steering`]) and a channel for the input that resumes it. The connection also remembers
//! which responses finished (so a late frame is told `response_already_completed`, not
//! `response_not_found`), which response is paused on each lane (`response.append` names no
//! response), and the steers queued for the next request of a response that ended with client
//! tool calls.

use std::collections::{HashMap, VecDeque};

use parking_lot::Mutex;
use tether_protocol::Item;
use tokio::sync::{mpsc, watch};

use crate::pipeline::{QueuedSteer, Steering};

/// How many finished response ids the connection remembers.
const FINISHED: usize = 1024;

/// Input that resumes a response waiting for its client.
#[derive(Debug)]
pub enum Resume {
    /// `response.append`: the response paused with `response.done` on its lane.
    Append(Vec<Item>),
    /// `response.inject`: the response waits for its client tool outputs.
    Inject(Vec<Item>),
}

/// A running response, as the reader reaches it.
#[derive(Debug, Clone)]
pub struct Handle {
    pub steering: Steering,
    pub resume: mpsc::UnboundedSender<Resume>,
    pub lane: Option<String>,
}

/// Where a response is, for a frame that names it.
#[derive(Debug)]
pub enum Found {
    Running(Handle),
    Finished,
    Unknown,
}

/// A response that finished: where an event about it afterwards goes, and its number.
#[derive(Debug)]
struct Finished {
    id: String,
    lane: Option<String>,
    /// The number the next event about it gets, continuing its sequence.
    next_sequence: u64,
}

/// The connection's running responses and what it remembers of finished ones.
#[derive(Debug)]
pub struct Control {
    state: Mutex<State>,
    /// Set when the connection ends its life: responses waiting for their client finish.
    closing: watch::Sender<bool>,
}

#[derive(Debug, Default)]
struct State {
    running: HashMap<String, Handle>,
    finished: VecDeque<Finished>,
    /// The response paused (v1 `response.done`) on each lane.
    paused: HashMap<Option<String>, String>,
    /// The last response of each lane, and whether it has finished.
    last_on_lane: HashMap<Option<String>, String>,
    /// Steers for the next `response.create` continuing these responses.
    pending_steers: HashMap<String, Vec<QueuedSteer>>,
}

impl Default for Control {
    fn default() -> Self {
        Control {
            state: Mutex::default(),
            closing: watch::channel(false).0,
        }
    }
}

impl Control {
    /// Registers a response that starts on `lane`; returns its handle and the receiving end
    /// of its resume channel.
    pub fn register(
        &self,
        id: &str,
        lane: Option<String>,
        steering: Steering,
    ) -> mpsc::UnboundedReceiver<Resume> {
        let (resume, inbox) = mpsc::unbounded_channel();
        let mut state = self.state.lock();
        state.last_on_lane.insert(lane.clone(), id.to_string());
        state.running.insert(
            id.to_string(),
            Handle {
                steering,
                resume,
                lane,
            },
        );
        inbox
    }

    /// The response finished (or was abandoned) with `next_sequence` the number after its last
    /// event: frames for it are now late.
    pub fn finish(&self, id: &str, next_sequence: u64) {
        let mut state = self.state.lock();
        let mut lane = None;
        if let Some(handle) = state.running.remove(id) {
            if state
                .paused
                .get(&handle.lane)
                .is_some_and(|paused| paused == id)
            {
                state.paused.remove(&handle.lane);
            }
            lane = handle.lane;
        }
        state.finished.push_back(Finished {
            id: id.to_string(),
            lane,
            next_sequence,
        });
        if state.finished.len() > FINISHED {
            state.finished.pop_front();
        }
    }

    /// Response `id` paused on its lane (`response.append` goes to it), or resumed (`false`).
    pub fn set_paused(&self, id: &str, paused: bool) {
        let mut state = self.state.lock();
        let Some(lane) = state.running.get(id).map(|handle| handle.lane.clone()) else {
            return;
        };
        if paused {
            state.paused.insert(lane, id.to_string());
        } else {
            state.paused.remove(&lane);
        }
    }

    /// Where response `id` is.
    pub fn find(&self, id: &str) -> Found {
        let state = self.state.lock();
        if let Some(handle) = state.running.get(id) {
            Found::Running(handle.clone())
        } else if state.finished.iter().any(|finished| finished.id == id) {
            Found::Finished
        } else {
            Found::Unknown
        }
    }

    /// The response paused on `lane`, or where the lane's last response is.
    pub fn paused_on(&self, lane: &Option<String>) -> Found {
        let last = {
            let state = self.state.lock();
            if let Some(id) = state.paused.get(lane) {
                return match state.running.get(id) {
                    Some(handle) => Found::Running(handle.clone()),
                    None => Found::Finished,
                };
            }
            state.last_on_lane.get(lane).cloned()
        };
        match last {
            // Running but not paused (still streaming, or waiting for an inject): an append
            // cannot resume it.
            Some(id) => match self.find(&id) {
                Found::Running(_) | Found::Finished => Found::Finished,
                Found::Unknown => Found::Unknown,
            },
            None => Found::Unknown,
        }
    }

    /// The sequence number and lane of an event about response `id` sent after its end (a late
    /// frame's refusal, `response.steer.pending`): its sequence continues. A response the
    /// connection does not know has no sequence to continue: 0, on no lane.
    pub fn late(&self, id: &str) -> (u64, Option<String>) {
        let mut state = self.state.lock();
        match state.finished.iter_mut().rev().find(|f| f.id == id) {
            Some(finished) => {
                finished.next_sequence += 1;
                (finished.next_sequence - 1, finished.lane.clone())
            }
            None => (0, None),
        }
    }

    /// Keeps `steers` for the next request continuing response `id`.
    pub fn keep_steers(&self, id: &str, steers: Vec<QueuedSteer>) {
        if !steers.is_empty() {
            self.state
                .lock()
                .pending_steers
                .insert(id.to_string(), steers);
        }
    }

    /// The steers waiting for the next request continuing response `id`.
    pub fn take_steers(&self, id: &str) -> Vec<QueuedSteer> {
        self.state
            .lock()
            .pending_steers
            .remove(id)
            .unwrap_or_default()
    }

    /// Tells responses waiting for their client that the connection ends.
    pub fn close(&self) {
        let _ = self.closing.send(true);
    }

    /// A receiver that sees [`Control::close`].
    pub fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }
}
