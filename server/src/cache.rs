//! The connection-scoped response cache of WebSocket mode.
//!
//! One connection owns one cache and drops it when it closes; it never touches disk. Its lanes
//! share it (behind a mutex held only for a lookup or an insert, never across an await). It
//! keeps the latest response of every lane — what the reference service promises —, every
//! response that waits for the outputs of the client tools it called (an agent run as another's
//! tool holds a conversation of its own on the same lane before the outer one goes on), and, if
//! the server is told to (`--connection-cache-superseded`), some finished ones a later response
//! on their lane superseded; each with the full logical context after it — input and output
//! items, their rendered tokens and the compiled tool schemas — so a continuation starts from
//! memory instead of the store and only renders, validates and classifies its new items.
//!
//! A continuation *takes* its previous response's entry and extends it in place, so the
//! history is never copied on the straight path. Each entry remembers the responses it
//! continues on this connection (its lineage), so a second continuation of one of them — a
//! branch, or a fork onto another lane — is still served from memory: its conversation is the
//! prefix of a descendant's, copied only then.
//!
//! A turn uses the cache twice, each time under one lock: it [`SharedCache::checkout`]s what it
//! continues from before the pipeline runs, and [`SharedCache::checkin`]s what it leaves after
//! its terminal event (or after its refusal).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use tether_protocol::{Input, Item, Response, ResponseCreate, Tool};

use crate::model::{PrefixHashes, prefix};
use crate::stages::Reusable;
use crate::stages::render::RenderedPrompt;
use crate::stages::validate::CompiledTools;

/// How many of its ancestors an entry remembers for branches.
pub const LINEAGE: usize = 256;

/// What a continuation reads of the response it continues: its id, whether it was stored, and
/// its tools (shared with the next response when they are the same). The rest of the response
/// object — its output items (also in the context), its echoed settings — was sent and stored
/// already; the cache and every ancestor used to hold a whole copy (BENCHMARKS.md, "Connection
/// memory").
#[derive(Debug, Clone)]
pub struct Head {
    pub id: String,
    pub store: bool,
    pub tools: Arc<[Tool]>,
}

impl From<&Response> for Head {
    fn from(response: &Response) -> Self {
        Head {
            id: response.id.clone(),
            store: response.store,
            tools: response.tools.clone(),
        }
    }
}

/// A response as the cache keeps it.
#[derive(Debug, Clone)]
pub struct CachedResponse {
    pub response: Head,
    /// The whole conversation after this response: its input context, then its output.
    pub context: Arc<Vec<Item>>,
    /// That conversation rendered (a continuation appends only its new items' tokens) and the
    /// response's tools compiled (reused while a continuation offers the same tools); `None`
    /// once the entry has not been continued for [`FORGET_RENDERING_AFTER`] responses (a
    /// continuation then renders the conversation again, as from the store).
    pub reusable: Option<Reusable>,
    /// The responses this one continues on the connection, oldest first.
    pub lineage: VecDeque<Ancestor>,
}

/// A response an entry continues: where its conversation ends in the entry's, and what its
/// prompt's preamble and tools were.
#[derive(Debug, Clone)]
pub struct Ancestor {
    pub response: Head,
    /// Items of the entry's context that were this response's conversation.
    pub items: usize,
    /// Its preamble and tools, if the entry it was had its rendering.
    pub prompt: Option<AncestorPrompt>,
}

/// An ancestor's preamble (instructions and tools rendered) and compiled tools.
#[derive(Debug, Clone)]
pub struct AncestorPrompt {
    pub preamble_key: u64,
    pub preamble: Arc<Vec<u32>>,
    pub compiled: CompiledTools,
}

/// What an entry costs in memory, roughly: per rendered token its id (4 bytes), its share of
/// the item's text (~4 bytes) and of the item boundaries; per item its structure; per ancestor
/// its response header.
const BYTES_PER_TOKEN: usize = 8;
const BYTES_PER_ITEM: usize = 256;
const BYTES_PER_ANCESTOR: usize = 512;

impl CachedResponse {
    /// What the entry holds in memory, estimated from its token, item and ancestor counts (the
    /// estimate is O(1): it is taken at every insert).
    pub fn approximate_bytes(&self) -> usize {
        let tokens = self.reusable.as_ref().map_or(0, |reusable| {
            reusable.rendered.items.len() + reusable.rendered.preamble.len()
        });
        tokens * BYTES_PER_TOKEN
            + self.context.len() * BYTES_PER_ITEM
            + self.lineage.len() * BYTES_PER_ANCESTOR
    }

