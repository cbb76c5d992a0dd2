//! `prompt_cache_diagnostics`: why a request did or did not reuse the cache, compared with an
//! earlier response (`prompt_cache_options.comparison_response_id`). The engine remembers, for
//! its recent responses, the parts of their cache key and their prompts' prefix hashes (a view
//! of the conversation's shared hashes: remembering copies none).

use lru::LruCache;
use serde_json::{Value, json};

use super::positions::{KeyParts, Sizes};
use crate::model::PrefixHashes;
use crate::model::prefix::STRIDE;

/// How many responses a profile remembers for comparisons.
pub const REMEMBERED: usize = 4096;

/// What a response's request looked like to the cache.
#[derive(Debug, Clone)]
pub struct Remembered {
    pub key: KeyParts,
    /// The prompt's prefix hashes.
    pub hashes: PrefixHashes,
}

/// The diagnostics of the request `current`, `input_tokens` long, that read `cached_tokens`
/// from the cache, against `comparison` (`None`: not remembered), under the cache's `sizes`.
pub fn compare(
    current: &Remembered,
    input_tokens: u64,
    cached_tokens: u64,
    comparison: Option<&Remembered>,
    sizes: Sizes,
) -> Value {
    let key = &current.key;
    let Some(comparison) = comparison else {
        return json!({"type": "comparison_response_not_found"});
    };
    if let Some(reason) = key.first_difference(&comparison.key) {
        return json!({"type": "cache_miss", "reason": reason,
            "cache_missed_tokens": input_tokens - cached_tokens});
    }
    if cached_tokens > 0 {
        return json!({"type": "cache_hit"});
    }
    // The whole blocks both prompts begin with (the shared prefix is known to a stride).
    let block = sizes.block_tokens.max(1);
    let common = current.hashes.common(&comparison.hashes) * STRIDE / block * block;
    if common < sizes.min_tokens {
        json!({"type": "cache_miss", "reason": "input_changed",
            "cache_missed_tokens": input_tokens - common as u64,
            "comparison_reusable_tokens": common})
    } else {
        // The prefix matched but was not there: evicted, expired, or on another replica.
        json!({"type": "unavailable"})
    }
}

/// A bounded memory of recent responses.
#[derive(Debug)]
pub struct Memory(LruCache<String, Remembered>);

impl Default for Memory {
    fn default() -> Self {
        Memory(LruCache::new(
            std::num::NonZeroUsize::new(REMEMBERED).expect("non-zero"),
        ))
    }
}

impl Memory {
    pub fn get(&mut self, response_id: &str) -> Option<&Remembered> {
        self.0.get(response_id)
    }

    pub fn remember(&mut self, response_id: String, remembered: Remembered) {
        self.0.put(response_id, remembered);
    }
}
