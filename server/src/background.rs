//! The background responses this process runs (`background: true`, HTTP): each one's events as
//! they happened, so a client may stream it from any point (`GET
//! /v1/responses/{id}?stream=true&starting_after=N`) while it runs and for [`KEPT_FOR`] after
//! it ends, and its cancel signal. The run itself is `pipeline::background`'s; this is what the
//! handlers share.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tether_protocol::ServerEvent;
use tokio::sync::Notify;

/// How long an ended response's events stay here to be streamed again.
pub const KEPT_FOR: Duration = Duration::from_secs(600);

/// One background response's events and state.
#[derive(Debug, Default)]
pub struct Run {
    /// The project it belongs to.
    pub project: String,
    state: Mutex<RunState>,
    /// Woken at every new event, at the end, and on cancel.
    changed: Notify,
}

#[derive(Debug, Default)]
struct RunState {
    events: Vec<ServerEvent>,
    ended: Option<Instant>,
    cancel: bool,
}

impl Run {
    /// Records `event` and wakes whoever follows the stream.
    pub fn push(&self, event: ServerEvent) {
        self.state.lock().events.push(event);
        self.changed.notify_waiters();
    }

    /// No more events come.
    pub fn end(&self) {
        self.state.lock().ended = Some(Instant::now());
        self.changed.notify_waiters();
    }

    /// Asks the run to stop; `false` if it had already ended.
    pub fn cancel(&self) -> bool {
        let mut state = self.state.lock();
        if state.ended.is_some() {
            return false;
        }
        state.cancel = true;
        drop(state);
        self.changed.notify_waiters();
        true
    }

    pub fn cancel_requested(&self) -> bool {
        self.state.lock().cancel
    }

    pub fn ended(&self) -> bool {
        self.state.lock().ended.is_some()
    }

    /// Resolves at the next change (an event, the end, a cancel).
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    /// The events after sequence number `after` (all of them for `None`), and whether the run
    /// has ended, read together. Registers for the next change first, so a caller that finds
    /// nothing new and waits misses nothing.
    pub fn after(&self, after: Option<u64>) -> (Vec<ServerEvent>, bool, impl Future<Output = ()>) {
        let notified = self.changed.notified();
        let state = self.state.lock();
        let events = state
            .events
            .iter()
            .filter(|event| match (after, event.sequence_number) {
                (None, _) => true,
                (Some(after), Some(n)) => n > after,
                (Some(_), None) => false,
            })
            .cloned()
            .collect();
        (events, state.ended.is_some(), notified)
    }

    /// The newest sequence number recorded.
    pub fn last_sequence(&self) -> Option<u64> {
        self.state
            .lock()
            .events
            .iter()
            .rev()
            .find_map(|event| event.sequence_number)
    }
}

/// Every background response of this process, by id.
#[derive(Debug, Default)]
pub struct Runs {
    runs: Mutex<HashMap<String, Arc<Run>>>,
}

impl Runs {
    /// A new run of response `id` for `project`; runs that ended more than [`KEPT_FOR`] ago
    /// are forgotten.
    pub fn start(&self, id: &str, project: &str) -> Arc<Run> {
        let run = Arc::new(Run {
            project: project.to_string(),
            ..Run::default()
        });
        let mut runs = self.runs.lock();
        runs.retain(|_, run| {
            run.state
                .lock()
                .ended
                .is_none_or(|ended| ended.elapsed() < KEPT_FOR)
        });
        runs.insert(id.to_string(), run.clone());
        run
    }

    /// The run of response `id`, if it belongs to `project` and is still here.
    pub fn find(&self, project: &str, id: &str) -> Option<Arc<Run>> {
        self.runs
            .lock()
            .get(id)
            .filter(|run| run.project == project)
            .cloned()
    }

    /// How many have not ended.
    pub fn running(&self) -> usize {
        self.runs.lock().values().filter(|run| !run.ended()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::StreamEvent;

    fn event(n: u64) -> ServerEvent {
        ServerEvent {
            event: StreamEvent::Error(tether_protocol::ErrorFrame::sse(
                tether_protocol::ApiError::server("x"),
            )),
            sequence_number: Some(n),
            stream_id: None,
            tether_timing: None,
        }
    }

    #[test]
    fn events_are_read_from_a_sequence_number_on_and_only_by_their_project() {
        let runs = Runs::default();
        let run = runs.start("resp_1", "p");
        for n in 0..5 {
            run.push(event(n));
        }
        let (events, ended, _) = run.after(Some(2));
        let numbers: Vec<_> = events.iter().filter_map(|e| e.sequence_number).collect();
        assert_eq!(numbers, [3, 4]);
        assert!(!ended);
        assert_eq!(run.after(None).0.len(), 5);
        assert!(runs.find("q", "resp_1").is_none());
        assert!(runs.find("p", "resp_1").is_some());
        assert_eq!(runs.running(), 1);
        assert!(run.cancel());
        assert!(run.cancel_requested());
        run.end();
        assert!(!run.cancel(), "an ended run cancels nothing");
        assert_eq!(runs.running(), 0);
    }
}