    /// Gives back the spare capacity of the entry's vectors (its rendered tokens, their item
    /// boundaries, its items, its lineage); a vector shared with another holder is left as is.
    fn compact(&mut self) {
        if let Some(reusable) = &mut self.reusable {
            let rendered = &mut reusable.rendered;
            if let Some(items) = Arc::get_mut(&mut rendered.items) {
                items.shrink_to_fit();
            }
            if let Some(ends) = Arc::get_mut(&mut rendered.ends) {
                ends.shrink_to_fit();
            }
        }
        if let Some(context) = Arc::get_mut(&mut self.context) {
            context.shrink_to_fit();
        }
        self.lineage.shrink_to_fit();
    }

    /// Gives up the entry's rendering (its tokens are about as large as its items' text); a
    /// continuation renders the conversation again, once.
    fn forget_rendering(&mut self) {
        self.reusable = None;
    }

    /// What a continuation of this response takes of the entry, which it consumes (so
    /// nothing is copied): the lineage it continues (this entry's, then this response as an
    /// ancestor), the conversation, and the reusable work.
    pub fn into_successor(self) -> (VecDeque<Ancestor>, Arc<Vec<Item>>, Option<Reusable>) {
        let CachedResponse {
            response,
            context,
            reusable,
            mut lineage,
        } = self;
        lineage.push_back(Ancestor {
            response,
            items: context.len(),
            prompt: reusable.as_ref().map(|reusable| AncestorPrompt {
                preamble_key: reusable.rendered.preamble_key,
                preamble: reusable.rendered.preamble.clone(),
                compiled: reusable.compiled.clone(),
            }),
        });
        while lineage.len() > LINEAGE {
            lineage.pop_front();
        }
        (lineage, context, reusable)
    }

    /// The entry of `ancestor` (the `position`-th of this entry's lineage), rebuilt from the
    /// prefix of this one: its items and their rendered tokens copied, its preamble and tools
    /// shared.
    fn branch(&self, position: usize) -> CachedResponse {
        let ancestor = &self.lineage[position];
        // Its rendering is this entry's prefix, when both are known.
        let reusable = match (&self.reusable, &ancestor.prompt) {
            (Some(reusable), Some(prompt)) => {
                let rendered = &reusable.rendered;
                let tokens = match ancestor.items {
                    0 => 0,
                    n => rendered.ends[n - 1] as usize,
                };
                // The prefix hashes hold for the ancestor's prompt if its preamble is this entry's.
                let hashes = if prompt.preamble_key == rendered.preamble_key {
                    rendered
                        .hashes
                        .prefix((prompt.preamble.len() + tokens) / prefix::STRIDE)
                } else {
                    PrefixHashes::default()
                };
                Some(Reusable {
                    rendered: RenderedPrompt {
                        preamble_key: prompt.preamble_key,
                        preamble: prompt.preamble.clone(),
                        items: Arc::new(rendered.items[..tokens].to_vec()),
                        ends: Arc::new(rendered.ends[..ancestor.items].to_vec()),
                        hashes,
                        breakpoints: rendered.breakpoints.prefix(tokens as u32),
                    }
                    .hashed(),
                    compiled: prompt.compiled.clone(),
                })
            }
            _ => None,
        };
        CachedResponse {
            response: ancestor.response.clone(),
            context: Arc::new(self.context[..ancestor.items].to_vec()),
            reusable,
            lineage: self.lineage.range(..position).cloned().collect(),
        }
    }
}

/// What one connection's cache may hold (`--connection-cache-entries`,
/// `--connection-cache-superseded`, `--connection-cache-bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Responses in all.
    pub entries: usize,
    /// Finished responses (no client tool call to answer) kept although a later response on
    /// their lane superseded them: the last responses of conversations a client may come back
    /// to.
    pub superseded: usize,
    pub bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            entries: 64,
            superseded: 0,
            bytes: 64 << 20,
        }
    }
}

/// Recently completed responses of one connection, newest last, and the engine replica each
/// model's requests went to (the connection keeps its routing, as the reference does).
#[derive(Debug, Default)]
pub struct ConnectionCache {
    entries: VecDeque<Kept>,
    /// Responses put so far.
    puts: u64,
    routes: Vec<(String, usize)>,
    limits: Limits,
    /// What `entries` hold, estimated ([`CachedResponse::approximate_bytes`]).
    bytes: usize,
}

/// An entry as the cache holds it: with the count of responses put before it, which says how
/// long it has gone without being continued, and the lane it was answered on.
#[derive(Debug)]
struct Kept {
    entry: CachedResponse,
    put_at: u64,
    /// Its request's `stream_id` (`None`: the connection's default lane).
    lane: Option<Box<str>>,
    /// It ended with client tool calls: its conversation goes on once they are answered.
    awaits_outputs: bool,
    /// It is finished and a later response on its lane was put: no longer the lane's latest.
    superseded: bool,
}

