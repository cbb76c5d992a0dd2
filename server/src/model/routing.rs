//! Which engine replica serves a request, as the reference documents it: a hash of the
//! prompt's first ~256 tokens and `prompt_cache_key` picks a machine; each prefix-and-key pair
//! is served by it up to about 15 requests a minute, beyond which traffic spills to the next
//! replica (each spill a cold cache there). A WebSocket connection keeps the replica its
//! earlier requests went to.
//!
//! It sits at the engine seam so that every engine with replicas shares the one policy, not
//! only the simulator's prompt cache.

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

use tokio::time::Instant;

use super::Context;

/// Tokens of the prompt's beginning that choose the replica.
pub const ROUTING_PREFIX_TOKENS: usize = 256;
const WINDOW: Duration = Duration::from_secs(60);
/// Above this many tracked prefix-and-key pairs, the idle ones are forgotten.
const TRACKED: usize = 100_000;

/// Recent requests by prefix-and-key pair and replica.
#[derive(Debug, Default)]
pub struct Router {
    recent: HashMap<(u64, usize), VecDeque<Instant>>,
}

impl Router {
    /// The replica for `context` among `replicas`, when each pair may send `per_minute`
    /// requests a minute to one replica; the request is counted there.
    pub fn route(
        &mut self,
        context: &Context,
        replicas: usize,
        per_minute: f64,
        now: Instant,
    ) -> usize {
        let replicas = replicas.max(1);
        if let Some(kept) = context.route.filter(|r| *r < replicas) {
            self.count(prefix_key(context), kept, now);
            return kept;
        }
        if replicas == 1 {
            return 0;
        }
        let pair = prefix_key(context);
        let primary = (pair % replicas as u64) as usize;
        let chosen = (0..replicas)
            .map(|step| (primary + step) % replicas)
            .find(|replica| (self.recent_count(pair, *replica, now) as f64) < per_minute)
            .unwrap_or(primary);
        self.count(pair, chosen, now);
        chosen
    }

    fn recent_count(&mut self, pair: u64, replica: usize, now: Instant) -> usize {
        match self.recent.get_mut(&(pair, replica)) {
            Some(times) => {
                while times
                    .front()
                    .is_some_and(|t| now.duration_since(*t) > WINDOW)
                {
                    times.pop_front();
                }
                times.len()
            }
            None => 0,
        }
    }

    fn count(&mut self, pair: u64, replica: usize, now: Instant) {
        if self.recent.len() > TRACKED {
            self.recent.retain(|_, times| {
                times
                    .back()
                    .is_some_and(|t| now.duration_since(*t) <= WINDOW)
            });
        }
        self.recent
            .entry((pair, replica))
            .or_default()
            .push_back(now);
    }
}

/// The hash of the prompt's first [`ROUTING_PREFIX_TOKENS`] tokens and `prompt_cache_key`.
fn prefix_key(context: &Context) -> u64 {
    let mut hasher = DefaultHasher::new();
    for token in context.prompt.tokens().take(ROUTING_PREFIX_TOKENS) {
        token.hash(&mut hasher);
    }
    context.request.prompt_cache_key.hash(&mut hasher);
    hasher.finish()
}
