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
//!
//! The prefixes live in one vector, in the order they were written (a freed place is taken by
//! the next write), and a prefix names its parent by its place there; a map finds a prefix's
//! place by its hash. A request writes its chain of prefixes one after another, so a prefix's
//! parent is usually beside it, and an eviction — which walks a chain from its leaf up, a
//! parent after each child — reads neighbouring memory. When prefixes were found by hash alone,
//! every parent was a cache miss in a table of ~30k 80-byte entries, and those misses were
//! most of the cache's 14 % of the server's CPU under load (docs/benchmarks-history.md,
//! "Server CPU per turn").

use std::collections::BTreeSet;
use std::time::Duration;

use tokio::time::Instant;

/// A cached prefix.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The prefix's hash (its key in the index).
    hash: u64,
    /// Tokens it holds (its length minus the prefix it extends).
    tokens: u64,
    /// Idle lifetime: it expires this long after its last use.
    ttl: Duration,
    last_used: Instant,
    /// The place of the prefix it extends, if that one is cached.
    parent: Option<u32>,
    /// Cached prefixes that extend it directly.
    children: u32,
    /// Orders entries used at the same instant (later writes and touches are more recent). No
    /// two held entries have the same tick, so it decides every tie of last use.
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
    /// Last use, the tick ordering uses at one instant, and the prefix's place.
    by_use: BTreeSet<(Instant, u64, u32)>,
}

/// The prefixes one replica holds.
#[derive(Debug)]
pub struct ReplicaCache {
    /// Each held prefix's place in `slots`, by its hash.
    index: foldhash::HashMap<u64, u32>,
    /// The prefixes, at their places; a place in `free` holds none.
    slots: Vec<Entry>,
    free: Vec<u32>,
    /// The leaves, one list per lifetime (a handful).
    leaves: Vec<Leaves>,
    held_tokens: u64,
    capacity_tokens: u64,
    tick: u64,
}

