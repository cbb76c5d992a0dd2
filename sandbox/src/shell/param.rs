//! The inside of `${…}` read into a [`Param`]: which parameter (a variable, a special or
//! positional parameter, an array element, a whole array), what comes before it (`#` for a
//! length, `!` for indirection, keys or names), and the operator after it with its raw
//! words, which [`super::expand`] expands when (and only if) the operator needs them.

/// A parsed `${…}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub prefix: Prefix,
    pub name: Name,
    pub op: Op,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefix {
    None,
    /// `${#x}`, `${#a[@]}`.
    Length,
    /// `${!x}` (indirect), `${!a[@]}` (keys), `${!prefix*}` (names).
    Bang,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Name {
    /// A variable, or a special parameter (`?`, `#`, `$`, `!`, `-`, `0`) or positional one.
    Var(String),
    /// `@` or `*`: all positional parameters.
    Positional { star: bool },
    /// `a[SUBSCRIPT]`, the subscript raw.
    Element { name: String, subscript: String },
    /// `a[@]` or `a[*]`.
    Array { name: String, star: bool },
    /// `${!prefix*}` / `${!prefix@}`: the names of variables starting with `prefix`.
    Names { prefix: String, star: bool },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    None,
    /// `-`, `=`, `?`, `+`, with or without `:` (which also tests for empty).
    Default {
        colon: bool,
        word: String,
    },
    AssignDefault {
        colon: bool,
        word: String,
    },
    Error {
        colon: bool,
        word: String,
    },
    Alternative {
        colon: bool,
        word: String,
    },
    /// `#`/`##`: remove the shortest/longest matching prefix; `%`/`%%` the suffix.
    RemovePrefix {
        longest: bool,
        pattern: String,
    },
    RemoveSuffix {
        longest: bool,
        pattern: String,
    },
    /// `/pat/rep`, `//pat/rep`, `/#pat/rep`, `/%pat/rep`.
    Replace {
        mode: ReplaceMode,
        pattern: String,
        replacement: String,
    },
    /// `:offset` and `:offset:length`, both arithmetic.
    Substring {
        offset: String,
        length: Option<String>,
    },
    /// `^`, `^^`, `,`, `,,`: case of the first or every character.
    Case {
        upper: bool,
        all: bool,
    },
    /// `@Q`, `@U`, `@u`, `@L` and the others, by their letter.
    Transform(char),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplaceMode {
    First,
    All,
    Prefix,
    Suffix,
}

/// The text is not a parameter expansion bash accepts ("bad substitution").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSubstitution;

fn is_special(c: char) -> bool {
    matches!(c, '?' | '#' | '$' | '!' | '-' | '@' | '*') || c.is_ascii_digit()
}

/// Parses the text between `${` and `}` (or the name after a bare `$`).
pub fn parse(text: &str) -> Result<Param, BadSubstitution> {
    let mut chars = text.chars();
    let (prefix, body) = match (chars.next(), chars.next()) {
        // `${#}` and `${!}` are the special parameters themselves; `${#-}` too.
        (Some('#'), Some(second)) if !matches!(second, ':' | '%' | '=' | '+' | '?') => {
            (Prefix::Length, &text[1..])
        }
        (Some('!'), Some(second)) if !matches!(second, ':' | '%' | '=' | '+' | '?' | '-') => {
            (Prefix::Bang, &text[1..])
        }
        _ => (Prefix::None, text),
    };
    let first = body.chars().next().ok_or(BadSubstitution)?;
    let name_len = if first.is_ascii_digit() {
        if prefix == Prefix::None && text.len() == body.len() {
            // `${10}`: every digit belongs to the name.
            body.find(|c: char| !c.is_ascii_digit())
                .unwrap_or(body.len())
        } else {
            body.find(|c: char| !c.is_ascii_digit())
                .unwrap_or(body.len())
        }
    } else if is_special(first) {
        1
    } else if first == '_' || first.is_ascii_alphabetic() {
        body.find(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
            .unwrap_or(body.len())
    } else {
        return Err(BadSubstitution);
    };
    let (raw_name, mut rest) = body.split_at(name_len);
    let mut name = match raw_name {
        "@" => Name::Positional { star: false },
        "*" => Name::Positional { star: true },
        _ => Name::Var(raw_name.to_string()),
    };
    if rest.starts_with('[') && matches!(name, Name::Var(_)) && !is_special(first) {
        let close = matching_bracket(rest).ok_or(BadSubstitution)?;
        let subscript = &rest[1..close];
        name = match subscript {
            "@" | "*" => Name::Array {
                name: raw_name.to_string(),
                star: subscript == "*",
            },
            _ => Name::Element {
                name: raw_name.to_string(),
                subscript: subscript.to_string(),
            },
        };
        rest = &rest[close + 1..];
    }
    if prefix == Prefix::Bang
        && matches!(rest, "*" | "@")
        && let Name::Var(var) = &name
    {
        return Ok(Param {
            prefix: Prefix::None,
            name: Name::Names {
                prefix: var.clone(),
                star: rest == "*",
            },
            op: Op::None,
        });
    }
    let op = operator(rest)?;
    if prefix == Prefix::Length && op != Op::None {
        return Err(BadSubstitution);
    }
    Ok(Param { prefix, name, op })
}

/// The index of the `]` that closes the `[` at the start of `text`.
fn matching_bracket(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (at, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(at);
                }
            }
            _ => {}
        }
    }
    None
}

