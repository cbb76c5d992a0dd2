//! The link model, with no I/O: what a link is ([`LinkConfig`], a [`Direction`] each way) and
//! when the bytes handed to one direction reach the other end ([`Pacer`]).
//!
//! Bytes are cut into segments of at most [`SEGMENT_BYTES`]; a segment starts serialising when
//! it has arrived and the direction is free (the "link free at" clock), takes `bytes /
//! bandwidth` to serialise, and is delivered the one-way delay (RTT / 2) after its last byte
//! was serialised. Bandwidth counts payload bytes (TCP/IP headers are not modelled).
//!
//! A [`Budget`] bounds the serialisation time one scope (an HTTP request, a connection) may
//! spend: past it the bandwidth limit is lifted and only the delay remains, so no client can
//! make the link hold its bytes for ever by asking for a very slow one.

use std::time::Duration;

use tokio::time::Instant;

/// The largest piece of data the link serialises as one unit (a TCP segment on Ethernet).
pub const SEGMENT_BYTES: usize = 1448;
/// The most read from a socket at once.
pub(crate) const READ_BYTES: usize = 64 * 1024;

/// One direction of a link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Direction {
    /// Propagation delay (RTT / 2).
    pub delay: Duration,
    /// Bandwidth in bytes per second; `None` is unlimited.
    pub bytes_per_second: Option<f64>,
    /// The most bytes held in this direction (queued plus in flight).
    pub buffer_bytes: usize,
}

impl Direction {
    /// A direction with no delay and no bandwidth limit: bytes pass as they come.
    pub fn unlimited() -> Self {
        Direction {
            delay: Duration::ZERO,
            bytes_per_second: None,
            buffer_bytes: default_buffer(Duration::ZERO, None),
        }
    }

    /// The time `bytes` take to serialise.
    pub fn serialisation(&self, bytes: usize) -> Duration {
        match self.bytes_per_second {
            Some(rate) => Duration::from_secs_f64(bytes as f64 / rate),
            None => Duration::ZERO,
        }
    }
}

/// Both directions of a link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkConfig {
    /// Client → server.
    pub up: Direction,
    /// Server → client.
    pub down: Direction,
}

impl LinkConfig {
    /// A link with round-trip time `rtt` (half each way) and bandwidths in Mbit/s (0 or
    /// `None`: unlimited); each direction holds at most `buffer_bytes`, by default
    /// [`default_buffer`] (enough for the link to stay busy).
    pub fn new(
        rtt: Duration,
        up_mbit: Option<f64>,
        down_mbit: Option<f64>,
        buffer_bytes: Option<usize>,
    ) -> Self {
        let direction = |mbit: Option<f64>| {
            let delay = rtt / 2;
            let bytes_per_second = mbit.filter(|m| *m > 0.0).map(|m| m * 1_000_000.0 / 8.0);
            Direction {
                delay,
                bytes_per_second,
                buffer_bytes: buffer_bytes
                    .unwrap_or_else(|| default_buffer(delay, bytes_per_second))
                    .max(4 * SEGMENT_BYTES),
            }
        };
        LinkConfig {
            up: direction(up_mbit),
            down: direction(down_mbit),
        }
    }
}

/// The default buffer of a direction: 4 MiB, or twice the bytes in flight over the delay
/// (the bandwidth-delay product) plus four reads, if that is more — so the link never stops
/// taking bytes while it could still be sending.
pub fn default_buffer(delay: Duration, bytes_per_second: Option<f64>) -> usize {
    let in_flight = bytes_per_second.map_or(0.0, |rate| rate * delay.as_secs_f64());
    (4 << 20).max(2 * in_flight as usize + 4 * READ_BYTES)
}

/// How much one read takes from the socket: at most a quarter of the buffer, so reading goes
/// on while earlier bytes are still in flight.
pub(crate) fn read_size(buffer_bytes: usize) -> usize {
    READ_BYTES.min(buffer_bytes / 4).max(1)
}

/// The serialisation time one scope may spend; past it the bandwidth limit is lifted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    pub limit: Duration,
    pub spent: Duration,
}

impl Budget {
    pub fn new(limit: Duration) -> Self {
        Budget {
            limit,
            spent: Duration::ZERO,
        }
    }

    /// Whether the budget is spent (the bandwidth limit no longer applies).
    pub fn exhausted(&self) -> bool {
        self.spent >= self.limit
    }

    /// Charges `time` of serialisation if the budget allows it; otherwise none is charged and
    /// the bytes pass at the delay only.
    fn charge(&mut self, time: Duration) -> Duration {
        if self.exhausted() {
            return Duration::ZERO;
        }
        self.spent += time;
        time
    }
}

