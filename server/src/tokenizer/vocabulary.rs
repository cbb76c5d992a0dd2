//! The words that are one token: o200k_base's vocabulary by its tokens' bytes.
//!
//! Most words of a text are a token of their own (every common English word with its leading
//! space, most of code's names and symbols), and a BPE encodes a token's bytes as that token
//! (the `bpe` crate checks it for every token when it builds a vocabulary). Looking the word up
//! is a hash of a few bytes; the crate's encoder, for the same answer, allocates two vectors and
//! searches its automaton (docs/benchmarks-history.md, "Server CPU per turn").
//!
//! Each slot of the table holds a token's length and first eight bytes beside its id, so a
//! lookup of a word of up to eight bytes — most words — compares within the slot and reads
//! nothing else; a longer one compares the rest against the vocabulary's own bytes. Under load
//! the table is not in the processor's caches: the vocabulary's offsets and bytes were two more
//! misses a lookup (docs/benchmarks-history.md, "Server CPU per turn"). ~4 MiB for 200k tokens,
//! built once with the tokenizer.

use std::sync::LazyLock;

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use hashbrown::HashTable;

use super::tokenizer;

struct Vocabulary {
    bpe: &'static BytePairEncoding,
    slots: HashTable<Slot>,
}

/// A token in the table: its id, its length and its first eight bytes (zero-padded).
#[derive(Debug, Clone, Copy)]
struct Slot {
    head: u64,
    id: u32,
    len: u32,
}

/// The first eight bytes of `word`, little-endian, zero-padded when it is shorter: two loads
/// that may overlap, whose overlapping bytes agree. (A `copy_from_slice` of a variable length
/// was a call to `memcpy` a word: 1.6 % of a turn.)
fn head(word: &[u8]) -> u64 {
    let len = word.len();
    if let Some(first) = word.first_chunk::<8>() {
        u64::from_le_bytes(*first)
    } else if len >= 4 {
        let low = u64::from(u32::from_le_bytes(word[..4].try_into().expect("4 bytes")));
        let high = u64::from(u32::from_le_bytes(
            word[len - 4..].try_into().expect("4 bytes"),
        ));
        low | high << (8 * (len - 4))
    } else if len >= 2 {
        let low = u64::from(u16::from_le_bytes(word[..2].try_into().expect("2 bytes")));
        let high = u64::from(u16::from_le_bytes(
            word[len - 2..].try_into().expect("2 bytes"),
        ));
        low | high << (8 * (len - 2))
    } else {
        word.first().map_or(0, |&byte| u64::from(byte))
    }
}

/// The table's hash of a word: of its head, its length and (past eight bytes) its last eight
/// bytes, mixed by one folded multiply — a few loads, where hashing the slice read and mixed
/// every byte. Tokens that share all three (over 16 bytes, with a common start and end) share a
/// hash and are told apart by the comparison; indented code's tokens (eight spaces, then a
/// word) differ in their tails.
fn key(word: &[u8]) -> u64 {
    let tail = match word.last_chunk::<8>() {
        Some(last) if word.len() > 8 => u64::from_le_bytes(*last),
        _ => 0,
    };
    let mixed = (head(word) ^ SEED).wrapping_add(word.len() as u64);
    let product = u128::from(mixed) * u128::from(tail ^ SEED.rotate_left(29) ^ MULTIPLIER);
    (product as u64) ^ (product >> 64) as u64
}

/// Fixed constants: the table is the same in every process, and so is the work of a lookup.
const SEED: u64 = 0x6f32_3030_6b5f_6261;
const MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

static VOCABULARY: LazyLock<Vocabulary> = LazyLock::new(|| {
    let bpe = &tokenizer().bpe;
    let count = bpe.num_tokens();
    let mut slots = HashTable::with_capacity(count);
    for id in 0..count as u32 {
        let bytes = bpe.token_bytes(id);
        let slot = Slot {
            head: head(bytes),
            id,
            len: u32::try_from(bytes.len()).expect("a token is short"),
        };
        slots.insert_unique(key(bytes), slot, |slot| key(bpe.token_bytes(slot.id)));
    }
    Vocabulary { bpe, slots }
});

/// The token whose bytes are `word`, if there is one.
pub fn token_of(word: &[u8]) -> Option<u32> {
    let vocabulary = &*VOCABULARY;
    let (wanted_head, wanted_len) = (head(word), word.len());
    vocabulary
        .slots
        .find(key(word), |slot| {
            slot.len as usize == wanted_len
                && slot.head == wanted_head
                && (wanted_len <= 8 || vocabulary.bpe.token_bytes(slot.id)[8..] == word[8..])
        })
        .map(|slot| slot.id)
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

    #[test]
    fn a_word_that_differs_from_a_token_past_its_head_or_in_length_is_not_that_token() {
        let bpe = &tokenizer().bpe;
        let by_scan =
            |word: &[u8]| (0..bpe.num_tokens() as u32).find(|&id| bpe.token_bytes(id) == word);
        let long: Vec<u32> = (0..bpe.num_tokens() as u32)
            .filter(|&id| bpe.token_bytes(id).len() > 9)
            .step_by(4001)
            .collect();
        assert!(long.len() > 3);
        for id in long {
            let bytes = bpe.token_bytes(id);
            // The same first eight bytes, a different last one; one byte shorter; padded.
            let mut changed = bytes.to_vec();
            *changed.last_mut().unwrap() ^= 0x01;
            let shorter = &bytes[..bytes.len() - 1];
            let mut padded = bytes.to_vec();
            padded.push(0);
            for word in [&changed[..], shorter, &padded[..]] {
                assert_eq!(token_of(word), by_scan(word), "{word:?}");
            }
        }
        // A short word and the same bytes with a zero after them: the lengths tell them apart.
        let the = token_of(b" the").unwrap();
        assert_eq!(token_of(b" the\0"), by_scan(b" the\0"));
        assert_ne!(token_of(b" the\0"), Some(the));
    }
}