/// An entry not continued within this many responses of its connection is compacted: its
/// vectors, grown by doubling while its conversation ran, give back their spare capacity. A
/// conversation's latest entry is continued at its next turn, and a connection runs at most 16
/// responses at once (the reference's limit), so however its lanes interleave only an entry of
/// a finished (or paused) conversation is compacted; one continued later grows again, one copy.
const STALE_AFTER: u64 = 16;
/// An entry not continued within this many responses gives up its rendering too: its items
/// stay (with `store: false` the only copy), and a continuation renders them again, once (and
/// checks only its new items, as on any hit). A stored response's entry goes altogether after
/// [`STALE_AFTER`]: the store holds its conversation, and a continuation loads it from there.
const FORGET_RENDERING_AFTER: u64 = 32;

impl ConnectionCache {
    /// An empty cache held to `limits`.
    pub fn with_limits(limits: Limits) -> Self {
        ConnectionCache {
            limits,
            ..ConnectionCache::default()
        }
    }

    /// What the cache holds, estimated.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Forgets the oldest response (for the global budget); false when nothing is held.
    pub fn pop_oldest(&mut self) -> bool {
        self.remove(0).is_some()
    }

    /// Removes the entry at `position`, no longer counted.
    fn remove(&mut self, position: usize) -> Option<CachedResponse> {
        let Kept { entry, .. } = self.entries.remove(position)?;
        self.bytes -= entry.approximate_bytes();
        Some(entry)
    }

    /// The held entries, oldest first.
    fn held(&self) -> impl DoubleEndedIterator<Item = &CachedResponse> + ExactSizeIterator {
        self.entries.iter().map(|kept| &kept.entry)
    }

    /// Where the entry put `responses` responses before the latest is held, if still.
    fn put_ago(&self, responses: u64) -> Option<usize> {
        let at = self.puts.checked_sub(responses + 1)?;
        self.entries.iter().position(|kept| kept.put_at == at)
    }

    /// Where entry `id` is held.
    fn position(&self, id: &str) -> Option<usize> {
        self.held().rposition(|entry| entry.response.id == id)
    }

    /// The replica `model`'s requests on this connection went to.
    pub fn route(&self, model: &str) -> Option<usize> {
        self.routes
            .iter()
            .find(|(known, _)| known == model)
            .map(|(_, replica)| *replica)
    }

    /// Remembers that `model`'s requests go to `replica`.
    pub fn keep_route(&mut self, model: &str, replica: usize) {
        match self.routes.iter_mut().find(|(known, _)| known == model) {
            Some(route) => route.1 = replica,
            None => self.routes.push((model.to_string(), replica)),
        }
    }

    /// The cached response `id`, if still held.
    pub fn get(&self, id: &str) -> Option<&CachedResponse> {
        self.held().rev().find(|entry| entry.response.id == id)
    }

    /// Hands response `id` over to a continuation, which extends its context in place rather
    /// than copying it; the continuation's own response replaces it, and if the continuation
    /// fails it stays evicted (docs/protocol.md §4). A response already continued is rebuilt
    /// from a descendant that holds it in its lineage (a branch), the descendant kept.
    pub fn take(&mut self, id: &str) -> Option<CachedResponse> {
        if let Some(position) = self.position(id) {
            return self.remove(position);
        }
        self.held().rev().find_map(|entry| {
            let position = entry
                .lineage
                .iter()
                .rposition(|ancestor| ancestor.response.id == id)?;
            Some(entry.branch(position))
        })
    }

    /// The items with these ids in the responses held (their input context or output).
    pub fn find_items(&self, ids: &[&str]) -> Vec<Item> {
        let mut found: Vec<Item> = Vec::new();
        for entry in self.held().rev() {
            for item in entry.context.iter() {
                if let Some(id) = item.id()
                    && ids.contains(&id)
                    && !found.iter().any(|seen| seen.id() == Some(id))
                {
                    found.push(item.clone());
                }
            }
        }
        found
    }

