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
    let mut hash = Fnv1a::new(seed);
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

/// FNV-1a: a hash that is the same in every build, so seeds replay across binaries.
struct Fnv1a(u64);

impl Fnv1a {
    fn new(seed: u64) -> Self {
        let mut hash = Fnv1a(0xcbf2_9ce4_8422_2325);
        hash.write(&seed.to_le_bytes());
        hash
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // Separates fields so ("ab", "c") and ("a", "bc") differ.
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0000_0100_0000_01b3);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
