//! One replica's prompt cache: prefixes by their hash, each holding the tokens it adds beyond
//! the shorter prefix written before it, least recently used first out once the replica holds
//! more than its capacity in tokens, and gone once idle past its time to live.

use std::time::Duration;

use lru::LruCache;
use tokio::time::Instant;

/// A cached prefix.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Tokens it holds (its length minus the prefix written before it).
    tokens: u64,
    /// Idle lifetime: it expires this long after its last use.
    ttl: Duration,
    last_used: Instant,
}

impl Entry {
    fn expired(&self, now: Instant) -> bool {
        now.duration_since(self.last_used) > self.ttl
    }
}

/// What a write or a lookup evicted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// Entries that had to leave for room.
    pub capacity: u64,
    /// Entries found past their time to live.
    pub expired: u64,
}

/// The prefixes one replica holds.
#[derive(Debug)]
pub struct ReplicaCache {
    entries: LruCache<u64, Entry>,
    held_tokens: u64,
    capacity_tokens: u64,
}

impl ReplicaCache {
    pub fn new(capacity_tokens: u64) -> Self {
        ReplicaCache {
            entries: LruCache::unbounded(),
            held_tokens: 0,
            capacity_tokens,
        }
    }

    /// Tokens held now.
    pub fn held_tokens(&self) -> u64 {
        self.held_tokens
    }

    pub fn capacity_tokens(&self) -> u64 {
        self.capacity_tokens
    }

    /// Whether prefix `hash` is held and alive at `now` (without using it); an expired one is
    /// dropped.
    pub fn contains(&mut self, hash: u64, now: Instant, evicted: &mut Evicted) -> bool {
        match self.entries.peek(&hash) {
            Some(entry) if entry.expired(now) => {
                self.remove(hash);
                evicted.expired += 1;
                false
            }
            Some(_) => true,
            None => false,
        }
    }

    /// Marks prefix `hash` used at `now` (it moves to the most recently used end, and its
    /// time to live starts again, at least `ttl` from now).
    pub fn touch(&mut self, hash: u64, now: Instant, ttl: Duration) {
        if let Some(entry) = self.entries.get_mut(&hash) {
            entry.last_used = now;
            entry.ttl = entry.ttl.max(ttl);
        }
    }

    /// Holds prefix `hash`, `tokens` long beyond the prefix before it, for `ttl` of idleness;
    /// then makes room within the capacity, least recently used first.
    pub fn insert(&mut self, hash: u64, tokens: u64, ttl: Duration, now: Instant) -> Evicted {
        let mut evicted = Evicted::default();
        if let Some(old) = self.entries.put(
            hash,
            Entry {
                tokens,
                ttl,
                last_used: now,
            },
        ) {
            self.held_tokens -= old.tokens;
        }
        self.held_tokens += tokens;
        while self.held_tokens > self.capacity_tokens {
            let Some((_, oldest)) = self.entries.pop_lru() else {
                break;
            };
            self.held_tokens -= oldest.tokens;
            if oldest.expired(now) {
                evicted.expired += 1;
            } else {
                evicted.capacity += 1;
            }
        }
        evicted
    }

    /// A new capacity; evicts what no longer fits.
    pub fn set_capacity(&mut self, capacity_tokens: u64, now: Instant) -> Evicted {
        self.capacity_tokens = capacity_tokens;
        let mut evicted = Evicted::default();
        while self.held_tokens > self.capacity_tokens {
            let Some((_, oldest)) = self.entries.pop_lru() else {
                break;
            };
            self.held_tokens -= oldest.tokens;
            if oldest.expired(now) {
                evicted.expired += 1;
            } else {
                evicted.capacity += 1;
            }
        }
        evicted
    }

    fn remove(&mut self, hash: u64) {
        if let Some(entry) = self.entries.pop(&hash) {
            self.held_tokens -= entry.tokens;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[tokio::test(start_paused = true)]
    async fn the_least_recently_used_leave_first_and_idle_ones_expire() {
        let mut cache = ReplicaCache::new(300);
        let now = Instant::now();
        let mut evicted = Evicted::default();
        cache.insert(1, 100, MINUTE, now);
        cache.insert(2, 100, MINUTE, now);
        cache.insert(3, 100, 10 * MINUTE, now);
        cache.touch(1, now, MINUTE);
        assert_eq!(cache.insert(4, 100, MINUTE, now).capacity, 1);
        assert!(
            !cache.contains(2, now, &mut evicted),
            "2 was the least recently used"
        );
        assert!(cache.contains(1, now, &mut evicted));
        assert_eq!(cache.held_tokens(), 300);

        tokio::time::advance(2 * MINUTE).await;
        let later = Instant::now();
        assert!(
            !cache.contains(1, later, &mut evicted),
            "idle past its minute"
        );
        assert!(
            cache.contains(3, later, &mut evicted),
            "ten minutes to live"
        );
        assert_eq!(evicted.expired, 1);
        assert_eq!(cache.held_tokens(), 200);
        assert_eq!(
            cache.set_capacity(100, later),
            Evicted {
                capacity: 1,
                expired: 0
            }
        );
        assert!(cache.held_tokens() <= 100);
    }
}
