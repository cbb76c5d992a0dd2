//! Reproducible randomness: every random choice of a request (jitter, injected failures, the
//! random generator) draws from an RNG seeded by the server's seed and the conversation, so a
//! run with the same `--seed` replays exactly, whatever the interleaving of connections.

use rand::SeedableRng;
use rand::rngs::StdRng;

use tether_protocol::Item;
use tether_protocol::items::{CustomToolCall, FunctionCall};

use crate::items;
use crate::model::Context;

/// The RNG of one request: `seed` mixed with the conversation, so the same conversation draws
/// the same numbers in every run with this seed. The conversation is identified by its model,
/// its length, its first item and its last two — not hashed whole, which would make every turn
/// cost time proportional to the history.
pub fn rng_for(seed: u64, context: &Context) -> StdRng {
    let mut hash = StableHash::new(seed);
    hash.write(context.request.model.as_bytes());
    hash.write(&(context.items.len() as u64).to_le_bytes());
    let tail = context.items.len().saturating_sub(2);
    for item in context
        .items
        .first()
        .into_iter()
        .chain(&context.items[tail..])
    {
        // Not the rendered header: it holds call ids, which are fresh in every run.
        hash.write(item.type_name().as_bytes());
        if let Item::FunctionCall(FunctionCall { name, .. })
        | Item::CustomToolCall(CustomToolCall { name, .. }) = item
        {
            hash.write(name.as_bytes());
        }
        hash.write(items::body(item).as_bytes());
    }
    StdRng::seed_from_u64(hash.finish())
}

/// A hash that is the same in every build, so seeds replay across binaries. It takes the bytes
/// eight at a time (xor, multiply, rotate): a turn's last item — a tool's output — is often
/// kilobytes, and FNV-1a's byte at a time cost ~3 instructions a byte (35,479 of a turn in
/// `cargo xtask turn-cost`).
struct StableHash(u64);

/// An odd multiplier with its bits spread (2^64 / the golden ratio).
const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

impl StableHash {
    fn new(seed: u64) -> Self {
        let mut hash = StableHash(0xcbf2_9ce4_8422_2325);
        hash.write(&seed.to_le_bytes());
        hash
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            self.mix(word);
        }
        let mut last = [0u8; 8];
        last[..words.remainder().len()].copy_from_slice(words.remainder());
        self.mix(u64::from_le_bytes(last));
        // The length ends the field, so ("ab", "c") and ("a", "bc") differ, as do the paddings.
        self.mix(bytes.len() as u64);
    }

    fn mix(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(MIX).rotate_left(29);
    }

    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash is part of what a seed replays: a change to it changes every seeded run.
    #[test]
    fn the_hash_is_stable_and_tells_fields_apart() {
        let hash = |fields: &[&str]| {
            let mut hash = StableHash::new(7);
            for field in fields {
                hash.write(field.as_bytes());
            }
            hash.finish()
        };
        assert_eq!(
            hash(&["model", "a tool's output, longer than a word"]),
            0xa7e6_d056_adcf_c0fd
        );
        assert_ne!(hash(&["ab", "c"]), hash(&["a", "bc"]));
        assert_ne!(hash(&["a"]), hash(&["a\0"]));
        assert_ne!(hash(&[""]), hash(&[]));
    }
}
