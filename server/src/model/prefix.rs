//! Chained hashes of a rendered prompt's prefixes, for an engine's prefix cache.
//!
//! An engine that caches prompt prefixes identifies a prefix by a hash of its tokens, and it
//! asks for that hash at many places — every cache block, every breakpoint. Hashing the whole
//! prompt on each request would make every WebSocket continuation cost time proportional to the
//! conversation, so the hash is *chained* (the hash after `n` tokens extends the hash after
//! `n - 1`) and kept every [`STRIDE`] tokens, beside the tokens it covers: a continuation extends
//! it over its new tokens only, and the hash at any place is a checkpoint plus fewer than
//! [`STRIDE`] tokens.
//!
//! The checkpoints live in an append-only log shared by the prompts that extend one another (a
//! conversation's turns), each prompt a view of its first checkpoints: extending the newest one
//! appends in place, a view kept elsewhere (an engine's memory of a response, for diagnostics)
//! stays valid and costs nothing, and only extending an older view — a branch of the
//! conversation — copies the log's prefix. The hashes carry no cache key: an engine mixes its key
//! in ([`keyed`]).

use std::sync::Arc;

use parking_lot::Mutex;

/// Tokens between two kept hashes.
pub const STRIDE: usize = 64;

/// A chained hash over tokens: the value after `n` tokens identifies the first `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chain(pub u64);

impl Chain {
    /// The hash of no tokens.
    pub const START: Chain = Chain(0x7e74_6865_725f_7063);

    pub fn push(&mut self, token: u32) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(token)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// A prefix's hash under a cache key's `seed`: two keys never share a prefix.
pub fn keyed(seed: u64, prefix: u64) -> u64 {
    let mut chain = Chain(prefix ^ seed.rotate_left(29));
    chain.push((seed >> 32) as u32);
    chain.push(seed as u32);
    chain.0
}

/// The hash of a prompt's prefix every [`STRIDE`] tokens (checkpoint `k` covers the first
/// `(k + 1) * STRIDE` tokens). Cloning is a view: it copies no hashes.
#[derive(Debug, Clone, Default)]
pub struct PrefixHashes {
    log: Arc<Mutex<Vec<u64>>>,
    /// Checkpoints of this prompt: the log's first `len`.
    len: usize,
}

impl PrefixHashes {
    /// Checkpoints kept.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Brings the checkpoints up to date with the prompt `preamble` + `items`, which extends the
    /// tokens the existing ones were taken over: hashes only the tokens past the last one.
    pub fn extend(&mut self, preamble: &[u32], items: &[u32]) {
        let total = preamble.len() + items.len();
        let wanted = total / STRIDE;
        if wanted <= self.len {
            self.len = wanted;
            return;
        }
        let mut log = self.log.lock();
        if log.len() != self.len {
            // Another view extended this log past us (a branch): continue on a copy.
            let copy = log[..self.len].to_vec();
            drop(log);
            self.log = Arc::new(Mutex::new(copy));
            log = self.log.lock();
        }
        let mut chain = match self.len {
            0 => Chain::START,
            n => Chain(log[n - 1]),
        };
        let start = self.len * STRIDE;
        let end = wanted * STRIDE;
        let split = preamble.len();
        let from_preamble = &preamble[start.min(split)..end.min(split)];
        let from_items = &items[start.saturating_sub(split)..end.saturating_sub(split)];
        // A stride at a time (one may span the preamble's end): a tight loop of pushes, then
        // the checkpoint, where a test of every token's position cost three times the pushes.
        let mut pushed = 0;
        for mut part in [from_preamble, from_items] {
            while !part.is_empty() {
                let (now, rest) = part.split_at((STRIDE - pushed).min(part.len()));
                for &token in now {
                    chain.push(token);
                }
                pushed += now.len();
                part = rest;
                if pushed == STRIDE {
                    log.push(chain.0);
                    pushed = 0;
                }
            }
        }
        self.len = log.len();
    }

    /// The first `checkpoints` of these (a shorter prompt of the same conversation).
    pub fn prefix(&self, checkpoints: usize) -> PrefixHashes {
        PrefixHashes {
            log: self.log.clone(),
            len: checkpoints.min(self.len),
        }
    }

