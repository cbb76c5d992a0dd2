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
//!
//! The leaves are listed once, by last use, in one list per lifetime: leaves that share a
//! lifetime expire in the order they were last used, so the soonest to expire is the head of
//! one of these few lists (a prefix lives the profile's idle lifetime, 30 minutes, 12 or 24
//! hours), and one ordered set a leaf, not one by use and another by expiry, is all a write or
//! an eviction keeps in order.

use std::collections::BTreeSet;
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

/// A prefix to write: its hash, the prefix it extends (if held), the tokens it adds, its
/// lifetime.
#[derive(Debug, Clone, Copy)]
pub struct Write {
    pub hash: u64,
    pub parent: Option<u64>,
    pub tokens: u64,
    pub ttl: Duration,
}

/// What a write or a lookup evicted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// Entries that had to leave for room.
    pub capacity: u64,
    /// Entries found past their time to live.
    pub expired: u64,
}

/// The leaves of one lifetime, least recently used first — and so soonest to expire first.
#[derive(Debug)]
struct Leaves {
    ttl: Duration,
    /// Last use, the tick ordering uses at one instant, and the prefix.
    by_use: BTreeSet<(Instant, u64, u64)>,
}

/// The prefixes one replica holds.
#[derive(Debug)]
pub struct ReplicaCache {
    entries: foldhash::HashMap<u64, Entry>,
    /// The leaves, one list per lifetime (a handful).
    leaves: Vec<Leaves>,
    held_tokens: u64,
    capacity_tokens: u64,
    tick: u64,
}

