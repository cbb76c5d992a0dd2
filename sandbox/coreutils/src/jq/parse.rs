//! jq's filter language, parsed: a lexer and a recursive-descent parser in jq's precedence
//! order (`|`, `,`, `//`, assignments, `or`, `and`, comparisons, `+ -`, `* / %`, postfix
//! paths and `?`). Builtins are resolved by name and arity here; one the sandbox lacks, `def`
//! and modules are errors naming them, before anything runs.

use super::builtins::Builtin;
use super::error::CompileError;
use super::json::Json;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone)]
pub enum StrPart {
    Lit(String),
    Interp(Filter),
}

#[derive(Debug, Clone)]
pub enum Filter {
    Identity,
    RecurseAll,
    Lit(Json),
    Str(Option<String>, Vec<StrPart>),
    /// `@name`: the input formatted.
    Format(String),
    Var(String),
    /// `target[index]`, `target.name`.
    Index(Box<Filter>, Box<Filter>),
    Slice(Box<Filter>, Option<Box<Filter>>, Option<Box<Filter>>),
    Iterate(Box<Filter>),
    Optional(Box<Filter>),
    Array(Option<Box<Filter>>),
    Object(Vec<(Filter, Option<Filter>)>),
    Pipe(Box<Filter>, Box<Filter>),
    Comma(Box<Filter>, Box<Filter>),
    Neg(Box<Filter>),
    Binary(Op, Box<Filter>, Box<Filter>),
    And(Box<Filter>, Box<Filter>),
    Or(Box<Filter>, Box<Filter>),
    Alt(Box<Filter>, Box<Filter>),
    If(Box<Filter>, Box<Filter>, Box<Filter>),
    Try(Box<Filter>, Option<Box<Filter>>),
    Reduce(Box<Filter>, String, Box<Filter>, Box<Filter>),
    Foreach(
        Box<Filter>,
        String,
        Box<Filter>,
        Box<Filter>,
        Option<Box<Filter>>,
    ),
    As(Box<Filter>, String, Box<Filter>),
    Call(Builtin, Vec<Filter>),
    /// `lhs = rhs`, `lhs |= rhs`, `lhs += rhs`, … (`None`: plain `=`; `Some(None)`: `|=`).
    Assign(Box<Filter>, Option<Option<Op>>, Box<Filter>),
    AltAssign(Box<Filter>, Box<Filter>),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Dot,
    DotDot,
    Field(String),
    Ident(String),
    Var(String),
    Format(String),
    Num(f64),
    Str(Vec<RawPart>),
    Punct(&'static str),
}

#[derive(Debug, Clone, PartialEq)]
enum RawPart {
    Lit(String),
    Interp(String),
}

const PUNCTS: [&str; 30] = [
    "?//", "|=", "+=", "-=", "*=", "/=", "%=", "//=", "==", "!=", "<=", ">=", "//", "|", ",", "=",
    "<", ">", "+", "-", "*", "/", "%", "(", ")", "[", "]", "{", "}", ":",
];

fn lex(src: &str) -> Result<Vec<Tok>, CompileError> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        let ident = |i: &mut usize| {
            let start = *i;
            while *i < chars.len() && (chars[*i].is_ascii_alphanumeric() || chars[*i] == '_') {
                *i += 1;
            }
            chars[start..*i].iter().collect::<String>()
        };
        if c == '.' {
            if chars.get(i + 1) == Some(&'.') {
                out.push(Tok::DotDot);
                i += 2;
            } else if chars
                .get(i + 1)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == '_')
            {
                i += 1;
                out.push(Tok::Field(ident(&mut i)));
            } else {
                out.push(Tok::Dot);
                i += 1;
            }
            continue;
        }
        if c == '$' || c == '@' {
            i += 1;
            let name = ident(&mut i);
            if name.is_empty() {
                return Err(format!("unexpected `{c}'").into());
            }
            out.push(if c == '$' {
                Tok::Var(name)
            } else {
                Tok::Format(name)
            });
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let mut name = ident(&mut i);
            while chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
                i += 2;
                name.push_str("::");
                name.push_str(&ident(&mut i));
            }
            out.push(Tok::Ident(name));
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            if matches!(chars.get(i), Some('e' | 'E')) {
                i += 1;
                if matches!(chars.get(i), Some('+' | '-')) {
                    i += 1;
                }
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let text: String = chars[start..i].iter().collect();
            out.push(Tok::Num(
                text.parse().map_err(|_| format!("bad number {text}"))?,
            ));
            continue;
        }
        if c == '"' {
            let (parts, end) = string(&chars, i + 1)?;
            out.push(Tok::Str(parts));
            i = end;
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
        match PUNCTS.iter().find(|p| rest.starts_with(**p)) {
            Some(p) => {
                out.push(Tok::Punct(p));
                i += p.len();
            }
            None if c == ';' => {
                out.push(Tok::Punct(";"));
                i += 1;
            }
            None if c == '?' => {
                out.push(Tok::Punct("?"));
                i += 1;
            }
            None => return Err(format!("unexpected `{c}'").into()),
        }
    }
    Ok(out)
}

