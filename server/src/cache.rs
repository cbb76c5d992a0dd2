//! The connection-scoped response cache of WebSocket mode.
//!
//! One connection owns one cache and drops it when it closes; it never touches disk. Its lanes
//! share it (behind a mutex held only for a lookup or an insert, never across an await). It
//! keeps the most recent responses (at least the latest of every lane) with the full logical
//! context after each — input and output items, their rendered tokens and the compiled tool
//! schemas — so a continuation starts from memory instead of the store and only renders,
//! validates and classifies its new items.

use std::collections::VecDeque;
use std::sync::Arc;

use tether_protocol::{Item, Response};

use crate::stages::render::RenderedPrompt;
use crate::stages::validate::CompiledTools;

/// The work a continuation can reuse: the conversation rendered, the tools compiled (cheap
/// clones of shared buffers).
#[derive(Debug, Clone, Default)]
pub struct Reusable {
    pub rendered: RenderedPrompt,
    pub compiled: CompiledTools,
}

/// How many responses one connection remembers; enough for the latest of many lanes.
pub const CAPACITY: usize = 64;

/// A response as the cache keeps it.
#[derive(Debug, Clone)]
pub struct CachedResponse {
    pub response: Response,
    /// The whole conversation after this response: its input context, then its output.
    pub context: Arc<Vec<Item>>,
    /// That conversation rendered (a continuation appends only its new items' tokens) and the
    /// response's tools compiled (reused while a continuation offers the same tools).
    pub reusable: Reusable,
}

/// Recently completed responses of one connection, newest last, and the engine replica each
/// model's requests went to (the connection keeps its routing, as the reference does).
#[derive(Debug, Default)]
pub struct ConnectionCache {
    entries: VecDeque<CachedResponse>,
    routes: Vec<(String, usize)>,
}

impl ConnectionCache {
    /// The replica `model`'s requests on this connection went to.
    pub fn route(&self, model: &str) -> Option<usize> {
        self.routes
            .iter()
            .find(|(known, _)| known == model)
            .map(|(_, replica)| *replica)
    }

    /// Remembers that `model`'s requests go to `replica`.
    pub fn keep_route(&mut self, model: String, replica: usize) {
        match self.routes.iter_mut().find(|(known, _)| *known == model) {
            Some(route) => route.1 = replica,
            None => self.routes.push((model, replica)),
        }
    }

    /// The cached response `id`, if still held.
    pub fn get(&self, id: &str) -> Option<&CachedResponse> {
        self.entries
            .iter()
            .rev()
            .find(|entry| entry.response.id == id)
    }

    /// Hands response `id` over to a continuation, which extends its context in place rather
    /// than copying it. The continuation's own response replaces it; if the continuation fails,
    /// it stays evicted (docs/protocol.md, errors).
    pub fn take(&mut self, id: &str) -> Option<CachedResponse> {
        let position = self
            .entries
            .iter()
            .rposition(|entry| entry.response.id == id)?;
        self.entries.remove(position)
    }

    /// The items with these ids in the responses held (their input context or output).
    pub fn find_items(&self, ids: &[String]) -> Vec<Item> {
        let mut found: Vec<Item> = Vec::new();
        for entry in self.entries.iter().rev() {
            for item in entry.context.iter() {
                if let Some(id) = item.id()
                    && ids.iter().any(|wanted| wanted == id)
                    && !found.iter().any(|seen| seen.id() == Some(id))
                {
                    found.push(item.clone());
                }
            }
        }
        found
    }

    /// Remembers a response, forgetting the oldest beyond [`CAPACITY`].
    pub fn put(&mut self, entry: CachedResponse) {
        self.evict(&entry.response.id.clone());
        if self.entries.len() == CAPACITY {
            self.entries.pop_front();
        }
        self.entries.push_back(entry);
    }

    /// Forgets response `id` (after a failed continuation from it).
    pub fn evict(&mut self, id: &str) {
        self.entries.retain(|entry| entry.response.id != id);
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

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::ResponseCreate;

    fn entry(id: &str) -> CachedResponse {
        CachedResponse {
            response: Response::in_progress(id, 0, &ResponseCreate::new("m", "")),
            context: Arc::new(Vec::new()),
            reusable: Reusable::default(),
        }
    }

    #[test]
    fn keeps_the_most_recent_and_evicts() {
        let mut cache = ConnectionCache::default();
        for i in 0..CAPACITY + 5 {
            cache.put(entry(&format!("r{i}")));
        }
        assert_eq!(cache.len(), CAPACITY);
        assert!(cache.get("r0").is_none());
        assert!(cache.get(&format!("r{}", CAPACITY + 4)).is_some());
        cache.evict(&format!("r{}", CAPACITY + 4));
        assert!(cache.get(&format!("r{}", CAPACITY + 4)).is_none());
        cache.put(entry("r10"));
        assert_eq!(cache.len(), CAPACITY - 1, "re-putting an id replaces it");
        assert!(cache.take("r10").is_some());
        assert!(cache.get("r10").is_none(), "taking removes");
    }
}
