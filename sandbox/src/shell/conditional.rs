//! `[[ … ]]`: bash's conditional expression. Its words are expanded without field splitting or
//! globbing; the right side of `==`/`!=` is a glob pattern and of `=~` an extended regular
//! expression; `&&`, `||`, `!` and parentheses combine tests. Evaluation happens after every
//! word has been expanded, so command substitutions on a short-circuited side still run.

use crate::commands::search::translate_posix;
use crate::shell::glob;
use crate::vfs::{self, EntryKind, Vfs};

/// One expanded element between `[[` and `]]`.
#[derive(Debug, Clone, PartialEq)]
pub enum CondToken {
    /// A word: its text, and the same text as a glob pattern (quoted parts escaped).
    Word { text: String, pattern: String },
    /// `&&`, `||`, `(`, `)`, `<`, `>`.
    Op(&'static str),
}

/// What the expression can see and set.
pub trait Scope {
    fn vfs(&self) -> &Vfs;
    fn cwd(&self) -> &str;
    /// `-v NAME` or `-v NAME[SUBSCRIPT]`.
    fn is_set(&mut self, operand: &str) -> bool;
    /// An operand of `-eq` and the other numeric tests, evaluated as arithmetic.
    fn number(&mut self, text: &str) -> Result<i64, String>;
    /// After `=~` matched: the match and its groups, for `BASH_REMATCH`.
    fn matched(&mut self, groups: Vec<String>);
}

pub fn evaluate(tokens: &[CondToken], scope: &mut dyn Scope) -> Result<bool, String> {
    let mut parser = Cond {
        tokens,
        pos: 0,
        scope,
    };
    let value = parser.or()?;
    if parser.pos != tokens.len() {
        return Err("syntax error in conditional expression".into());
    }
    Ok(value)
}

struct Cond<'a> {
    tokens: &'a [CondToken],
    pos: usize,
    scope: &'a mut dyn Scope,
}

impl Cond<'_> {
    fn op(&self) -> Option<&'static str> {
        match self.tokens.get(self.pos) {
            Some(CondToken::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn word(&self, offset: usize) -> Option<(&str, &str)> {
        match self.tokens.get(self.pos + offset) {
            Some(CondToken::Word { text, pattern }) => Some((text, pattern)),
            Some(CondToken::Op(op @ ("<" | ">"))) => Some((op, op)),
            _ => None,
        }
    }

    fn or(&mut self) -> Result<bool, String> {
        let mut value = self.and()?;
        while self.op() == Some("||") {
            self.pos += 1;
            let right = self.and()?;
            value = value || right;
        }
        Ok(value)
    }

    fn and(&mut self) -> Result<bool, String> {
        let mut value = self.not()?;
        while self.op() == Some("&&") {
            self.pos += 1;
            let right = self.not()?;
            value = value && right;
        }
        Ok(value)
    }

    fn not(&mut self) -> Result<bool, String> {
        if self.word(0).map(|w| w.0) == Some("!") && self.tokens.len() > self.pos + 1 {
            self.pos += 1;
            return Ok(!self.not()?);
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<bool, String> {
        if self.op() == Some("(") {
            self.pos += 1;
            let value = self.or()?;
            if self.op() != Some(")") {
                return Err("expected `)'".into());
            }
            self.pos += 1;
            return Ok(value);
        }
        let Some((first, _)) = self.word(0) else {
            return Err("syntax error in conditional expression".into());
        };
        let first = first.to_string();
        if let (Some((op, _)), Some((right, pattern))) = (self.word(1), self.word(2))
            && is_binary(op)
        {
            let (op, right, pattern) = (op.to_string(), right.to_string(), pattern.to_string());
            self.pos += 3;
            return self.binary(&first, &op, &right, &pattern);
        }
        if first.starts_with('-')
            && first.len() == 2
            && let Some((operand, _)) = self.word(1)
        {
            let operand = operand.to_string();
            self.pos += 2;
            return self.unary(&first, &operand);
        }
        self.pos += 1;
        Ok(!first.is_empty())
    }

    fn unary(&mut self, op: &str, operand: &str) -> Result<bool, String> {
        let path = vfs::normalize(self.scope.cwd(), operand);
        let kind = self.scope.vfs().kind(&path);
        Ok(match op {
            "-e" | "-a" | "-r" | "-w" => kind.is_some(),
            "-f" => kind == Some(EntryKind::File),
            "-d" | "-x" => kind == Some(EntryKind::Dir),
            "-s" => self.scope.vfs().read(&path).is_ok_and(|d| !d.is_empty()),
            "-z" => operand.is_empty(),
            "-n" => !operand.is_empty(),
            "-L" | "-h" => false,
            "-v" => self.scope.is_set(operand),
            _ => {
                return Err(format!(
                    "unexpected argument `{op}' to conditional unary operator"
                ));
            }
        })
    }

    fn binary(&mut self, left: &str, op: &str, right: &str, pattern: &str) -> Result<bool, String> {
        if op.starts_with('-') {
            let left = self.scope.number(left)?;
            let right = self.scope.number(right)?;
            return Ok(match op {
                "-eq" => left == right,
                "-ne" => left != right,
                "-lt" => left < right,
                "-le" => left <= right,
                "-gt" => left > right,
                _ => left >= right,
            });
        }
        Ok(match op {
            "==" | "=" => glob::matches(pattern, left),
            "!=" => !glob::matches(pattern, left),
            "=~" => {
                let translated = translate_posix(right, true)?;
                let regex = regex::Regex::new(&translated)
                    .map_err(|_| format!("invalid regular expression `{right}'"))?;
                match regex.captures(left) {
                    Some(captures) => {
                        let groups = captures
                            .iter()
                            .map(|g| g.map_or(String::new(), |m| m.as_str().to_string()))
                            .collect();
                        self.scope.matched(groups);
                        true
                    }
                    None => {
                        self.scope.matched(Vec::new());
                        false
                    }
                }
            }
            "<" => left < right,
            _ => left > right,
        })
    }
}

fn is_binary(op: &str) -> bool {
    matches!(
        op,
        "==" | "=" | "!=" | "=~" | "<" | ">" | "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"
    )
}
