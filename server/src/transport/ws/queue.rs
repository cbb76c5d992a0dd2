//! The requests waiting on one connection: each lane's FIFO queue, and one count across the
//! lanes held to `--max-queued-requests`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tether_protocol::ResponseCreate;
use tokio::sync::mpsc;

/// The count of requests waiting across a connection's lanes.
#[derive(Debug, Clone)]
pub struct Waiting {
    count: Arc<AtomicUsize>,
    max: usize,
}

impl Waiting {
    pub fn new(max: usize) -> Self {
        Waiting {
            count: Arc::default(),
            max,
        }
    }

    /// The most requests that may wait.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Requests waiting now.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// A lane's queue: its sending end (for the reader) and its receiving end (for its worker).
    pub fn lane(&self) -> (Queue, Jobs) {
        let (sender, receiver) = mpsc::channel(self.max);
        (
            Queue {
                sender,
                waiting: self.clone(),
            },
            Jobs {
                receiver,
                waiting: self.clone(),
            },
        )
    }
}

/// Where the reader queues a lane's requests. They wait boxed: the channel keeps its slots in
/// blocks of 32 for the connection's life, and a `ResponseCreate` inline made each block of an
/// idle lane ~26 KiB.
#[derive(Debug)]
pub struct Queue {
    sender: mpsc::Sender<Box<ResponseCreate>>,
    waiting: Waiting,
}

impl Queue {
    /// Queues `request`, or hands it back when the connection already has as many waiting as it
    /// may.
    pub fn push(&self, request: ResponseCreate) -> Result<(), Box<ResponseCreate>> {
        let count = &self.waiting.count;
        let max = self.waiting.max;
        if count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .is_err()
        {
            return Err(Box::new(request));
        }
        self.sender.try_send(Box::new(request)).map_err(|error| {
            count.fetch_sub(1, Ordering::AcqRel);
            error.into_inner()
        })
    }
}

/// Where a lane's worker takes its requests, in order.
#[derive(Debug)]
pub struct Jobs {
    receiver: mpsc::Receiver<Box<ResponseCreate>>,
    waiting: Waiting,
}

impl Jobs {
    /// The next request; `None` once the reader is gone and nothing waits.
    pub async fn recv(&mut self) -> Option<ResponseCreate> {
        let request = self.receiver.recv().await?;
        self.waiting.count.fetch_sub(1, Ordering::AcqRel);
        Some(*request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_count_is_across_lanes() {
        let waiting = Waiting::new(2);
        let (a, mut a_jobs) = waiting.lane();
        let (b, _b_jobs) = waiting.lane();
        let request = || ResponseCreate::new("m", "hi");
        a.push(request()).unwrap();
        b.push(request()).unwrap();
        assert!(
            a.push(request()).is_err(),
            "two wait on the connection already"
        );
        a_jobs.recv().await.unwrap();
        b.push(request()).unwrap();
    }
}
