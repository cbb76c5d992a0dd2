//! Rendering: the conversation as the model sees it, tokenized (`crate::tokenizer`).
//!
//! The prompt is a preamble — instructions and tool definitions — followed by one framed block
//! per item (`<|start|>header<|message|>body<|end|>`). Items render independently, so a
//! continuation appends the new items' tokens to the cached buffer and gets exactly the tokens a
//! full render would produce. `usage.input_tokens` is the length of this buffer.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

use parking_lot::Mutex;
use prometheus::IntCounter;
use tether_protocol::{Item, Tool};

use crate::items;
use crate::model::{Breakpoints, PrefixHashes, Prompt};
use crate::tokenizer;

/// A rendered prompt: the preamble's tokens and the conversation's tokens, with where each
/// item's block ends.
#[derive(Debug, Clone, Default)]
pub struct RenderedPrompt {
    /// Identifies the instructions and tools the preamble was rendered from.
    pub preamble_key: u64,
    pub preamble: Arc<Vec<u32>>,
    pub items: Arc<Vec<u32>>,
    /// For each item, the offset in `items` just past its block.
    pub ends: Arc<Vec<u32>>,
    /// The prefixes' chained hashes, extended as the tokens are.
    pub hashes: PrefixHashes,
    /// Where breakpoints may be, extended as the items are.
    pub breakpoints: Breakpoints,
}

impl RenderedPrompt {
    /// The prompt as the model reads it (shared buffers, no copy).
    pub fn prompt(&self) -> Prompt {
        Prompt {
            preamble: self.preamble.clone(),
            items: self.items.clone(),
            item_ends: self.ends.clone(),
            hashes: self.hashes.clone(),
            breakpoints: self.breakpoints.clone(),
        }
    }

    /// Extends the prefix hashes over the tokens added since they were last taken.
    pub fn hashed(mut self) -> Self {
        self.hashes.extend(&self.preamble, &self.items);
        self
    }

    /// The prompt length in tokens.
    pub fn len(&self) -> usize {
        self.preamble.len() + self.items.len()
    }

    /// Whether the prompt is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Renders a whole prompt from nothing. `tools_key` is [`tools_key`](super::tools_key)
    /// of `tools`, computed once per request.
    /// With a [`TokenCache`], blocks rendered before (by any request) are not tokenized again.
    pub fn full(
        instructions: Option<&str>,
        tools: &[Tool],
        tools_key: &str,
        items: &[Item],
        cache: Option<&TokenCache>,
    ) -> Self {
        let (mut tokens, mut ends) = (Vec::new(), Vec::new());
        let mut breakpoints = Breakpoints::default();
        render_items(items, &mut tokens, &mut ends, &mut breakpoints, cache);
        RenderedPrompt {
            preamble_key: preamble_key(instructions, tools_key),
            preamble: Arc::new(render_preamble(instructions, tools, cache)),
            items: Arc::new(tokens),
            ends: Arc::new(ends),
            hashes: PrefixHashes::default(),
            breakpoints,
        }
        .hashed()
    }

    /// Extends this prompt with `new_items`, re-rendering the preamble only if the instructions
    /// or tools changed. Returns the new prompt and how many of its tokens were reused. The token
    /// buffer is extended in place when this prompt is its only owner (a cache entry handed
    /// over), so a continuation never copies the history's tokens.
    pub fn extend(
        self,
        instructions: Option<&str>,
        tools: &[Tool],
        tools_key: &str,
        new_items: &[Item],
        cache: Option<&TokenCache>,
    ) -> (Self, usize) {
        let key = preamble_key(instructions, tools_key);
        let (preamble, reused_preamble, hashes) = if key == self.preamble_key {
            let reused = self.preamble.len();
            (self.preamble, reused, self.hashes)
        } else {
            // A new preamble changes every prefix: the hashes start again.
            let preamble = Arc::new(render_preamble(instructions, tools, cache));
            (preamble, 0, PrefixHashes::default())
        };
        let reused = reused_preamble + self.items.len();
        let (mut items, mut ends, mut breakpoints) = (self.items, self.ends, self.breakpoints);
        render_items(
            new_items,
            Arc::make_mut(&mut items),
            Arc::make_mut(&mut ends),
            &mut breakpoints,
            cache,
        );
        (
            RenderedPrompt {
                preamble_key: key,
                preamble,
                items,
                ends,
                hashes,
                breakpoints,
            }
            .hashed(),
            reused,
        )
    }

