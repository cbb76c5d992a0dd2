//! One replica's prompt cache: prefixes by their hash, each holding the tokens it adds beyond
//! the prefix it extends, least recently used first out once the replica holds more than its
//! capacity in tokens, and gone once idle past its time to live.
//!
//! The prefixes form a tree (each written prefix extends the one a request hit, or the one it
//! wrote before), and a prefix is in use whenever a longer one is: a hit uses all of its
//! ancestors. Rather than touching every ancestor on each hit — work proportional to the whole
//! prompt — only the prefix hit is touched, and only *leaves* leave: a prefix with a longer one
//! cached stays as long as that one does, and when its last extension leaves it takes over that
//! one's last use and lifetime, the times it would have had if every hit had touched it. This is
//! how radix-tree prefix caches evict (SGLang's, for one), and it keeps a cached prefix's
//! ancestors cached, as the engine's memory does.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use tokio::time::Instant;

/// A cached prefix.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Tokens it holds (its length minus the prefix it extends).
    tokens: u64,
    /// Idle lifetime: it expires this long after its last use.
    ttl: Duration,
    last_used: Instant,
    /// The prefix it extends, if that one is cached.
    parent: Option<u64>,
    /// Cached prefixes that extend it directly.
    children: u32,
    /// Orders entries used at the same instant (later writes and touches are more recent).
    tick: u64,
}

impl Entry {
    fn expires(&self) -> Instant {
        self.last_used + self.ttl
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
    entries: HashMap<u64, Entry>,
    /// The leaves, least recently used first.
    by_use: BTreeSet<(Instant, u64, u64)>,
    /// The leaves, soonest to expire first.
    by_expiry: BTreeSet<(Instant, u64, u64)>,
    held_tokens: u64,
    capacity_tokens: u64,
    tick: u64,
}

impl ReplicaCache {
    pub fn new(capacity_tokens: u64) -> Self {
        ReplicaCache {
            entries: HashMap::new(),
            by_use: BTreeSet::new(),
            by_expiry: BTreeSet::new(),
            held_tokens: 0,
            capacity_tokens,
            tick: 0,
        }
    }

    /// Tokens held now.
    pub fn held_tokens(&self) -> u64 {
        self.held_tokens
    }

    pub fn capacity_tokens(&self) -> u64 {
        self.capacity_tokens
    }

    /// Whether prefix `hash` is held and alive at `now` (without using it); what expired by
    /// then is dropped first.
    pub fn contains(&mut self, hash: u64, now: Instant, evicted: &mut Evicted) -> bool {
        evicted.expired += self.drop_expired(now);
        self.entries.contains_key(&hash)
    }

    /// Marks prefix `hash` used at `now`, and with it every prefix it extends (its time to live
    /// starts again, at least `ttl` from now).
    pub fn touch(&mut self, hash: u64, now: Instant, ttl: Duration) {
        let tick = self.next_tick();
        let Some(entry) = self.entries.get(&hash).copied() else {
            return;
        };
        self.unlist(hash, &entry);
        let entry = Entry {
            last_used: now.max(entry.last_used),
            ttl: entry.ttl.max(ttl),
            tick,
            ..entry
        };
        self.entries.insert(hash, entry);
        self.list(hash, &entry);
    }

    /// Holds prefix `hash`, which extends `parent` by `tokens`, for `ttl` of idleness (a prefix
    /// already held is touched); then makes room within the capacity, least recently used first.
    pub fn insert(
        &mut self,
        hash: u64,
        parent: Option<u64>,
        tokens: u64,
        ttl: Duration,
        now: Instant,
    ) -> Evicted {
        let mut evicted = Evicted {
            expired: self.drop_expired(now),
            ..Evicted::default()
        };
        if self.entries.contains_key(&hash) {
            self.touch(hash, now, ttl);
        } else {
            // The prefix it extends is held (a leaf no more), or it starts a tree of its own.
            let parent = parent.filter(|parent| self.entries.contains_key(parent));
            if let Some(parent) = parent {
                let held = self.entries[&parent];
                if held.children == 0 {
                    self.unlist(parent, &held);
                }
                self.entries.get_mut(&parent).expect("held").children += 1;
            }
            let entry = Entry {
                tokens,
                ttl,
                last_used: now,
                parent,
                children: 0,
                tick: self.next_tick(),
            };
            self.entries.insert(hash, entry);
            self.list(hash, &entry);
            self.held_tokens += tokens;
        }
        evicted.capacity += self.make_room(now, &mut evicted.expired);
        evicted
    }

    /// A new capacity; evicts what no longer fits.
    pub fn set_capacity(&mut self, capacity_tokens: u64, now: Instant) -> Evicted {
        self.capacity_tokens = capacity_tokens;
        let mut evicted = Evicted::default();
        evicted.capacity = self.make_room(now, &mut evicted.expired);
        evicted
    }

    /// Evicts least recently used leaves while more than the capacity is held; counts those
    /// that had expired in `expired`, returns the others.
    fn make_room(&mut self, now: Instant, expired: &mut u64) -> u64 {
        let mut capacity = 0;
        while self.held_tokens > self.capacity_tokens {
            let Some(&(_, _, hash)) = self.by_use.first() else {
                break;
            };
            let entry = self.remove_leaf(hash);
            if entry.expires() < now {
                *expired += 1;
            } else {
                capacity += 1;
            }
        }
        capacity
    }

