//! Bounded concurrency per upstream: at most `max_concurrency` requests run on a replica at
//! once, up to `max_queue` more wait for a slot in arrival order, and beyond that a request is
//! refused at once (429) rather than queued without end. A request that goes away while it
//! waits (its client disconnected) leaves the queue; one that ends frees its slot.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// One replica's slots and queue.
#[derive(Debug)]
pub struct Limiter {
    slots: Arc<Semaphore>,
    max_running: usize,
    max_queue: usize,
    waiting: AtomicUsize,
}

/// A slot held: the request runs until it is dropped.
#[derive(Debug)]
pub struct Slot {
    _permit: OwnedSemaphorePermit,
}

/// The queue was full: how many ran and waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full {
    pub running: usize,
    pub waiting: usize,
}

/// Counts a waiting request for as long as it waits, however its wait ends.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Limiter {
    pub fn new(max_running: usize, max_queue: usize) -> Self {
        Limiter {
            slots: Arc::new(Semaphore::new(max_running.max(1))),
            max_running: max_running.max(1),
            max_queue,
            waiting: AtomicUsize::new(0),
        }
    }

    /// A slot, after waiting for one if all are taken; how long the wait was.
    pub async fn acquire(&self) -> Result<(Slot, Duration), Full> {
        if let Ok(permit) = self.slots.clone().try_acquire_owned() {
            return Ok((Slot { _permit: permit }, Duration::ZERO));
        }
        let before = self.waiting.fetch_add(1, Ordering::SeqCst);
        let waiting = Waiting(&self.waiting);
        if before >= self.max_queue {
            drop(waiting);
            return Err(Full {
                running: self.running(),
                waiting: before,
            });
        }
        let started = Instant::now();
        let permit = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        drop(waiting);
        Ok((Slot { _permit: permit }, started.elapsed()))
    }

    /// Requests running now.
    pub fn running(&self) -> usize {
        self.max_running - self.slots.available_permits()
    }

    /// Requests waiting now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_so_many_queues_so_many_and_refuses_the_rest() {
        let limiter = Arc::new(Limiter::new(1, 1));
        let (first, waited) = limiter.acquire().await.unwrap();
        assert_eq!(waited, Duration::ZERO);
        let queued = {
            let limiter = limiter.clone();
            tokio::spawn(async move { limiter.acquire().await.map(|(slot, _)| slot) })
        };
        while limiter.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            limiter.acquire().await.unwrap_err(),
            Full {
                running: 1,
                waiting: 1
            }
        );
        drop(first);
        let second = queued.await.unwrap().unwrap();
        assert_eq!((limiter.running(), limiter.waiting()), (1, 0));
        drop(second);
        assert_eq!(limiter.running(), 0);
    }

    #[tokio::test]
    async fn a_request_that_goes_away_leaves_the_queue() {
        let limiter = Arc::new(Limiter::new(1, 1));
        let _held = limiter.acquire().await.unwrap();
        let waiter = {
            let limiter = limiter.clone();
            tokio::spawn(async move { limiter.acquire().await.map(|_| ()) })
        };
        while limiter.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        waiter.abort();
        let _ = waiter.await;
        assert_eq!(limiter.waiting(), 0);
    }
}