/// One direction's clock: when the link is next free.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pacer {
    free_at: Option<Instant>,
}

impl Pacer {
    /// Schedules `bytes` that reached the link at `arrived`: for every segment, in order,
    /// `each(segment_length, due)` with the instant it reaches the other end. Returns the due
    /// instant of the last byte (`arrived + delay` for no bytes: a FIN).
    pub fn schedule(
        &mut self,
        arrived: Instant,
        bytes: usize,
        link: &Direction,
        budget: &mut Budget,
        mut each: impl FnMut(usize, Instant),
    ) -> Instant {
        let mut last = self.free_at.map_or(arrived, |free| free.max(arrived)) + link.delay;
        let mut left = bytes;
        while left > 0 {
            let piece = left.min(SEGMENT_BYTES);
            left -= piece;
            let start = self.free_at.map_or(arrived, |free| free.max(arrived));
            let free = start + budget.charge(link.serialisation(piece));
            self.free_at = Some(free);
            last = free + link.delay;
            each(piece, last);
        }
        last
    }

    /// When `bytes` handed to the link at `now` would reach the other end, without scheduling
    /// them.
    pub fn predict(
        &self,
        now: Instant,
        bytes: usize,
        link: &Direction,
        budget: &Budget,
    ) -> Instant {
        let start = self.free_at.map_or(now, |free| free.max(now));
        let serialise = if budget.exhausted() {
            Duration::ZERO
        } else {
            link.serialisation(bytes)
        };
        start + serialise + link.delay
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mbit(rtt_ms: u64, mbit: f64) -> Direction {
        LinkConfig::new(Duration::from_millis(rtt_ms), Some(mbit), None, None).up
    }

    #[test]
    fn segments_queue_behind_each_other_and_pay_the_delay_once_each() {
        let start = Instant::now();
        let link = mbit(40, 8.0); // 1,000,000 bytes/s: a segment takes 1.448 ms
        let mut pacer = Pacer::default();
        let mut budget = Budget::new(Duration::from_secs(60));
        let mut dues = Vec::new();
        let last = pacer.schedule(start, 3 * SEGMENT_BYTES, &link, &mut budget, |n, due| {
            dues.push((n, due - start))
        });
        let segment = Duration::from_micros(1448);
        let delay = Duration::from_millis(20);
        assert_eq!(
            dues,
            [
                (SEGMENT_BYTES, segment + delay),
                (SEGMENT_BYTES, 2 * segment + delay),
                (SEGMENT_BYTES, 3 * segment + delay),
            ]
        );
        assert_eq!(last - start, 3 * segment + delay);
        // Bytes arriving while the link is busy wait for it; after it is idle they do not.
        let busy = pacer.predict(start + segment, 1000, &link, &budget);
        assert_eq!(busy - start, 3 * segment + Duration::from_millis(1) + delay);
        let idle = pacer.predict(start + Duration::from_secs(1), 1000, &link, &budget);
        assert_eq!(idle - start, Duration::from_millis(1021));
    }

    #[test]
    fn a_spent_budget_lifts_the_bandwidth_but_keeps_the_delay() {
        let start = Instant::now();
        let link = mbit(10, 8.0);
        let mut pacer = Pacer::default();
        let mut budget = Budget::new(Duration::from_millis(2));
        // Two segments: the first is charged (1.448 ms), the second too (the budget was not yet
        // spent when it started), the third passes free.
        let last = pacer.schedule(start, 3 * SEGMENT_BYTES, &link, &mut budget, |_, _| {});
        assert!(budget.exhausted());
        assert_eq!(last - start, Duration::from_micros(2 * 1448) + link.delay);
        let later = pacer.predict(last, 1_000_000, &link, &budget);
        assert_eq!(later - last, link.delay, "no serialisation once exhausted");
    }

    #[test]
    fn buffers_cover_the_bandwidth_delay_product() {
        assert_eq!(default_buffer(Duration::from_millis(20), None), 4 << 20);
        // 1.25 GB/s × 0.5 s = 625 MB in flight: twice that plus four reads.
        let big = default_buffer(Duration::from_millis(500), Some(1.25e9));
        assert_eq!(big, 2 * 625_000_000 + 4 * READ_BYTES);
        let tiny = LinkConfig::new(Duration::ZERO, None, None, Some(10));
        assert_eq!(tiny.up.buffer_bytes, 4 * SEGMENT_BYTES);
        assert_eq!(read_size(4 * SEGMENT_BYTES), SEGMENT_BYTES);
    }
}
