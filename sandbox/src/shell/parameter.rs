//! Parameter expansion: `$x`, `${x}` and every `${…}` form [`super::param`] reads — defaults,
//! lengths, prefix and suffix removal, substitution (`/`, `//`, `/#`, `/%`), substrings and
//! array slices, case changes, `@Q`/`@U`/`@u`/`@L`, indirection, array keys and values,
//! `$RANDOM` — evaluated against the shell's variables.

use super::exec::{Shell, Streams};
use super::expand::{ExpandError, Expansion};
use super::glob;
use super::param::{self, Name, Op, Param, Prefix, ReplaceMode};
use super::parse::parameter_word;
use super::variables::Mode;

impl Shell<'_> {
    /// A special or positional parameter, or a variable; `$RANDOM` advances its generator.
    fn lookup(&mut self, name: &str) -> Option<String> {
        match name {
            "?" => Some(self.status.to_string()),
            "#" => Some(self.positional.len().to_string()),
            "$" | "BASHPID" => Some("1".into()),
            "!" => None,
            "-" => Some("hB".into()),
            "0" => Some(self.arg0.clone()),
            "RANDOM" if !self.is_set("RANDOM") => Some(self.next_random().to_string()),
            _ if name.chars().all(|c| c.is_ascii_digit()) => name
                .parse::<usize>()
                .ok()
                .and_then(|n| self.positional.get(n.checked_sub(1)?).cloned()),
            _ => self.var(name),
        }
    }

    /// bash's `$RANDOM`: 0–32767 from a 32-bit linear congruential generator with a fixed
    /// seed, so a sandbox's runs are reproducible.
    fn next_random(&mut self) -> u32 {
        self.random = self.random.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        (self.random >> 16) & 0x7fff
    }

    /// The value(s) a parameter names, before any operator.
    async fn values(&mut self, name: &Name) -> Result<(Option<Expansion>, bool), ExpandError> {
        Ok(match name {
            Name::Var(var) => (self.lookup(var).map(Expansion::Scalar), false),
            Name::Positional { star } => (
                Some(Expansion::List {
                    items: self.positional.clone(),
                    star: *star,
                }),
                true,
            ),
            Name::Element { name, subscript } => {
                let subscript = self.expand_subscript(subscript).await?;
                (
                    self.element(name, &subscript)?.map(Expansion::Scalar),
                    false,
                )
            }
            Name::Array { name, star } => (
                self.state
                    .arrays
                    .get(name)
                    .map(|a| a.values())
                    .map_or_else(|| self.var(name).map(|v| vec![v]), Some)
                    .map(|items| Expansion::List { items, star: *star }),
                true,
            ),
            Name::Names { prefix, star } => {
                let mut names: Vec<String> = self
                    .state
                    .env
                    .keys()
                    .chain(self.state.arrays.keys())
                    .filter(|n| n.starts_with(prefix.as_str()))
                    .cloned()
                    .collect();
                names.sort();
                (
                    Some(Expansion::List {
                        items: names,
                        star: *star,
                    }),
                    true,
                )
            }
        })
    }

    /// A subscript's text with its `$…` expansions done.
    async fn expand_subscript(&mut self, subscript: &str) -> Result<String, ExpandError> {
        let mut io = Streams::default();
        let parts = super::parse::expandable_text(subscript);
        self.expand_quoted_parts(&parts, &mut io).await
    }

    /// Expands the word of an operator (`${x:-WORD}`) to text.
    async fn operand(&mut self, word: &str, io: &mut Streams) -> Result<String, ExpandError> {
        self.expand_quoted_parts(&parameter_word(word), io).await
    }

    /// Expands a pattern operand: quoted characters match literally.
    async fn pattern(&mut self, word: &str, io: &mut Streams) -> Result<String, ExpandError> {
        self.pattern_of(&parameter_word(word), io).await
    }

    /// `${…}` or `$name`.
    pub(crate) async fn parameter(
        &mut self,
        text: &str,
        io: &mut Streams,
    ) -> Result<Expansion, ExpandError> {
        let Param { prefix, name, op } =
            param::parse(text).map_err(|_| ExpandError::BadSubstitution(text.into()))?;
        match prefix {
            Prefix::Length => return self.length(&name).await,
            Prefix::Bang => return self.bang(text, &name, &op, io).await,
            Prefix::None => {}
        }
        let (value, list) = self.values(&name).await?;
        self.operate(text, &name, value, list, &op, io).await
    }

    async fn length(&mut self, name: &Name) -> Result<Expansion, ExpandError> {
        let count = match name {
            Name::Var(var) if var == "@" || var == "*" => self.positional.len(),
            Name::Positional { .. } => self.positional.len(),
            Name::Array { name, .. } => self
                .state
                .arrays
                .get(name)
                .map_or_else(|| usize::from(self.is_set(name)), |a| a.len()),
            _ => match self.values(name).await?.0 {
                Some(Expansion::Scalar(value)) => value.chars().count(),
                Some(Expansion::List { items, .. }) => items.len(),
                None if self.nounset() => {
                    return Err(ExpandError::Unbound(describe(name)));
                }
                None => 0,
            },
        };
        Ok(Expansion::Scalar(count.to_string()))
    }

    /// `${!a[@]}` (keys) and `${!name}` (indirection).
    async fn bang(
        &mut self,
        text: &str,
        name: &Name,
        op: &Op,
        io: &mut Streams,
    ) -> Result<Expansion, ExpandError> {
        match name {
            Name::Array { name, star } => {
                let keys = match self.state.arrays.get(name) {
                    Some(array) => array.keys(),
                    None if self.is_set(name) => vec!["0".to_string()],
                    None => Vec::new(),
                };
                Ok(Expansion::List {
                    items: keys,
                    star: *star,
                })
            }
            Name::Var(var) => {
                let target = self.lookup(var).unwrap_or_default();
                if target.is_empty() {
                    return Err(ExpandError::BadSubstitution(text.into()));
                }
                let inner = param::parse(&target)
                    .map_err(|_| ExpandError::BadSubstitution(target.clone()))?;
                if inner.prefix != Prefix::None || inner.op != Op::None {
                    return Err(ExpandError::BadSubstitution(target));
                }
                let (value, list) = self.values(&inner.name).await?;
                self.operate(text, &inner.name, value, list, op, io).await
            }
            _ => Err(ExpandError::BadSubstitution(text.into())),
        }
    }

    /// Applies an operator to a parameter's value (`list` for `$@` and `${a[@]}`, whose
    /// operators act on each element).
    async fn operate(
        &mut self,
        text: &str,
        name: &Name,
        value: Option<Expansion>,
        list: bool,
        op: &Op,
        io: &mut Streams,
    ) -> Result<Expansion, ExpandError> {
        let is_null = |value: &Option<Expansion>| match value {
            None => true,
            Some(Expansion::Scalar(v)) => v.is_empty(),
            Some(Expansion::List { items, .. }) => items.is_empty(),
        };
        let unset = |value: &Option<Expansion>, colon: bool| {
            value.is_none() || (colon && is_null(value)) || (list && is_null(value))
        };
        Ok(match op {
            Op::None => match value {
                Some(value) => value,
                None if self.nounset() && !list => {
                    return Err(ExpandError::Unbound(describe(name)));
                }
                None if list => Expansion::List {
                    items: Vec::new(),
                    star: false,
                },
                None => Expansion::Scalar(String::new()),
            },
            Op::Default { colon, word } => {
                if unset(&value, *colon) {
                    Expansion::Scalar(self.operand(word, io).await?)
                } else {
                    value.unwrap_or(Expansion::Scalar(String::new()))
                }
            }
            Op::AssignDefault { colon, word } => {
                if unset(&value, *colon) {
                    let new = self.operand(word, io).await?;
                    match name {
                        Name::Var(var) if super::parse::is_name(var) => {
                            self.assign(var, new.clone(), Mode::Set)?;
                        }
                        Name::Element { name, subscript } => {
                            let subscript = self.expand_subscript(subscript).await?;
                            self.assign_element(name, &subscript, new.clone(), Mode::Set)?;
                        }
                        _ => {
                            return Err(ExpandError::Unsupported(format!(
                                "${{{text}}}: cannot assign in this way"
                            )));
                        }
                    }
                    Expansion::Scalar(new)
                } else {
                    value.unwrap_or(Expansion::Scalar(String::new()))
                }
            }
            Op::Error { colon, word } => {
                if unset(&value, *colon) {
                    let message = self.operand(word, io).await?;
                    let message = if message.is_empty() {
                        "parameter null or not set".to_string()
                    } else {
                        message
                    };
                    return Err(ExpandError::Unset(describe(name), message));
                }
                value.unwrap_or(Expansion::Scalar(String::new()))
            }
            Op::Alternative { colon, word } => {
                if unset(&value, *colon) {
                    Expansion::Scalar(String::new())
                } else {
                    Expansion::Scalar(self.operand(word, io).await?)
                }
            }
            Op::RemovePrefix { longest, pattern } | Op::RemoveSuffix { longest, pattern } => {
                let pattern = self.pattern(pattern, io).await?;
                let suffix = matches!(op, Op::RemoveSuffix { .. });
                map_each(value, |v| remove_affix(v, &pattern, suffix, *longest))
            }
            Op::Replace {
                mode,
                pattern,
                replacement,
            } => {
                let pattern = self.pattern(pattern, io).await?;
                let replacement = self.pattern(replacement, io).await?;
                map_each(value, |v| replace(v, &pattern, &replacement, *mode))
            }
            Op::Substring { offset, length } => {
                let offset = self.operand(offset, io).await?;
                let offset = self.eval_arith(&offset)?;
                let length = match length {
                    Some(length) => {
                        let length = self.operand(length, io).await?;
                        Some(self.eval_arith(&length)?)
                    }
                    None => None,
                };
                match (value, name) {
                    (Some(Expansion::List { items, star }), Name::Positional { .. }) => {
                        // `${@:0}` starts with `$0`.
                        let mut all = vec![self.arg0.clone()];
                        all.extend(items);
                        Expansion::List {
                            items: slice(&all, offset, length, text)?,
                            star,
                        }
                    }
                    (Some(Expansion::List { items, star }), _) => Expansion::List {
                        items: slice(&items, offset, length, text)?,
                        star,
                    },
                    (Some(Expansion::Scalar(v)), _) => {
                        let chars: Vec<String> = v.chars().map(String::from).collect();
                        Expansion::Scalar(slice(&chars, offset, length, text)?.concat())
                    }
                    (None, _) => Expansion::Scalar(String::new()),
                }
            }
            Op::Case { upper, all } => map_each(value, |v| change_case(v, *upper, *all)),
            Op::Transform(letter) => {
                let letter = *letter;
                match letter {
                    'Q' => map_each(value, quote),
                    'U' => map_each(value, str::to_uppercase),
                    'L' => map_each(value, str::to_lowercase),
                    'u' => map_each(value, |v| change_case(v, true, false)),
                    _ => {
                        return Err(ExpandError::Unsupported(format!("${{{text}}}")));
                    }
                }
            }
        })
    }
}

