//! The conversation part of an engine request, serialized once. An engine is stateless, so every
//! request carries the whole conversation; but a continuation's conversation is its previous
//! response's plus a few new items, so the serialized `messages` (or `input`) of the previous
//! request are kept ([`Prefixes`], by response id) and a continuation serializes only its new
//! items; the kept bytes go out again as they are, shared rather than copied
//! ([`super::body::Parts`]). Tether's work per WebSocket turn stays proportional to the new
//! input; only the bytes sent grow with the conversation, as they must.

use std::sync::Arc;

use bytes::Bytes;
use lru::LruCache;
use parking_lot::Mutex;
use serde_json::Value;

/// A conversation's entries (messages or input items) serialized, and the last one still open
/// while more may join it (an assistant message that the next tool calls belong to).
#[derive(Debug, Clone, Default)]
pub struct Prefix {
    /// The entries that can no longer change, serialized: segments of comma-joined entries,
    /// shared (not copied) between a prefix and its continuations.
    segments: Vec<Bytes>,
    /// Entries closed since the last segment, serialized and comma-joined.
    pending: Vec<u8>,
    /// The last entry, while it may still change.
    pub open: Option<Value>,
    /// The conversation items it was built from.
    pub items: usize,
    /// A fingerprint of the last of them ([`fingerprint`]): a continuation whose item there
    /// differs (a conversation rewritten) does not continue this one.
    pub last: Option<u64>,
}

/// Segments a prefix holds at most; beyond, they are joined into one (a copy, once in so many
/// turns).
const SEGMENTS: usize = 64;

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
        if !self.pending.is_empty() {
            self.pending.push(b',');
        }
        // A `Value` always serializes.
        let _ = serde_json::to_writer(&mut self.pending, entry);
    }

    /// Seals the entries closed since the last call into a segment of their own.
    pub fn seal(&mut self) {
        if !self.pending.is_empty() {
            self.segments
                .push(Bytes::from(std::mem::take(&mut self.pending)));
        }
        if self.segments.len() > SEGMENTS {
            let joined = join(&self.segments, b",");
            self.segments = vec![Bytes::from(joined)];
        }
    }

    /// The entries as a JSON array, after `head` when given (the instructions' message), as
    /// parts of a body: the sealed segments shared, not copied. Seal first.
    pub fn array(&self, head: Option<&Value>, out: &mut Vec<Bytes>) {
        const COMMA: Bytes = Bytes::from_static(b",");
        out.push(Bytes::from_static(b"["));
        let mut first = true;
        let mut separate = |out: &mut Vec<Bytes>| {
            if !first {
                out.push(COMMA);
            }
            first = false;
        };
        if let Some(head) = head {
            separate(out);
            out.push(Bytes::from(serde_json::to_vec(head).unwrap_or_default()));
        }
        for segment in &self.segments {
            separate(out);
            out.push(segment.clone());
        }
        if !self.pending.is_empty() {
            separate(out);
            out.push(Bytes::copy_from_slice(&self.pending));
        }
        if let Some(open) = &self.open {
            separate(out);
            out.push(Bytes::from(serde_json::to_vec(open).unwrap_or_default()));
        }
        out.push(Bytes::from_static(b"]"));
    }

    /// Bytes it holds, about (segments shared with other prefixes counted again).
    pub fn size(&self) -> usize {
        self.segments.iter().map(Bytes::len).sum::<usize>()
            + self.pending.len()
            + self.open.as_ref().map_or(0, |o| o.to_string().len())
    }
}

/// `parts` joined by `separator`.
fn join(parts: &[Bytes], separator: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(parts.iter().map(Bytes::len).sum::<usize>() + parts.len());
    for (index, part) in parts.iter().enumerate() {
        if index > 0 {
            out.extend_from_slice(separator);
        }
        out.extend_from_slice(part);
    }
    out
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

    fn text(prefix: &Prefix, head: Option<&Value>) -> Value {
        let mut parts = Vec::new();
        prefix.array(head, &mut parts);
        serde_json::from_slice(&join(&parts, b"")).unwrap()
    }

    #[test]
    fn entries_serialize_once_and_the_open_one_last() {
        let mut prefix = Prefix::default();
        assert_eq!(text(&prefix, None), json!([]));
        prefix.push(&json!({"role": "user", "content": "hi"}));
        prefix.seal();
        prefix.open = Some(json!({"role": "assistant", "content": null}));
        assert_eq!(
            text(&prefix, Some(&json!({"role": "system", "content": "s"}))),
            json!([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"},
                   {"role": "assistant", "content": null}])
        );
        // A continuation shares the sealed segment and adds its own.
        let mut next = prefix.clone();
        next.push(&json!({"role": "tool", "content": "x"}));
        next.seal();
        assert!(next.open.is_none());
        assert_eq!(next.segments.len(), 2);
        assert_eq!(next.segments[0].as_ptr(), prefix.segments[0].as_ptr());
        assert_eq!(text(&next, None).as_array().unwrap().len(), 3);
    }

    #[test]
    fn many_segments_are_joined_once_in_a_while() {
        let mut prefix = Prefix::default();
        for turn in 0..(SEGMENTS + 2) {
            prefix.push(&json!({"turn": turn}));
            prefix.seal();
        }
        assert!(prefix.segments.len() <= SEGMENTS);
        let entries = text(&prefix, None);
        assert_eq!(entries.as_array().unwrap().len(), SEGMENTS + 2);
        assert_eq!(entries[SEGMENTS + 1], json!({"turn": SEGMENTS + 1}));
    }

    #[test]
    fn the_budget_evicts_the_least_recently_used() {
        let prefixes = Prefixes::default();
        let mut big = Prefix::default();
        big.push(&json!("x".repeat(BUDGET_BYTES / 5)));
        big.seal();
        let big = Arc::new(big);
        for id in ["a", "b", "c", "d", "e"] {
            prefixes.put(id.into(), big.clone());
        }
        assert!(prefixes.bytes() <= BUDGET_BYTES);
        assert!(prefixes.get("a").is_none(), "the oldest left first");
        assert!(prefixes.get("e").is_some());
    }
}
