//! The Stop button's signal: a flag the agent loop checks between events, tool calls and turns,
//! and a future that completes when it is raised, so a turn waiting on a quiet connection stops
//! at once instead of at the next event.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// Shared between the UI (which raises it) and one run (which obeys it). Clones share the flag.
#[derive(Clone, Default)]
pub struct StopSignal {
    raised: Rc<Cell<bool>>,
    wakers: Rc<RefCell<Vec<Waker>>>,
}

impl StopSignal {
    pub fn new() -> Self {
        StopSignal::default()
    }

    /// Asks the run to stop.
    pub fn stop(&self) {
        self.raised.set(true);
        for waker in self.wakers.borrow_mut().drain(..) {
            waker.wake();
        }
    }

    pub fn is_stopped(&self) -> bool {
        self.raised.get()
    }

    /// Completes once [`StopSignal::stop`] has been called.
    pub fn stopped(&self) -> Stopped {
        Stopped {
            signal: self.clone(),
        }
    }
}

/// The future of [`StopSignal::stopped`].
pub struct Stopped {
    signal: StopSignal,
}

impl Future for Stopped {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.signal.is_stopped() {
            return Poll::Ready(());
        }
        let mut wakers = self.signal.wakers.borrow_mut();
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    #[test]
    fn the_future_completes_only_after_stop() {
        let signal = StopSignal::new();
        let mut waiting = signal.stopped();
        assert!((&mut waiting).now_or_never().is_none());
        let clone = signal.clone();
        clone.stop();
        assert!(signal.is_stopped());
        assert!(waiting.now_or_never().is_some());
    }
}
