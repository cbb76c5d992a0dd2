//! Field splitting by `IFS`, shared by word expansion and `read`. Characters of IFS that are
//! blanks (space, tab, newline) collapse: runs of them separate fields and are dropped at
//! either end. Any other IFS character separates fields on its own, so two in a row enclose an
//! empty field; blanks around it belong to it. An unset IFS is `" \t\n"`; an empty one splits
//! nothing.

/// The IFS in force.
pub(crate) struct Ifs {
    chars: Vec<char>,
}

/// A piece of text split by IFS: text, or a separator (`hard` when it holds a non-blank IFS
/// character, which ends a field even where none has begun).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Separator { hard: bool },
}

impl Ifs {
    pub(crate) fn new(value: Option<&str>) -> Self {
        Ifs {
            chars: value.unwrap_or(" \t\n").chars().collect(),
        }
    }

    fn separates(&self, c: char) -> bool {
        self.chars.contains(&c)
    }

    fn blank(&self, c: char) -> bool {
        matches!(c, ' ' | '\t' | '\n') && self.separates(c)
    }

    /// The first character of IFS, which joins `"$*"` and `"${a[*]}"` (none when IFS is
    /// empty, a space when unset).
    pub(crate) fn joiner(&self) -> String {
        self.chars.first().map(char::to_string).unwrap_or_default()
    }

    /// Splits an unquoted expansion's text for word splitting.
    pub(crate) fn pieces(&self, text: &str) -> Vec<Piece> {
        let chars: Vec<(char, bool)> = text.chars().map(|c| (c, false)).collect();
        let mut pieces = Vec::new();
        let mut pos = 0;
        while pos < chars.len() {
            let start = pos;
            while pos < chars.len() && !self.separates(chars[pos].0) {
                pos += 1;
            }
            if pos > start {
                pieces.push(Piece::Text(chars[start..pos].iter().map(|c| c.0).collect()));
            }
            if pos < chars.len() {
                let hard = self.separator(&chars, &mut pos);
                pieces.push(Piece::Separator { hard });
            }
        }
        pieces
    }

    /// Consumes one separator at `pos`: blanks, at most one other IFS character, blanks.
    /// Characters marked `true` (escaped) never separate.
    fn separator(&self, chars: &[(char, bool)], pos: &mut usize) -> bool {
        let is = |i: usize, test: &dyn Fn(char) -> bool| {
            chars
                .get(i)
                .is_some_and(|(c, escaped)| !escaped && test(*c))
        };
        while is(*pos, &|c| self.blank(c)) {
            *pos += 1;
        }
        let hard = is(*pos, &|c| self.separates(c) && !self.blank(c));
        if hard {
            *pos += 1;
            while is(*pos, &|c| self.blank(c)) {
                *pos += 1;
            }
        }
        hard
    }

    /// One field from `pos` up to the next separator, which is consumed.
    fn field(&self, chars: &[(char, bool)], pos: &mut usize) -> String {
        let start = *pos;
        while *pos < chars.len() && (chars[*pos].1 || !self.separates(chars[*pos].0)) {
            *pos += 1;
        }
        let field = chars[start..*pos].iter().map(|c| c.0).collect();
        if *pos < chars.len() {
            self.separator(chars, pos);
        }
        field
    }

    fn skip_blanks(&self, chars: &[(char, bool)], pos: &mut usize) {
        while *pos < chars.len() && !chars[*pos].1 && self.blank(chars[*pos].0) {
            *pos += 1;
        }
    }

    /// `read NAME…`: one field per name, the last name taking the rest of the line (less
    /// trailing blanks, and less a lone trailing separator). Escaped characters never split.
    pub(crate) fn read_fields(&self, chars: &[(char, bool)], names: usize) -> Vec<String> {
        let mut pos = 0;
        self.skip_blanks(chars, &mut pos);
        let mut fields = Vec::new();
        for _ in 1..names {
            fields.push(self.field(chars, &mut pos));
        }
        let rest = &chars[pos..];
        let mut probe = 0;
        let single = self.field(rest, &mut probe);
        let last = if probe >= rest.len() {
            single
        } else {
            let mut end = rest.len();
            while end > 0 && !rest[end - 1].1 && self.blank(rest[end - 1].0) {
                end -= 1;
            }
            rest[..end].iter().map(|c| c.0).collect()
        };
        fields.push(last);
        fields
    }

    /// `read -a`: every field of the line.
    pub(crate) fn all_fields(&self, chars: &[(char, bool)]) -> Vec<String> {
        let mut pos = 0;
        self.skip_blanks(chars, &mut pos);
        let mut fields = Vec::new();
        while pos < chars.len() {
            fields.push(self.field(chars, &mut pos));
        }
        fields
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Vec<(char, bool)> {
        text.chars().map(|c| (c, false)).collect()
    }

    /// Each expected result printed by bash 5.2 (`IFS=… read -r a b c <<< LINE`).
    #[test]
    fn read_splits_as_bash_does() {
        let cases = [
            (",", "1,2,3,4", 3, vec!["1", "2", "3,4"]),
            (",", " 1 , 2 ,3", 3, vec![" 1 ", " 2 ", "3"]),
            (", ", " 1 , 2 ,,3", 3, vec!["1", "2", ",3"]),
            (" \t\n", "  x   y  z  ", 2, vec!["x", "y  z"]),
            (":", "x:y:", 2, vec!["x", "y"]),
            (":", "x:y:z:", 2, vec!["x", "y:z:"]),
            (":", "x::", 2, vec!["x", ""]),
            ("", "  x  ", 1, vec!["  x  "]),
        ];
        for (ifs, line, names, want) in cases {
            assert_eq!(
                Ifs::new(Some(ifs)).read_fields(&plain(line), names),
                want,
                "IFS={ifs:?} {line:?}"
            );
        }
        assert_eq!(
            Ifs::new(Some(":")).all_fields(&plain("a:b::c:")),
            ["a", "b", "", "c"]
        );
    }
}
