//! The words that are one token: o200k_base's vocabulary by its tokens' bytes.
//!
//! Most words of a text are a token of their own (every common English word with its leading
//! space, most of code's names and symbols), and a BPE encodes a token's bytes as that token
//! (the `bpe` crate checks it for every token when it builds a vocabulary). Looking the word up
//! is a hash of a few bytes; the crate's encoder, for the same answer, allocates two vectors and
//! searches its automaton (BENCHMARKS.md, "Server CPU per turn"). The table holds token ids
//! only and compares against the vocabulary's own bytes: ~1 MiB for 200k tokens, built once
//! with the tokenizer.

use std::hash::BuildHasher;
use std::sync::LazyLock;

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use foldhash::fast::FixedState;
use hashbrown::HashTable;

use super::tokenizer;

/// A fixed seed: the table is the same in every process, and so is the work of a lookup.
const HASHER: FixedState = FixedState::with_seed(0x6f32_3030_6b5f_6261);

struct Vocabulary {
    bpe: &'static BytePairEncoding,
    ids: HashTable<u32>,
}

static VOCABULARY: LazyLock<Vocabulary> = LazyLock::new(|| {
    let bpe = &tokenizer().bpe;
    let count = bpe.num_tokens();
    let mut ids = HashTable::with_capacity(count);
    for id in 0..count as u32 {
        ids.insert_unique(HASHER.hash_one(bpe.token_bytes(id)), id, |&id| {
            HASHER.hash_one(bpe.token_bytes(id))
        });
    }
    Vocabulary { bpe, ids }
});

/// The token whose bytes are `word`, if there is one.
pub fn token_of(word: &[u8]) -> Option<u32> {
    let vocabulary = &*VOCABULARY;
    vocabulary
        .ids
        .find(HASHER.hash_one(word), |&id| {
            vocabulary.bpe.token_bytes(id) == word
        })
        .copied()
}

/// Builds the table now rather than on the first request.
pub fn load() {
    LazyLock::force(&VOCABULARY);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_found_by_its_bytes_and_encodes_as_itself() {
        let bpe = &tokenizer().bpe;
        // Every 97th token (the whole vocabulary takes a while unoptimised).
        for id in (0..bpe.num_tokens() as u32).step_by(97) {
            let bytes = bpe.token_bytes(id);
            assert_eq!(token_of(bytes), Some(id));
            assert_eq!(bpe.encode_via_backtracking(bytes), [id]);
        }
        assert_eq!(
            token_of(b" the"),
            Some(bpe.encode_via_backtracking(b" the")[0])
        );
        assert_eq!(token_of(b"zqxjkvbw-not-a-token"), None);
        assert_eq!(token_of(b""), None);
    }
}
