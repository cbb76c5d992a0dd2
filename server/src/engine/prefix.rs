//! The conversation part of an engine request, serialized once. An engine is stateless, so every
//! request carries the whole conversation; but a continuation's conversation is its previous
//! response's plus a few new items, so the serialized `messages` (or `input`) of the previous
//! request are kept ([`Prefixes`], by response id) and a continuation serializes only its new
//! items after a copy of them. Tether's work per WebSocket turn stays proportional to the new
//! input; only the bytes sent grow with the conversation, as they must.

use std::sync::Arc;

use lru::LruCache;
use parking_lot::Mutex;
use serde_json::Value;

/// A conversation's entries (messages or input items) serialized, and the last one still open
/// while more may join it (an assistant message that the next tool calls belong to).
#[derive(Debug, Clone, Default)]
pub struct Prefix {
    /// The entries that can no longer change, serialized and joined by commas.
    closed: Vec<u8>,
    /// The last entry, while it may still change.
    pub open: Option<Value>,
    /// The conversation items it was built from.
    pub items: usize,
    /// A fingerprint of the last of them ([`fingerprint`]): a continuation whose item there
    /// differs (a conversation rewritten) does not continue this one.
    pub last: Option<u64>,
}

impl Prefix {
    /// Appends a finished entry (closing the open one first).
    pub fn push(&mut self, entry: &Value) {
        self.close();
        self.append(entry);
    }

    /// Closes the open entry.
    pub fn close(&mut self) {
        if let Some(open) = self.open.take() {
            self.append(&open);
        }
    }

    fn append(&mut self, entry: &Value) {
        if !self.closed.is_empty() {
            self.closed.push(b',');
        }
        // A `Value` always serializes.
        let _ = serde_json::to_writer(&mut self.closed, entry);
    }

    /// The entries as a JSON array, after `head` when given (the instructions' message).
    pub fn array(&self, head: Option<&Value>, out: &mut Vec<u8>) {
        out.push(b'[');
        let mut first = true;
        if let Some(head) = head {
            let _ = serde_json::to_writer(&mut *out, head);
            first = false;
        }
        if !self.closed.is_empty() {
            if !first {
                out.push(b',');
            }
            out.extend_from_slice(&self.closed);
            first = false;
        }
        if let Some(open) = &self.open {
            if !first {
                out.push(b',');
            }
            let _ = serde_json::to_writer(&mut *out, open);
        }
        out.push(b']');
    }

    /// Bytes it holds, about.
    pub fn size(&self) -> usize {
        self.closed.len() + self.open.as_ref().map_or(0, |o| o.to_string().len())
    }
}

/// A fingerprint of one conversation item (its JSON, hashed).
pub fn fingerprint(item: &tether_protocol::Item) -> u64 {
    use std::hash::{DefaultHasher, Hasher};
    let mut hasher = DefaultHasher::new();
    hasher.write(&serde_json::to_vec(item).unwrap_or_default());
    hasher.finish()
}

/// Whether `prefix` can be continued by a conversation of `items`: it holds fewer of them or as
/// many, and the last it holds is the same.
pub fn continues(prefix: &Prefix, items: &[tether_protocol::Item]) -> bool {
    match prefix.items {
        0 => true,
        n if n > items.len() => false,
        n => prefix.last == Some(fingerprint(&items[n - 1])),
    }
}

/// How much the kept prefixes may hold in all, and how many of them.
const BUDGET_BYTES: usize = 256 << 20;
const ENTRIES: usize = 4096;

/// The serialized conversations of recent engine requests, by the response they were for: the
/// least recently used go first beyond [`ENTRIES`] or [`BUDGET_BYTES`].
pub struct Prefixes {
    entries: Mutex<(LruCache<String, Arc<Prefix>>, usize)>,
}

impl Default for Prefixes {
    fn default() -> Self {
        Prefixes {
            entries: Mutex::new((LruCache::unbounded(), 0)),
        }
    }
}

impl Prefixes {
    /// The prefix kept for response `id`.
    pub fn get(&self, id: &str) -> Option<Arc<Prefix>> {
        self.entries.lock().0.get(id).cloned()
    }

    /// Keeps `prefix` for response `id`.
    pub fn put(&self, id: String, prefix: Arc<Prefix>) {
        let size = prefix.size();
        if size > BUDGET_BYTES / 4 {
            return;
        }
        let mut guard = self.entries.lock();
        let (entries, bytes) = &mut *guard;
        if let Some(old) = entries.put(id, prefix) {
            *bytes -= old.size();
        }
        *bytes += size;
        while *bytes > BUDGET_BYTES || entries.len() > ENTRIES {
            match entries.pop_lru() {
                Some((_, old)) => *bytes -= old.size(),
                None => break,
            }
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.entries.lock().1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_serialize_once_and_the_open_one_last() {
        let mut prefix = Prefix::default();
        let mut out = Vec::new();
        prefix.array(None, &mut out);
        assert_eq!(out, b"[]");
        prefix.push(&json!({"role": "user", "content": "hi"}));
        prefix.open = Some(json!({"role": "assistant", "content": null}));
        let mut out = Vec::new();
        prefix.array(Some(&json!({"role": "system", "content": "s"})), &mut out);
        let value: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            value,
            json!([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"},
                   {"role": "assistant", "content": null}])
        );
        prefix.push(&json!({"role": "tool", "content": "x"}));
        assert!(prefix.open.is_none());
        assert_eq!(
            String::from_utf8_lossy(&prefix.closed)
                .matches("role")
                .count(),
            3
        );
    }

    #[test]
    fn the_budget_evicts_the_least_recently_used() {
        let prefixes = Prefixes::default();
        let mut big = Prefix::default();
        big.push(&json!("x".repeat(BUDGET_BYTES / 5)));
        let big = Arc::new(big);
        for id in ["a", "b", "c", "d", "e"] {
            prefixes.put(id.into(), big.clone());
        }
        assert!(prefixes.bytes() <= BUDGET_BYTES);
        assert!(prefixes.get("a").is_none(), "the oldest left first");
        assert!(prefixes.get("e").is_some());
    }
}
