//! The compound commands' grammar: `for`, `[[ … ]]`, `case`, `if` (`while`/`until`, groups
//! and subshells are short enough to stay with the command parser).

use super::lexer::{Token, describe};
use super::{ParseError, Parser, is_name};
use crate::shell::ast::*;

impl Parser {
    pub(super) fn for_loop(&mut self) -> Result<Compound, ParseError> {
        self.pos += 1;
        if let Some(Token::Arith(text)) = self.peek() {
            let parts = split_arith_for(text)?;
            self.pos += 1;
            if let Some(Token::Newline | Token::Op(";")) = self.peek() {
                self.pos += 1;
            }
            self.skip_newlines();
            let body = if self.peek_keyword() == Some("{") {
                self.pos += 1;
                let body = self.script(&["}"])?;
                self.expect_keyword("}")?;
                body
            } else {
                self.expect_keyword("do")?;
                let body = self.script(&["done"])?;
                self.expect_keyword("done")?;
                body
            };
            let [init, condition, step] = parts;
            return Ok(Compound::ArithFor {
                init,
                condition,
                step,
                body,
            });
        }
        let var = match self.peek_keyword() {
            Some(name) if is_name(name) => name.to_string(),
            _ => {
                return Err(self.peek().map_or(ParseError::UnexpectedEnd, |t| {
                    ParseError::UnexpectedToken(describe(t))
                }));
            }
        };
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_newlines();
        if self.peek_keyword() == Some("in") {
            self.pos += 1;
            while let Some(Token::Word(w)) = self.peek() {
                items.push(w.clone());
                self.pos += 1;
            }
        } else {
            // `for name; do …` runs over the positional parameters.
            items.push(Word {
                parts: vec![WordPart::DoubleQuoted(vec![WordPart::Parameter(
                    "@".into(),
                )])],
            });
        }
        if let Some(Token::Newline | Token::Op(";")) = self.peek() {
            self.pos += 1;
        }
        self.expect_keyword("do")?;
        let body = self.script(&["done"])?;
        self.expect_keyword("done")?;
        Ok(Compound::For { var, items, body })
    }

    pub(super) fn conditional(&mut self) -> Result<Compound, ParseError> {
        self.pos += 1;
        let mut parts = Vec::new();
        loop {
            let part = match self.peek() {
                Some(Token::Word(w)) if w.as_literal() == Some("]]") => {
                    self.pos += 1;
                    return Ok(Compound::Conditional(parts));
                }
                Some(Token::Word(w)) => ConditionalPart::Word(w.clone()),
                Some(Token::Op(op @ ("&&" | "||" | "(" | ")"))) => ConditionalPart::Op(op),
                Some(Token::Redirect {
                    fd: None,
                    op: op @ ("<" | ">"),
                }) => ConditionalPart::Op(op),
                Some(t) => return Err(ParseError::UnexpectedToken(describe(t))),
                None => return Err(ParseError::UnexpectedEnd),
            };
            parts.push(part);
            self.pos += 1;
        }
    }

    pub(super) fn case_clause(&mut self) -> Result<Compound, ParseError> {
        self.pos += 1;
        let word = match self.peek() {
            Some(Token::Word(w)) => w.clone(),
            Some(t) => return Err(ParseError::UnexpectedToken(describe(t))),
            None => return Err(ParseError::UnexpectedEnd),
        };
        self.pos += 1;
        self.expect_keyword("in")?;
        let mut arms = Vec::new();
        loop {
            self.skip_newlines();
            match self.peek() {
                Some(Token::Word(w)) if w.as_literal() == Some("esac") => {
                    self.pos += 1;
                    break;
                }
                Some(Token::Op("(")) => self.pos += 1,
                None => return Err(ParseError::UnexpectedEnd),
                _ => {}
            }
            let mut patterns = Vec::new();
            loop {
                match self.peek() {
                    Some(Token::Word(w)) => {
                        patterns.push(w.clone());
                        self.pos += 1;
                    }
                    Some(t) => return Err(ParseError::UnexpectedToken(describe(t))),
                    None => return Err(ParseError::UnexpectedEnd),
                }
                match self.peek() {
                    Some(Token::Op("|")) => self.pos += 1,
                    Some(Token::Op(")")) => {
                        self.pos += 1;
                        break;
                    }
                    Some(t) => return Err(ParseError::UnexpectedToken(describe(t))),
                    None => return Err(ParseError::UnexpectedEnd),
                }
            }
            let body = self.script(&[";;", "esac"])?;
            let end = match self.peek() {
                Some(Token::Op(op @ (";;" | ";&" | ";;&"))) => {
                    let end = match *op {
                        ";&" => CaseEnd::FallThrough,
                        ";;&" => CaseEnd::TestNext,
                        _ => CaseEnd::Break,
                    };
                    self.pos += 1;
                    end
                }
                Some(Token::Word(w)) if w.as_literal() == Some("esac") => CaseEnd::Break,
                Some(t) => return Err(ParseError::UnexpectedToken(describe(t))),
                None => return Err(ParseError::UnexpectedEnd),
            };
            arms.push((patterns, body, end));
        }
        Ok(Compound::Case { word, arms })
    }

    pub(super) fn if_clause(&mut self) -> Result<Compound, ParseError> {
        self.pos += 1;
        let mut branches = Vec::new();
        let mut otherwise = None;
        loop {
            let condition = self.script(&["then"])?;
            self.expect_keyword("then")?;
            let body = self.script(&["elif", "else", "fi"])?;
            branches.push((condition, body));
            match self.peek_keyword() {
                Some("elif") => self.pos += 1,
                Some("else") => {
                    self.pos += 1;
                    otherwise = Some(self.script(&["fi"])?);
                    self.expect_keyword("fi")?;
                    break;
                }
                _ => {
                    self.expect_keyword("fi")?;
                    break;
                }
            }
        }
        Ok(Compound::If {
            branches,
            otherwise,
        })
    }
}

/// `INIT; CONDITION; STEP` of `for ((…))`, split at the two top-level semicolons.
fn split_arith_for(text: &str) -> Result<[String; 3], ParseError> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (at, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ';' if depth == 0 => {
                parts.push(text[start..at].to_string());
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(text[start..].to_string());
    <[String; 3]>::try_from(parts).map_err(|_| ParseError::UnexpectedToken("((".into()))
}
