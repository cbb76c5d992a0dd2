//! A lock-free latency histogram shared by every client task: log-linear buckets (64 per
//! power of two, so a reported percentile is within 1.6% of the true value), exact count, sum
//! and maximum. Recording is three relaxed atomic adds, so thousands of clients can share one
//! without a lock and without keeping every sample.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Sub-buckets per power of two.
const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;
/// Values are microseconds; 2^40 µs is ~12 days.
const OCTAVES: u64 = 40;

/// A histogram of durations, in microseconds.
pub struct Histogram {
    buckets: Box<[AtomicU64]>,
    count: AtomicU64,
    sum_us: AtomicU64,
    min_us: AtomicU64,
    max_us: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: (0..(OCTAVES + 1) * SUB)
                .map(|_| AtomicU64::new(0))
                .collect(),
            count: AtomicU64::new(0),
            sum_us: AtomicU64::new(0),
            min_us: AtomicU64::new(u64::MAX),
            max_us: AtomicU64::new(0),
        }
    }
}

/// Bucket of value `v`: values below `SUB` exactly, then `SUB` buckets per power of two.
fn bucket_of(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros() as u64; // >= SUB_BITS
    let shift = msb - SUB_BITS as u64;
    let mantissa = (v >> shift) - SUB; // 0..SUB
    let octave = (shift + 1).min(OCTAVES);
    (octave * SUB + mantissa) as usize
}

/// The largest value bucket `b` holds.
fn bucket_upper(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let octave = b / SUB;
    let mantissa = b % SUB;
    let shift = octave - 1;
    ((SUB + mantissa + 1) << shift) - 1
}

impl Histogram {
    pub fn record(&self, value: Duration) {
        let us = value.as_micros().min(u64::MAX as u128) as u64;
        self.buckets[bucket_of(us)].fetch_add(1, Relaxed);
        self.count.fetch_add(1, Relaxed);
        self.sum_us.fetch_add(us, Relaxed);
        self.min_us.fetch_min(us, Relaxed);
        self.max_us.fetch_max(us, Relaxed);
    }

    pub fn count(&self) -> u64 {
        self.count.load(Relaxed)
    }

    /// The value at quantile `q` (0..=1): the upper bound of the bucket holding it, capped at
    /// the exact maximum.
    pub fn quantile_us(&self, q: f64) -> u64 {
        let count = self.count();
        if count == 0 {
            return 0;
        }
        let rank = ((q * count as f64).ceil() as u64).clamp(1, count);
        let mut seen = 0;
        for (b, bucket) in self.buckets.iter().enumerate() {
            seen += bucket.load(Relaxed);
            if seen >= rank {
                return bucket_upper(b).min(self.max_us.load(Relaxed));
            }
        }
        self.max_us.load(Relaxed)
    }

    /// min, p50, p90, p99, max and mean, in milliseconds.
    pub fn summary(&self) -> Summary {
        let count = self.count();
        let ms = |us: u64| us as f64 / 1000.0;
        Summary {
            count,
            mean_ms: if count == 0 {
                0.0
            } else {
                self.sum_us.load(Relaxed) as f64 / count as f64 / 1000.0
            },
            min_ms: if count == 0 {
                0.0
            } else {
                ms(self.min_us.load(Relaxed))
            },
            p50_ms: ms(self.quantile_us(0.50)),
            p90_ms: ms(self.quantile_us(0.90)),
            p99_ms: ms(self.quantile_us(0.99)),
            max_ms: ms(self.max_us.load(Relaxed)),
        }
    }
}

/// A distribution as the report shows it.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub count: u64,
    pub mean_ms: f64,
    pub min_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_bound_their_values() {
        for v in (0..5000).chain([65_535, 65_536, 1_000_000, 123_456_789]) {
            let b = bucket_of(v);
            assert!(bucket_upper(b) >= v, "{v} in bucket {b}");
            assert!(b == 0 || bucket_upper(b - 1) < v, "{v} in bucket {b}");
            assert!(bucket_upper(b) as f64 <= v as f64 * 1.016 + 1.0);
        }
    }

    #[test]
    fn quantiles_are_close() {
        let h = Histogram::default();
        for us in 1..=10_000u64 {
            h.record(Duration::from_micros(us));
        }
        let s = h.summary();
        assert_eq!(s.count, 10_000);
        assert!((s.p50_ms - 5.0).abs() < 0.1, "{s:?}");
        assert!((s.p99_ms - 9.9).abs() < 0.2, "{s:?}");
        assert_eq!(s.max_ms, 10.0);
        assert_eq!(s.min_ms, 0.001);
        assert!((s.mean_ms - 5.0005).abs() < 0.001);
    }
}
