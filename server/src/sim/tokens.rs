//! Approximate tokenization for the simulator's pacing and usage counts: a token is a run of
//! letters or digits with its leading whitespace, or a single other character — about one token
//! per English word, like a BPE tokenizer on prose. (The incremental pipeline replaces this with a
//! real BPE tokenizer.)

/// Splits `text` into tokens; concatenating them gives `text` back.
pub fn split(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let leading = rest.len() - rest.trim_start().len();
        let body = &rest[leading..];
        let word_len: usize = body
            .char_indices()
            .take_while(|(_, c)| c.is_alphanumeric())
            .last()
            .map(|(i, c)| i + c.len_utf8())
            .unwrap_or(0);
        let len = if word_len > 0 {
            leading + word_len
        } else if let Some(c) = body.chars().next() {
            leading + c.len_utf8()
        } else {
            leading
        };
        let (token, tail) = rest.split_at(len);
        rest = tail;
        Some(token)
    })
}

/// The number of tokens in `text`.
pub fn count(text: &str) -> usize {
    split(text).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_lossless_and_word_sized() {
        let text = "  Hello, wörld!\n42 tokens  ";
        let tokens: Vec<_> = split(text).collect();
        assert_eq!(tokens.concat(), text);
        assert_eq!(
            tokens,
            ["  Hello", ",", " wörld", "!", "\n42", " tokens", "  "]
        );
        assert_eq!(count(""), 0);
    }
}
