//! At most one publication per animation frame. The agent loop reports a change for every event —
//! thousands a second while tokens stream — but the screen only changes once per frame, so a
//! report only marks the state dirty and a single scheduled frame callback copies the latest
//! state to the screen. A final state (done, failed, stopped) is published
//! at once, so the last thing on screen is never a state the loop has already left.
//!
//! The scheduler is injected: the session passes the page's `requestAnimationFrame`
//! ([`super::session::Browser::next_frame`]), the native tests a queue they run by hand.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Runs a callback later (at the next animation frame, in the page).
pub type Scheduler = Box<dyn Fn(Box<dyn FnOnce()>)>;

struct Batch {
    /// A change is waiting to be published.
    dirty: Cell<bool>,
    /// A frame callback is scheduled and has not run yet.
    scheduled: Cell<bool>,
    schedule: Scheduler,
    publish: RefCell<Box<dyn FnMut()>>,
}

impl Batch {
    fn publish(&self) {
        self.dirty.set(false);
        (self.publish.borrow_mut())();
    }
}

/// Coalesces change reports into one `publish` per frame. Clones share the batch.
#[derive(Clone)]
pub struct FrameBatch {
    inner: Rc<Batch>,
}

impl FrameBatch {
    /// `publish` copies the latest state to where the view reads it; `schedule` runs a callback
    /// at the next frame.
    pub fn new(schedule: Scheduler, publish: impl FnMut() + 'static) -> Self {
        FrameBatch {
            inner: Rc::new(Batch {
                dirty: Cell::new(false),
                scheduled: Cell::new(false),
                schedule,
                publish: RefCell::new(Box::new(publish)),
            }),
        }
    }

    /// Something changed: publish it at the next frame (one frame callback however many changes
    /// arrive before it runs).
    pub fn changed(&self) {
        self.inner.dirty.set(true);
        if self.inner.scheduled.replace(true) {
            return;
        }
        let inner = self.inner.clone();
        (self.inner.schedule)(Box::new(move || {
            inner.scheduled.set(false);
            if inner.dirty.get() {
                inner.publish();
            }
        }));
    }

    /// Publishes now (a final state); a frame already scheduled then has nothing left to do.
    pub fn flush(&self) {
        self.inner.publish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Frames = Rc<RefCell<Vec<Box<dyn FnOnce()>>>>;

    /// A scheduler whose frames run when the test says so.
    fn manual() -> (Scheduler, Frames) {
        let queue: Frames = Rc::default();
        let pending = queue.clone();
        (
            Box::new(move |callback| pending.borrow_mut().push(callback)),
            queue,
        )
    }

    fn run_frame(queue: &RefCell<Vec<Box<dyn FnOnce()>>>) {
        let callbacks: Vec<_> = queue.borrow_mut().drain(..).collect();
        for callback in callbacks {
            callback();
        }
    }

    #[test]
    fn many_changes_in_one_frame_publish_once() {
        let (schedule, queue) = manual();
        let published = Rc::new(Cell::new(0));
        let count = published.clone();
        let batch = FrameBatch::new(schedule, move || count.set(count.get() + 1));
        for _ in 0..1000 {
            batch.changed();
        }
        assert_eq!(queue.borrow().len(), 1, "one frame callback");
        assert_eq!(published.get(), 0, "nothing before the frame");
        run_frame(&queue);
        assert_eq!(published.get(), 1);
        run_frame(&queue);
        assert_eq!(published.get(), 1, "no change, no publication");
        batch.changed();
        run_frame(&queue);
        assert_eq!(published.get(), 2);
    }

    #[test]
    fn a_flush_publishes_at_once_and_leaves_the_frame_nothing_to_do() {
        let (schedule, queue) = manual();
        let published = Rc::new(Cell::new(0));
        let count = published.clone();
        let batch = FrameBatch::new(schedule, move || count.set(count.get() + 1));
        batch.changed();
        batch.flush();
        assert_eq!(published.get(), 1);
        run_frame(&queue);
        assert_eq!(published.get(), 1, "the frame found nothing dirty");
        // A change after the flush schedules a new frame.
        batch.changed();
        assert_eq!(queue.borrow().len(), 1);
        run_frame(&queue);
        assert_eq!(published.get(), 2);
    }
}