fn operator(rest: &str) -> Result<Op, BadSubstitution> {
    let mut chars = rest.chars();
    let Some(first) = chars.next() else {
        return Ok(Op::None);
    };
    let after = &rest[first.len_utf8()..];
    let word = |text: &str| text.to_string();
    Ok(match first {
        ':' => match after.chars().next() {
            Some('-') => Op::Default {
                colon: true,
                word: word(&after[1..]),
            },
            Some('=') => Op::AssignDefault {
                colon: true,
                word: word(&after[1..]),
            },
            Some('?') => Op::Error {
                colon: true,
                word: word(&after[1..]),
            },
            Some('+') => Op::Alternative {
                colon: true,
                word: word(&after[1..]),
            },
            _ => {
                let (offset, length) = match split_top_level(after, ':') {
                    Some((offset, length)) => (offset, Some(length.to_string())),
                    None => (after, None),
                };
                Op::Substring {
                    offset: offset.to_string(),
                    length,
                }
            }
        },
        '-' => Op::Default {
            colon: false,
            word: word(after),
        },
        '=' => Op::AssignDefault {
            colon: false,
            word: word(after),
        },
        '?' => Op::Error {
            colon: false,
            word: word(after),
        },
        '+' => Op::Alternative {
            colon: false,
            word: word(after),
        },
        '#' => match after.strip_prefix('#') {
            Some(pattern) => Op::RemovePrefix {
                longest: true,
                pattern: word(pattern),
            },
            None => Op::RemovePrefix {
                longest: false,
                pattern: word(after),
            },
        },
        '%' => match after.strip_prefix('%') {
            Some(pattern) => Op::RemoveSuffix {
                longest: true,
                pattern: word(pattern),
            },
            None => Op::RemoveSuffix {
                longest: false,
                pattern: word(after),
            },
        },
        '/' => {
            let (mode, body) = match after.chars().next() {
                Some('/') => (ReplaceMode::All, &after[1..]),
                Some('#') => (ReplaceMode::Prefix, &after[1..]),
                Some('%') => (ReplaceMode::Suffix, &after[1..]),
                _ => (ReplaceMode::First, after),
            };
            let (pattern, replacement) = split_top_level(body, '/').unwrap_or((body, ""));
            Op::Replace {
                mode,
                pattern: pattern.to_string(),
                replacement: replacement.to_string(),
            }
        }
        '^' | ',' => {
            let all = after.starts_with(first);
            let pattern = if all { &after[1..] } else { after };
            if !pattern.is_empty() {
                return Err(BadSubstitution);
            }
            Op::Case {
                upper: first == '^',
                all,
            }
        }
        '@' => {
            let mut letters = after.chars();
            match (letters.next(), letters.next()) {
                (Some(c), None) if c.is_ascii_alphabetic() => Op::Transform(c),
                _ => return Err(BadSubstitution),
            }
        }
        _ => return Err(BadSubstitution),
    })
}

/// Splits `text` at the first `sep` outside quotes, `${…}`, `$(…)`, brackets and after no
/// backslash.
fn split_top_level(text: &str, sep: char) -> Option<(&str, &str)> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (_, '\\') if quote != Some('\'') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '{' | '(' | '[') => depth += 1,
            (None, '}' | ')' | ']') => depth = depth.saturating_sub(1),
            (None, c) if c == sep && depth == 0 => return Some((&text[..at], &text[at + 1..])),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str) -> Name {
        Name::Var(name.into())
    }

    #[test]
    fn reads_names_prefixes_and_operators() {
        let p = parse("a[@]:1:2").unwrap();
        assert_eq!(
            p.name,
            Name::Array {
                name: "a".into(),
                star: false
            }
        );
        assert_eq!(
            p.op,
            Op::Substring {
                offset: "1".into(),
                length: Some("2".into())
            }
        );
        assert_eq!(parse("#a[*]").unwrap().prefix, Prefix::Length);
        assert_eq!(parse("!a[@]").unwrap().prefix, Prefix::Bang);
        assert_eq!(
            parse("!BASH*").unwrap().name,
            Name::Names {
                prefix: "BASH".into(),
                star: true
            }
        );
        assert_eq!(parse("#").unwrap().name, var("#"));
        assert_eq!(
            parse("x: -3").unwrap().op,
            Op::Substring {
                offset: " -3".into(),
                length: None
            }
        );
        assert_eq!(
            parse("x//a\\/b/c").unwrap().op,
            Op::Replace {
                mode: ReplaceMode::All,
                pattern: "a\\/b".into(),
                replacement: "c".into()
            }
        );
        assert_eq!(
            parse("x^^").unwrap().op,
            Op::Case {
                upper: true,
                all: true
            }
        );
        assert_eq!(
            parse("m[$k]").unwrap().name,
            Name::Element {
                name: "m".into(),
                subscript: "$k".into()
            }
        );
        assert_eq!(parse("10").unwrap().name, var("10"));
        // Found by the `arith` fuzz target: a multi-byte character after `!` or `#`.
        assert_eq!(parse("!\u{fffd}[[Q*=").ok(), None);
        assert_eq!(parse("#\u{e9}").ok(), None);
        for bad in ["", "x!", "#x:-1", "a[1", "x@"] {
            assert_eq!(parse(bad), Err(BadSubstitution), "{bad}");
        }
    }
}
