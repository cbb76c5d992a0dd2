//! Turns a command-line string into a [`Script`]: a lexer that knows quoting, escapes,
//! expansions and heredocs, and a recursive-descent parser for lists, pipelines, redirections
//! and the compound commands `for`, `while`/`until`, `if`, `{ }` and `( )`.

use super::ast::*;

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
}

/// How deeply compound commands may nest; the parser is recursive, so this bounds its stack.
pub const MAX_PARSE_DEPTH: usize = 100;

#[derive(Debug, Clone, PartialEq)]
enum Token {
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
    Newline,
}

const OPERATORS: [&str; 19] = [
    "&>>", "<<<", "<<-", "&&", "||", ";;", "&>", "<<", "<&", ">>", ">&", ">|", ";", "&", "|", "(",
    ")", "<", ">",
];

fn is_redirect_op(op: &str) -> bool {
    matches!(
        op,
        "&>>" | "<<<" | "<<-" | "&>" | "<<" | "<&" | ">>" | ">&" | ">|" | "<" | ">"
    )
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    tokens: Vec<Token>,
    pending_heredocs: Vec<(usize, String, bool)>,
}

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

fn describe(token: &Token) -> String {
    match token {
        Token::Word(w) => w.as_literal().unwrap_or("word").to_string(),
        Token::Op(op) | Token::Redirect { op, .. } => op.to_string(),
        Token::HereDoc { .. } => "<<".to_string(),
        Token::Newline => "newline".to_string(),
    }
}

fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    let mut lexer = Lexer {
        chars: src.chars().collect(),
        pos: 0,
        tokens: Vec::new(),
        pending_heredocs: Vec::new(),
    };
    lexer.run()?;
    Ok(lexer.tokens)
}

fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | '|' | '&' | ';' | '<' | '>' | '(' | ')'
    )
}

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
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
                _ => {
                    if let Some(op) = OPERATORS.iter().find(|op| self.starts_with(op)) {
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

    /// Reads one word up to an unquoted metacharacter.
    fn word(&mut self) -> Result<Word, ParseError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let at_start = self.pos;
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
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        pos: 0,
        tokens: Vec::new(),
        pending_heredocs: Vec::new(),
    };
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

fn flush(literal: &mut String, parts: &mut Vec<WordPart>) {
    if !literal.is_empty() {
        parts.push(WordPart::Literal(std::mem::take(literal)));
    }
}

fn flush_quoted(literal: &mut String, parts: &mut Vec<WordPart>) {
    if !literal.is_empty() {
        parts.push(WordPart::Quoted(std::mem::take(literal)));
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
                Some(Token::Op(";;")) if stop.contains(&";;") => break,
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

    fn for_loop(&mut self) -> Result<Compound, ParseError> {
        self.pos += 1;
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
        if self.peek_keyword() == Some("in") {
            self.pos += 1;
            while let Some(Token::Word(w)) = self.peek() {
                items.push(w.clone());
                self.pos += 1;
            }
        }
        if let Some(Token::Newline | Token::Op(";")) = self.peek() {
            self.pos += 1;
        }
        self.expect_keyword("do")?;
        let body = self.script(&["done"])?;
        self.expect_keyword("done")?;
        Ok(Compound::For { var, items, body })
    }

    fn conditional(&mut self) -> Result<Compound, ParseError> {
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

    fn case_clause(&mut self) -> Result<Compound, ParseError> {
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
            arms.push((patterns, body));
            match self.peek() {
                Some(Token::Op(";;")) => self.pos += 1,
                Some(Token::Word(w)) if w.as_literal() == Some("esac") => {}
                Some(t) => return Err(ParseError::UnexpectedToken(describe(t))),
                None => return Err(ParseError::UnexpectedEnd),
            }
        }
        Ok(Compound::Case { word, arms })
    }

    fn if_clause(&mut self) -> Result<Compound, ParseError> {
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

pub use tether_coreutils::is_name;

fn assignment(word: &Word) -> Option<(String, Word)> {
    let Some(WordPart::Literal(first)) = word.parts.first() else {
        return None;
    };
    let eq = first.find('=')?;
    let name = &first[..eq];
    if !is_name(name) {
        return None;
    }
    let mut parts = Vec::new();
    if eq + 1 < first.len() {
        parts.push(WordPart::Literal(first[eq + 1..].to_string()));
    }
    parts.extend(word.parts[1..].iter().cloned());
    Some((name.to_string(), Word { parts }))
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