    /// Remembers a response answered on `lane`, which supersedes the lane's earlier finished
    /// responses (its latest, unless a continuation took it out); forgets the oldest superseded
    /// responses beyond their limit, then the oldest beyond the others (the newest always stays).
    /// One that `awaits_outputs` (it ended with client tool calls) is never superseded.
    pub fn put(&mut self, entry: CachedResponse, lane: Option<&str>, awaits_outputs: bool) {
        // A response put again replaces itself (a new one, the usual case, is in no lineage).
        if let Some(position) = self.position(&entry.response.id) {
            self.remove(position);
        }
        let mut superseded = 0;
        for kept in &mut self.entries {
            kept.superseded |= !kept.awaits_outputs && kept.lane.as_deref() == lane;
            superseded += usize::from(kept.superseded);
        }
        while superseded > self.limits.superseded {
            let oldest = self.entries.iter().position(|kept| kept.superseded);
            self.remove(oldest.expect("counted"));
            superseded -= 1;
        }
        self.bytes += entry.approximate_bytes();
        self.entries.push_back(Kept {
            entry,
            put_at: self.puts,
            lane: lane.map(Into::into),
            awaits_outputs,
            superseded: false,
        });
        self.puts += 1;
        while self.entries.len() > self.limits.entries.max(1)
            || (self.bytes > self.limits.bytes && self.entries.len() > 1)
        {
            self.pop_oldest();
        }
        // The entries that just became stale, if any (one a put each). A stored response's
        // entry goes: the store holds its conversation too, and a continuation loads it from
        // there, as after any eviction, rather than the cache keeping a second copy. Another is
        // compacted, and later gives up its rendering.
        if let Some(position) = self.put_ago(STALE_AFTER) {
            if self.entries[position].entry.response.store {
                self.remove(position);
            } else {
                self.entries[position].entry.compact();
            }
        }
        if let Some(position) = self.put_ago(FORGET_RENDERING_AFTER) {
            let entry = &mut self.entries[position].entry;
            self.bytes -= entry.approximate_bytes();
            entry.forget_rendering();
            self.bytes += entry.approximate_bytes();
        }
    }

    /// Forgets response `id` (after a failed continuation from it), also as an ancestor.
    pub fn evict(&mut self, id: &str) {
        if let Some(position) = self.position(id) {
            self.remove(position);
        }
        for kept in &mut self.entries {
            kept.entry
                .lineage
                .retain(|ancestor| ancestor.response.id != id);
        }
        self.bytes = self.held().map(CachedResponse::approximate_bytes).sum();
    }

    /// Number of responses held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The memory all connection caches share (`--cache-memory-bytes`): when their total passes
/// it, the least recently used connection's oldest responses go first — a continuation of one
/// then finds it in the store, or gets `previous_response_not_found`, as after any eviction.
#[derive(Debug)]
pub struct CacheBudget {
    limit: usize,
    state: Mutex<BudgetState>,
}

#[derive(Debug, Default)]
struct BudgetState {
    next_id: u64,
    tick: u64,
    used: usize,
    caches: HashMap<u64, Held>,
}

#[derive(Debug)]
struct Held {
    cache: Weak<Mutex<ConnectionCache>>,
    bytes: usize,
    used_at: u64,
}

impl CacheBudget {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(CacheBudget {
            limit,
            state: Mutex::default(),
        })
    }

    /// What every connection cache holds together, estimated.
    pub fn used(&self) -> usize {
        self.state.lock().used
    }

    /// Notes that a cache of `bytes` was just used, then evicts over the budget. Called with
    /// no cache locked: it locks the caches it evicts from.
    fn touch(&self, id: u64, bytes: usize) {
        {
            let mut state = self.state.lock();
            state.tick += 1;
            let tick = state.tick;
            let Some(held) = state.caches.get_mut(&id) else {
                return;
            };
            let before = held.bytes;
            held.bytes = bytes;
            held.used_at = tick;
            state.used = state.used - before + bytes;
        }
        loop {
            let victim = {
                let mut state = self.state.lock();
                if state.used <= self.limit {
                    return;
                }
                let found = state
                    .caches
                    .iter()
                    .filter(|(_, held)| held.bytes > 0)
                    .min_by_key(|(_, held)| held.used_at)
                    .map(|(id, held)| (*id, held.cache.upgrade()));
                match found {
                    None => return,
                    Some((id, None)) => {
                        let gone = state.caches.remove(&id).map_or(0, |held| held.bytes);
                        state.used -= gone;
                        continue;
                    }
                    Some((id, Some(cache))) => (id, cache),
                }
            };
            let (id, cache) = victim;
            let bytes = {
                let mut cache = cache.lock();
                cache.pop_oldest();
                cache.bytes()
            };
            let mut state = self.state.lock();
            if let Some(held) = state.caches.get_mut(&id) {
                let before = held.bytes;
                held.bytes = bytes;
                state.used = state.used - before + bytes;
            }
        }
    }
}

/// What a turn takes from its connection's cache before the pipeline runs.
#[derive(Debug, Default)]
pub struct Checkout {
    /// The entry of the response it continues, handed over ([`ConnectionCache::take`]).
    pub previous: Option<Box<CachedResponse>>,
    /// The items its input's `item_reference`s name, from the responses still held.
    pub referenced: Vec<Item>,
    /// The engine replica the connection's earlier requests for its model went to.
    pub route: Option<usize>,
}