/// A string literal from just after its `"`: its parts, and the index after the closing `"`.
fn string(chars: &[char], mut i: usize) -> Result<(Vec<RawPart>, usize), CompileError> {
    let mut parts = Vec::new();
    let mut text = String::new();
    loop {
        let Some(&c) = chars.get(i) else {
            return Err("unterminated string".into());
        };
        i += 1;
        match c {
            '"' => {
                if !text.is_empty() || parts.is_empty() {
                    parts.push(RawPart::Lit(text));
                }
                return Ok((parts, i));
            }
            '\\' => {
                let Some(&e) = chars.get(i) else {
                    return Err("unterminated string".into());
                };
                i += 1;
                match e {
                    'n' => text.push('\n'),
                    't' => text.push('\t'),
                    'r' => text.push('\r'),
                    'b' => text.push('\x08'),
                    'f' => text.push('\x0c'),
                    '"' | '\\' | '/' => text.push(e),
                    'u' => {
                        let hex: String = chars.get(i..i + 4).unwrap_or_default().iter().collect();
                        let code = u32::from_str_radix(&hex, 16).map_err(|_| "bad \\u escape")?;
                        text.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                        i += 4;
                    }
                    '(' => {
                        let start = i;
                        let mut depth = 1;
                        while depth > 0 {
                            match chars.get(i) {
                                None => return Err("unterminated interpolation".into()),
                                Some('(') => depth += 1,
                                Some(')') => depth -= 1,
                                Some('"') => {
                                    let (_, end) = string(chars, i + 1)?;
                                    i = end - 1;
                                }
                                _ => {}
                            }
                            i += 1;
                        }
                        if !text.is_empty() {
                            parts.push(RawPart::Lit(std::mem::take(&mut text)));
                        }
                        parts.push(RawPart::Interp(chars[start..i - 1].iter().collect()));
                    }
                    other => return Err(format!("invalid escape \\{other}").into()),
                }
            }
            c => text.push(c),
        }
    }
}

/// Parses a whole filter.
pub fn parse(src: &str) -> Result<Filter, CompileError> {
    let tokens = lex(src)?;
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    let filter = parser.pipe()?;
    match parser.tokens.get(parser.pos) {
        None => Ok(filter),
        Some(tok) => Err(format!("syntax error, unexpected {}", describe(tok)).into()),
    }
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Punct(p) => format!("'{p}'"),
        Tok::Ident(name) => name.clone(),
        Tok::Field(name) => format!(".{name}"),
        Tok::Var(name) => format!("${name}"),
        _ => format!("{tok:?}"),
    }
}

/// How deeply filters may nest (the parser and the evaluator recurse).
const MAX_DEPTH: usize = 100;