    /// This prompt with `items` (a response's output) appended, in place when unshared.
    pub fn with_items(mut self, items: &[Item]) -> Self {
        render_items(
            items,
            Arc::make_mut(&mut self.items),
            Arc::make_mut(&mut self.ends),
            &mut self.breakpoints,
            None,
        );
        self.hashed()
    }
}

/// A process-wide cache of rendered blocks' tokens (`--token-cache-tokens`), for the full path:
/// an HTTP request re-sends the whole conversation, and with this cache the blocks any earlier
/// request rendered are looked up instead of tokenized again — what caching alone buys, without
/// a persistent connection. Keyed by the block's exact text (a keyed 64-bit hash and its
/// length); the oldest blocks leave first once it holds more than its capacity in tokens.
pub struct TokenCache {
    capacity_tokens: usize,
    state: Mutex<TokenCacheState>,
    hasher: std::collections::hash_map::RandomState,
    /// Blocks found (`tether_token_cache_hits_total`).
    pub hits: IntCounter,
    /// Blocks tokenized and added (`tether_token_cache_misses_total`).
    pub misses: IntCounter,
}

#[derive(Default)]
struct TokenCacheState {
    blocks: HashMap<(u64, usize), Arc<[u32]>>,
    /// Insertion order, for eviction.
    order: VecDeque<(u64, usize)>,
    tokens: usize,
}

impl TokenCache {
    /// A cache holding up to `capacity_tokens` tokens, counting its hits and misses in these
    /// counters.
    pub fn new(capacity_tokens: usize, hits: IntCounter, misses: IntCounter) -> Self {
        TokenCache {
            capacity_tokens,
            state: Mutex::new(TokenCacheState::default()),
            hasher: Default::default(),
            hits,
            misses,
        }
    }

    /// The tokens of `text`: from the cache, or encoded and remembered.
    fn tokens(&self, text: &str) -> Arc<[u32]> {
        let key = (self.hasher.hash_one(text), text.len());
        if let Some(found) = self.state.lock().blocks.get(&key) {
            self.hits.inc();
            return found.clone();
        }
        self.misses.inc();
        let tokens: Arc<[u32]> = tokenizer::encode(text).into();
        if tokens.len() <= self.capacity_tokens {
            let mut state = self.state.lock();
            if state.blocks.insert(key, tokens.clone()).is_none() {
                state.order.push_back(key);
                state.tokens += tokens.len();
            }
            while state.tokens > self.capacity_tokens {
                let Some(oldest) = state.order.pop_front() else {
                    break;
                };
                if let Some(evicted) = state.blocks.remove(&oldest) {
                    state.tokens -= evicted.len();
                }
            }
        }
        tokens
    }

    /// Tokens held now.
    pub fn len_tokens(&self) -> usize {
        self.state.lock().tokens
    }
}

/// Tokenizes a framed block, through the cache when there is one.
fn encode_block(text: &str, out: &mut Vec<u32>, cache: Option<&TokenCache>) {
    match cache {
        Some(cache) => out.extend_from_slice(&cache.tokens(text)),
        None => tokenizer::encode_into(text, out),
    }
}

/// What a continuation's preamble is compared by: a 64-bit hash of its instructions and tools,
/// held against the previous turn's on the same connection only (never shared between
/// connections, so not keyed), by foldhash: the ~12 KB of instructions a request may re-send
/// every turn cost a sixth of what SipHash took.
fn preamble_key(instructions: Option<&str>, tools_key: &str) -> u64 {
    let mut hasher = foldhash::fast::FixedState::default().build_hasher();
    instructions.hash(&mut hasher);
    tools_key.hash(&mut hasher);
    hasher.finish()
}

