//! Words: quoting (`'…'`, `"…"`, `$'…'`, backslashes), the expansions a word holds (`$name`,
//! `${…}`, `$(…)`, backquotes, `$((…))`, `~`), and the text of heredoc bodies and `${x:-word}`
//! words, which expand like the inside of double quotes.

use super::ParseError;
use super::lexer::{Lexer, is_meta};
use crate::shell::ast::*;

impl Lexer {
    /// The regular expression after `=~`: a word in which parentheses (with the blanks inside
    /// them), `|`, `<` and `>` are ordinary characters.
    pub(super) fn regex_word(&mut self) -> Result<Word, ParseError> {
        let mut parts = Vec::new();
        let mut depth = 0usize;
        loop {
            match self.peek() {
                Some('(') => {
                    depth += 1;
                    parts.push(WordPart::Literal("(".into()));
                    self.pos += 1;
                }
                Some(')') if depth > 0 => {
                    depth -= 1;
                    parts.push(WordPart::Literal(")".into()));
                    self.pos += 1;
                }
                Some(c @ ('|' | '<' | '>')) => {
                    parts.push(WordPart::Literal(c.to_string()));
                    self.pos += 1;
                }
                Some(c @ (' ' | '\t')) if depth > 0 => {
                    parts.push(WordPart::Literal(c.to_string()));
                    self.pos += 1;
                }
                Some(c) if is_meta(c) => break,
                None => break,
                Some(_) => parts.extend(self.word()?.parts),
            }
        }
        Ok(Word { parts })
    }

