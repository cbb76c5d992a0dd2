//! o200k_base's pre-tokenizer: where each word of a text ends, as the `bpe-openai` crate's
//! pattern splits it, found without the regex wherever the text is ASCII.
//!
//! The crate splits with one anchored regex search per word, through the regex's cache pool:
//! ~550 instructions a word, half of what tokenizing cost (docs/benchmarks-history.md,
//! "Server CPU per turn"). Over ASCII the pattern is a few byte classes, and a scan decides a
//! word in tens. A word whose end depends on a non-ASCII character (a letter, digit, space or
//! mark the pattern's Unicode classes may hold) is left to the crate's regex, so the words are
//! the crate's, always: a test holds the two against each other over random and real text.
//!
//! The pattern, tried in this order at each position (leftmost-first), with `P` any character
//! but `\r`, `\n`, a letter or a digit, and `Q` any character but a space, a letter or a digit:
//!
//! 1. `P? [Lu Lt Lm Lo M]* [Ll Lm Lo M]+ contraction?` — over ASCII, `P? [A-Z]* [a-z]+ c?`;
//! 2. `P? [Lu Lt Lm Lo M]+ [Ll Lm Lo M]* contraction?` — `P? [A-Z]+ [a-z]* c?`;
//! 3. `\p{N}{1,3}`;
//! 4. ` ?Q+[\r\n/]*`;
//! 5. `\s*[\r\n]+` — a run of spaces, to its last line break;
//! 6. `\s+$` — a run of spaces that ends the text;
//! 7. `\s+\s` less its last character (the crate's stand-in for `\s+(?!\S)`);
//! 8. `\s+`.
//!
//! A contraction is `'s`, `'t`, `'re`, `'ve`, `'m`, `'ll` or `'d`, in any case.

use super::tokenizer;

/// The words of `text` in order; concatenated, they give `text` back.
pub fn words(text: &str) -> Words<'_> {
    Words { rest: text }
}

/// The iterator [`words`] returns.
pub struct Words<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        let (word, rest) = self.rest.split_at(first_len(self.rest));
        self.rest = rest;
        Some(word)
    }
}

/// The length in bytes of the first word of `text` (not empty).
fn first_len(text: &str) -> usize {
    match ascii_word(text.as_bytes()) {
        Decided::Word(len) => len,
        Decided::NotAscii => regex_word(text),
    }
}

/// The first word as the crate's regex finds it. Every character matches one of the
/// alternatives, so there always is one; the rest of the text stands in if not.
fn regex_word(text: &str) -> usize {
    tokenizer().split(text).next().map_or(text.len(), str::len)
}

/// What the ASCII scan decided about the first word.
#[derive(Debug, PartialEq, Eq)]
enum Decided {
    /// It ends after this many bytes.
    Word(usize),
    /// Its end depends on a non-ASCII character: the regex decides.
    NotAscii,
}

use Decided::{NotAscii, Word};

/// A byte's classes, a bit each, looked up in [`CLASS`]: one load and a test where telling a
/// byte's kind by its range took several comparisons (the scan's symbols took ~12 instructions a
/// byte).
const LOWER: u8 = 1;
const UPPER: u8 = 1 << 1;
const DIGIT: u8 = 1 << 2;
/// Unicode's `White_Space` within ASCII, as the regex's `\s` has it.
const SPACE: u8 = 1 << 3;
/// `\r` or `\n` (spaces too).
const BREAK: u8 = 1 << 4;
/// A byte of a non-ASCII character: the regex decides.
const HIGH: u8 = 1 << 5;
/// `/` (a symbol too: no other class).
const SLASH: u8 = 1 << 6;
/// Past the end of the text ([`class_at`] only).
const END: u8 = 1 << 7;
const LETTER: u8 = LOWER | UPPER;
/// `P` has none of these: any ASCII byte but `\r`, `\n`, a letter or a digit.
const NOT_PREFIX: u8 = LETTER | DIGIT | BREAK | HIGH;
/// `Q` has none of these: any ASCII byte but a space, a letter or a digit.
const NOT_SYMBOL: u8 = LETTER | DIGIT | SPACE | HIGH;

