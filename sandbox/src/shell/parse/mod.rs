//! Turns a command-line string into a [`Script`]: the [`lexer`] (with [`words`]) makes tokens,
//! and a recursive-descent parser reads lists, pipelines, simple commands and redirections
//! here and the compound commands in [`compound`].

mod compound;
mod lexer;
mod words;

use super::ast::*;
use lexer::{Token, describe, lex};
pub use words::{expandable_text, parameter_word};

/// A command line that could not be parsed; `Display` is bash's wording.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("syntax error near unexpected token `{0}'")]
    UnexpectedToken(String),
    #[error("syntax error: unexpected end of file")]
    UnexpectedEnd,
    #[error("unexpected EOF while looking for matching `{0}'")]
    Unterminated(char),
    #[error("syntax error: commands nested more than {MAX_PARSE_DEPTH} deep")]
    TooDeep,
    /// A construct of bash's that this shell does not run (`select`, `coproc`).
    #[error("{0}: not supported in this sandbox")]
    Unsupported(String),
}

/// How deeply compound commands may nest; the parser is recursive, so this bounds its stack.
pub const MAX_PARSE_DEPTH: usize = 100;

pub fn parse(src: &str) -> Result<Script, ParseError> {
    let tokens = lex(src)?;
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    let script = parser.script(&[])?;
    match parser.peek() {
        None => Ok(script),
        Some(token) => Err(ParseError::UnexpectedToken(describe(token))),
    }
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

const CLOSERS: [&str; 8] = ["then", "do", "done", "fi", "else", "elif", "}", "esac"];

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn peek_keyword(&self) -> Option<&str> {
        match self.peek() {
            Some(Token::Word(w)) => w.as_literal(),
            _ => None,
        }
    }

    fn skip_newlines(&mut self) {
        while matches!(self.peek(), Some(Token::Newline)) {
            self.pos += 1;
        }
    }

    fn expect_keyword(&mut self, keyword: &str) -> Result<(), ParseError> {
        self.skip_newlines();
        match self.peek() {
            Some(Token::Word(w)) if w.as_literal() == Some(keyword) => {
                self.pos += 1;
                Ok(())
            }
            Some(token) => Err(ParseError::UnexpectedToken(describe(token))),
            None => Err(ParseError::UnexpectedEnd),
        }
    }

    /// A list, up to the end or to one of `stop` (keywords or `)`), which is not consumed.
    fn script(&mut self, stop: &[&str]) -> Result<Script, ParseError> {
        let mut items = Vec::new();
        loop {
            while matches!(self.peek(), Some(Token::Newline | Token::Op(";" | "&"))) {
                if !items.is_empty() || matches!(self.peek(), Some(Token::Newline)) {
                    self.pos += 1;
                } else {
                    let token = self.peek().map(describe).unwrap_or_default();
                    return Err(ParseError::UnexpectedToken(token));
                }
            }
            match self.peek() {
                None => break,
                Some(Token::Op(")")) if stop.contains(&")") => break,
                Some(Token::Op(";;" | ";&" | ";;&")) if stop.contains(&";;") => break,
                Some(Token::Op(")")) => return Err(ParseError::UnexpectedToken(")".into())),
                _ => {}
            }
            if let Some(keyword) = self.peek_keyword()
                && CLOSERS.contains(&keyword)
            {
                if stop.contains(&keyword) {
                    break;
                }
                return Err(ParseError::UnexpectedToken(keyword.to_string()));
            }
            items.push(self.and_or()?);
            match self.peek() {
                Some(Token::Newline | Token::Op(";" | "&")) => self.pos += 1,
                _ => break,
            }
        }
        Ok(Script { items })
    }

    fn and_or(&mut self) -> Result<AndOr, ParseError> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        loop {
            let connector = match self.peek() {
                Some(Token::Op("&&")) => Connector::And,
                Some(Token::Op("||")) => Connector::Or,
                _ => break,
            };
            self.pos += 1;
            self.skip_newlines();
            rest.push((connector, self.pipeline()?));
        }
        Ok(AndOr { first, rest })
    }

    fn pipeline(&mut self) -> Result<Pipeline, ParseError> {
        let negated = self.peek_keyword() == Some("!");
        if negated {
            self.pos += 1;
        }
        let mut commands = vec![self.command()?];
        while matches!(self.peek(), Some(Token::Op("|"))) {
            self.pos += 1;
            self.skip_newlines();
            commands.push(self.command()?);
        }
        Ok(Pipeline { negated, commands })
    }

    fn command(&mut self) -> Result<Command, ParseError> {
        self.depth += 1;
        let command = if self.depth > MAX_PARSE_DEPTH {
            Err(ParseError::TooDeep)
        } else {
            self.command_at_depth()
        };
        self.depth -= 1;
        command
    }

    /// `name() body` or `function name [()] body`, if the tokens start one.
    fn function_definition(&mut self) -> Result<Option<Command>, ParseError> {
        let keyword = self.peek_keyword() == Some("function");
        let offset = usize::from(keyword);
        let name = match self.tokens.get(self.pos + offset) {
            Some(Token::Word(w)) => match w.as_literal() {
                Some(name) if is_name(name) => name.to_string(),
                _ => return Ok(None),
            },
            _ => return Ok(None),
        };
        let parens = matches!(
            (
                self.tokens.get(self.pos + offset + 1),
                self.tokens.get(self.pos + offset + 2)
            ),
            (Some(Token::Op("(")), Some(Token::Op(")")))
        );
        if !parens && !keyword {
            return Ok(None);
        }
        self.pos += offset + 1 + if parens { 2 } else { 0 };
        self.skip_newlines();
        let body = self.command()?;
        if !matches!(body, Command::Compound { .. }) {
            return Err(ParseError::UnexpectedToken(name));
        }
        Ok(Some(Command::Function {
            name,
            body: Box::new(body),
        }))
    }

    fn command_at_depth(&mut self) -> Result<Command, ParseError> {
        if let Some(function) = self.function_definition()? {
            return Ok(function);
        }
        let compound = match (self.peek_keyword(), self.peek()) {
            (Some("for"), _) => Some(self.for_loop()?),
            (Some(k @ ("while" | "until")), _) => {
                let until = k == "until";
                self.pos += 1;
                let condition = self.script(&["do"])?;
                self.expect_keyword("do")?;
                let body = self.script(&["done"])?;
                self.expect_keyword("done")?;
                Some(Compound::While {
                    until,
                    condition,
                    body,
                })
            }
            (Some("if"), _) => Some(self.if_clause()?),
            (Some("case"), _) => Some(self.case_clause()?),
            (Some("[["), _) => Some(self.conditional()?),
            (_, Some(Token::Arith(text))) => {
                let text = text.clone();
                self.pos += 1;
                Some(Compound::Arith(text))
            }
            (Some(keyword @ ("select" | "coproc")), _) => {
                return Err(ParseError::Unsupported(keyword.to_string()));
            }
            (Some("{"), _) => {
                self.pos += 1;
                let body = self.script(&["}"])?;
                self.expect_keyword("}")?;
                Some(Compound::Group {
                    subshell: false,
                    body,
                })
            }
            (_, Some(Token::Op("("))) => {
                self.pos += 1;
                let body = self.script(&[")"])?;
                match self.peek() {
                    Some(Token::Op(")")) => self.pos += 1,
                    Some(t) => return Err(ParseError::UnexpectedToken(describe(t))),
                    None => return Err(ParseError::UnexpectedEnd),
                }
                Some(Compound::Group {
                    subshell: true,
                    body,
                })
            }
            _ => None,
        };
        if let Some(body) = compound {
            let mut redirects = Vec::new();
            while let Some(redirect) = self.redirect()? {
                redirects.push(redirect);
            }
            return Ok(Command::Compound { body, redirects });
        }
        let mut assigns = Vec::new();
        let mut words = Vec::new();
        let mut redirects = Vec::new();
        loop {
            if let Some(redirect) = self.redirect()? {
                redirects.push(redirect);
                continue;
            }
            match self.peek() {
                Some(Token::Word(word)) => {
                    let word = word.clone();
                    self.pos += 1;
                    match (words.is_empty(), assignment(&word)) {
                        (true, Some(assign)) => assigns.push(assign),
                        _ if has_array_literal(&word)
                            && !words
                                .first()
                                .and_then(Word::as_literal)
                                .is_some_and(is_declaration) =>
                        {
                            return Err(ParseError::UnexpectedToken("(".into()));
                        }
                        _ => words.push(word),
                    }
                }
                _ => break,
            }
        }
        if assigns.is_empty() && words.is_empty() && redirects.is_empty() {
            return Err(match self.peek() {
                Some(token) => ParseError::UnexpectedToken(describe(token)),
                None => ParseError::UnexpectedEnd,
            });
        }
        Ok(Command::Simple {
            assigns,
            words,
            redirects,
        })
    }

    fn redirect(&mut self) -> Result<Option<Redirect>, ParseError> {
        let (fd, op) = match self.peek() {
            Some(Token::HereDoc { fd, body, expand }) => {
                let redirect = Redirect {
                    fd: fd.unwrap_or(0),
                    op: RedirectOp::HereDoc {
                        body: body.clone(),
                        expand: *expand,
                    },
                };
                self.pos += 1;
                return Ok(Some(redirect));
            }
            Some(Token::Redirect { fd, op }) => (*fd, *op),
            _ => return Ok(None),
        };
        self.pos += 1;
        let target = match self.peek() {
            Some(Token::Word(w)) => w.clone(),
            Some(t) => return Err(ParseError::UnexpectedToken(describe(t))),
            None => return Err(ParseError::UnexpectedToken("newline".into())),
        };
        self.pos += 1;
        let (default_fd, op) = match op {
            "<" => (0, RedirectOp::Read(target)),
            ">" | ">|" => (1, RedirectOp::Write(target)),
            ">>" => (1, RedirectOp::Append(target)),
            "&>" => (
                1,
                RedirectOp::WriteBoth {
                    target,
                    append: false,
                },
            ),
            "&>>" => (
                1,
                RedirectOp::WriteBoth {
                    target,
                    append: true,
                },
            ),
            ">&" if target
                .as_literal()
                .is_some_and(|t| t.parse::<u32>().is_err() && t != "-") =>
            {
                (
                    1,
                    RedirectOp::WriteBoth {
                        target,
                        append: false,
                    },
                )
            }
            ">&" => (1, RedirectOp::Duplicate(target)),
            "<&" => (0, RedirectOp::Duplicate(target)),
            _ => (0, RedirectOp::HereString(target)),
        };
        Ok(Some(Redirect {
            fd: fd.unwrap_or(default_fd),
            op,
        }))
    }
}

