//! Steering a running response (`response.steer`): the connection's reader queues user input
//! for a response while it streams; the stream announces each steer it took
//! (`response.steer.accepted`, in the response's own sequence) and ends the response at the next
//! safe output boundary — before an item begins, between two deltas of a message or a
//! reasoning summary (which then closes `incomplete`), or once a tool call's arguments are whole —
//! after which an automatic successor continues from it with the queued input.

use std::sync::Arc;

use parking_lot::Mutex;
use tether_protocol::{Item, ResponseStreamBuilder, ServerEvent, Steer, StreamEvent};
use tokio::sync::Notify;

/// The most steers that may wait for one response.
pub const MAX_PENDING_STEERS: usize = 8;

/// One steer: its id and the user input it brings.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedSteer {
    pub id: String,
    pub input: Vec<Item>,
}

/// The steers of one response, shared between the reader that takes them and the response's
/// task; cloning shares it.
#[derive(Debug, Clone, Default)]
pub struct Steering {
    inner: Arc<State>,
}

#[derive(Debug, Default)]
struct State {
    queue: Mutex<Queue>,
    notify: Notify,
}

#[derive(Debug, Default)]
struct Queue {
    steers: Vec<QueuedSteer>,
    /// What the response has yet to announce, in the order it happened.
    notices: Vec<Notice>,
    /// No more steers: the response has ended.
    closed: bool,
    /// The response takes no steers at all (bound to a conversation, or compacting its
    /// context): every one is refused.
    unsteerable: bool,
}

/// An event the response announces in its own sequence.
#[derive(Debug)]
enum Notice {
    /// `response.steer.accepted` for this steer id.
    Accepted(String),
    /// A steer refused while the response runs (`response.steer.failed`).
    Refused(Box<StreamEvent>),
}

/// Why a steer was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    TooMany,
    /// The response takes no steers (a conversation's, or one with `context_management`).
    NotSupported,
    /// The response ended meanwhile.
    Closed,
}

impl Steering {
    /// The steers of a response that takes none: as the reference has it, "steering is not
    /// allowed for responses bound to a conversation or using auto-compaction".
    pub fn refusing() -> Self {
        let steering = Steering::default();
        steering.inner.queue.lock().unsteerable = true;
        steering
    }

    /// Queues `steer` for the response; the stream announces it and stops at the next boundary.
    pub fn push(&self, steer: QueuedSteer) -> Result<(), Refused> {
        let mut queue = self.inner.queue.lock();
        if queue.unsteerable {
            return Err(Refused::NotSupported);
        }
        if queue.closed {
            return Err(Refused::Closed);
        }
        if queue.steers.len() >= MAX_PENDING_STEERS {
            return Err(Refused::TooMany);
        }
        queue.notices.push(Notice::Accepted(steer.id.clone()));
        queue.steers.push(steer);
        drop(queue);
        self.inner.notify.notify_one();
        Ok(())
    }

    /// Has the response announce `failed` (a `response.steer.failed`) in its sequence; hands it
    /// back when the response has ended (its sequence is over).
    pub fn refuse(&self, failed: Box<StreamEvent>) -> Result<(), Box<StreamEvent>> {
        let mut queue = self.inner.queue.lock();
        if queue.closed {
            return Err(failed);
        }
        queue.notices.push(Notice::Refused(failed));
        drop(queue);
        self.inner.notify.notify_one();
        Ok(())
    }

    /// Whether a steer is waiting: the stream should end at the next safe boundary.
    pub fn requested(&self) -> bool {
        !self.inner.queue.lock().steers.is_empty()
    }

    /// What is not announced yet — `response.steer.accepted` for each steer taken, and the
    /// steers refused meanwhile — numbered by `builder`.
    pub fn announcements(
        &self,
        builder: &mut ResponseStreamBuilder,
        response_id: &str,
    ) -> Vec<ServerEvent> {
        let notices = std::mem::take(&mut self.inner.queue.lock().notices);
        number(notices, builder, response_id)
    }

    /// Completes when a steer may have arrived.
    pub async fn notified(&self) {
        self.inner.notify.notified().await
    }

    /// Closes the queue — later steers of this response are refused — and takes every queued
    /// steer (for the successor, or for the next request) with what is still to be announced.
    pub fn close(
        &self,
        builder: &mut ResponseStreamBuilder,
        response_id: &str,
    ) -> (Vec<ServerEvent>, Vec<QueuedSteer>) {
        let mut queue = self.inner.queue.lock();
        queue.closed = true;
        let notices = std::mem::take(&mut queue.notices);
        let steers = std::mem::take(&mut queue.steers);
        drop(queue);
        (number(notices, builder, response_id), steers)
    }
}

/// The events of `notices`, numbered by `builder`.
fn number(
    notices: Vec<Notice>,
    builder: &mut ResponseStreamBuilder,
    response_id: &str,
) -> Vec<ServerEvent> {
    notices
        .into_iter()
        .map(|notice| {
            builder.numbered(match notice {
                Notice::Accepted(id) => StreamEvent::SteerAccepted {
                    steer: Steer {
                        id,
                        previous_response_id: response_id.to_string(),
                    },
                },
                Notice::Refused(failed) => *failed,
            })
        })
        .collect()
}