/// Every byte's classes.
static CLASS: [u8; 256] = classes();

const fn classes() -> [u8; 256] {
    let mut table = [0; 256];
    let mut i = 0;
    while i < table.len() {
        table[i] = match i as u8 {
            b'a'..=b'z' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'0'..=b'9' => DIGIT,
            b'\r' | b'\n' => SPACE | BREAK,
            b'\t' | 0x0B | 0x0C | b' ' => SPACE,
            b'/' => SLASH,
            0x80..=0xFF => HIGH,
            _ => 0,
        };
        i += 1;
    }
    table
}

fn class(byte: u8) -> u8 {
    CLASS[usize::from(byte)]
}

/// The classes of the byte at `at`, [`END`] past the text.
fn class_at(text: &[u8], at: usize) -> u8 {
    text.get(at).map_or(END, |&byte| class(byte))
}

/// The first word of `text` (not empty), if ASCII decides it.
fn ascii_word(text: &[u8]) -> Decided {
    let first = class(text[0]);
    if first & HIGH != 0 {
        return NotAscii;
    }
    // 1 and 2: letters, after at most one prefix character.
    let letters_from = if first & LETTER != 0 {
        Some(0)
    } else if first & NOT_PREFIX == 0 {
        Some(1)
    } else {
        None
    };
    if let Some(from) = letters_from {
        match letters(text, from) {
            Some(Word(end)) => return contraction(text, end),
            Some(NotAscii) => return NotAscii,
            None => {}
        }
    }
    // 3: up to three digits.
    if first & DIGIT != 0 {
        let mut end = 1;
        while end < 3 && class_at(text, end) & DIGIT != 0 {
            end += 1;
        }
        return if end < 3 && class_at(text, end) & HIGH != 0 {
            NotAscii
        } else {
            Word(end)
        };
    }
    // 4: symbols, after at most one space, and the line breaks and slashes after them.
    let symbols_from = if first & NOT_SYMBOL == 0 {
        Some(0)
    } else if text[0] == b' ' {
        let next = class_at(text, 1);
        if next & HIGH != 0 {
            return NotAscii;
        }
        (next & (NOT_SYMBOL | END) == 0).then_some(1)
    } else {
        None
    };
    if let Some(from) = symbols_from {
        let mut end = from;
        while end < text.len() && class(text[end]) & NOT_SYMBOL == 0 {
            end += 1;
        }
        if class_at(text, end) & HIGH != 0 {
            return NotAscii;
        }
        while end < text.len() && class(text[end]) & (BREAK | SLASH) != 0 {
            end += 1;
        }
        return Word(end);
    }
    // 5 to 8: a run of spaces (every other ASCII byte was taken above).
    let mut run = 0;
    while run < text.len() && class(text[run]) & SPACE != 0 {
        run += 1;
    }
    if class_at(text, run) & HIGH != 0 {
        return NotAscii;
    }
    if let Some(last_break) = text[..run].iter().rposition(|&b| class(b) & BREAK != 0) {
        Word(last_break + 1)
    } else if run == text.len() || run == 1 {
        Word(run)
    } else {
        Word(run - 1)
    }
}

/// Alternatives 1 and 2 from `from`: where their letters end, `None` if neither matches there.
fn letters(text: &[u8], from: usize) -> Option<Decided> {
    let mut end = from;
    while end < text.len() && class(text[end]) & UPPER != 0 {
        end += 1;
    }
    let upper = end - from;
    let next = class_at(text, end);
    if next & HIGH != 0 {
        return Some(NotAscii);
    }
    // 1: the capitals, then lowercase letters.
    if next & LOWER != 0 {
        end += 1;
        while end < text.len() && class(text[end]) & LOWER != 0 {
            end += 1;
        }
        return Some(if class_at(text, end) & HIGH != 0 {
            NotAscii
        } else {
            Word(end)
        });
    }
    // 2: capitals alone (no ASCII capital is also lowercase, so 1 cannot match by giving some
    // back).
    (upper > 0).then_some(Word(end))
}