struct Parser {
    tokens: Vec<Tok>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos)
    }

    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), CompileError> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(match self.peek() {
                Some(tok) => format!(
                    "syntax error, unexpected {}, expecting '{p}'",
                    describe(tok)
                ),
                None => format!("syntax error, unexpected end of filter, expecting '{p}'"),
            }
            .into())
        }
    }

    fn is_word(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(w)) if w == word)
    }

    fn keyword(&mut self, word: &str) -> Result<(), CompileError> {
        if self.is_word(word) {
            self.pos += 1;
            Ok(())
        } else {
            Err(format!("syntax error, expecting `{word}'").into())
        }
    }

    fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, CompileError>,
    ) -> Result<T, CompileError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("filter nested too deeply".into());
        }
        let result = f(self);
        self.depth -= 1;
        result
    }

    /// `a | b`, and `term as $x | body`.
    fn pipe(&mut self) -> Result<Filter, CompileError> {
        if self.is_word("def") {
            return Err(CompileError::Unsupported("def".into()));
        }
        let left = self.comma()?;
        if self.is_word("as") {
            self.pos += 1;
            let Some(Tok::Var(name)) = self.peek().cloned() else {
                return Err(CompileError::Unsupported("destructuring patterns".into()));
            };
            self.pos += 1;
            self.expect("|")?;
            let body = self.nested(Self::pipe)?;
            return Ok(Filter::As(Box::new(left), name, Box::new(body)));
        }
        if self.eat("|") {
            let right = self.nested(Self::pipe)?;
            return Ok(Filter::Pipe(Box::new(left), Box::new(right)));
        }
        Ok(left)
    }

    fn comma(&mut self) -> Result<Filter, CompileError> {
        let mut left = self.alternative()?;
        while self.eat(",") {
            let right = self.alternative()?;
            left = Filter::Comma(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn alternative(&mut self) -> Result<Filter, CompileError> {
        let left = self.assignment()?;
        if self.eat("//") {
            let right = self.nested(Self::alternative)?;
            return Ok(Filter::Alt(Box::new(left), Box::new(right)));
        }
        Ok(left)
    }

    fn assignment(&mut self) -> Result<Filter, CompileError> {
        let left = self.or()?;
        let op = match self.peek() {
            Some(Tok::Punct("=")) => None,
            Some(Tok::Punct("|=")) => Some(None),
            Some(Tok::Punct("+=")) => Some(Some(Op::Add)),
            Some(Tok::Punct("-=")) => Some(Some(Op::Sub)),
            Some(Tok::Punct("*=")) => Some(Some(Op::Mul)),
            Some(Tok::Punct("/=")) => Some(Some(Op::Div)),
            Some(Tok::Punct("%=")) => Some(Some(Op::Mod)),
            Some(Tok::Punct("//=")) => {
                self.pos += 1;
                let right = self.nested(Self::alternative)?;
                return Ok(Filter::AltAssign(Box::new(left), Box::new(right)));
            }
            _ => return Ok(left),
        };
        self.pos += 1;
        let right = self.nested(Self::alternative)?;
        Ok(Filter::Assign(Box::new(left), op, Box::new(right)))
    }

    fn or(&mut self) -> Result<Filter, CompileError> {
        let mut left = self.and()?;
        while self.is_word("or") {
            self.pos += 1;
            left = Filter::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Filter, CompileError> {
        let mut left = self.comparison()?;
        while self.is_word("and") {
            self.pos += 1;
            left = Filter::And(Box::new(left), Box::new(self.comparison()?));
        }
        Ok(left)
    }

    fn comparison(&mut self) -> Result<Filter, CompileError> {
        let left = self.additive()?;
        let op = match self.peek() {
            Some(Tok::Punct("==")) => Op::Eq,
            Some(Tok::Punct("!=")) => Op::Ne,
            Some(Tok::Punct("<")) => Op::Lt,
            Some(Tok::Punct("<=")) => Op::Le,
            Some(Tok::Punct(">")) => Op::Gt,
            Some(Tok::Punct(">=")) => Op::Ge,
            _ => return Ok(left),
        };
        self.pos += 1;
        let right = self.additive()?;
        Ok(Filter::Binary(op, Box::new(left), Box::new(right)))
    }

    fn additive(&mut self) -> Result<Filter, CompileError> {
        let mut left = self.multiplicative()?;
        loop {
            let op = if self.is("+") {
                Op::Add
            } else if self.is("-") {
                Op::Sub
            } else {
                return Ok(left);
            };
            self.pos += 1;
            left = Filter::Binary(op, Box::new(left), Box::new(self.multiplicative()?));
        }
    }

    fn multiplicative(&mut self) -> Result<Filter, CompileError> {
        let mut left = self.postfix()?;
        loop {
            let op = if self.is("*") {
                Op::Mul
            } else if self.is("/") {
                Op::Div
            } else if self.is("%") {
                Op::Mod
            } else {
                return Ok(left);
            };
            self.pos += 1;
            left = Filter::Binary(op, Box::new(left), Box::new(self.postfix()?));
        }
    }

    /// A term and the paths after it: `.a`, `[i]`, `[]`, `[i:j]`, `?`.
    fn postfix(&mut self) -> Result<Filter, CompileError> {
        if self.eat("-") {
            let inner = self.nested(Self::postfix)?;
            return Ok(Filter::Neg(Box::new(inner)));
        }
        let mut term = self.nested(Self::term)?;
        loop {
            match self.peek().cloned() {
                Some(Tok::Field(name)) => {
                    self.pos += 1;
                    term = Filter::Index(Box::new(term), Box::new(Filter::Lit(Json::str(&name))));
                }
                Some(Tok::Dot)
                    if matches!(
                        self.tokens.get(self.pos + 1),
                        Some(Tok::Str(_) | Tok::Punct("["))
                    ) =>
                {
                    self.pos += 1;
                    if let Some(Tok::Str(_)) = self.peek() {
                        let key = self.term()?;
                        term = Filter::Index(Box::new(term), Box::new(key));
                    }
                }
                Some(Tok::Punct("[")) => {
                    self.pos += 1;
                    term = self.bracket(term)?;
                }
                Some(Tok::Punct("?")) => {
                    self.pos += 1;
                    term = Filter::Optional(Box::new(term));
                }
                _ => return Ok(term),
            }
        }
    }

    /// After `[`: `]`, `i]`, `i:j]`.
    fn bracket(&mut self, target: Filter) -> Result<Filter, CompileError> {
        if self.eat("]") {
            return Ok(Filter::Iterate(Box::new(target)));
        }
        if self.eat(":") {
            let to = self.nested(Self::pipe)?;
            self.expect("]")?;
            return Ok(Filter::Slice(Box::new(target), None, Some(Box::new(to))));
        }
        let index = self.nested(Self::pipe)?;
        if self.eat(":") {
            let to = if self.is("]") {
                None
            } else {
                Some(Box::new(self.nested(Self::pipe)?))
            };
            self.expect("]")?;
            return Ok(Filter::Slice(Box::new(target), Some(Box::new(index)), to));
        }
        self.expect("]")?;
        Ok(Filter::Index(Box::new(target), Box::new(index)))
    }

    fn term(&mut self) -> Result<Filter, CompileError> {
        let Some(tok) = self.peek().cloned() else {
            return Err("syntax error, unexpected end of filter".into());
        };
        self.pos += 1;
        Ok(match tok {
            Tok::Dot => match self.peek() {
                Some(Tok::Str(_)) => {
                    let key = self.term()?;
                    Filter::Index(Box::new(Filter::Identity), Box::new(key))
                }
                _ => Filter::Identity,
            },
            Tok::DotDot => Filter::RecurseAll,
            Tok::Field(name) => Filter::Index(
                Box::new(Filter::Identity),
                Box::new(Filter::Lit(Json::str(&name))),
            ),
            Tok::Num(n) => Filter::Lit(Json::Num(n)),
            Tok::Str(parts) => self.string_filter(None, parts)?,
            Tok::Format(name) => match self.peek().cloned() {
                Some(Tok::Str(parts)) => {
                    self.pos += 1;
                    self.string_filter(Some(name), parts)?
                }
                _ => Filter::Format(name),
            },
            Tok::Var(name) => Filter::Var(name),
            Tok::Punct("(") => {
                let inner = self.pipe()?;
                self.expect(")")?;
                inner
            }
            Tok::Punct("[") => {
                if self.eat("]") {
                    Filter::Array(None)
                } else {
                    let inner = self.pipe()?;
                    self.expect("]")?;
                    Filter::Array(Some(Box::new(inner)))
                }
            }
            Tok::Punct("{") => self.object()?,
            Tok::Ident(word) => self.word(&word)?,
            other => return Err(format!("syntax error, unexpected {}", describe(&other)).into()),
        })
    }

    fn string_filter(
        &mut self,
        format: Option<String>,
        parts: Vec<RawPart>,
    ) -> Result<Filter, CompileError> {
        let mut out = Vec::new();
        for part in parts {
            out.push(match part {
                RawPart::Lit(text) => StrPart::Lit(text),
                RawPart::Interp(src) => {
                    let inner = self.nested(|_| parse(&src))?;
                    StrPart::Interp(inner)
                }
            });
        }
        Ok(Filter::Str(format, out))
    }

    /// `{a, b: f, "c": g, (k): v, $x, @fmt: …}`.
    fn object(&mut self) -> Result<Filter, CompileError> {
        let mut entries = Vec::new();
        if self.eat("}") {
            return Ok(Filter::Object(entries));
        }
        loop {
            let key = match self.peek().cloned() {
                Some(Tok::Ident(name)) => {
                    self.pos += 1;
                    Filter::Lit(Json::str(&name))
                }
                Some(Tok::Var(name)) => {
                    self.pos += 1;
                    entries.push((Filter::Lit(Json::str(&name)), Some(Filter::Var(name))));
                    if self.eat("}") {
                        return Ok(Filter::Object(entries));
                    }
                    self.expect(",")?;
                    continue;
                }
                Some(Tok::Str(parts)) => {
                    self.pos += 1;
                    self.string_filter(None, parts)?
                }
                Some(Tok::Num(n)) => {
                    self.pos += 1;
                    Filter::Lit(Json::str(&super::json::number(n)))
                }
                Some(Tok::Punct("(")) => {
                    self.pos += 1;
                    let key = self.nested(Self::pipe)?;
                    self.expect(")")?;
                    key
                }
                _ => return Err("syntax error in object construction".into()),
            };
            let value = if self.eat(":") {
                Some(self.nested(Self::object_value)?)
            } else {
                None
            };
            entries.push((key, value));
            if self.eat("}") {
                return Ok(Filter::Object(entries));
            }
            self.expect(",")?;
        }
    }

    /// An object's value: a term with its paths, or alternatives of them (no bare `,`).
    fn object_value(&mut self) -> Result<Filter, CompileError> {
        let mut left = self.postfix()?;
        while self.eat("|") {
            left = Filter::Pipe(Box::new(left), Box::new(self.postfix()?));
        }
        Ok(left)
    }

    fn word(&mut self, word: &str) -> Result<Filter, CompileError> {
        Ok(match word {
            "null" => Filter::Lit(Json::Null),
            "true" => Filter::Lit(Json::Bool(true)),
            "false" => Filter::Lit(Json::Bool(false)),
            "if" => {
                let condition = self.nested(Self::pipe)?;
                self.keyword("then")?;
                let then = self.nested(Self::pipe)?;
                let otherwise = if self.is_word("elif") {
                    self.pos += 1;
                    self.nested(|p| p.word("if"))?
                } else if self.is_word("else") {
                    self.pos += 1;
                    let otherwise = self.nested(Self::pipe)?;
                    self.keyword("end")?;
                    otherwise
                } else {
                    self.keyword("end")?;
                    Filter::Identity
                };
                Filter::If(Box::new(condition), Box::new(then), Box::new(otherwise))
            }
            "try" => {
                let body = self.nested(Self::postfix)?;
                let handler = if self.is_word("catch") {
                    self.pos += 1;
                    Some(Box::new(self.nested(Self::postfix)?))
                } else {
                    None
                };
                Filter::Try(Box::new(body), handler)
            }
            "reduce" | "foreach" => {
                let source = self.nested(Self::postfix)?;
                self.keyword("as")?;
                let Some(Tok::Var(name)) = self.peek().cloned() else {
                    return Err(CompileError::Unsupported("destructuring patterns".into()));
                };
                self.pos += 1;
                self.expect("(")?;
                let init = self.nested(Self::pipe)?;
                self.expect(";")?;
                let update = self.nested(Self::pipe)?;
                let extract = if word == "foreach" && self.eat(";") {
                    Some(Box::new(self.nested(Self::pipe)?))
                } else {
                    None
                };
                self.expect(")")?;
                if word == "reduce" {
                    Filter::Reduce(Box::new(source), name, Box::new(init), Box::new(update))
                } else {
                    Filter::Foreach(
                        Box::new(source),
                        name,
                        Box::new(init),
                        Box::new(update),
                        extract,
                    )
                }
            }
            "def" | "import" | "include" | "label" => {
                return Err(CompileError::Unsupported(word.to_string()));
            }
            name => {
                let mut args = Vec::new();
                if self.eat("(") {
                    loop {
                        args.push(self.nested(Self::pipe)?);
                        if self.eat(")") {
                            break;
                        }
                        self.expect(";")?;
                    }
                }
                match Builtin::resolve(name, args.len()) {
                    Some(builtin) => Filter::Call(builtin, args),
                    None => {
                        return Err(CompileError::Unsupported(format!("{name}/{}", args.len())));
                    }
                }
            }
        })
    }
}
