//! The lexer: turns a command line into tokens — words (see [`super::words`] for quoting and
//! expansions inside a word), operators, redirections with their file descriptor, and heredocs,
//! whose bodies are read at the next newline.

use super::ParseError;
use crate::shell::ast::*;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Token {
    Word(Word),
    Op(&'static str),
    Redirect {
        fd: Option<u32>,
        op: &'static str,
    },
    HereDoc {
        fd: Option<u32>,
        body: String,
        expand: bool,
    },
    /// `(( … ))`: the expression between the double parentheses.
    Arith(String),
    Newline,
}

const OPERATORS: [&str; 21] = [
    ";;&", "&>>", "<<<", "<<-", "&&", "||", ";;", ";&", "&>", "<<", "<&", ">>", ">&", ">|", ";",
    "&", "|", "(", ")", "<", ">",
];

fn is_redirect_op(op: &str) -> bool {
    matches!(
        op,
        "&>>" | "<<<" | "<<-" | "&>" | "<<" | "<&" | ">>" | ">&" | ">|" | "<" | ">"
    )
}

pub(super) struct Lexer {
    pub(super) chars: Vec<char>,
    pub(super) pos: usize,
    pub(super) tokens: Vec<Token>,
    pub(super) pending_heredocs: Vec<(usize, String, bool)>,
    /// Inside `[[ … ]]`, where the word after `=~` is a regular expression: `(`, `)`, `|`,
    /// `<`, `>` are part of it, and so are blanks inside its parentheses.
    pub(super) in_conditional: bool,
}

pub(super) fn describe(token: &Token) -> String {
    match token {
        Token::Word(w) => w.as_literal().unwrap_or("word").to_string(),
        Token::Op(op) | Token::Redirect { op, .. } => op.to_string(),
        Token::HereDoc { .. } => "<<".to_string(),
        Token::Arith(_) => "((".to_string(),
        Token::Newline => "newline".to_string(),
    }
}

pub(super) fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    let mut lexer = Lexer::over(src);
    lexer.run()?;
    Ok(lexer.tokens)
}

pub(super) fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | '|' | '&' | ';' | '<' | '>' | '(' | ')'
    )
}

impl Lexer {
    /// A lexer at the start of `text`.
    pub(super) fn over(text: &str) -> Lexer {
        Lexer {
            chars: text.chars().collect(),
            pos: 0,
            tokens: Vec::new(),
            pending_heredocs: Vec::new(),
            in_conditional: false,
        }
    }

