//! The tokenizer: `o200k_base`, the BPE OpenAI's current models use (its vocabulary ships inside
//! the `bpe-openai` crate and loads offline). The pipeline renders prompts with it, so
//! `usage.input_tokens` is a real count; the simulator cuts streamed deltas at its token
//! boundaries, so `usage.output_tokens` is one too.
//!
//! The tokens are the `bpe-openai` crate's, found with less work: [`words`] splits a text as
//! the crate's pre-tokenizer does, with a byte scan where it is ASCII, and a word that is one
//! token is looked up in a table of the vocabulary (`vocabulary.rs`) rather than run through the
//! crate's BPE encoder, which allocates an encoder for every word; a word of several tokens is
//! encoded by the crate once and remembered per thread (`several.rs`). Together they took a
//! ~3,000-token tool output from ~1,100 instructions a token to ~300 (docs/benchmarks-history.md,
//! "Server CPU per turn"), and the remembered words to less.
//!
//! A piece of streamed text is normally one token. A character whose UTF-8 bytes the BPE splits
//! over several tokens (some emoji, rare CJK) cannot be cut inside, so the piece holding it
//! carries all of those tokens and says so.

mod several;
mod vocabulary;
mod words;

pub use words::{Words, words};

/// The tokenizer every stage shares; its vocabulary (200k tokens) loads on first use, ~0.1 s.
pub fn tokenizer() -> &'static bpe_openai::Tokenizer {
    bpe_openai::o200k_base()
}

/// Loads the vocabulary and the table of one-token words now, so the first request does not.
pub fn load() {
    tokenizer();
    vocabulary::load();
}

/// Splits `text` at token boundaries into `(piece, tokens)`: each piece is the fewest whole
/// tokens that make whole characters (almost always one). Concatenated, the pieces give `text`
/// back, and their token counts add up to [`count`]`(text)`.
pub fn pieces(text: &str) -> impl Iterator<Item = (&str, usize)> {
    words(text).flat_map(word_pieces)
}

/// The first pre-tokenized word of `text` (the tokenizer encodes each word on its own, so a
/// text can be tokenized word by word, as it streams); `None` for an empty text.
pub fn first_word(text: &str) -> Option<&str> {
    words(text).next()
}

/// The pieces (see [`pieces`]) of one pre-tokenized word.
pub fn word_pieces(word: &str) -> Vec<(&str, usize)> {
    if vocabulary::token_of(word.as_bytes()).is_some() {
        return vec![(word, 1)];
    }
    let bpe = &tokenizer().bpe;
    let mut pieces = Vec::new();
    let (mut start, mut end, mut tokens) = (0, 0, 0);
    for token in bpe.encode_via_backtracking(word.as_bytes()) {
        end += bpe.token_len(token);
        tokens += 1;
        if word.is_char_boundary(end) {
            pieces.push((&word[start..end], tokens));
            start = end;
            tokens = 0;
        }
    }
    pieces
}

/// The pieces of `text` (see [`pieces`]) without their token counts.
pub fn split(text: &str) -> impl Iterator<Item = &str> {
    pieces(text).map(|(piece, _)| piece)
}

/// The tokens of `text`, appended to `out`: what `tokenizer().encode(text)` gives, with one
/// scan for the words and one lookup for each word that is a single token.
pub fn encode_into(text: &str, out: &mut Vec<u32>) {
    for word in words(text) {
        match vocabulary::token_of(word.as_bytes()) {
            Some(token) => out.push(token),
            None => several::encode_into(word.as_bytes(), out),
        }
    }
}

/// The tokens of `text` (see [`encode_into`]).
pub fn encode(text: &str) -> Vec<u32> {
    let mut tokens = Vec::with_capacity(text.len() / 4);
    encode_into(text, &mut tokens);
    tokens
}

/// The number of tokens in `text`.
pub fn count(text: &str) -> usize {
    let bpe = &tokenizer().bpe;
    words(text)
        .map(|word| match vocabulary::token_of(word.as_bytes()) {
            Some(_) => 1,
            None => bpe.count(word.as_bytes()),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_real_tokens_and_lossless() {
        let text = "  Hello, wörld!\n42 tokens  ";
        let pieces: Vec<_> = pieces(text).collect();
        assert_eq!(pieces.iter().map(|(p, _)| *p).collect::<String>(), text);
        assert_eq!(pieces.iter().map(|(_, n)| n).sum::<usize>(), count(text));
        assert_eq!(count(text), tokenizer().encode(text).len());
        // Common English words with their leading space are single tokens.
        assert_eq!(
            split(" the quick brown fox").collect::<Vec<_>>(),
            [" the", " quick", " brown", " fox"]
        );
        assert_eq!(count(""), 0);
    }

    #[test]
    fn word_by_word_gives_the_same_pieces() {
        let text = "  Hello, wörld!\n42 tokens  🦀 it's   done\n\n";
        let mut rest = text;
        let mut by_word = Vec::new();
        while let Some(word) = first_word(rest) {
            by_word.extend(word_pieces(word));
            rest = &rest[word.len()..];
        }
        assert_eq!(by_word, pieces(text).collect::<Vec<_>>());
    }

    #[test]
    fn encoding_and_counting_are_the_crates() {
        for text in [
            include_str!("../../README.md"),
            include_str!("stages/render.rs"),
            "  Hello, wörld!\n42 tokens  🦀 it's   done\n\n",
            "",
        ] {
            let theirs = tokenizer().encode(text);
            assert_eq!(encode(text), theirs);
            assert_eq!(count(text), theirs.len());
            let mut appended = vec![7];
            encode_into(text, &mut appended);
            assert_eq!(appended[1..], theirs[..]);
        }
    }

    #[test]
    fn a_character_split_over_tokens_stays_whole() {
        // This emoji's four UTF-8 bytes are more than one o200k token.
        let text = "ok 🦀🦀 done";
        let pieces: Vec<_> = pieces(text).collect();
        assert_eq!(pieces.iter().map(|(p, _)| *p).collect::<String>(), text);
        assert_eq!(pieces.iter().map(|(_, n)| n).sum::<usize>(), count(text));
        assert!(pieces.iter().all(|(p, n)| !p.is_empty() && *n >= 1));
    }
}