fn describe(name: &Name) -> String {
    match name {
        Name::Var(var) => var.clone(),
        Name::Positional { star: false } => "@".into(),
        Name::Positional { star: true } => "*".into(),
        Name::Element { name, subscript } => format!("{name}[{subscript}]"),
        Name::Array { name, star } => format!("{name}[{}]", if *star { '*' } else { '@' }),
        Name::Names { prefix, .. } => prefix.clone(),
    }
}

/// Applies `f` to a value, or to each element of a list.
fn map_each(value: Option<Expansion>, f: impl Fn(&str) -> String) -> Expansion {
    match value {
        None => Expansion::Scalar(String::new()),
        Some(Expansion::Scalar(v)) => Expansion::Scalar(f(&v)),
        Some(Expansion::List { items, star }) => Expansion::List {
            items: items.iter().map(|v| f(v)).collect(),
            star,
        },
    }
}

/// `${x:OFFSET:LENGTH}` on characters or elements: a negative offset counts from the end, a
/// negative length stops that far before the end.
fn slice(
    items: &[String],
    offset: i64,
    length: Option<i64>,
    text: &str,
) -> Result<Vec<String>, ExpandError> {
    let len = items.len() as i64;
    let start = if offset < 0 { len + offset } else { offset };
    if start < 0 || start > len {
        return Ok(Vec::new());
    }
    let end = match length {
        None => len,
        Some(l) if l < 0 => {
            let end = len + l;
            if end < start {
                return Err(ExpandError::Syntax(format!(
                    "{text}: substring expression < 0"
                )));
            }
            end
        }
        Some(l) => (start + l).min(len),
    };
    Ok(items[start as usize..end as usize].to_vec())
}