fn render_preamble(
    instructions: Option<&str>,
    tools: &[Tool],
    cache: Option<&TokenCache>,
) -> Vec<u32> {
    let mut text = String::new();
    if let Some(instructions) = instructions {
        frame(&mut text, "system", instructions);
    }
    if !tools.is_empty() {
        let mut body = String::from("# Tools\n");
        for tool in tools {
            body.push_str(&serde_json::to_string(tool).unwrap_or_default());
            body.push('\n');
        }
        frame(&mut text, "developer", &body);
    }
    let mut tokens = Vec::new();
    encode_block(&text, &mut tokens, cache);
    tokens
}

/// Appends the tokens of `items`, one framed block each, where each block ends, and the
/// breakpoints they may hold.
fn render_items(
    items: &[Item],
    out: &mut Vec<u32>,
    ends: &mut Vec<u32>,
    breakpoints: &mut Breakpoints,
    cache: Option<&TokenCache>,
) {
    let mut text = String::new();
    for item in items {
        text.clear();
        frame(&mut text, &items::header(item), &items::body(item));
        encode_block(&text, out, cache);
        let end = out.len() as u32;
        ends.push(end);
        breakpoints.push(item, end);
    }
}

fn frame(text: &mut String, header: &str, body: &str) {
    text.push_str("<|start|>");
    text.push_str(header);
    text.push_str("<|message|>");
    text.push_str(body);
    text.push_str("<|end|>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incremental_rendering_equals_a_full_render() {
        let tools: Vec<Tool> =
            serde_json::from_value(serde_json::json!([{"type": "function", "name": "shell"}]))
                .unwrap();
        let first = vec![
            Item::user_text("Fix the failing test, please."),
            Item::assistant_text("m1", "On it.", tether_protocol::ItemStatus::Completed),
        ];
        let second = vec![Item::user_text("Also update the README — thanks!")];
        let key = crate::stages::tools_key(&tools);
        let base = RenderedPrompt::full(Some("Be brief."), &tools, &key, &first, None);
        let (extended, reused) =
            base.clone()
                .extend(Some("Be brief."), &tools, &key, &second, None);
        let all: Vec<Item> = first.iter().chain(&second).cloned().collect();
        let full = RenderedPrompt::full(Some("Be brief."), &tools, &key, &all, None);
        assert_eq!(extended.preamble, full.preamble);
        assert_eq!(extended.items, full.items);
        assert_eq!(reused, base.len());
        assert!(full.len() > 30);
        // Changed tools: the preamble is rendered anew and not counted as reused.
        let (changed, reused) = base
            .clone()
            .extend(Some("Be brief."), &[], "[]", &second, None);
        assert_eq!(reused, base.items.len());
        assert!(changed.preamble.len() < base.preamble.len());
    }

    #[test]
    fn the_token_cache_renders_exactly_what_the_tokenizer_does_and_stays_bounded() {
        let items: Vec<Item> = (0..20)
            .map(|i| Item::user_text(format!("message {i}: {}", "word ".repeat(i * 10))))
            .collect();
        let plain = RenderedPrompt::full(Some("Be brief."), &[], "[]", &items, None);
        let counter = |name: &str| IntCounter::new(name, name).unwrap();
        let cache = TokenCache::new(1_000_000, counter("hits"), counter("misses"));
        let first = RenderedPrompt::full(Some("Be brief."), &[], "[]", &items, Some(&cache));
        assert_eq!(cache.hits.get(), 0);
        let again = RenderedPrompt::full(Some("Be brief."), &[], "[]", &items, Some(&cache));
        for rendered in [&first, &again] {
            assert_eq!(rendered.preamble, plain.preamble);
            assert_eq!(rendered.items, plain.items);
        }
        assert_eq!(cache.hits.get(), 21, "20 items and the preamble");
        assert_eq!(cache.len_tokens(), plain.len());

        // A small cache keeps only the newest blocks, within its capacity.
        let small = TokenCache::new(100, counter("hits"), counter("misses"));
        let rendered = RenderedPrompt::full(None, &[], "[]", &items, Some(&small));
        assert_eq!(rendered.items, plain.items);
        assert!(small.len_tokens() <= 100 && small.len_tokens() > 0);
    }

    #[test]
    fn tokens_are_real_bpe_tokens() {
        let tokens = tokenizer::encode("Hello, world!");
        assert_eq!(
            tokenizer::tokenizer().decode(&tokens).as_deref(),
            Some("Hello, world!")
        );
        assert_eq!(tokens.len(), 4);
    }
}