    /// Reads one word up to an unquoted metacharacter.
    pub(super) fn word(&mut self) -> Result<Word, ParseError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let at_start = self.pos;
        if self.at_process_substitution() {
            let output = self.peek() == Some('>');
            self.pos += 2;
            let text = self.balanced('(', ')')?;
            parts.push(WordPart::ProcessSubstitution { text, output });
        }
        while let Some(c) = self.peek() {
            if is_meta(c) {
                break;
            }
            match c {
                '\'' => {
                    flush(&mut literal, &mut parts);
                    self.pos += 1;
                    let text = self.until('\'')?;
                    parts.push(WordPart::Quoted(text));
                }
                '"' => {
                    flush(&mut literal, &mut parts);
                    self.pos += 1;
                    parts.push(WordPart::DoubleQuoted(self.double_quoted()?));
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        Some('\n') => self.pos += 1,
                        Some(next) => {
                            flush(&mut literal, &mut parts);
                            self.pos += 1;
                            parts.push(WordPart::Quoted(next.to_string()));
                        }
                        None => literal.push('\\'),
                    }
                }
                '$' if self.peek_at(1) == Some('\'') => {
                    flush(&mut literal, &mut parts);
                    self.pos += 2;
                    parts.push(WordPart::Quoted(self.ansi_c_quoted()?));
                }
                '$' => {
                    if let Some(part) = self.dollar()? {
                        flush(&mut literal, &mut parts);
                        parts.push(part);
                    } else {
                        literal.push('$');
                    }
                }
                '`' => {
                    flush(&mut literal, &mut parts);
                    self.pos += 1;
                    let text = self.until('`')?;
                    parts.push(WordPart::CommandSubstitution(text));
                }
                '~' if self.pos == at_start
                    && self.peek_at(1).is_none_or(|c| c == '/' || is_meta(c)) =>
                {
                    self.pos += 1;
                    parts.push(WordPart::Tilde);
                }
                _ => {
                    literal.push(c);
                    self.pos += 1;
                }
            }
        }
        flush(&mut literal, &mut parts);
        Ok(Word { parts })
    }

    /// The body of `$'…'`: backslash escapes as in C.
    fn ansi_c_quoted(&mut self) -> Result<String, ParseError> {
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return Err(ParseError::Unterminated('\'')),
                Some('\'') => {
                    self.pos += 1;
                    return Ok(text);
                }
                Some('\\') => {
                    self.pos += 1;
                    let escaped = match self.peek() {
                        Some('n') => '\n',
                        Some('t') => '\t',
                        Some('r') => '\r',
                        Some('0') => '\0',
                        Some('e') => '\x1b',
                        Some(c) => c,
                        None => return Err(ParseError::Unterminated('\'')),
                    };
                    text.push(escaped);
                    self.pos += 1;
                }
                Some(c) => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn until(&mut self, end: char) -> Result<String, ParseError> {
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return Err(ParseError::Unterminated(end)),
                Some(c) if c == end => {
                    self.pos += 1;
                    return Ok(text);
                }
                Some(c) => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn double_quoted(&mut self) -> Result<Vec<WordPart>, ParseError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        loop {
            match self.peek() {
                None => return Err(ParseError::Unterminated('"')),
                Some('"') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') => {
                    match self.peek_at(1) {
                        Some(c @ ('$' | '`' | '"' | '\\')) => literal.push(c),
                        Some('\n') => {}
                        Some(c) => {
                            literal.push('\\');
                            literal.push(c);
                        }
                        None => return Err(ParseError::Unterminated('"')),
                    }
                    self.pos += 2;
                }
                Some('$') => {
                    if let Some(part) = self.dollar()? {
                        flush_quoted(&mut literal, &mut parts);
                        parts.push(part);
                    } else {
                        literal.push('$');
                    }
                }
                Some('`') => {
                    flush_quoted(&mut literal, &mut parts);
                    self.pos += 1;
                    let text = self.until('`')?;
                    parts.push(WordPart::CommandSubstitution(text));
                }
                Some(c) => {
                    literal.push(c);
                    self.pos += 1;
                }
            }
        }
        flush_quoted(&mut literal, &mut parts);
        Ok(parts)
    }

    /// At a `$`: reads the expansion, or returns `None` (and consumes the `$`) for a lone `$`.
    fn dollar(&mut self) -> Result<Option<WordPart>, ParseError> {
        self.pos += 1;
        match self.peek() {
            Some('(') if self.peek_at(1) == Some('(') => {
                self.pos += 2;
                let text = self.balanced('(', ')')?;
                if self.peek() != Some(')') {
                    return Err(ParseError::Unterminated(')'));
                }
                self.pos += 1;
                Ok(Some(WordPart::Arithmetic(text)))
            }
            // `$[ … ]`: bash's old spelling of `$(( … ))`.
            Some('[') => {
                self.pos += 1;
                Ok(Some(WordPart::Arithmetic(self.balanced('[', ']')?)))
            }
            Some('(') => {
                self.pos += 1;
                Ok(Some(WordPart::CommandSubstitution(
                    self.balanced('(', ')')?,
                )))
            }
            Some('{') => {
                self.pos += 1;
                Ok(Some(WordPart::Parameter(self.balanced('{', '}')?)))
            }
            Some(c) if matches!(c, '?' | '#' | '$' | '@' | '*' | '!') || c.is_ascii_digit() => {
                self.pos += 1;
                Ok(Some(WordPart::Parameter(c.to_string())))
            }
            Some(c) if c == '_' || c.is_ascii_alphabetic() => {
                let mut name = String::new();
                while let Some(c) = self
                    .peek()
                    .filter(|c| *c == '_' || c.is_ascii_alphanumeric())
                {
                    name.push(c);
                    self.pos += 1;
                }
                Ok(Some(WordPart::Parameter(name)))
            }
            _ => Ok(None),
        }
    }

    /// Reads up to the `close` matching an already consumed `open`, honouring quotes.
    fn balanced(&mut self, open: char, close: char) -> Result<String, ParseError> {
        let mut depth = 1;
        let mut text = String::new();
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match quote {
                Some(q) => {
                    if c == q {
                        quote = None;
                    } else if c == '\\' && q == '"' {
                        text.push(c);
                        if let Some(n) = self.peek() {
                            text.push(n);
                            self.pos += 1;
                        }
                        continue;
                    }
                }
                None => {
                    if c == '\'' || c == '"' {
                        quote = Some(c);
                    } else if c == '\\' {
                        text.push(c);
                        if let Some(n) = self.peek() {
                            text.push(n);
                            self.pos += 1;
                        }
                        continue;
                    } else if c == open {
                        depth += 1;
                    } else if c == close {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(text);
                        }
                    }
                }
            }
            text.push(c);
        }
        Err(ParseError::Unterminated(close))
    }
}