impl ReplicaCache {
    pub fn new(capacity_tokens: u64) -> Self {
        ReplicaCache {
            entries: foldhash::HashMap::default(),
            leaves: Vec::new(),
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
        evicted.expired += self.drop_expired(now, None);
        self.entries.contains_key(&hash)
    }

    /// Marks prefix `hash` used at `now`, and with it every prefix it extends (its time to live
    /// starts again, at least `ttl` from now).
    pub fn touch(&mut self, hash: u64, now: Instant, ttl: Duration) {
        self.write(Some((hash, ttl)), &[], now);
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
        self.write(
            None,
            &[Write {
                hash,
                parent,
                tokens,
                ttl,
            }],
            now,
        )
    }

    /// One request's writes at `now`: marks `touched` used (the prefix it hit, as
    /// [`ReplicaCache::touch`]), then holds each of `writes` in order, making room after each
    /// (as [`ReplicaCache::insert`]; each usually extends the one before it).
    ///
    /// The same as touching and inserting one by one, without the eviction orders' churn: a
    /// request's chain of prefixes is listed once, at its end, not once for each prefix and
    /// unlisted again when the next one extends it. The prefix written last is the most
    /// recently used, so it would leave last: it is out of the orders only while it is.
    pub fn write(
        &mut self,
        touched: Option<(u64, Duration)>,
        writes: &[Write],
        now: Instant,
    ) -> Evicted {
        // The prefix touched or written last, out of the eviction orders until it is known
        // whether the next write extends it (then it is no leaf, and is never listed).
        let mut unlisted: Option<u64> = None;
        if let Some((hash, ttl)) = touched {
            unlisted = self.renew(hash, now, ttl);
        }
        let mut evicted = Evicted::default();
        for write in writes {
            evicted.expired += self.drop_expired(now, unlisted);
            if self.entries.contains_key(&write.hash) {
                self.list_pending(unlisted.take());
                unlisted = self.renew(write.hash, now, write.ttl);
            } else {
                // The prefix it extends is held (a leaf no more), or it starts a tree of its own.
                let parent = write
                    .parent
                    .filter(|parent| self.entries.contains_key(parent));
                match parent {
                    // The write before, or the hit: extended, so never listed.
                    Some(parent) if unlisted == Some(parent) => {}
                    Some(parent) => {
                        self.list_pending(unlisted);
                        let held = self.entries[&parent];
                        if held.children == 0 {
                            self.unlist(parent, &held);
                        }
                    }
                    None => self.list_pending(unlisted),
                }
                if let Some(parent) = parent {
                    self.entries.get_mut(&parent).expect("held").children += 1;
                }
                let entry = Entry {
                    tokens: write.tokens,
                    ttl: write.ttl,
                    last_used: now,
                    parent,
                    children: 0,
                    tick: self.next_tick(),
                };
                self.entries.insert(write.hash, entry);
                self.held_tokens += write.tokens;
                unlisted = Some(write.hash);
            }
            evicted.capacity += self.make_room(now, &mut evicted.expired, &mut unlisted);
        }
        self.list_pending(unlisted);
        evicted
    }

    /// Marks held prefix `hash` used at `now` for at least `ttl`, taking it out of the eviction
    /// orders; returns it to be listed again ([`ReplicaCache::list_pending`]).
    fn renew(&mut self, hash: u64, now: Instant, ttl: Duration) -> Option<u64> {
        let tick = self.next_tick();
        let entry = self.entries.get(&hash).copied()?;
        self.unlist(hash, &entry);
        let renewed = Entry {
            last_used: now.max(entry.last_used),
            ttl: entry.ttl.max(ttl),
            tick,
            ..entry
        };
        self.entries.insert(hash, renewed);
        Some(hash)
    }

    /// Lists `hash` again, taken out by [`ReplicaCache::renew`] or just written, if it is a leaf.
    fn list_pending(&mut self, hash: Option<u64>) {
        if let Some(hash) = hash {
            let entry = self.entries[&hash];
            self.list(hash, &entry);
        }
    }

    /// A new capacity; evicts what no longer fits.
    pub fn set_capacity(&mut self, capacity_tokens: u64, now: Instant) -> Evicted {
        self.capacity_tokens = capacity_tokens;
        let mut evicted = Evicted::default();
        evicted.capacity = self.make_room(now, &mut evicted.expired, &mut None);
        evicted
    }

    /// Evicts least recently used leaves while more than the capacity is held; counts those
    /// that had expired in `expired`, returns the others.
    /// `unlisted`, a write's newest prefix out of the orders, would be the last to leave.
    fn make_room(&mut self, now: Instant, expired: &mut u64, unlisted: &mut Option<u64>) -> u64 {
        let mut capacity = 0;
        // A parent the last eviction left a leaf with that leaf's last use: the least recently
        // used leaf now, so it is evicted next without being listed first.
        let mut next: Option<u64> = None;
        while self.held_tokens > self.capacity_tokens {
            let (hash, listed) = match next.take() {
                Some(hash) => (hash, false),
                None => match self.least_recently_used() {
                    Some(hash) => (hash, true),
                    None => match unlisted.take() {
                        Some(hash) => (hash, false),
                        None => break,
                    },
                },
            };
            let (entry, parent) = self.remove(hash, listed);
            if entry.expires() < now {
                *expired += 1;
            } else {
                capacity += 1;
            }
            if let Some(parent) = parent {
                let held = self.entries[&parent];
                if (held.last_used, held.tick) == (entry.last_used, entry.tick) {
                    next = Some(parent);
                } else {
                    self.list(parent, &held);
                }
            }
        }
        self.list_pending(next);
        capacity
    }

    /// Drops the leaves idle past their lifetime at `now` (and their ancestors left so), but for
    /// `unlisted`, which is out of the eviction orders while a write is under way.
    fn drop_expired(&mut self, now: Instant, unlisted: Option<u64>) -> u64 {
        let mut dropped = 0;
        while let Some((expires, hash)) = self.soonest_to_expire()
            && expires < now
        {
            let (_, parent) = self.remove(hash, true);
            self.list_pending(parent.filter(|parent| Some(*parent) != unlisted));
            dropped += 1;
        }
        dropped
    }

    /// Removes leaf `hash` (`listed` in the eviction orders, or a parent just left a leaf); its
    /// parent, a leaf if this was its last extension, takes over its last use and lifetime
    /// where they are later, and is returned then, not yet listed.
    fn remove(&mut self, hash: u64, listed: bool) -> (Entry, Option<u64>) {
        let entry = self.entries.remove(&hash).expect("a leaf is held");
        if listed {
            self.unlist(hash, &entry);
        }
        self.held_tokens -= entry.tokens;
        let mut leaf = None;
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
                leaf = Some(parent_hash);
            }
        }
        (entry, leaf)
    }

    /// Lists a leaf in the eviction orders (an entry with extensions is not listed).
    fn list(&mut self, hash: u64, entry: &Entry) {
        if entry.children > 0 {
            return;
        }
        let key = (entry.last_used, entry.tick, hash);
        match self
            .leaves
            .iter_mut()
            .find(|leaves| leaves.ttl == entry.ttl)
        {
            Some(leaves) => {
                leaves.by_use.insert(key);
            }
            None => self.leaves.push(Leaves {
                ttl: entry.ttl,
                by_use: BTreeSet::from([key]),
            }),
        }
    }

    fn unlist(&mut self, hash: u64, entry: &Entry) {
        if let Some(leaves) = self
            .leaves
            .iter_mut()
            .find(|leaves| leaves.ttl == entry.ttl)
        {
            leaves.by_use.remove(&(entry.last_used, entry.tick, hash));
        }
    }

    /// The leaf used least recently (the earliest last use; the lower tick at one instant).
    fn least_recently_used(&self) -> Option<u64> {
        self.leaves
            .iter()
            .filter_map(|leaves| leaves.by_use.first())
            .min()
            .map(|&(_, _, hash)| hash)
    }

    /// The leaf that expires first, and when (the lower tick first at one instant).
    fn soonest_to_expire(&self) -> Option<(Instant, u64)> {
        self.leaves
            .iter()
            .filter_map(|leaves| {
                let &(last_used, tick, hash) = leaves.by_use.first()?;
                Some((last_used + leaves.ttl, tick, hash))
            })
            .min()
            .map(|(expires, _, hash)| (expires, hash))
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Order = BTreeSet<(Instant, u64, u64)>;

    impl ReplicaCache {
        /// The leaves by use and by expiry, each as one ordered set.
        fn orders(&self) -> (Order, Order) {
            let mut orders = (Order::new(), Order::new());
            for leaves in &self.leaves {
                for &(last_used, tick, hash) in &leaves.by_use {
                    orders.0.insert((last_used, tick, hash));
                    orders.1.insert((last_used + leaves.ttl, tick, hash));
                }
            }
            orders
        }
    }

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

    /// A request's writes at once are the same as its touch and inserts one by one: the same
    /// prefixes held in the same orders, the same evicted, over many random requests at and
    /// past the capacity. (Run against the eviction before its writes were batched, when they
    /// were, with every entry's fields compared too: the same.)
    #[tokio::test(start_paused = true)]
    async fn writing_a_chain_at_once_is_writing_it_one_by_one() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(27);
        let (mut batched, mut single) = (ReplicaCache::new(15_000), ReplicaCache::new(15_000));
        let (mut evicted_batched, mut evicted_single) = (Evicted::default(), Evicted::default());
        let mut next_hash = 1u64;
        let mut tips: Vec<u64> = Vec::new();
        for _ in 0..3_000 {
            tokio::time::advance(Duration::from_millis(rng.random_range(0..6_000))).await;
            let now = Instant::now();
            // A continuation of a recent conversation, a branch, or a new one.
            let hit = if !tips.is_empty() && rng.random_bool(0.8) {
                tips[rng.random_range(0..tips.len())]
            } else {
                0
            };
            let held = single.contains(hit, now, &mut evicted_single);
            assert_eq!(batched.contains(hit, now, &mut evicted_batched), held);
            let hit = held.then_some(hit);
            assert_eq!(batched.held_tokens(), single.held_tokens());
            assert_eq!(batched.entries.len(), single.entries.len());
            assert_eq!(batched.orders(), single.orders());
            assert_eq!(
                evicted_batched.capacity + evicted_batched.expired,
                evicted_single.capacity + evicted_single.expired
            );
            let ttl = if rng.random_bool(0.9) {
                MINUTE
            } else {
                5 * MINUTE
            };
            let mut writes = Vec::new();
            let mut parent = hit;
            for _ in 0..rng.random_range(0..6) {
                let hash = next_hash;
                next_hash += 1;
                writes.push(Write {
                    hash,
                    parent,
                    tokens: rng.random_range(1..400),
                    ttl,
                });
                parent = Some(hash);
            }
            if let Some(tip) = parent {
                tips.push(tip);
            }
            let touched = hit.map(|hit| (hit, ttl));
            let more = batched.write(touched, &writes, now);
            evicted_batched.capacity += more.capacity;
            evicted_batched.expired += more.expired;
            if let Some(hit) = hit {
                single.touch(hit, now, ttl);
            }
            for write in &writes {
                let more = single.insert(write.hash, write.parent, write.tokens, write.ttl, now);
                evicted_single.capacity += more.capacity;
                evicted_single.expired += more.expired;
            }
        }
        assert!(evicted_single.capacity > 100, "{evicted_single:?}");
        assert!(evicted_single.expired > 100, "{evicted_single:?}");
    }
}
