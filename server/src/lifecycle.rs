//! The server's life as its connections see it: how many WebSocket connections are open (and
//! whether one more may open: `--max-connections`), and its shutdown in two steps.
//!
//! On the first SIGTERM or Ctrl-C the server **drains**: it stops accepting, refuses new
//! requests on open connections, lets running responses finish, and closes each WebSocket
//! connection (code 1001) once it has nothing running. When `--shutdown-grace-seconds` pass it
//! **aborts**: responses still running end with `response.failed` (503, `server_shutting_down`)
//! and their connections close. Then the store's queue drains and the process exits 0
//! ([`crate::serve`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{Notify, watch};

/// The server's connections and its shutdown.
#[derive(Debug)]
pub struct Lifecycle {
    max_connections: usize,
    open: AtomicUsize,
    /// Signalled when the last connection closes.
    closed: Notify,
    draining: watch::Sender<bool>,
    aborting: watch::Sender<bool>,
}

impl Lifecycle {
    pub fn new(max_connections: usize) -> Arc<Self> {
        Arc::new(Lifecycle {
            max_connections,
            open: AtomicUsize::new(0),
            closed: Notify::new(),
            draining: watch::channel(false).0,
            aborting: watch::channel(false).0,
        })
    }

    /// A place for one more WebSocket connection, held until the guard drops; `None` when
    /// `--max-connections` are open or the server drains.
    pub fn connect(self: &Arc<Self>) -> Option<ConnectionGuard> {
        if self.is_draining() {
            return None;
        }
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < self.max_connections).then_some(open + 1)
            })
            .ok()?;
        Some(ConnectionGuard {
            lifecycle: self.clone(),
        })
    }

    /// The most connections open at once.
    pub fn max_connections(&self) -> usize {
        self.max_connections
    }

    /// WebSocket connections open now.
    pub fn open_connections(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// Starts draining.
    pub fn drain(&self) {
        self.draining.send_replace(true);
    }

    /// Ends what still runs.
    pub fn abort(&self) {
        self.drain();
        self.aborting.send_replace(true);
    }

    pub fn is_draining(&self) -> bool {
        *self.draining.borrow()
    }

    pub fn is_aborting(&self) -> bool {
        *self.aborting.borrow()
    }

    /// Completes when the server starts draining.
    pub async fn draining(&self) {
        let mut draining = self.draining.subscribe();
        let _ = draining.wait_for(|draining| *draining).await;
    }

    /// Completes when the server aborts what still runs.
    pub async fn aborted(&self) {
        let mut aborting = self.aborting.subscribe();
        let _ = aborting.wait_for(|aborting| *aborting).await;
    }

    /// Completes when no WebSocket connection is open.
    pub async fn all_closed(&self) {
        loop {
            let closed = self.closed.notified();
            if self.open_connections() == 0 {
                return;
            }
            closed.await;
        }
    }
}

/// One open connection's place; dropping it frees the place.
#[derive(Debug)]
pub struct ConnectionGuard {
    lifecycle: Arc<Lifecycle>,
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        if self.lifecycle.open.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.lifecycle.closed.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn places_are_counted_and_refused_beyond_the_limit_or_when_draining() {
        let lifecycle = Lifecycle::new(2);
        let a = lifecycle.connect().unwrap();
        let b = lifecycle.connect().unwrap();
        assert!(lifecycle.connect().is_none(), "the third is over the limit");
        drop(a);
        let c = lifecycle.connect().unwrap();
        assert_eq!(lifecycle.open_connections(), 2);
        lifecycle.drain();
        drop(b);
        assert!(lifecycle.connect().is_none(), "draining: no new connection");
        let closed = tokio::spawn({
            let lifecycle = lifecycle.clone();
            async move { lifecycle.all_closed().await }
        });
        tokio::task::yield_now().await;
        assert!(!closed.is_finished());
        drop(c);
        tokio::time::timeout(std::time::Duration::from_secs(1), closed)
            .await
            .expect("all closed")
            .unwrap();
        assert!(!lifecycle.is_aborting());
        lifecycle.abort();
        lifecycle.aborted().await;
    }
}