    /// Drops the leaves idle past their lifetime at `now` (and their ancestors left so).
    fn drop_expired(&mut self, now: Instant) -> u64 {
        let mut dropped = 0;
        while let Some(&(expires, _, hash)) = self.by_expiry.first()
            && expires < now
        {
            self.remove_leaf(hash);
            dropped += 1;
        }
        dropped
    }

    /// Removes leaf `hash`; its parent, a leaf if this was its last extension, takes over its
    /// last use and lifetime where they are later.
    fn remove_leaf(&mut self, hash: u64) -> Entry {
        let entry = self.entries.remove(&hash).expect("a listed leaf is held");
        self.unlist(hash, &entry);
        self.held_tokens -= entry.tokens;
        if let Some(parent_hash) = entry.parent
            && let Some(parent) = self.entries.get_mut(&parent_hash)
        {
            parent.children -= 1;
            if entry.last_used > parent.last_used
                || (entry.last_used == parent.last_used && entry.tick > parent.tick)
            {
                parent.last_used = entry.last_used;
                parent.tick = entry.tick;
            }
            parent.ttl = parent.ttl.max(entry.ttl);
            if parent.children == 0 {
                let parent = *parent;
                self.list(parent_hash, &parent);
            }
        }
        entry
    }

    /// Lists a leaf in the eviction orders (an entry with extensions is not listed).
    fn list(&mut self, hash: u64, entry: &Entry) {
        if entry.children == 0 {
            self.by_use.insert((entry.last_used, entry.tick, hash));
            self.by_expiry.insert((entry.expires(), entry.tick, hash));
        }
    }

    fn unlist(&mut self, hash: u64, entry: &Entry) {
        self.by_use.remove(&(entry.last_used, entry.tick, hash));
        self.by_expiry.remove(&(entry.expires(), entry.tick, hash));
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
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
        cache.insert(1, None, 100, MINUTE, now);
        cache.insert(2, None, 100, MINUTE, now);
        cache.insert(3, None, 100, 10 * MINUTE, now);
        cache.touch(1, now, MINUTE);
        assert_eq!(cache.insert(4, None, 100, MINUTE, now).capacity, 1);
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
        assert_eq!(evicted.expired, 2, "1 and 4, both idle past their minute");
        assert_eq!(cache.held_tokens(), 100);
        assert_eq!(
            cache.set_capacity(50, later),
            Evicted {
                capacity: 1,
                expired: 0
            }
        );
        assert_eq!(cache.held_tokens(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_hit_keeps_every_shorter_prefix_and_they_leave_after_it() {
        let mut cache = ReplicaCache::new(500);
        let mut evicted = Evicted::default();
        let start = Instant::now();
        // A conversation's prefixes 1 → 2 → 3, then another one, 9.
        cache.insert(1, None, 100, MINUTE, start);
        cache.insert(2, Some(1), 100, MINUTE, start);
        cache.insert(3, Some(2), 100, MINUTE, start);
        tokio::time::advance(Duration::from_secs(1)).await;
        cache.insert(9, None, 100, MINUTE, Instant::now());
        // Only the longest prefix is touched by a hit; its ancestors are in use with it.
        tokio::time::advance(Duration::from_secs(1)).await;
        cache.touch(3, Instant::now(), MINUTE);
        assert_eq!(
            cache
                .insert(4, Some(3), 200, MINUTE, Instant::now())
                .capacity,
            1,
            "the other conversation was used least recently"
        );
        assert!(!cache.contains(9, Instant::now(), &mut evicted));
        for prefix in [1, 2, 3, 4] {
            assert!(cache.contains(prefix, Instant::now(), &mut evicted));
        }
        // Idle past the minute, the whole chain expires, leaf first.
        tokio::time::advance(2 * MINUTE).await;
        assert!(!cache.contains(1, Instant::now(), &mut evicted));
        assert_eq!(evicted.expired, 4);
        assert_eq!(cache.held_tokens(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn an_ancestor_outlives_a_branch_that_used_it_last() {
        let mut cache = ReplicaCache::new(1000);
        let mut evicted = Evicted::default();
        let start = Instant::now();
        cache.insert(1, None, 100, MINUTE, start);
        cache.insert(2, Some(1), 100, MINUTE, start);
        tokio::time::advance(Duration::from_secs(50)).await;
        // A branch from 1, used later: 1 was used then too.
        cache.insert(5, Some(1), 100, MINUTE, Instant::now());
        tokio::time::advance(Duration::from_secs(20)).await;
        let now = Instant::now();
        assert!(!cache.contains(2, now, &mut evicted), "idle 70 s");
        assert!(cache.contains(5, now, &mut evicted));
        assert!(cache.contains(1, now, &mut evicted), "in use with 5");
        tokio::time::advance(Duration::from_secs(45)).await;
        assert!(!cache.contains(1, Instant::now(), &mut evicted));
        assert_eq!(cache.held_tokens(), 0);
    }
}