/// What a turn gives back to its connection's cache.
#[derive(Debug)]
pub enum Checkin<'a> {
    /// It generated a response: the replica that served `model`, and the response's entry when
    /// it can be continued (a failed one cannot: the response it continued stays out).
    Served {
        model: &'a str,
        replica: usize,
        entry: Option<Box<CachedResponse>>,
        /// The lane it was answered on (its request's `stream_id`).
        lane: Option<&'a str>,
        /// Whether it ended with client tool calls (its conversation waits for their outputs).
        awaits_outputs: bool,
    },
    /// It was refused before generating: the response it continued (`previous`) is forgotten, so
    /// a failed continuation is not retried against the same state (docs/protocol.md §4).
    Refused { previous: Option<&'a str> },
}

/// One connection's cache, charged to the budget it shares with every other connection.
#[derive(Debug)]
pub struct SharedCache {
    cache: Arc<Mutex<ConnectionCache>>,
    budget: Arc<CacheBudget>,
    id: u64,
}

impl SharedCache {
    pub fn new(limits: Limits, budget: &Arc<CacheBudget>) -> Self {
        let cache = Arc::new(Mutex::new(ConnectionCache::with_limits(limits)));
        let mut state = budget.state.lock();
        state.next_id += 1;
        let id = state.next_id;
        let used_at = state.tick;
        state.caches.insert(
            id,
            Held {
                cache: Arc::downgrade(&cache),
                bytes: 0,
                used_at,
            },
        );
        drop(state);
        SharedCache {
            cache,
            budget: budget.clone(),
            id,
        }
    }

    /// Takes what `request` continues from, under one lock: its previous response's entry, the
    /// items its input's `item_reference`s name, and the replica its model's requests went to.
    pub fn checkout(&self, request: &ResponseCreate) -> Checkout {
        let references: Vec<&str> = match &request.input {
            Input::Items(items) => items
                .iter()
                .filter_map(|item| match item {
                    Item::ItemReference { id } => Some(id.as_str()),
                    _ => None,
                })
                .collect(),
            Input::Text(_) => Vec::new(),
        };
        let previous = request.previous_response_id.as_deref();
        self.with(|cache| Checkout {
            previous: previous.and_then(|id| cache.take(id)).map(Box::new),
            referenced: if references.is_empty() {
                Vec::new()
            } else {
                cache.find_items(&references)
            },
            route: cache.route(&request.model),
        })
    }

    /// Gives back what a turn left, under one lock.
    pub fn checkin(&self, checkin: Checkin<'_>) {
        self.with(|cache| match checkin {
            Checkin::Served {
                model,
                replica,
                entry,
                lane,
                awaits_outputs,
            } => {
                cache.keep_route(model, replica);
                if let Some(entry) = entry {
                    cache.put(*entry, lane, awaits_outputs);
                }
            }
            Checkin::Refused { previous } => {
                if let Some(previous) = previous {
                    cache.evict(previous);
                }
            }
        })
    }

    /// Runs `use_cache` on the cache (its lock held only for that), then charges the budget.
    fn with<T>(&self, use_cache: impl FnOnce(&mut ConnectionCache) -> T) -> T {
        let (result, bytes) = {
            let mut cache = self.cache.lock();
            let result = use_cache(&mut cache);
            (result, cache.bytes())
        };
        self.budget.touch(self.id, bytes);
        result
    }
}

