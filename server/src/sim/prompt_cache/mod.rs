//! The engine's prompt cache: per profile, shared by every connection and both transports, as
//! OpenAI documents its prompt caching — prompts of at least 1,024 tokens, exact prefix
//! matches of the rendered tokens, hits in 128-token steps or at breakpoints
//! ([`positions`]), a key that includes `prompt_cache_key`, an idle lifetime and a capacity in
//! tokens per replica with the least recently used prefixes evicted first ([`store`]),
//! replicas chosen by the prompt's beginning and the key (`crate::model::routing`, the policy
//! real engines' replicas share), and diagnostics against
//! an earlier response ([`diagnostics`]).
//!
//! A request is looked up when the engine receives it ([`PromptCaches::lookup`]: what it will
//! read, where it will write) and written when it is admitted to decode
//! ([`PromptCaches::commit`]); prefill is charged for the tokens not read from the cache.

pub mod diagnostics;
pub mod positions;
pub mod store;

use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use crate::model::routing::Router;
use crate::model::{Context, PromptCacheUse};
use diagnostics::{Memory, Remembered};
use positions::{Granularity, KeyParts, Sizes};
use store::{Evicted, ReplicaCache, Write};

/// A profile's prompt cache settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheSettings {
    pub sizes: Sizes,
    /// Tokens one replica holds at most.
    pub capacity_tokens: u64,
    pub replicas: usize,
    /// Requests a minute one prefix-and-key pair sends a replica before spilling to the next.
    pub spill_per_minute: f64,
}

/// The series a profile's cache counts in (`crate::sim::metrics`).
#[derive(Debug, Clone)]
pub struct CacheCounters {
    pub queried_tokens: prometheus::IntCounter,
    pub hit_tokens: prometheus::IntCounter,
    pub written_tokens: prometheus::IntCounter,
    pub requests_hit: prometheus::IntCounter,
    pub requests_miss: prometheus::IntCounter,
    pub requests_ineligible: prometheus::IntCounter,
    pub evicted_capacity: prometheus::IntCounter,
    pub evicted_expired: prometheus::IntCounter,
}

impl CacheCounters {
    fn evicted(&self, evicted: Evicted) {
        self.evicted_capacity.inc_by(evicted.capacity);
        self.evicted_expired.inc_by(evicted.expired);
    }
}

/// What a lookup decided: the cache's part in the request, the replica, and the writes to make
/// once it is admitted.
#[derive(Debug)]
pub struct Lookup {
    pub usage: PromptCacheUse,
    pub replica: usize,
    pending: Pending,
}

#[derive(Debug, Default)]
struct Pending {
    /// The prefix hit, with the lifetime it asks for.
    touched: Option<(u64, Duration)>,
    /// Prefixes to write, shortest first, each extending the hit or the write before it.
    written: Vec<Write>,
}

struct State {
    replicas: Vec<ReplicaCache>,
    router: Router,
    memory: Memory,
}

/// One profile's prompt cache, all its replicas.
pub struct PromptCaches {
    state: Mutex<State>,
    counters: CacheCounters,
}

impl std::fmt::Debug for PromptCaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (held, capacity) = self.held_tokens();
        f.debug_struct("PromptCaches")
            .field("held_tokens", &held)
            .field("capacity_tokens", &capacity)
            .finish()
    }
}

impl PromptCaches {
    pub fn new(settings: &CacheSettings, counters: CacheCounters) -> Self {
        PromptCaches {
            state: Mutex::new(State {
                replicas: (0..settings.replicas.max(1))
                    .map(|_| ReplicaCache::new(settings.capacity_tokens))
                    .collect(),
                router: Router::default(),
                memory: Memory::default(),
            }),
            counters,
        }
    }

    /// Tokens held and the capacity, over all replicas.
    pub fn held_tokens(&self) -> (u64, u64) {
        let state = self.state.lock();
        state.replicas.iter().fold((0, 0), |(held, capacity), r| {
            (held + r.held_tokens(), capacity + r.capacity_tokens())
        })
    }

    /// Applies new settings: a different number of replicas starts cold; a new capacity evicts
    /// what no longer fits.
    pub fn reconfigure(&self, settings: &CacheSettings) {
        let now = Instant::now();
        let mut state = self.state.lock();
        let replicas = settings.replicas.max(1);
        if state.replicas.len() != replicas {
            state.replicas = (0..replicas)
                .map(|_| ReplicaCache::new(settings.capacity_tokens))
                .collect();
            return;
        }
        for replica in &mut state.replicas {
            let evicted = replica.set_capacity(settings.capacity_tokens, now);
            self.counters.evicted(evicted);
        }
    }

