//! Brace expansion, the first expansion bash performs: `a{b,c}d` becomes `abd acd`, `{1..3}`
//! becomes `1 2 3`, `{a..c}` becomes `a b c`. It applies to unquoted text only; a group without
//! a comma or a range (`{}`, `{x}`) stays literal. A word that would expand to more than
//! [`MAX_WORDS`] words is left as written rather than allowed to fill memory.

use super::ast::{Word, WordPart};

pub const MAX_WORDS: usize = 10_000;

/// The words `word` brace-expands to (the word itself when it has no brace group).
pub fn expand(word: &Word) -> Vec<Word> {
    let mut out = Vec::new();
    if expand_into(word, &mut out) {
        out
    } else {
        vec![word.clone()]
    }
}

/// Appends the expansions of `word`; false when they would exceed [`MAX_WORDS`].
fn expand_into(word: &Word, out: &mut Vec<Word>) -> bool {
    for (index, part) in word.parts.iter().enumerate() {
        let WordPart::Literal(text) = part else {
            continue;
        };
        let Some((start, end, alternatives)) = first_group(text) else {
            continue;
        };
        for alternative in alternatives {
            let mut parts = word.parts[..index].to_vec();
            parts.push(WordPart::Literal(format!(
                "{}{alternative}{}",
                &text[..start],
                &text[end + 1..]
            )));
            parts.extend(word.parts[index + 1..].iter().cloned());
            if !expand_into(&Word { parts }, out) {
                return false;
            }
        }
        return true;
    }
    if out.len() >= MAX_WORDS {
        return false;
    }
    out.push(word.clone());
    true
}

/// The first expandable `{…}` in `text`: its byte range and alternatives.
fn first_group(text: &str) -> Option<(usize, usize, Vec<String>)> {
    let bytes = text.as_bytes();
    for (start, _) in text.match_indices('{') {
        let mut depth = 0;
        let mut commas = Vec::new();
        let mut end = None;
        for (offset, byte) in bytes[start..].iter().enumerate() {
            match byte {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(start + offset);
                        break;
                    }
                }
                b',' if depth == 1 => commas.push(start + offset),
                _ => {}
            }
        }
        let Some(end) = end else {
            continue;
        };
        if !commas.is_empty() {
            let mut alternatives = Vec::new();
            let mut from = start + 1;
            for comma in commas.into_iter().chain([end]) {
                alternatives.push(text[from..comma].to_string());
                from = comma + 1;
            }
            return Some((start, end, alternatives));
        }
        if let Some(sequence) = range(&text[start + 1..end]) {
            return Some((start, end, sequence));
        }
    }
    None
}

/// `1..5`, `5..1`, `a..e`: the items of a sequence expression.
fn range(body: &str) -> Option<Vec<String>> {
    let (from, to) = body.split_once("..")?;
    if let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) {
        if a.abs_diff(b) >= MAX_WORDS as u64 {
            return None;
        }
        let items: Vec<i64> = if a <= b {
            (a..=b).collect()
        } else {
            (b..=a).rev().collect()
        };
        return Some(items.into_iter().map(|n| n.to_string()).collect());
    }
    let (mut a, mut b) = (from.chars(), to.chars());
    match (a.next(), a.next(), b.next(), b.next()) {
        (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() => {
            let items: Vec<char> = if x <= y {
                (x..=y).collect()
            } else {
                (y..=x).rev().collect()
            };
            Some(items.into_iter().map(String::from).collect())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let word = Word {
            parts: vec![WordPart::Literal(text.into())],
        };
        expand(&word)
            .into_iter()
            .map(|w| match w.parts.as_slice() {
                [WordPart::Literal(t)] => t.clone(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn alternatives_ranges_and_literals() {
        assert_eq!(words("src/{a,b}.js"), ["src/a.js", "src/b.js"]);
        assert_eq!(words("{x,y}{1,2}"), ["x1", "x2", "y1", "y2"]);
        assert_eq!(words("f{1..3}"), ["f1", "f2", "f3"]);
        assert_eq!(words("{c..a}"), ["c", "b", "a"]);
        assert_eq!(words("a{b,{c,d}}"), ["ab", "ac", "ad"]);
        assert_eq!(words("{}"), ["{}"]);
        assert_eq!(words("{x}"), ["{x}"]);
        assert_eq!(words("{1..99999999}"), ["{1..99999999}"]);
        assert_eq!(
            words(&"{a,b}".repeat(20)).len(),
            1,
            "2^20 words are refused"
        );
    }
}
