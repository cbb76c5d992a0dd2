//! The clock that paces tokens.
//!
//! tokio's timer has a resolution of one millisecond: it rounds every deadline up to its next
//! tick, and the worker that fires it parks in `epoll_wait`, whose timeout is whole milliseconds
//! too. A token due at 10.2 ms therefore left at 11 or 12 ms, and at 1,000 tokens/s the tokens of
//! every stream left on the same ticks, in bursts: two tokens due 1 ms apart often went in one
//! delta, the next gap was 2 ms, and the 100 streams' frames competed for the same instant.
//!
//! [`Clock::Precise`] rounds a deadline up to a grid of [`QUANTUM`] (250 µs) and wakes the task
//! from one thread (per process, started on first use) that sleeps on a condition variable,
//! whose timeout has nanosecond resolution, until the earliest deadline, then wakes every task
//! due by then. So a token leaves at most 250 µs after its due time, plus the operating system's
//! timer slack (50 µs by default) and the time a worker takes to run the woken task. The thread
//! fires once per grid step at most (4,000 times a second) however many streams run, besides
//! waking when a nearer deadline arrives, and streams keep their own phases within a millisecond
//! instead of sharing one tick. A long wait (a slow model's first token) sleeps on tokio's timer
//! until the last [`HANDOVER`], so the clock thread only ever holds deadlines a few milliseconds
//! away, and a cancelled response's entry is gone as soon.
//!
//! [`Clock::Runtime`] is tokio's timer: the simulator's unit tests pause tokio time, which only
//! tokio's timer follows.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use tokio::time::Instant;

/// The grid precise deadlines are rounded up to.
pub const QUANTUM: Duration = Duration::from_micros(250);

/// How long before a deadline a long precise wait moves from tokio's timer (which fires up to
/// ~2 ms late) to the clock thread.
pub const HANDOVER: Duration = Duration::from_millis(3);

/// Which timer paces tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Clock {
    /// Deadlines rounded up to 0.25 ms, fired by a dedicated clock thread (the default).
    #[default]
    Precise,
    /// tokio's millisecond timer: no extra thread; follows paused tokio time (unit tests).
    Runtime,
}

impl Clock {
    /// Completes at `deadline` (at once if it has passed).
    pub async fn sleep_until(self, deadline: Instant) {
        if deadline <= Instant::now() {
            return;
        }
        match self {
            Clock::Runtime => tokio::time::sleep_until(deadline).await,
            Clock::Precise => {
                if let Some(handover) = deadline.checked_sub(HANDOVER)
                    && handover > Instant::now()
                {
                    tokio::time::sleep_until(handover).await;
                }
                let timers = Timers::global();
                Sleep {
                    at: timers.round_up(deadline.into_std()),
                    timers,
                    registered: None,
                }
                .await
            }
        }
    }
}

/// Deadlines waiting, earliest first, and the thread that fires them.
struct Timers {
    heap: Mutex<BinaryHeap<Reverse<Deadline>>>,
    /// Signalled when a deadline earlier than every other one arrives.
    earlier: Condvar,
    /// The grid's origin.
    origin: std::time::Instant,
}

struct Deadline {
    at: std::time::Instant,
    waker: Waker,
}

impl PartialEq for Deadline {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at
    }
}

impl Eq for Deadline {}

impl PartialOrd for Deadline {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Deadline {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.at.cmp(&other.at)
    }
}