    /// What `context`'s prompt finds in the cache of the replica it is routed to, for the
    /// profile `profile` with `settings`.
    pub fn lookup(&self, context: &Context, profile: &str, settings: &CacheSettings) -> Lookup {
        let now = Instant::now();
        let key = KeyParts::of(&context.request, profile, context.project.as_str());
        let input_tokens = context.input_tokens();
        let options = context.request.prompt_cache_options.as_ref();
        let comparison = options
            .and_then(|o| o.get("comparison_response_id"))
            .and_then(|id| id.as_str());
        let plan = positions::plan(context, &key, settings.sizes);
        let mut guard = self.state.lock();
        let state = &mut *guard;
        let replica = state.router.route(
            context,
            state.replicas.len(),
            settings.spill_per_minute,
            now,
        );
        let remembered = Remembered {
            key,
            hashes: context.prompt.hashes.clone(),
        };
        let Some(plan) = plan else {
            self.counters.requests_ineligible.inc();
            let diagnostics = comparison.map(|_| serde_json::json!({"type": "unavailable"}));
            state
                .memory
                .remember(context.response_id.clone(), remembered);
            return Lookup {
                usage: PromptCacheUse {
                    diagnostics,
                    ..PromptCacheUse::default()
                },
                replica,
                pending: Pending::default(),
            };
        };
        let cache = &mut state.replicas[replica];
        let mut evicted = Evicted::default();
        // Longest first: a continuation finds its previous request's prefix after the blocks
        // it added, so the search is proportional to the new tokens.
        let hit = plan
            .reads_longest_first()
            .find(|place| cache.contains(place.hash, now, &mut evicted));
        self.counters.evicted(evicted);
        let cached = hit.map_or(0, |place| place.at);
        let mut pending = Pending::default();
        if let Some(hit) = hit {
            let ttl = plan.ttl_at(hit.at).unwrap_or(settings.sizes.in_memory_ttl);
            // The prefix in use; its shorter prefixes are in use with it (`store`).
            pending.touched = Some((hit.hash, ttl));
        }
        let (mut previous, mut by_ttl) = (cached, (0u64, 0u64));
        let mut parent = hit.map(|place| place.hash);
        for (place, ttl) in plan.writes_after(cached) {
            let tokens = (place.at - previous) as u64;
            pending.written.push(Write {
                hash: place.hash,
                parent,
                tokens,
                ttl,
            });
            if ttl == positions::TTL_12H {
                by_ttl.1 += tokens;
            } else {
                by_ttl.0 += tokens;
            }
            previous = place.at;
            parent = Some(place.hash);
        }
        let written = (previous - cached) as u64;
        if cached > 0 {
            self.counters.requests_hit.inc();
        } else {
            self.counters.requests_miss.inc();
        }
        self.counters.queried_tokens.inc_by(input_tokens);
        self.counters.hit_tokens.inc_by(cached as u64);
        let diagnostics = comparison.map(|id| {
            // Another project's response is answered like one that does not exist.
            let comparison = state
                .memory
                .get(id)
                .filter(|c| c.key.project == remembered.key.project);
            diagnostics::compare(
                &remembered,
                input_tokens,
                cached as u64,
                comparison,
                settings.sizes,
            )
        });
        let granularity = plan.granularity.clone();
        state
            .memory
            .remember(context.response_id.clone(), remembered);
        Lookup {
            usage: PromptCacheUse {
                cached_tokens: cached as u64,
                written_tokens: written,
                written_by_ttl: (granularity == Granularity::Breakpoints).then_some(by_ttl),
                diagnostics,
            },
            replica,
            pending,
        }
    }

    /// Makes `lookup`'s writes and marks its hit used (the request was admitted and prefilled).
    pub fn commit(&self, lookup: &Lookup) {
        let now = Instant::now();
        let mut guard = self.state.lock();
        let Some(cache) = guard.replicas.get_mut(lookup.replica) else {
            return;
        };
        let evicted = cache.write(lookup.pending.touched, &lookup.pending.written, now);
        self.counters.evicted(evicted);
        self.counters
            .written_tokens
            .inc_by(lookup.usage.written_tokens);
    }
}