impl Drop for SharedCache {
    fn drop(&mut self) {
        let mut state = self.budget.state.lock();
        if let Some(held) = state.caches.remove(&self.id) {
            state.used -= held.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry of a `store: false` response (the cache holds its only copy).
    fn entry(id: &str) -> CachedResponse {
        let mut response = Response::in_progress(id, 0, &ResponseCreate::new("m", ""));
        response.store = false;
        CachedResponse {
            response: Head::from(&response),
            context: Arc::new(Vec::new()),
            reusable: Some(Reusable::default()),
            lineage: Default::default(),
        }
    }

    const CAPACITY: usize = 64;

    /// That the cache's byte count is what its entries hold.
    fn assert_counted(cache: &ConnectionCache) {
        assert_eq!(
            cache.bytes(),
            cache
                .held()
                .map(CachedResponse::approximate_bytes)
                .sum::<usize>()
        );
    }

    /// A cache that keeps superseded responses too (up to its 64 entries), as
    /// `--connection-cache-superseded 64` does: most tests put responses on one lane.
    fn keeping_superseded() -> ConnectionCache {
        ConnectionCache::with_limits(Limits {
            superseded: CAPACITY,
            ..Limits::default()
        })
    }

    /// An entry of about `tokens` rendered tokens.
    fn sized(id: &str, tokens: usize) -> CachedResponse {
        let mut entry = entry(id);
        entry.reusable.as_mut().unwrap().rendered.items = Arc::new(vec![0; tokens]);
        entry
    }

    #[test]
    fn an_entry_not_continued_for_a_while_gives_back_its_spare_capacity() {
        let mut cache = keeping_superseded();
        let spare = |id: &str| {
            let mut tokens = Vec::with_capacity(1024);
            tokens.extend(0..10u32);
            let mut entry = entry(id);
            entry.reusable.as_mut().unwrap().rendered.items = Arc::new(tokens);
            entry
        };
        let capacity = |cache: &ConnectionCache, id: &str| {
            cache
                .get(id)
                .expect("held")
                .reusable
                .as_ref()
                .unwrap()
                .rendered
                .items
                .capacity()
        };
        cache.put(spare("old"), None, false);
        for i in 0..STALE_AFTER {
            assert_eq!(capacity(&cache, "old"), 1024, "not stale after {i} puts");
            cache.put(spare(&format!("r{i}")), None, false);
        }
        assert_eq!(capacity(&cache, "old"), 10, "compacted once stale");
        cache.put(spare("newest"), None, false);
        assert_eq!(
            *cache
                .get("old")
                .unwrap()
                .reusable
                .as_ref()
                .unwrap()
                .rendered
                .items,
            (0..10).collect::<Vec<_>>()
        );
        assert_eq!(
            capacity(&cache, "newest"),
            1024,
            "the newest keeps room to grow"
        );
        // Taking and evicting leave the others' put counts as they were.
        assert!(cache.take("r3").is_some());
        cache.evict("r4");
        cache.put(spare("later"), None, false);
        assert_eq!(
            capacity(&cache, "r1"),
            10,
            "put STALE_AFTER + 1 responses ago"
        );
        assert_eq!(
            capacity(&cache, "r2"),
            1024,
            "put STALE_AFTER responses ago: not yet"
        );
    }

    #[test]
    fn an_entry_not_continued_for_longer_gives_up_its_rendering() {
        let mut cache = keeping_superseded();
        cache.put(sized("old", 10_000), None, false);
        let with_tokens = cache.bytes();
        for i in 0..FORGET_RENDERING_AFTER {
            assert!(cache.get("old").unwrap().reusable.is_some(), "kept at {i}");
            cache.put(entry(&format!("r{i}")), None, false);
        }
        assert!(cache.get("old").unwrap().reusable.is_none());
        assert!(
            cache.bytes() < with_tokens,
            "its tokens are no longer counted"
        );
        // Taken, it continues without a rendering to reuse; its items are all there.
        let (lineage, context, reusable) = cache.take("old").unwrap().into_successor();
        assert!(reusable.is_none());
        assert!(context.is_empty());
        assert!(lineage.back().unwrap().prompt.is_none());
    }

    #[test]
    fn a_stored_response_not_continued_for_a_while_is_left_to_the_store() {
        let mut cache = keeping_superseded();
        let mut stored = sized("stored", 1_000);
        stored.response.store = true;
        cache.put(stored, None, false);
        cache.put(sized("unstored", 1_000), None, false);
        for i in 1..STALE_AFTER {
            assert!(cache.get("stored").is_some(), "kept at {i}");
            cache.put(entry(&format!("r{i}")), None, false);
        }
        assert!(cache.get("stored").is_none(), "the store has it");
        assert!(cache.get("unstored").is_some(), "the only copy stays");
        for i in STALE_AFTER..=FORGET_RENDERING_AFTER {
            cache.put(entry(&format!("r{i}")), None, false);
        }
        assert!(cache.get("unstored").unwrap().reusable.is_none());
        assert_counted(&cache);
    }

    #[test]
    fn keeps_the_most_recent_and_evicts() {
        let mut cache = keeping_superseded();
        assert_eq!(Limits::default().entries, CAPACITY);
        for i in 0..CAPACITY + 5 {
            cache.put(entry(&format!("r{i}")), None, false);
        }
        assert_eq!(cache.len(), CAPACITY);
        assert!(cache.get("r0").is_none());
        assert!(cache.get(&format!("r{}", CAPACITY + 4)).is_some());
        cache.evict(&format!("r{}", CAPACITY + 4));
        assert!(cache.get(&format!("r{}", CAPACITY + 4)).is_none());
        cache.put(entry("r10"), None, false);
        assert_eq!(cache.len(), CAPACITY - 1, "re-putting an id replaces it");
        assert!(cache.take("r10").is_some());
        assert!(cache.get("r10").is_none(), "taking removes");
    }

    #[test]
    fn by_default_each_lane_keeps_its_latest_response() {
        let mut cache = ConnectionCache::default();
        assert_eq!(Limits::default().superseded, 0);
        // A conversation on the default lane, one on lane "b".
        cache.put(entry("a1"), None, false);
        cache.put(entry("b1"), Some("b"), false);
        // "a1" continued: taken, its successor the lane's latest; nothing superseded.
        assert!(cache.take("a1").is_some());
        cache.put(entry("a2"), None, false);
        assert!(cache.get("a2").is_some() && cache.get("b1").is_some());
        // A new conversation on the default lane supersedes "a2", which goes; "b1" stays.
        cache.put(entry("c1"), None, false);
        assert!(cache.get("a2").is_none(), "superseded");
        assert!(cache.get("c1").is_some() && cache.get("b1").is_some());
        assert_eq!(cache.len(), 2);
        assert_counted(&cache);
        // A continuation forked onto another lane takes its response from the first lane.
        assert!(cache.take("b1").is_some());
        cache.put(entry("b2"), Some("fork"), false);
        cache.put(entry("d1"), Some("b"), false);
        assert!(cache.get("b2").is_some() && cache.get("d1").is_some());
    }

    #[test]
    fn a_response_waiting_for_its_tool_outputs_is_not_superseded() {
        let mut cache = ConnectionCache::default();
        // The lead agent's response calls a tool; the agent run as that tool holds a
        // conversation of its own on the same lane, which ends with a message; then another.
        cache.put(entry("lead1"), None, true);
        cache.put(entry("tool1"), None, true);
        assert!(cache.take("tool1").is_some());
        cache.put(entry("tool2"), None, false);
        cache.put(entry("other"), None, false);
        assert!(cache.get("tool2").is_none(), "finished, then superseded");
        assert!(cache.get("lead1").is_some(), "waits for its tool's output");
        // Its outputs come: continued from memory.
        assert!(cache.take("lead1").is_some());
    }

    #[test]
    fn superseded_responses_are_kept_up_to_their_limit_oldest_going_first() {
        let mut cache = ConnectionCache::with_limits(Limits {
            superseded: 2,
            ..Limits::default()
        });
        for i in 0..5 {
            cache.put(entry(&format!("r{i}")), None, false);
        }
        cache.put(entry("other"), Some("b"), false);
        let held: Vec<&str> = cache.held().map(|e| e.response.id.as_str()).collect();
        assert_eq!(held, ["r2", "r3", "r4", "other"]);
        // Taking a superseded one leaves room for the next.
        assert!(cache.take("r2").is_some());
        cache.put(entry("r5"), None, false);
        let held: Vec<&str> = cache.held().map(|e| e.response.id.as_str()).collect();
        assert_eq!(held, ["r3", "r4", "other", "r5"]);
        cache.put(entry("r6"), None, false);
        let held: Vec<&str> = cache.held().map(|e| e.response.id.as_str()).collect();
        assert_eq!(held, ["r4", "other", "r5", "r6"]);
    }

    #[test]
    fn a_response_already_continued_is_rebuilt_from_its_descendant() {
        let tools: Vec<tether_protocol::Tool> = Vec::new();
        let first = vec![Item::user_text("one")];
        let rendered = RenderedPrompt::full(Some("be brief"), &tools, "[]", &first, None);
        let mut root = entry("root");
        root.context = Arc::new(first.clone());
        root.reusable.as_mut().unwrap().rendered = rendered.clone();
        let mut cache = keeping_superseded();
        cache.put(root, None, false);
        // A continuation takes the root and caches its own response with the root as ancestor.
        let taken = cache.take("root").unwrap();
        let (lineage, _, reusable) = taken.into_successor();
        let second = vec![Item::user_text("two")];
        let (extended, _) = reusable.expect("the root's rendering").rendered.extend(
            Some("be brief"),
            &tools,
            "[]",
            &second,
            None,
        );
        let mut child = entry("child");
        child.context = Arc::new(first.iter().chain(&second).cloned().collect());
        child.reusable.as_mut().unwrap().rendered = extended;
        child.lineage = lineage;
        cache.put(child, None, false);
        // A second continuation of the root: rebuilt from the child's prefix.
        let branch = cache.take("root").expect("served from the lineage");
        assert_eq!(*branch.context, first);
        assert_eq!(
            branch.reusable.as_ref().unwrap().rendered.items,
            rendered.items
        );
        assert_eq!(
            branch.reusable.as_ref().unwrap().rendered.ends,
            rendered.ends
        );
        assert!(branch.lineage.is_empty());
        assert!(cache.get("child").is_some(), "the descendant stays");
        // Evicting the root forgets it as an ancestor too.
        cache.evict("root");
        assert!(cache.take("root").is_none());
    }

    #[test]
    fn a_connection_keeps_to_its_bytes_but_always_its_newest_response() {
        let per_entry = sized("x", 1000).approximate_bytes();
        let mut cache = ConnectionCache::with_limits(Limits {
            entries: 100,
            superseded: 100,
            bytes: 3 * per_entry,
        });
        for i in 0..5 {
            cache.put(sized(&format!("r{i}"), 1000), None, false);
        }
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.bytes(), 3 * per_entry);
        assert!(cache.get("r1").is_none() && cache.get("r2").is_some());
        // One response larger than the whole limit is still kept, alone.
        cache.put(sized("huge", 10_000), None, false);
        assert_eq!(cache.len(), 1);
        assert!(cache.get("huge").is_some());
        assert!(cache.take("huge").is_some());
        assert_eq!(cache.bytes(), 0);
    }

    #[test]
    fn the_budget_evicts_the_least_recently_used_connection_first() {
        let per_entry = sized("x", 1000).approximate_bytes();
        let budget = CacheBudget::new(4 * per_entry);
        let limits = Limits {
            entries: 100,
            superseded: 100,
            bytes: usize::MAX,
        };
        let (a, b) = (
            SharedCache::new(limits, &budget),
            SharedCache::new(limits, &budget),
        );
        a.with(|c| c.put(sized("a1", 1000), None, false));
        a.with(|c| c.put(sized("a2", 1000), None, false));
        b.with(|c| c.put(sized("b1", 1000), None, false));
        b.with(|c| c.put(sized("b2", 1000), None, false));
        assert_eq!(budget.used(), 4 * per_entry);
        // `a` is used again; `b` is then the least recently used.
        assert!(a.with(|c| c.get("a1").is_some()));
        // One more on `a`: `b`'s oldest goes.
        a.with(|c| c.put(sized("a3", 1000), None, false));
        assert_eq!(budget.used(), 4 * per_entry);
        assert!(b.with(|c| c.get("b1").is_none()));
        assert!(b.with(|c| c.get("b2").is_some()));
        assert_eq!(a.with(|c| c.len()), 3);
        // A connection that closes gives its share back.
        drop(a);
        assert_eq!(budget.used(), per_entry);
    }

    /// A `response.create` of `model` continuing `previous`, its input referencing `references`.
    fn turn(model: &str, previous: Option<&str>, references: &[&str]) -> ResponseCreate {
        let mut request = ResponseCreate::new(model, "");
        request.previous_response_id = previous.map(str::to_string);
        let mut input = vec![Item::user_text("go on")];
        input.extend(
            references
                .iter()
                .map(|id| Item::ItemReference { id: id.to_string() }),
        );
        request.input = Input::Items(input);
        request
    }

    #[test]
    fn a_turn_checks_out_what_it_continues_and_checks_in_what_it_leaves() {
        let budget = CacheBudget::new(usize::MAX);
        let cache = SharedCache::new(Limits::default(), &budget);
        let said = |id: &str| {
            let mut said = Item::user_text(id);
            if let Item::Message(message) = &mut said {
                message.id = Some(id.into());
            }
            said
        };
        let mut first = entry("r1");
        first.context = Arc::new(vec![said("msg_1")]);
        let mut other = entry("r0");
        other.context = Arc::new(vec![said("msg_0")]);
        // Each the latest of its lane.
        for (entry, lane) in [(first, None), (other, Some("other"))] {
            cache.checkin(Checkin::Served {
                model: "m",
                replica: 2,
                entry: Some(Box::new(entry)),
                lane,
                awaits_outputs: false,
            });
        }
        // One lock: the previous response handed over, the referenced items of the responses
        // still held, the model's route.
        let out = cache.checkout(&turn("m", Some("r1"), &["msg_0", "msg_1"]));
        assert_eq!(out.previous.map(|p| p.response.id), Some("r1".into()));
        let referenced: Vec<_> = out.referenced.iter().filter_map(Item::id).collect();
        assert_eq!(referenced, ["msg_0"], "r1, which held msg_1, was taken");
        assert_eq!(out.route, Some(2));
        // A request without references, of a model this connection has not used: nothing.
        let out = cache.checkout(&ResponseCreate::new("other", "hi"));
        assert!(out.previous.is_none() && out.referenced.is_empty() && out.route.is_none());
        // A failed response leaves no entry but keeps the route it was served by.
        cache.checkin(Checkin::Served {
            model: "m",
            replica: 0,
            entry: None,
            lane: None,
            awaits_outputs: false,
        });
        let out = cache.checkout(&turn("m", Some("r1"), &[]));
        assert!(out.previous.is_none(), "taken, and not put back");
        assert_eq!(out.route, Some(0));
        // A refused turn forgets the response it continued.
        cache.checkin(Checkin::Refused {
            previous: Some("r0"),
        });
        assert!(
            cache
                .checkout(&turn("m", Some("r0"), &[]))
                .previous
                .is_none()
        );
        assert!(
            cache
                .checkout(&turn("m", None, &["msg_0"]))
                .referenced
                .is_empty(),
            "nor are its items found"
        );
    }
}