/// The char boundaries of `value`, both ends included.
fn bounds(value: &str) -> Vec<usize> {
    value
        .char_indices()
        .map(|(i, _)| i)
        .chain([value.len()])
        .collect()
}

/// `${v#pat}`, `${v##pat}`, `${v%pat}`, `${v%%pat}`.
fn remove_affix(value: &str, pattern: &str, suffix: bool, longest: bool) -> String {
    let bounds = bounds(value);
    let found = match (suffix, longest) {
        (true, false) => bounds
            .iter()
            .rev()
            .find(|i| glob::matches(pattern, &value[**i..])),
        (true, true) => bounds
            .iter()
            .find(|i| glob::matches(pattern, &value[**i..])),
        (false, false) => bounds
            .iter()
            .find(|i| glob::matches(pattern, &value[..**i])),
        (false, true) => bounds
            .iter()
            .rev()
            .find(|i| glob::matches(pattern, &value[..**i])),
    };
    match (found, suffix) {
        (Some(i), true) => value[..*i].into(),
        (Some(i), false) => value[*i..].into(),
        (None, _) => value.into(),
    }
}

/// Whether a glob pattern (quoted characters escaped) has no special characters, and the
/// literal text it stands for.
fn literal_pattern(pattern: &str) -> Option<String> {
    let mut text = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.extend(chars.next()),
            '*' | '?' | '[' => return None,
            c => text.push(c),
        }
    }
    Some(text)
}

