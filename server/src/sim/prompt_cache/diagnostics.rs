//! `prompt_cache_diagnostics`: why a request did or did not reuse the cache, compared with an
//! earlier response (`prompt_cache_options.comparison_response_id`). The engine remembers, for
//! its recent responses, the parts of their cache key and the hashes of their prompts' blocks.

use lru::LruCache;
use serde_json::{Value, json};

use super::positions::{KeyParts, Place};

/// How many responses a profile remembers for comparisons.
pub const REMEMBERED: usize = 4096;

/// What a response's request looked like to the cache.
#[derive(Debug, Clone)]
pub struct Remembered {
    pub key: KeyParts,
    /// The prompt's hash at every block boundary, shortest first.
    pub blocks: Vec<Place>,
}

/// The diagnostics of a request with `key` and `blocks`, `input_tokens` long, that read
/// `cached_tokens` from the cache, against `comparison` (`None`: not remembered); `min_tokens`
/// is the shortest cacheable prompt.
pub fn compare(
    key: &KeyParts,
    blocks: &[Place],
    input_tokens: u64,
    cached_tokens: u64,
    comparison: Option<&Remembered>,
    min_tokens: usize,
) -> Value {
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
    let common = blocks
        .iter()
        .zip(&comparison.blocks)
        .take_while(|(mine, theirs)| mine == theirs)
        .last()
        .map_or(0, |(place, _)| place.at);
    if common < min_tokens {
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