impl ReplicaCache {
    pub fn new(capacity_tokens: u64) -> Self {
        ReplicaCache {
            index: foldhash::HashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
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
        self.index.contains_key(&hash)
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
        // The place of the prefix touched or written last, out of the eviction orders until it
        // is known whether the next write extends it (then it is no leaf, and is never listed).
        let mut unlisted: Option<u32> = None;
        if let Some((hash, ttl)) = touched
            && let Some(&place) = self.index.get(&hash)
        {
            self.renew(place, now, ttl);
            unlisted = Some(place);
        }
        let mut evicted = Evicted::default();
        for write in writes {
            evicted.expired += self.drop_expired(now, unlisted);
            if let Some(&place) = self.index.get(&write.hash) {
                self.list_pending(unlisted.take());
                self.renew(place, now, write.ttl);
                unlisted = Some(place);
            } else {
                // The prefix it extends is held (a leaf no more), or it starts a tree of its own.
                let parent = write
                    .parent
                    .and_then(|parent| self.index.get(&parent).copied());
                match parent {
                    // The write before, or the hit: extended, so never listed.
                    Some(parent) if unlisted == Some(parent) => {}
                    Some(parent) => {
                        self.list_pending(unlisted);
                        let held = self.slots[parent as usize];
                        if held.children == 0 {
                            self.unlist(parent, &held);
                        }
                    }
                    None => self.list_pending(unlisted),
                }
                if let Some(parent) = parent {
                    self.slots[parent as usize].children += 1;
                }
                let entry = Entry {
                    hash: write.hash,
                    tokens: write.tokens,
                    ttl: write.ttl,
                    last_used: now,
                    parent,
                    children: 0,
                    tick: self.next_tick(),
                };
                let place = self.place(entry);
                self.index.insert(write.hash, place);
                self.held_tokens += write.tokens;
                unlisted = Some(place);
            }
            evicted.capacity += self.make_room(now, &mut evicted.expired, &mut unlisted);
        }
        self.list_pending(unlisted);
        evicted
    }

    /// Puts `entry` in a free place, or a new one at the end.
    fn place(&mut self, entry: Entry) -> u32 {
        match self.free.pop() {
            Some(place) => {
                self.slots[place as usize] = entry;
                place
            }
            None => {
                let place = u32::try_from(self.slots.len()).expect("fewer than 2^32 prefixes");
                self.slots.push(entry);
                place
            }
        }
    }

    /// Marks the prefix at `place` used at `now` for at least `ttl`, taking it out of the
    /// eviction orders; it is to be listed again ([`ReplicaCache::list_pending`]).
    fn renew(&mut self, place: u32, now: Instant, ttl: Duration) {
        let tick = self.next_tick();
        let entry = self.slots[place as usize];
        self.unlist(place, &entry);
        self.slots[place as usize] = Entry {
            last_used: now.max(entry.last_used),
            ttl: entry.ttl.max(ttl),
            tick,
            ..entry
        };
    }

    /// Lists the prefix at `place` again, taken out by [`ReplicaCache::renew`] or just written,
    /// if it is a leaf.
    fn list_pending(&mut self, place: Option<u32>) {
        if let Some(place) = place {
            let entry = self.slots[place as usize];
            self.list(place, &entry);
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
    fn make_room(&mut self, now: Instant, expired: &mut u64, unlisted: &mut Option<u32>) -> u64 {
        let mut capacity = 0;
        // A parent the last eviction left a leaf with that leaf's last use: the least recently
        // used leaf now, so it is evicted next without being listed first.
        let mut next: Option<u32> = None;
        while self.held_tokens > self.capacity_tokens {
            let (place, listed) = match next.take() {
                Some(place) => (place, false),
                None => match self.least_recently_used() {
                    Some(place) => (place, true),
                    None => match unlisted.take() {
                        Some(place) => (place, false),
                        None => break,
                    },
                },
            };
            let (entry, parent) = self.remove(place, listed);
            if entry.expires() < now {
                *expired += 1;
            } else {
                capacity += 1;
            }
            if let Some(parent) = parent {
                let held = self.slots[parent as usize];
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
    fn drop_expired(&mut self, now: Instant, unlisted: Option<u32>) -> u64 {
        let mut dropped = 0;
        while let Some((expires, place)) = self.soonest_to_expire()
            && expires < now
        {
            let (_, parent) = self.remove(place, true);
            self.list_pending(parent.filter(|parent| Some(*parent) != unlisted));
            dropped += 1;
        }
        dropped
    }

    /// Removes the leaf at `place` (`listed` in the eviction orders, or a parent just left a
    /// leaf); its parent, a leaf if this was its last extension, takes over its last use and
    /// lifetime where they are later, and is returned then, not yet listed.
    fn remove(&mut self, place: u32, listed: bool) -> (Entry, Option<u32>) {
        let entry = self.slots[place as usize];
        self.index.remove(&entry.hash);
        self.free.push(place);
        if listed {
            self.unlist(place, &entry);
        }
        self.held_tokens -= entry.tokens;
        let mut leaf = None;
        if let Some(at) = entry.parent {
            let parent = &mut self.slots[at as usize];
            parent.children -= 1;
            if entry.last_used > parent.last_used
                || (entry.last_used == parent.last_used && entry.tick > parent.tick)
            {
                parent.last_used = entry.last_used;
                parent.tick = entry.tick;
            }
            parent.ttl = parent.ttl.max(entry.ttl);
            if parent.children == 0 {
                leaf = Some(at);
            }
        }
        (entry, leaf)
    }

    /// Lists a leaf in the eviction orders (an entry with extensions is not listed).
    fn list(&mut self, place: u32, entry: &Entry) {
        if entry.children > 0 {
            return;
        }
        let key = (entry.last_used, entry.tick, place);
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

    fn unlist(&mut self, place: u32, entry: &Entry) {
        if let Some(leaves) = self
            .leaves
            .iter_mut()
            .find(|leaves| leaves.ttl == entry.ttl)
        {
            leaves.by_use.remove(&(entry.last_used, entry.tick, place));
        }
    }

    /// The leaf used least recently (the earliest last use; the lower tick at one instant).
    fn least_recently_used(&self) -> Option<u32> {
        self.leaves
            .iter()
            .filter_map(|leaves| leaves.by_use.first())
            .min()
            .map(|&(_, _, place)| place)
    }

    /// The leaf that expires first, and when (the lower tick first at one instant).
    fn soonest_to_expire(&self) -> Option<(Instant, u32)> {
        self.leaves
            .iter()
            .filter_map(|leaves| {
                let &(last_used, tick, place) = leaves.by_use.first()?;
                Some((last_used + leaves.ttl, tick, place))
            })
            .min()
            .map(|(expires, _, place)| (expires, place))
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
        /// The leaves by use and by expiry, each as one ordered set (of their hashes).
        fn orders(&self) -> (Order, Order) {
            let mut orders = (Order::new(), Order::new());
            for leaves in &self.leaves {
                for &(last_used, tick, place) in &leaves.by_use {
                    let hash = self.slots[place as usize].hash;
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
            assert_eq!(batched.index.len(), single.index.len());
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