    /// The chain after the first `(index + 1) * STRIDE` tokens, or after none for `None`.
    pub fn checkpoint(&self, index: Option<usize>) -> Chain {
        match index {
            None => Chain::START,
            Some(index) if index < self.len => Chain(self.log.lock()[index]),
            Some(_) => panic!("checkpoint past the prompt's end"),
        }
    }

    /// The hash of the prefix of `at` tokens of the prompt whose tokens are `token(i)`: a
    /// checkpoint, then fewer than [`STRIDE`] tokens.
    pub fn at(&self, at: usize, token: impl Fn(usize) -> u32) -> u64 {
        let kept = (at / STRIDE).min(self.len);
        let mut chain = self.checkpoint(kept.checked_sub(1));
        for index in kept * STRIDE..at {
            chain.push(token(index));
        }
        chain.0
    }

    /// How many leading checkpoints these and `other` share (the prefixes they cover are the
    /// same, but for a collision of 64-bit hashes): a binary search, since the hashes chain.
    pub fn common(&self, other: &PrefixHashes) -> usize {
        let shortest = self.len.min(other.len);
        if Arc::ptr_eq(&self.log, &other.log) {
            return shortest;
        }
        let (mut low, mut high) = (0, shortest);
        while low < high {
            let middle = (low + high).div_ceil(2);
            // One log locked at a time.
            let mine = self.log.lock()[middle - 1];
            if mine == other.log.lock()[middle - 1] {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        low
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_chain(tokens: &[u32], at: usize) -> u64 {
        let mut chain = Chain::START;
        for token in &tokens[..at] {
            chain.push(*token);
        }
        chain.0
    }

    #[test]
    fn extending_hashes_only_the_new_tokens_and_equals_hashing_everything() {
        let tokens: Vec<u32> = (0..1000).map(|i| i * 7 + 1).collect();
        let mut hashes = PrefixHashes::default();
        hashes.extend(&tokens[..40], &tokens[40..100]);
        assert_eq!(hashes.len(), 100 / STRIDE);
        hashes.extend(&tokens[..40], &tokens[40..]);
        assert_eq!(hashes.len(), 1000 / STRIDE);
        let mut whole = PrefixHashes::default();
        whole.extend(&[], &tokens);
        for at in [0, 1, 31, 32, 33, 100, 128, 999, 1000] {
            assert_eq!(
                hashes.at(at, |i| tokens[i]),
                full_chain(&tokens, at),
                "at {at}"
            );
            assert_eq!(whole.at(at, |i| tokens[i]), full_chain(&tokens, at));
        }
        assert_eq!(hashes.common(&whole), 1000 / STRIDE);
    }

    #[test]
    fn a_view_survives_its_log_growing_and_a_branch_copies() {
        let tokens: Vec<u32> = (0..640).collect();
        let mut trunk = PrefixHashes::default();
        trunk.extend(&tokens[..320], &[]);
        let kept = trunk.clone();
        trunk.extend(&tokens[..500], &tokens[500..]);
        assert_eq!(kept.len(), 320 / STRIDE);
        assert_eq!(kept.at(320, |i| tokens[i]), full_chain(&tokens, 320));
        assert!(
            Arc::ptr_eq(&kept.log, &trunk.log),
            "the newest view appended in place"
        );

        // A branch from the kept view: other tokens after the first 320.
        let other: Vec<u32> = tokens[..320].iter().copied().chain(5000..5320).collect();
        let mut branch = kept.clone();
        branch.extend(&other[..10], &other[10..]);
        assert!(!Arc::ptr_eq(&branch.log, &trunk.log), "a branch copies");
        assert_eq!(branch.at(640, |i| other[i]), full_chain(&other, 640));
        assert_eq!(trunk.at(640, |i| tokens[i]), full_chain(&tokens, 640));
        assert_eq!(
            branch.common(&trunk),
            320 / STRIDE,
            "they share the first 320 tokens"
        );
        assert_eq!(trunk.prefix(2).common(&branch), 2);
    }

    #[test]
    fn keys_keep_prefixes_apart() {
        assert_ne!(keyed(1, 42), keyed(2, 42));
        assert_ne!(keyed(1, 42), keyed(1, 43));
    }
}
