//! Filler text of a known size in tokens, for tool outputs and instructions.
//!
//! The text is a label (which agent, conversation and turn, so no two outputs are alike) and
//! then short, common English words, each with its leading space: the o200k tokenizer the
//! server counts with pre-splits text at those spaces and has every one of these words as a
//! single token, so N words are N tokens. The label costs [`LABEL_TOKENS`] tokens
//! (approximately: digits group by three), which are taken off the words. The integration test
//! checks the size against the server's own input-token count (within 10 tokens).

/// One-token words (with their leading space) in o200k_base.
const WORDS: [&str; 16] = [
    " the", " cat", " sat", " on", " a", " mat", " and", " then", " it", " ran", " to", " see",
    " what", " was", " in", " there",
];

/// About how many tokens a label `[tool output 12/3/7]` is.
pub const LABEL_TOKENS: usize = 10;

/// `tokens` tokens (approximately) of text, starting with `label`.
pub fn filler(label: &str, tokens: usize) -> String {
    let words = tokens.saturating_sub(LABEL_TOKENS);
    let mut text = String::with_capacity(label.len() + words * 5);
    text.push_str(label);
    for i in 0..words {
        text.push_str(WORDS[i % WORDS.len()]);
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn starts_with_the_label_and_has_one_word_a_token() {
        let text = super::filler("[tool output 1/2/3]", 110);
        assert!(text.starts_with("[tool output 1/2/3] the cat"));
        assert_eq!(text.split(' ').count() - 3, 100);
    }
}
