//! The tokens of the words that are several tokens, remembered per thread.
//!
//! A word that is not one token goes through the `bpe` crate's backtracking encoder, which
//! allocates an encoder a call: ~2,000 instructions a word, a quarter of a tool output's
//! tokenizing for 3 % of its words (`cargo xtask turn-cost`'s profile). Such words recur — a
//! log's or a compiler's output repeats its identifiers and punctuation line after line, turn
//! after turn — so each thread keeps the tokens of the last few thousand, as Hugging Face's
//! `tokenizers` keeps a word cache for its BPE. The cache holds only the encoder's own answers:
//! the tokens are the crate's, whatever is cached.

use std::cell::RefCell;
use std::collections::HashMap;

use foldhash::fast::FixedState;

/// Words remembered a thread; past it the cache starts again empty (at most ~400 KiB).
const MAX_WORDS: usize = 4096;
/// Longer words are encoded every time (they rarely recur, and a key holds the whole word).
const MAX_LEN: usize = 48;

/// A word's bytes and its tokens.
type Words = HashMap<Box<[u8]>, Box<[u32]>, FixedState>;

thread_local! {
    static WORDS: RefCell<Words> = const {
        RefCell::new(HashMap::with_hasher(FixedState::with_seed(0x7365_7665_7261_6c73)))
    };
}

/// Appends the tokens of `word` (not one token) to `out`.
pub fn encode_into(word: &[u8], out: &mut Vec<u32>) {
    let bpe = &super::tokenizer().bpe;
    if word.len() > MAX_LEN {
        out.extend(bpe.encode_via_backtracking(word));
        return;
    }
    WORDS.with_borrow_mut(|words| {
        if let Some(tokens) = words.get(word) {
            out.extend_from_slice(tokens);
            return;
        }
        let tokens = bpe.encode_via_backtracking(word);
        out.extend_from_slice(&tokens);
        if words.len() >= MAX_WORDS {
            words.clear();
        }
        words.insert(word.into(), tokens.into_boxed_slice());
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remembered_word_gives_the_encoders_tokens() {
        let bpe = &crate::tokenizer::tokenizer().bpe;
        for word in ["`request", "(ctx", " handle_unused", "zqxjkvbw"] {
            let expected = bpe.encode_via_backtracking(word.as_bytes());
            for _ in 0..2 {
                let mut out = vec![7];
                encode_into(word.as_bytes(), &mut out);
                assert_eq!(out[0], 7, "appended, not replaced");
                assert_eq!(out[1..], expected[..], "{word}");
            }
        }
        let long = "x".repeat(MAX_LEN + 1);
        let mut out = Vec::new();
        encode_into(long.as_bytes(), &mut out);
        assert_eq!(out, bpe.encode_via_backtracking(long.as_bytes()));
    }

    #[test]
    fn a_full_cache_starts_again_and_keeps_answering() {
        let bpe = &crate::tokenizer::tokenizer().bpe;
        for i in 0..MAX_WORDS + 10 {
            let word = format!("qz{i}`");
            let mut out = Vec::new();
            encode_into(word.as_bytes(), &mut out);
            assert_eq!(out, bpe.encode_via_backtracking(word.as_bytes()));
        }
        assert!(WORDS.with_borrow(|words| words.len()) <= MAX_WORDS);
    }
}
