//! `[[ … ]]`: bash's conditional expression. Its words are expanded without field splitting or
//! globbing; the right side of `==`/`!=` is a glob pattern and of `=~` an extended regular
//! expression; `&&`, `||`, `!` and parentheses combine tests. Evaluation happens after every
//! word has been expanded, so command substitutions on a short-circuited side still run.

use std::collections::BTreeMap;

use crate::commands::search::translate_posix;
use crate::shell::{arith, glob};
use crate::vfs::{self, EntryKind, Vfs};

/// One expanded element between `[[` and `]]`.
#[derive(Debug, Clone, PartialEq)]
pub enum CondToken {
    /// A word: its text, and the same text as a glob pattern (quoted parts escaped).
    Word { text: String, pattern: String },
    /// `&&`, `||`, `(`, `)`, `<`, `>`.
    Op(&'static str),
}

/// What the expression can see.
pub struct Scope<'a> {
    pub vfs: &'a Vfs,
    pub cwd: &'a str,
    pub env: &'a BTreeMap<String, String>,
}

pub fn evaluate(tokens: &[CondToken], scope: &Scope) -> Result<bool, String> {
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
    scope: &'a Scope<'a>,
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

    fn unary(&self, op: &str, operand: &str) -> Result<bool, String> {
        let path = vfs::normalize(self.scope.cwd, operand);
        let kind = self.scope.vfs.kind(&path);
        Ok(match op {
            "-e" | "-a" | "-r" | "-w" => kind.is_some(),
            "-f" => kind == Some(EntryKind::File),
            "-d" | "-x" => kind == Some(EntryKind::Dir),
            "-s" => self.scope.vfs.read(&path).is_ok_and(|d| !d.is_empty()),
            "-z" => operand.is_empty(),
            "-n" => !operand.is_empty(),
            "-L" | "-h" => false,
            "-v" => self.scope.env.contains_key(operand),
            _ => {
                return Err(format!(
                    "unexpected argument `{op}' to conditional unary operator"
                ));
            }
        })
    }

    fn binary(&self, left: &str, op: &str, right: &str, pattern: &str) -> Result<bool, String> {
        let number = |side: &str| arith::evaluate(side, self.scope.env).map_err(|e| e.to_string());
        Ok(match op {
            "==" | "=" => glob::matches(pattern, left),
            "!=" => !glob::matches(pattern, left),
            "=~" => {
                let translated = translate_posix(right, true)?;
                regex::Regex::new(&translated)
                    .map_err(|_| format!("invalid regular expression `{right}'"))?
                    .is_match(left)
            }
            "<" => left < right,
            ">" => left > right,
            "-eq" => number(left)? == number(right)?,
            "-ne" => number(left)? != number(right)?,
            "-lt" => number(left)? < number(right)?,
            "-le" => number(left)? <= number(right)?,
            "-gt" => number(left)? > number(right)?,
            _ => number(left)? >= number(right)?,
        })
    }
}

fn is_binary(op: &str) -> bool {
    matches!(
        op,
        "==" | "=" | "!=" | "=~" | "<" | ">" | "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"
    )
}