/// Splits text that is expanded like the inside of double quotes but where `"` is ordinary:
/// unquoted heredoc bodies and the words of `${name:-word}`.
pub fn expandable_text(text: &str) -> Vec<WordPart> {
    let mut lexer = Lexer::over(text);
    let mut parts = Vec::new();
    let mut literal = String::new();
    while let Some(c) = lexer.peek() {
        match c {
            '\\' if matches!(lexer.peek_at(1), Some('$' | '`' | '\\')) => {
                literal.extend(lexer.peek_at(1));
                lexer.pos += 2;
            }
            '$' => match lexer.dollar() {
                Ok(Some(part)) => {
                    flush_quoted(&mut literal, &mut parts);
                    parts.push(part);
                }
                Ok(None) => literal.push('$'),
                Err(_) => {
                    literal.extend(lexer.chars[lexer.pos..].iter());
                    lexer.pos = lexer.chars.len();
                }
            },
            _ => {
                literal.push(c);
                lexer.pos += 1;
            }
        }
    }
    flush_quoted(&mut literal, &mut parts);
    parts
}

/// Splits the word of a `${…}` operator (`${x:-WORD}`, `${x/PATTERN/REPLACEMENT}`): quotes
/// and backslashes quote, expansions expand, and blanks and operators are ordinary text.
pub fn parameter_word(text: &str) -> Vec<WordPart> {
    let mut lexer = Lexer::over(text);
    let mut parts = Vec::new();
    let mut literal = String::new();
    while let Some(c) = lexer.peek() {
        match c {
            '\'' => {
                flush(&mut literal, &mut parts);
                lexer.pos += 1;
                match lexer.until('\'') {
                    Ok(text) => parts.push(WordPart::Quoted(text)),
                    Err(_) => literal.push('\''),
                }
            }
            '"' => {
                flush(&mut literal, &mut parts);
                lexer.pos += 1;
                match lexer.double_quoted() {
                    Ok(inner) => parts.push(WordPart::DoubleQuoted(inner)),
                    Err(_) => literal.push('"'),
                }
            }
            '\\' => {
                lexer.pos += 1;
                match lexer.peek() {
                    Some(next) => {
                        flush(&mut literal, &mut parts);
                        lexer.pos += 1;
                        parts.push(WordPart::Quoted(next.to_string()));
                    }
                    None => literal.push('\\'),
                }
            }
            '$' if lexer.peek_at(1) == Some('\'') => {
                flush(&mut literal, &mut parts);
                lexer.pos += 2;
                match lexer.ansi_c_quoted() {
                    Ok(text) => parts.push(WordPart::Quoted(text)),
                    Err(_) => literal.push_str("$'"),
                }
            }
            '$' => match lexer.dollar() {
                Ok(Some(part)) => {
                    flush(&mut literal, &mut parts);
                    parts.push(part);
                }
                Ok(None) => literal.push('$'),
                Err(_) => {
                    literal.extend(lexer.chars[lexer.pos..].iter());
                    lexer.pos = lexer.chars.len();
                }
            },
            '`' => {
                flush(&mut literal, &mut parts);
                lexer.pos += 1;
                match lexer.until('`') {
                    Ok(text) => parts.push(WordPart::CommandSubstitution(text)),
                    Err(_) => literal.push('`'),
                }
            }
            _ => {
                literal.push(c);
                lexer.pos += 1;
            }
        }
    }
    flush(&mut literal, &mut parts);
    parts
}

pub(super) fn flush(literal: &mut String, parts: &mut Vec<WordPart>) {
    if !literal.is_empty() {
        parts.push(WordPart::Literal(std::mem::take(literal)));
    }
}

fn flush_quoted(literal: &mut String, parts: &mut Vec<WordPart>) {
    if !literal.is_empty() {
        parts.push(WordPart::Quoted(std::mem::take(literal)));
    }
}