impl Timers {
    fn global() -> &'static Timers {
        static TIMERS: OnceLock<&'static Timers> = OnceLock::new();
        TIMERS.get_or_init(|| {
            let timers: &'static Timers = Box::leak(Box::new(Timers {
                heap: Mutex::new(BinaryHeap::new()),
                earlier: Condvar::new(),
                origin: std::time::Instant::now(),
            }));
            std::thread::Builder::new()
                .name("tether-sim-clock".into())
                .spawn(|| timers.fire())
                .expect("cannot start the simulator's clock thread");
            timers
        })
    }

    fn round_up(&self, at: std::time::Instant) -> std::time::Instant {
        let quantum = QUANTUM.as_nanos();
        let since = at.saturating_duration_since(self.origin).as_nanos();
        let rounded = since.div_ceil(quantum) * quantum;
        self.origin + Duration::from_nanos(u64::try_from(rounded).unwrap_or(u64::MAX))
    }

    /// The clock thread: wakes every task whose deadline has come, then sleeps until the next.
    fn fire(&self) {
        let mut due = Vec::new();
        let mut heap = self.heap.lock();
        loop {
            let now = std::time::Instant::now();
            while let Some(Reverse(first)) = heap.peek()
                && first.at <= now
            {
                due.extend(heap.pop().map(|Reverse(deadline)| deadline.waker));
            }
            if !due.is_empty() {
                // Wake outside the lock: a woken task may register its next deadline at once.
                drop(heap);
                due.drain(..).for_each(Waker::wake);
                heap = self.heap.lock();
                continue;
            }
            match heap.peek() {
                Some(Reverse(first)) => {
                    let wait = first.at - now;
                    self.earlier.wait_for(&mut heap, wait);
                }
                None => self.earlier.wait(&mut heap),
            }
        }
    }
}

/// A deadline on the precise clock.
struct Sleep {
    at: std::time::Instant,
    timers: &'static Timers,
    /// The waker already registered for `at`, if any.
    registered: Option<Waker>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if std::time::Instant::now() >= self.at {
            return Poll::Ready(());
        }
        // Polled again before its time (woken by something else): the deadline is in the heap
        // already, unless the task's waker has changed.
        if self
            .registered
            .as_ref()
            .is_some_and(|waker| waker.will_wake(cx.waker()))
        {
            return Poll::Pending;
        }
        let mut heap = self.timers.heap.lock();
        let earliest = heap.peek().is_none_or(|Reverse(first)| self.at < first.at);
        heap.push(Reverse(Deadline {
            at: self.at,
            waker: cx.waker().clone(),
        }));
        drop(heap);
        if earliest {
            self.timers.earlier.notify_one();
        }
        self.registered = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lost wake-up would hang: every wait here is bounded.
    async fn bounded(sleep: impl Future<Output = ()>) {
        tokio::time::timeout(Duration::from_secs(10), sleep)
            .await
            .expect("a precise sleep never woke");
    }

    #[tokio::test]
    async fn precise_sleeps_wake_short_and_long_deadlines_and_past_ones_at_once() {
        // Under the hand-over (clock thread only), across it, and well past it.
        for micros in [300, 1_000, 2_700, 4_100, 12_000] {
            let deadline = Instant::now() + Duration::from_micros(micros);
            bounded(Clock::Precise.sleep_until(deadline)).await;
            assert!(Instant::now() >= deadline);
        }
        let start = Instant::now();
        bounded(Clock::Precise.sleep_until(start - Duration::from_millis(1))).await;
        // At once, with no timer: loose, so a busy machine passes.
        assert!(start.elapsed() < Duration::from_millis(100));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_sleepers_out_of_order_all_wake() {
        let start = Instant::now();
        let sleepers: Vec<_> = (0..200u64)
            .map(|i| {
                // Deadlines out of order, several per grid step, some past the hand-over.
                let deadline = start + Duration::from_micros(500 + (i * 7_919) % 20_000);
                tokio::spawn(bounded(Clock::Precise.sleep_until(deadline)))
            })
            .collect();
        for sleeper in sleepers {
            sleeper.await.expect("a sleeper panicked");
        }
    }

    #[test]
    fn deadlines_round_up_to_the_grid() {
        let timers = Timers {
            heap: Mutex::new(BinaryHeap::new()),
            earlier: Condvar::new(),
            origin: std::time::Instant::now(),
        };
        let at = timers.origin + Duration::from_micros(1_001);
        assert_eq!(
            timers.round_up(at),
            timers.origin + Duration::from_micros(1_250)
        );
        let on_grid = timers.origin + Duration::from_micros(500);
        assert_eq!(timers.round_up(on_grid), on_grid);
    }
}