/// The word ending at `end`, with the contraction that follows it.
fn contraction(text: &[u8], end: usize) -> Decided {
    if text.get(end) != Some(&b'\'') {
        return Word(end);
    }
    let at = |i: usize| text.get(end + i).copied();
    match at(1) {
        Some(byte) if !byte.is_ascii() => NotAscii,
        Some(byte) => match byte.to_ascii_lowercase() {
            b's' | b't' | b'm' | b'd' => Word(end + 2),
            first @ (b'r' | b'v' | b'l') => {
                let second = if first == b'l' { b'l' } else { b'e' };
                match at(2) {
                    Some(byte) if !byte.is_ascii() => NotAscii,
                    Some(byte) if byte.to_ascii_lowercase() == second => Word(end + 3),
                    _ => Word(end),
                }
            }
            _ => Word(end),
        },
        None => Word(end),
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    use super::*;

    /// The crate's own split, word by word.
    fn regex_words(text: &str) -> Vec<&str> {
        tokenizer().split(text).collect()
    }

    #[track_caller]
    fn same_words(text: &str) {
        assert_eq!(
            words(text).collect::<Vec<_>>(),
            regex_words(text),
            "{text:?}"
        );
    }

    #[test]
    fn the_words_are_the_crates_on_chosen_text() {
        for text in [
            "",
            "Hello, world!\n",
            "  two spaces  then\t\ttabs\r\n\r\nand CRLF  ",
            "don't DON'T we'll WE'LL you're I'M it's 'tis ' '",
            "HTTPServer parseHTTP2 XMLHttpRequest A B",
            "1234567 12 1 3.14 v1.2.3 0x1F",
            "src/main.rs:12: warning: unused `x` in fn f(a: &A) -> Result<(), E>\n",
            "   \n   \n\n  x",
            "a\x0b\x0cb\x00c\x7fd\x1b[31m",
            "//comment\n/*block*/\n///doc",
            "café naïve Ωmega ſ 'ſ İstanbul",
            "emoji 🦀🦀 crab\u{a0}nbsp\u{2003}em space\u{85}next",
            "١٢٣ ²³ ⅓ 中文字符 ǅungla ʰmod e\u{301}",
            "end with spaces   ",
            " ",
            "\n",
            "x",
        ] {
            same_words(text);
        }
    }

    #[test]
    fn the_words_are_the_crates_on_random_text() {
        // Every class the pattern tells apart, ASCII and not, with the ones a contraction or a
        // run of spaces turns on weighted up.
        let alphabet: Vec<char> = "aZszStTrReEvVlLmMdD09 '\t\n\r\x0b\x0c/-_.,;:!?()\"\x00\x7f\
                                   é\u{c9}\u{17f}\u{a0}\u{2003}\u{85}\u{2014}\u{b2}\u{661}\
                                   \u{4e2d}\u{1c5}\u{2b0}\u{301}🦀"
            .chars()
            .collect();
        let mut rng = StdRng::seed_from_u64(27);
        for _ in 0..20_000 {
            let len = rng.random_range(0..24);
            let text: String = (0..len)
                .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                .collect();
            same_words(&text);
        }
    }

    #[test]
    fn the_words_are_the_crates_on_real_text() {
        for text in [
            include_str!("../../../README.md"),
            include_str!("../../../docs/protocol.md"),
            include_str!("../stages/render.rs"),
            include_str!("../../../sandbox/README.md"),
        ] {
            same_words(text);
        }
    }
}
