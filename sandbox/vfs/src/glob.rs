//! Pathname expansion: `*`, `?` and `[…]` patterns matched against the VFS, component by
//! component, hidden names only when the pattern component starts with a dot — as bash does.
//! [`matches`] is also what `find -name` and `grep --include` use.

use crate as vfs;
use crate::{EntryKind, Vfs};

/// Whether `name` matches the glob `pattern` (`\` escapes the next pattern character).
pub fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n)
}

fn match_from(p: &[char], n: &[char]) -> bool {
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        let step = if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ni));
                    pi += 1;
                    continue;
                }
                '?' => Some(pi + 1),
                '[' => match class(&p[pi..], n[ni]) {
                    Some((true, len)) => Some(pi + len),
                    Some((false, _)) => None,
                    None => (n[ni] == '[').then_some(pi + 1),
                },
                '\\' if pi + 1 < p.len() => (p[pi + 1] == n[ni]).then_some(pi + 2),
                c => (c == n[ni]).then_some(pi + 1),
            }
        } else {
            None
        };
        match step {
            Some(next) => {
                pi = next;
                ni += 1;
            }
            None => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Matches a bracket expression at the start of `p`; returns (matched, length) or `None` when
/// the bracket is not closed (then `[` is literal).
fn class(p: &[char], c: char) -> Option<(bool, usize)> {
    let mut i = 1;
    let negate = matches!(p.get(1), Some('!' | '^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if p[i] == '['
            && p.get(i + 1) == Some(&':')
            && let Some(len) = p[i + 2..].windows(2).position(|w| w == [':', ']'])
        {
            let name: String = p[i + 2..i + 2 + len].iter().collect();
            matched |= posix_class(&name, c);
            i += len + 4;
        } else if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            if p[i] <= c && c <= p[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}

/// `[:alpha:]` and the other POSIX classes inside a bracket expression (ASCII, as under
/// `LC_ALL=C`).
fn posix_class(name: &str, c: char) -> bool {
    match name {
        "alpha" => c.is_ascii_alphabetic(),
        "digit" => c.is_ascii_digit(),
        "alnum" => c.is_ascii_alphanumeric(),
        "upper" => c.is_ascii_uppercase(),
        "lower" => c.is_ascii_lowercase(),
        "space" => matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'),
        "blank" => matches!(c, ' ' | '\t'),
        "punct" => c.is_ascii_punctuation(),
        "xdigit" => c.is_ascii_hexdigit(),
        "cntrl" => c.is_ascii_control(),
        "print" => c.is_ascii_graphic() || c == ' ',
        "graph" => c.is_ascii_graphic(),
        "word" => c.is_ascii_alphanumeric() || c == '_',
        _ => false,
    }
}

/// Whether a word has unescaped glob characters.
pub fn has_glob(pattern: &str) -> bool {
    let mut escaped = false;
    for c in pattern.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

/// Removes pattern escapes, giving the literal text.
pub fn unescape(pattern: &str) -> String {
    let mut out = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

/// Expands a path pattern relative to `cwd`; matches come back spelled as the pattern was
/// (relative stays relative), sorted. Empty when nothing matches.
pub fn expand(vfs: &Vfs, cwd: &str, pattern: &str) -> Vec<String> {
    let absolute = pattern.starts_with('/');
    let components: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
    let mut found: Vec<(String, String)> = vec![(
        if absolute {
            "/".into()
        } else {
            cwd.to_string()
        },
        if absolute { "/".into() } else { String::new() },
    )];
    for (index, component) in components.iter().enumerate() {
        let last = index + 1 == components.len();
        let mut next = Vec::new();
        for (real, shown) in &found {
            let joined = |name: &str| {
                let shown = if shown.is_empty() || shown.ends_with('/') {
                    format!("{shown}{name}")
                } else {
                    format!("{shown}/{name}")
                };
                (vfs::normalize(real, name), shown)
            };
            if !has_glob(component) {
                let name = unescape(component);
                let (r, s) = joined(&name);
                if name == "." || name == ".." || vfs.exists(&r) {
                    next.push((r, s));
                }
                continue;
            }
            let Ok(entries) = vfs.list(real) else {
                continue;
            };
            for (name, kind) in entries {
                if name.starts_with('.') && !component.starts_with('.') {
                    continue;
                }
                if !last && kind != EntryKind::Dir {
                    continue;
                }
                if matches(component, &name) {
                    next.push(joined(&name));
                }
            }
        }
        found = next;
    }
    let mut out: Vec<String> = found.into_iter().map(|(_, shown)| shown).collect();
    if pattern.ends_with('/') {
        out.retain(|p| vfs.is_dir(&vfs::normalize(cwd, p)));
        for p in &mut out {
            p.push('/');
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let cases = [
            ("*.js", "a.js", true),
            ("*.js", "a.ts", false),
            ("a?c", "abc", true),
            ("[a-c]x", "bx", true),
            ("[!a-c]x", "bx", false),
            ("*", "", true),
            ("a*b*c", "aXbYbZc", true),
            ("\\*", "*", true),
            ("\\*", "a", false),
            ("[", "[", true),
            ("[![:space:]]*", "t x", true),
            ("[![:space:]]*", " x", false),
            ("[[:digit:]_]", "_", true),
            ("[[:upper:][:digit:]]", "7", true),
            ("[[:alpha:]]", "1", false),
        ];
        for (p, n, want) in cases {
            assert_eq!(matches(p, n), want, "{p} vs {n}");
        }
    }

    #[test]
    fn expansion_is_relative_and_sorted() {
        let vfs = Vfs::from_files([
            ("src/b.js", b"".as_slice()),
            ("src/a.js", b""),
            ("src/.h.js", b""),
            ("lib/c.js", b""),
        ]);
        assert_eq!(expand(&vfs, "/", "src/*.js"), ["src/a.js", "src/b.js"]);
        assert_eq!(expand(&vfs, "/src", "../*/c.js"), ["../lib/c.js"]);
        assert_eq!(expand(&vfs, "/", "/*/*.js").len(), 3);
        assert!(expand(&vfs, "/", "nope*").is_empty());
    }
}