    pub(super) fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    fn run(&mut self) -> Result<(), ParseError> {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\n' => {
                    self.pos += 1;
                    self.tokens.push(Token::Newline);
                    self.read_heredoc_bodies();
                }
                '(' if self.peek_at(1) == Some('(')
                    && !self.at_regex()
                    && self.arithmetic_command().is_some() => {}
                _ => {
                    if self.at_regex() {
                        let word = self.regex_word()?;
                        self.tokens.push(Token::Word(word));
                    } else if self.at_process_substitution() {
                        let word = self.word()?;
                        self.tokens.push(Token::Word(word));
                    } else if let Some(op) = OPERATORS.iter().find(|op| self.starts_with(op)) {
                        self.pos += op.len();
                        self.operator(op, None)?;
                    } else {
                        let start = self.pos;
                        let word = self.word()?;
                        let all_digits = self.chars[start..self.pos]
                            .iter()
                            .all(|c| c.is_ascii_digit());
                        if all_digits && matches!(self.peek(), Some('<' | '>')) {
                            let fd: u32 = self.chars[start..self.pos]
                                .iter()
                                .collect::<String>()
                                .parse()
                                .unwrap_or(u32::MAX);
                            let op = OPERATORS
                                .iter()
                                .find(|op| self.starts_with(op))
                                .copied()
                                .unwrap_or(">");
                            self.pos += op.len();
                            self.operator(op, Some(fd))?;
                        } else {
                            let word = self.array_literal(word)?;
                            match word.as_literal() {
                                Some("[[") => self.in_conditional = true,
                                Some("]]") => self.in_conditional = false,
                                _ => {}
                            }
                            self.tokens.push(Token::Word(word));
                        }
                    }
                }
            }
        }
        if !self.pending_heredocs.is_empty() {
            self.read_heredoc_bodies();
        }
        Ok(())
    }

    /// At `((`: reads `(( … ))` as one token if the parentheses close as a pair, as bash
    /// does; otherwise (`((cd a) && ls)`) reads nothing and they are two subshell openers.
    fn arithmetic_command(&mut self) -> Option<()> {
        let mut depth = 0usize;
        let mut quote: Option<char> = None;
        let start = self.pos + 2;
        let mut i = start;
        loop {
            let c = *self.chars.get(i)?;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '(') => depth += 1,
                (None, ')') if depth > 0 => depth -= 1,
                (None, ')') => {
                    if self.chars.get(i + 1) != Some(&')') {
                        return None;
                    }
                    let text = self.chars[start..i].iter().collect();
                    self.pos = i + 2;
                    self.tokens.push(Token::Arith(text));
                    return Some(());
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// At the word after `=~` in `[[ … ]]`.
    fn at_regex(&self) -> bool {
        self.in_conditional
            && matches!(self.tokens.last(), Some(Token::Word(w)) if w.as_literal() == Some("=~"))
    }

    /// At `<(` or `>(`, which start a word (a process substitution) rather than a redirection.
    pub(super) fn at_process_substitution(&self) -> bool {
        matches!(self.peek(), Some('<' | '>')) && self.peek_at(1) == Some('(')
    }

    /// After a word `NAME=` or `NAME+=` directly followed by `(`: reads the array's items up
    /// to `)` into a [`WordPart::ArrayLiteral`] at the end of the word.
    fn array_literal(&mut self, mut word: Word) -> Result<Word, ParseError> {
        let opens_array = self.peek() == Some('(')
            && matches!(word.parts.last(), Some(WordPart::Literal(text))
                if text.ends_with('=') && word.parts.len() == 1
                    && super::is_name(text.trim_end_matches('=').trim_end_matches('+')));
        if !opens_array {
            return Ok(word);
        }
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            match self.peek() {
                None => return Err(ParseError::Unterminated(')')),
                Some(' ' | '\t' | '\r' | '\n') => self.pos += 1,
                Some('#') => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                Some(')') => {
                    self.pos += 1;
                    break;
                }
                Some(c) if is_meta(c) => return Err(ParseError::UnexpectedToken(c.to_string())),
                Some(_) => items.push(self.word()?),
            }
        }
        word.parts.push(WordPart::ArrayLiteral(items));
        Ok(word)
    }

    fn operator(&mut self, op: &'static str, fd: Option<u32>) -> Result<(), ParseError> {
        if op == "<<" || op == "<<-" {
            while matches!(self.peek(), Some(' ' | '\t')) {
                self.pos += 1;
            }
            let word = self.word()?;
            let mut delimiter = String::new();
            let mut expand = true;
            for part in &word.parts {
                match part {
                    WordPart::Literal(t) => delimiter.push_str(t),
                    WordPart::Quoted(t) => {
                        expand = false;
                        delimiter.push_str(t);
                    }
                    WordPart::DoubleQuoted(inner) => {
                        expand = false;
                        for p in inner {
                            if let WordPart::Literal(t) | WordPart::Quoted(t) = p {
                                delimiter.push_str(t);
                            }
                        }
                    }
                    _ => return Err(ParseError::UnexpectedToken("<<".into())),
                }
            }
            if delimiter.is_empty() {
                return Err(ParseError::UnexpectedToken("newline".into()));
            }
            self.pending_heredocs
                .push((self.tokens.len(), delimiter, op == "<<-"));
            self.tokens.push(Token::HereDoc {
                fd,
                body: String::new(),
                expand,
            });
        } else if is_redirect_op(op) {
            self.tokens.push(Token::Redirect { fd, op });
        } else {
            self.tokens.push(Token::Op(op));
        }
        Ok(())
    }

    fn read_heredoc_bodies(&mut self) {
        for (index, delimiter, strip_tabs) in std::mem::take(&mut self.pending_heredocs) {
            let mut body = String::new();
            while self.pos < self.chars.len() {
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|c| *c == '\n')
                    .map_or(self.chars.len(), |i| self.pos + i);
                let mut line: String = self.chars[self.pos..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                if strip_tabs {
                    line = line.trim_start_matches('\t').to_string();
                }
                if line == delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if let Some(Token::HereDoc { body: slot, .. }) = self.tokens.get_mut(index) {
                *slot = body;
            }
        }
    }
}