pub use tether_coreutils::is_name;

/// The builtins whose `NAME=(…)` arguments are array assignments.
pub fn is_declaration(name: &str) -> bool {
    matches!(
        name,
        "declare" | "typeset" | "local" | "readonly" | "export"
    )
}

fn has_array_literal(word: &Word) -> bool {
    matches!(word.parts.last(), Some(WordPart::ArrayLiteral(_)))
}

/// Reads a word as an assignment: `NAME=…`, `NAME+=…`, `NAME[SUBSCRIPT]=…` (the subscript
/// may hold expansions), or `NAME=(…)`.
pub fn assignment(word: &Word) -> Option<Assign> {
    let Some(WordPart::Literal(first)) = word.parts.first() else {
        return None;
    };
    let name_end = first
        .find(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
        .unwrap_or(first.len());
    let name = &first[..name_end];
    if !is_name(name) {
        return None;
    }
    let (subscript, rest) = if first[name_end..].starts_with('[') {
        let mut tail = word.clone();
        tail.parts[0] = WordPart::Literal(first[name_end..].to_string());
        let (subscript, rest) = bracketed(&tail)?;
        (Some(subscript), rest)
    } else {
        let mut rest = word.clone();
        rest.parts[0] = WordPart::Literal(first[name_end..].to_string());
        (None, rest)
    };
    let Some(WordPart::Literal(head)) = rest.parts.first() else {
        return None;
    };
    let (append, skip) = if head.starts_with("+=") {
        (true, 2)
    } else if head.starts_with('=') {
        (false, 1)
    } else {
        return None;
    };
    let mut parts = Vec::new();
    if head.len() > skip {
        parts.push(WordPart::Literal(head[skip..].to_string()));
    }
    parts.extend(rest.parts[1..].iter().cloned());
    let value = match parts.as_slice() {
        [WordPart::ArrayLiteral(items)] if subscript.is_none() => AssignValue::Array(
            items
                .iter()
                .map(|item| match bracketed(item) {
                    Some((key, rest)) => match rest.parts.split_first() {
                        Some((WordPart::Literal(head), tail)) if head.starts_with('=') => {
                            let mut value = Vec::new();
                            if head.len() > 1 {
                                value.push(WordPart::Literal(head[1..].to_string()));
                            }
                            value.extend(tail.iter().cloned());
                            (Some(key), Word { parts: value })
                        }
                        _ => (None, item.clone()),
                    },
                    None => (None, item.clone()),
                })
                .collect(),
        ),
        _ if parts.iter().any(|p| matches!(p, WordPart::ArrayLiteral(_))) => return None,
        _ => AssignValue::Scalar(Word { parts }),
    };
    Some(Assign {
        name: name.to_string(),
        subscript,
        append,
        value,
    })
}

/// Splits a word that starts with `[` at its matching `]`: the subscript between them and
/// the rest of the word after.
fn bracketed(word: &Word) -> Option<(Word, Word)> {
    let Some(WordPart::Literal(first)) = word.parts.first() else {
        return None;
    };
    first.strip_prefix('[')?;
    let mut subscript = Vec::new();
    let mut depth = 0usize;
    for (index, part) in word.parts.iter().enumerate() {
        let WordPart::Literal(text) = part else {
            subscript.push(part.clone());
            continue;
        };
        let text = if index == 0 { &text[1..] } else { &text[..] };
        for (at, c) in text.char_indices() {
            match c {
                '[' => depth += 1,
                ']' if depth > 0 => depth -= 1,
                ']' => {
                    if at > 0 {
                        subscript.push(WordPart::Literal(text[..at].to_string()));
                    }
                    let mut rest = Vec::new();
                    if at + 1 < text.len() {
                        rest.push(WordPart::Literal(text[at + 1..].to_string()));
                    }
                    rest.extend(word.parts[index + 1..].iter().cloned());
                    return Some((Word { parts: subscript }, Word { parts: rest }));
                }
                _ => {}
            }
        }
        if !text.is_empty() {
            subscript.push(WordPart::Literal(text.to_string()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heredoc_body_is_attached_to_its_redirect() {
        let script = parse("cat <<'EOF' > out\nhello $x\nEOF\necho done").unwrap();
        assert_eq!(script.items.len(), 2);
        let Command::Simple { redirects, .. } = &script.items[0].first.commands[0] else {
            panic!("simple command expected");
        };
        assert_eq!(
            redirects[0].op,
            RedirectOp::HereDoc {
                body: "hello $x\n".into(),
                expand: false
            }
        );
    }

    #[test]
    fn syntax_errors_name_the_token() {
        let cases = [
            ("echo a &&", "syntax error: unexpected end of file"),
            ("| echo", "syntax error near unexpected token `|'"),
            ("echo 'abc", "unexpected EOF while looking for matching `''"),
            ("if true; then echo", "syntax error: unexpected end of file"),
            ("done", "syntax error near unexpected token `done'"),
        ];
        for (src, want) in cases {
            assert_eq!(parse(src).unwrap_err().to_string(), want, "{src}");
        }
    }

    #[test]
    fn fd_prefix_only_when_adjacent() {
        let script = parse("echo 2 >x 2>&1").unwrap();
        let Command::Simple {
            words, redirects, ..
        } = &script.items[0].first.commands[0]
        else {
            panic!("simple command expected");
        };
        assert_eq!(words.len(), 2);
        assert_eq!(redirects[0].fd, 1);
        assert_eq!(redirects[1].fd, 2);
    }
}