/// The replacement text for one match: an unescaped `&` stands for the match (bash 5.2's
/// `patsub_replacement`), backslashes quote.
fn replacement_for(replacement: &str, matched: &str) -> String {
    let mut out = String::new();
    let mut chars = replacement.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            '&' => out.push_str(matched),
            c => out.push(c),
        }
    }
    out
}

/// `${v/pat/rep}` and its `//`, `/#`, `/%` forms; each match is the longest at its place.
fn replace(value: &str, pattern: &str, replacement: &str, mode: ReplaceMode) -> String {
    if pattern.is_empty() {
        return match mode {
            ReplaceMode::Prefix => replacement_for(replacement, "") + value,
            ReplaceMode::Suffix => value.to_string() + &replacement_for(replacement, ""),
            ReplaceMode::First | ReplaceMode::All => value.to_string(),
        };
    }
    let bounds = bounds(value);
    let longest_at = |start: usize| -> Option<usize> {
        bounds
            .iter()
            .rev()
            .filter(|end| **end > start)
            .find(|end| glob::matches(pattern, &value[start..**end]))
            .copied()
    };
    match mode {
        ReplaceMode::Prefix => match longest_at(0) {
            Some(end) => replacement_for(replacement, &value[..end]) + &value[end..],
            None => value.to_string(),
        },
        ReplaceMode::Suffix => match bounds
            .iter()
            .find(|start| **start < value.len() && glob::matches(pattern, &value[**start..]))
        {
            Some(start) => {
                value[..*start].to_string() + &replacement_for(replacement, &value[*start..])
            }
            None => value.to_string(),
        },
        ReplaceMode::First | ReplaceMode::All => {
            let all = mode == ReplaceMode::All;
            if let Some(literal) = literal_pattern(pattern) {
                let with = replacement_for(replacement, &literal);
                return if all {
                    value.replace(&literal, &with)
                } else {
                    value.replacen(&literal, &with, 1)
                };
            }
            let mut out = String::new();
            let mut at = 0;
            let mut index = 0;
            while index < bounds.len() - 1 {
                let start = bounds[index];
                if start < at {
                    index += 1;
                    continue;
                }
                if let Some(end) = longest_at(start) {
                    out.push_str(&value[at..start]);
                    out.push_str(&replacement_for(replacement, &value[start..end]));
                    at = end;
                    if !all {
                        break;
                    }
                }
                index += 1;
            }
            out.push_str(&value[at..]);
            out
        }
    }
}

fn change_case(value: &str, upper: bool, all: bool) -> String {
    let convert = |c: char| -> String {
        if upper {
            c.to_uppercase().collect()
        } else {
            c.to_lowercase().collect()
        }
    };
    if all {
        value.chars().map(convert).collect()
    } else {
        let mut chars = value.chars();
        match chars.next() {
            Some(first) => convert(first) + chars.as_str(),
            None => String::new(),
        }
    }
}

/// `${x@Q}`: single-quoted so the shell reads it back as the same word.
fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each expected value printed by bash 5.2.
    #[test]
    fn substitution_matches_bash() {
        let cases = [
            ("hello world", "o", "0", ReplaceMode::First, "hell0 world"),
            ("hello world", "o", "0", ReplaceMode::All, "hell0 w0rld"),
            ("hello world", "l*o", "X", ReplaceMode::First, "heXrld"),
            ("a.b.c", "\\.", "/", ReplaceMode::All, "a/b/c"),
            ("abc", "a", "x", ReplaceMode::Prefix, "xbc"),
            ("abc", "b", "x", ReplaceMode::Prefix, "abc"),
            ("abc", "c", "x", ReplaceMode::Suffix, "abx"),
            ("abc", "*", "-", ReplaceMode::All, "-"),
            ("aaa", "a", "<&>", ReplaceMode::All, "<a><a><a>"),
            ("path/to/file", "/", "", ReplaceMode::All, "pathtofile"),
            ("x y", "[ ]", "_", ReplaceMode::All, "x_y"),
        ];
        for (value, pattern, replacement, mode, want) in cases {
            assert_eq!(
                replace(value, pattern, replacement, mode),
                want,
                "{value} {pattern}"
            );
        }
        assert_eq!(remove_affix("a/b/c.txt", "*/", false, true), "c.txt");
        assert_eq!(remove_affix("a/b/c.txt", ".*", true, false), "a/b/c");
        assert_eq!(change_case("hello", true, false), "Hello");
        assert_eq!(quote("it's"), "'it'\\''s'");
        let items: Vec<String> = "abcde".chars().map(String::from).collect();
        assert_eq!(slice(&items, -3, Some(2), "").unwrap().concat(), "cd");
        assert_eq!(slice(&items, 1, Some(-1), "").unwrap().concat(), "bcd");
        assert_eq!(slice(&items, 9, None, "").unwrap().concat(), "");
    }
}
