//! `awk`: the one-liner subset — `-F`, `-v`, `BEGIN`/`END`, `/regex/` and expression patterns
//! and ranges, `print`/`printf`, fields (`$0`, `$N`, `NF`, `$NF`), `NR`, `FS`, `OFS`,
//! variables, arithmetic, comparisons (numeric when both sides look numeric), `~`, `!~`,
//! `&&`, `||`, `!`, `?:`, string concatenation, assignments (`=`, `+=`, …, `++`, `--`), `if`,
//! `while`, `for (;;)`, `next`, `exit`, and the functions `length`, `substr`, `index`,
//! `tolower`, `toupper`, `int`, `sprintf`, `sub`, `gsub`. No arrays or user functions.
//! Numbers print as integers when whole, otherwise with `%.6g`, as awk's `OFMT`. Regular
//! expressions are POSIX extended, translated like `grep -E`. A program is stopped after
//! [`MAX_STEPS`] statements, or once it has moved [`MAX_TEXT_WORK`] bytes of text (compiling a
//! run-time regular expression counts as [`REGEX_COMPILE_WORK`] of them), so neither an endless
//! loop nor one that copies ever longer strings or compiles a regex every step can hang the
//! sandbox; no string may grow past [`MAX_STRING_BYTES`]. `x = x …` appends to `x` in place,
//! so building a string piece by piece stays linear, and run-time regexes are compiled once.

use std::collections::BTreeMap;
use std::rc::Rc;

use regex::Regex;

use super::search::translate_posix;
use super::text::format_one;
use super::{Ctx, usage_error};

/// Statements one `awk` run may execute.
const MAX_STEPS: u64 = 2_000_000;

/// The longest string a value or the record may hold.
const MAX_STRING_BYTES: usize = 16 * 1024 * 1024;

/// Bytes of text one run may move in total — every string value read or built, every record
/// split or rebuilt — so that a few steps on long strings cannot take as long as billions.
const MAX_TEXT_WORK: u64 = 1 << 30;

/// What compiling a regular expression computed at run time (`$0 ~ s`, `gsub(s, …)`, a regex
/// `FS`) counts against [`MAX_TEXT_WORK`], beyond its length: a compile costs about as much as
/// moving this many bytes, so a program may compile some 16000 different ones.
const REGEX_COMPILE_WORK: usize = 64 * 1024;

/// How many compiled run-time regular expressions are kept for reuse.
const REGEX_CACHE: usize = 64;

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(f64),
    Str(String),
    Regex(String),
    Name(String),
    Punct(&'static str),
    Newline,
}

const PUNCTS: [&str; 36] = [
    ">>", "&&", "||", "==", "!=", "<=", ">=", "!~", "+=", "-=", "*=", "/=", "%=", "++", "--", "{",
    "}", "(", ")", ";", ",", "+", "-", "*", "/", "%", "!", "<", ">", "~", "=", "?", ":", "$", "^",
    "|",
];

fn lex(src: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut tokens: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let operand_before = matches!(
            tokens.last(),
            Some(
                Token::Num(_)
                    | Token::Str(_)
                    | Token::Name(_)
                    | Token::Punct(")" | "$" | "++" | "--")
            )
        );
        match c {
            ' ' | '\t' | '\r' => i += 1,
            '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
            '\n' => {
                tokens.push(Token::Newline);
                i += 1;
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '"' => {
                let mut text = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err("runaway string constant".into()),
                        Some('"') => break,
                        Some('\\') => {
                            i += 1;
                            let escaped = match chars.get(i) {
                                Some('n') => "\n".to_string(),
                                Some('t') => "\t".to_string(),
                                Some('\\') => "\\".to_string(),
                                Some('"') => "\"".to_string(),
                                Some('/') => "/".to_string(),
                                Some(other) => format!("\\{other}"),
                                None => return Err("runaway string constant".into()),
                            };
                            text.push_str(&escaped);
                        }
                        Some(other) => text.push(*other),
                    }
                    i += 1;
                }
                i += 1;
                tokens.push(Token::Str(text));
            }
            '/' if !operand_before => {
                let mut text = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None | Some('\n') => return Err("runaway regular expression".into()),
                        Some('/') => break,
                        Some('\\') if chars.get(i + 1) == Some(&'/') => {
                            text.push('/');
                            i += 1;
                        }
                        Some(other) => text.push(*other),
                    }
                    i += 1;
                }
                i += 1;
                tokens.push(Token::Regex(text));
            }
            _ if c.is_ascii_digit()
                || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) =>
            {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                tokens.push(Token::Num(
                    text.parse().map_err(|_| format!("bad number {text}"))?,
                ));
            }
            _ if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                tokens.push(Token::Name(chars[start..i].iter().collect()));
            }
            _ => {
                let rest: String = chars[i..(i + 2).min(chars.len())].iter().collect();
                let Some(p) = PUNCTS.iter().find(|p| rest.starts_with(**p)) else {
                    if c == '[' {
                        return Err("arrays are not supported in the sandbox's awk".into());
                    }
                    return Err(format!("syntax error: unexpected character '{c}'"));
                };
                tokens.push(Token::Punct(p));
                i += p.len();
            }
        }
    }
    Ok(tokens)
}

#[derive(Debug, Clone)]
enum Expr {
    Num(f64),
    Str(String),
    /// Shared, not cloned: a cloned `Regex` starts with empty match caches, which a search
    /// then has to build again.
    Regex(Rc<Regex>),
    Field(Box<Expr>),
    Var(String),
    Assign(Box<Expr>, &'static str, Box<Expr>),
    Step {
        target: Box<Expr>,
        delta: f64,
        prefix: bool,
    },
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Concat(Box<Expr>, Box<Expr>),
    Match(Box<Expr>, Box<Expr>, bool),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}

#[derive(Debug, Clone)]
enum Stmt {
    Print(Vec<Expr>, Option<Redirect>),
    Printf(Vec<Expr>, Option<Redirect>),
    Eval(Expr),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    While(Expr, Box<Stmt>),
    For(Option<Expr>, Option<Expr>, Option<Expr>, Box<Stmt>),
    Block(Vec<Stmt>),
    Next,
    Exit(Option<Expr>),
}

/// `print … > FILE` or `>> FILE`.
#[derive(Debug, Clone)]
struct Redirect {
    target: Expr,
    append: bool,
}

enum Pattern {
    Begin,
    End,
    All,
    When(Expr),
    Range(Expr, Expr),
}

struct Rule {
    pattern: Pattern,
    action: Option<Vec<Stmt>>,
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn is(&self, punct: &str) -> bool {
        matches!(self.peek(), Some(Token::Punct(p)) if *p == punct)
    }

    fn eat(&mut self, punct: &str) -> bool {
        if self.is(punct) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, punct: &str) -> Result<(), String> {
        if self.eat(punct) {
            Ok(())
        } else {
            Err(format!("syntax error: expected `{punct}'"))
        }
    }

    fn skip_terminators(&mut self) {
        while matches!(self.peek(), Some(Token::Newline | Token::Punct(";"))) {
            self.pos += 1;
        }
    }

    fn skip_newlines(&mut self) {
        while matches!(self.peek(), Some(Token::Newline)) {
            self.pos += 1;
        }
    }

    fn program(&mut self) -> Result<Vec<Rule>, String> {
        let mut rules = Vec::new();
        loop {
            self.skip_terminators();
            let pattern = match self.peek() {
                None => return Ok(rules),
                Some(Token::Name(n)) if n == "BEGIN" => {
                    self.pos += 1;
                    Pattern::Begin
                }
                Some(Token::Name(n)) if n == "END" => {
                    self.pos += 1;
                    Pattern::End
                }
                Some(Token::Punct("{")) => Pattern::All,
                _ => {
                    let first = self.expr()?;
                    if self.eat(",") {
                        self.skip_newlines();
                        Pattern::Range(first, self.expr()?)
                    } else {
                        Pattern::When(first)
                    }
                }
            };
            let action = if self.is("{") {
                Some(self.block()?)
            } else {
                None
            };
            if action.is_none() && matches!(pattern, Pattern::Begin | Pattern::End) {
                return Err("syntax error: BEGIN and END need an action".into());
            }
            rules.push(Rule { pattern, action });
        }
    }

    fn block(&mut self) -> Result<Vec<Stmt>, String> {
        self.expect("{")?;
        let mut statements = Vec::new();
        loop {
            self.skip_terminators();
            if self.eat("}") {
                return Ok(statements);
            }
            if self.peek().is_none() {
                return Err("syntax error: missing `}'".into());
            }
            statements.push(self.statement()?);
        }
    }

    fn simple_or_block(&mut self) -> Result<Stmt, String> {
        self.skip_newlines();
        if self.is("{") {
            Ok(Stmt::Block(self.block()?))
        } else {
            self.statement()
        }
    }

    fn statement(&mut self) -> Result<Stmt, String> {
        let keyword = match self.peek() {
            Some(Token::Name(n)) => n.clone(),
            Some(Token::Punct("{")) => return Ok(Stmt::Block(self.block()?)),
            _ => String::new(),
        };
        match keyword.as_str() {
            "print" | "printf" => {
                self.pos += 1;
                let parenthesised = self.is("(");
                let mut args = Vec::new();
                if !matches!(
                    self.peek(),
                    None | Some(Token::Newline | Token::Punct(";" | "}"))
                ) {
                    if parenthesised {
                        self.pos += 1;
                    }
                    args.push(self.expr_no_gt(parenthesised)?);
                    while self.eat(",") {
                        self.skip_newlines();
                        args.push(self.expr_no_gt(parenthesised)?);
                    }
                    if parenthesised {
                        self.expect(")")?;
                    }
                }
                if self.is("|") {
                    return Err("pipes from awk are not supported in the sandbox; pipe the awk command instead".into());
                }
                let redirect = if self.eat(">>") || self.is(">") {
                    let append = !self.eat(">");
                    Some(Redirect {
                        target: self.concat()?,
                        append,
                    })
                } else {
                    None
                };
                Ok(if keyword == "print" {
                    Stmt::Print(args, redirect)
                } else {
                    if args.is_empty() {
                        return Err("printf: no format".into());
                    }
                    Stmt::Printf(args, redirect)
                })
            }
            "if" => {
                self.pos += 1;
                self.expect("(")?;
                let condition = self.expr()?;
                self.expect(")")?;
                let then = self.simple_or_block()?;
                let save = self.pos;
                self.skip_terminators();
                if matches!(self.peek(), Some(Token::Name(n)) if n == "else") {
                    self.pos += 1;
                    let otherwise = self.simple_or_block()?;
                    Ok(Stmt::If(
                        condition,
                        Box::new(then),
                        Some(Box::new(otherwise)),
                    ))
                } else {
                    self.pos = save;
                    Ok(Stmt::If(condition, Box::new(then), None))
                }
            }
            "while" => {
                self.pos += 1;
                self.expect("(")?;
                let condition = self.expr()?;
                self.expect(")")?;
                Ok(Stmt::While(condition, Box::new(self.simple_or_block()?)))
            }
            "for" => {
                self.pos += 1;
                self.expect("(")?;
                let init = if self.is(";") {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect(";")?;
                let condition = if self.is(";") {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect(";")?;
                let step = if self.is(")") {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.expect(")")?;
                Ok(Stmt::For(
                    init,
                    condition,
                    step,
                    Box::new(self.simple_or_block()?),
                ))
            }
            "next" => {
                self.pos += 1;
                Ok(Stmt::Next)
            }
            "exit" => {
                self.pos += 1;
                let code = if matches!(
                    self.peek(),
                    None | Some(Token::Newline | Token::Punct(";" | "}"))
                ) {
                    None
                } else {
                    Some(self.expr()?)
                };
                Ok(Stmt::Exit(code))
            }
            _ => Ok(Stmt::Eval(self.expr()?)),
        }
    }

    fn expr(&mut self) -> Result<Expr, String> {
        self.ternary(false)
    }

    /// In `print a > b` the `>` would be a redirection; inside parentheses it compares.
    fn expr_no_gt(&mut self, parenthesised: bool) -> Result<Expr, String> {
        self.ternary(!parenthesised)
    }

    fn ternary(&mut self, no_gt: bool) -> Result<Expr, String> {
        let condition = self.assignment(no_gt)?;
        if self.eat("?") {
            let yes = self.ternary(no_gt)?;
            self.expect(":")?;
            let no = self.ternary(no_gt)?;
            return Ok(Expr::Cond(Box::new(condition), Box::new(yes), Box::new(no)));
        }
        Ok(condition)
    }

    fn assignment(&mut self, no_gt: bool) -> Result<Expr, String> {
        let left = self.or(no_gt)?;
        for op in ["=", "+=", "-=", "*=", "/=", "%="] {
            if self.is(op) && matches!(left, Expr::Var(_) | Expr::Field(_)) {
                self.pos += 1;
                let right = self.ternary(no_gt)?;
                return Ok(Expr::Assign(Box::new(left), op_name(op), Box::new(right)));
            }
        }
        Ok(left)
    }

    fn or(&mut self, no_gt: bool) -> Result<Expr, String> {
        let mut left = self.and(no_gt)?;
        while self.eat("||") {
            self.skip_newlines();
            left = Expr::Binary("||", Box::new(left), Box::new(self.and(no_gt)?));
        }
        Ok(left)
    }

    fn and(&mut self, no_gt: bool) -> Result<Expr, String> {
        let mut left = self.matching(no_gt)?;
        while self.eat("&&") {
            self.skip_newlines();
            left = Expr::Binary("&&", Box::new(left), Box::new(self.matching(no_gt)?));
        }
        Ok(left)
    }

    fn matching(&mut self, no_gt: bool) -> Result<Expr, String> {
        let mut left = self.comparison(no_gt)?;
        loop {
            let negate = if self.eat("~") {
                false
            } else if self.eat("!~") {
                true
            } else {
                return Ok(left);
            };
            left = Expr::Match(Box::new(left), Box::new(self.comparison(no_gt)?), negate);
        }
    }

    fn comparison(&mut self, no_gt: bool) -> Result<Expr, String> {
        let left = self.concat()?;
        for op in ["==", "!=", "<=", ">=", "<", ">"] {
            if op == ">" && no_gt {
                continue;
            }
            if self.is(op) {
                self.pos += 1;
                let right = self.concat()?;
                return Ok(Expr::Binary(op_name(op), Box::new(left), Box::new(right)));
            }
        }
        Ok(left)
    }

    fn concat(&mut self) -> Result<Expr, String> {
        let mut left = self.additive()?;
        while self.starts_operand() {
            let right = self.additive()?;
            left = Expr::Concat(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn starts_operand(&self) -> bool {
        match self.peek() {
            Some(Token::Num(_) | Token::Str(_) | Token::Regex(_)) => true,
            Some(Token::Name(n)) => !matches!(n.as_str(), "in" | "else"),
            Some(Token::Punct(p)) => matches!(*p, "$" | "(" | "!" | "++" | "--"),
            _ => false,
        }
    }

    fn additive(&mut self) -> Result<Expr, String> {
        let mut left = self.multiplicative()?;
        loop {
            let op = if self.is("+") {
                "+"
            } else if self.is("-") {
                "-"
            } else {
                return Ok(left);
            };
            self.pos += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.multiplicative()?));
        }
    }

    fn multiplicative(&mut self) -> Result<Expr, String> {
        let mut left = self.unary()?;
        loop {
            let op = ["*", "/", "%"].into_iter().find(|op| self.is(op));
            let Some(op) = op else {
                return Ok(left);
            };
            self.pos += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.eat("-") {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        if self.eat("+") {
            return self.unary();
        }
        for (op, delta) in [("++", 1.0), ("--", -1.0)] {
            if self.eat(op) {
                let target = self.postfix()?;
                return Ok(Expr::Step {
                    target: Box::new(target),
                    delta,
                    prefix: true,
                });
            }
        }
        self.power()
    }

    fn power(&mut self) -> Result<Expr, String> {
        let base = self.postfix()?;
        if self.eat("^") {
            return Ok(Expr::Binary("^", Box::new(base), Box::new(self.unary()?)));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<Expr, String> {
        let primary = self.primary()?;
        if matches!(primary, Expr::Var(_) | Expr::Field(_)) {
            for (op, delta) in [("++", 1.0), ("--", -1.0)] {
                if self.eat(op) {
                    return Ok(Expr::Step {
                        target: Box::new(primary),
                        delta,
                        prefix: false,
                    });
                }
            }
        }
        Ok(primary)
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let token = self
            .peek()
            .cloned()
            .ok_or("syntax error: unexpected end of program")?;
        self.pos += 1;
        Ok(match token {
            Token::Num(n) => Expr::Num(n),
            Token::Str(s) => Expr::Str(s),
            Token::Regex(r) => Expr::Regex(Rc::new(compile(&r)?)),
            Token::Punct("$") => Expr::Field(Box::new(self.postfix_operand()?)),
            Token::Punct("(") => {
                let inner = self.expr()?;
                self.expect(")")?;
                inner
            }
            Token::Name(name) if self.is("(") && is_builtin(&name) => {
                self.pos += 1;
                let mut args = Vec::new();
                if !self.is(")") {
                    args.push(self.expr()?);
                    while self.eat(",") {
                        args.push(self.expr()?);
                    }
                }
                self.expect(")")?;
                Expr::Call(name, args)
            }
            Token::Name(name) if name == "length" => Expr::Call(name, Vec::new()),
            Token::Name(name)
                if matches!(
                    name.as_str(),
                    "getline" | "function" | "delete" | "in" | "split" | "system"
                ) =>
            {
                return Err(format!("`{name}' is not supported in the sandbox's awk"));
            }
            Token::Name(name) => Expr::Var(name),
            other => return Err(format!("syntax error at {other:?}")),
        })
    }

    /// The operand of `$`: a number, a variable or a parenthesised expression.
    fn postfix_operand(&mut self) -> Result<Expr, String> {
        match self.peek().cloned() {
            Some(Token::Punct("-")) => {
                self.pos += 1;
                Ok(Expr::Neg(Box::new(self.primary()?)))
            }
            _ => self.primary(),
        }
    }
}

fn op_name(op: &str) -> &'static str {
    PUNCTS.iter().find(|p| **p == op).copied().unwrap_or("=")
}

fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "length" | "substr" | "index" | "tolower" | "toupper" | "int" | "sprintf" | "sub" | "gsub"
    )
}

fn compile(pattern: &str) -> Result<Regex, String> {
    let translated = translate_posix(pattern, true)?;
    Regex::new(&translated).map_err(|_| format!("regular expression compile failed: {pattern}"))
}

/// `%.6g`, as awk prints non-integral numbers.
fn format_number(n: f64) -> String {
    if n.is_finite() && n == n.trunc() && n.abs() < 1e16 {
        return format!("{}", n as i64);
    }
    if !n.is_finite() {
        return if n.is_nan() {
            "nan".into()
        } else if n > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let exponent = n.abs().log10().floor() as i32;
    if !(-4..6).contains(&exponent) {
        let text = format!("{:.5e}", n);
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let mantissa = trim_zeros(mantissa);
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let decimals = (5 - exponent).max(0) as usize;
    trim_zeros(&format!("{n:.decimals$}"))
}

fn trim_zeros(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text.to_string()
    }
}

/// The leading number of a string, as awk converts strings (no number means 0).
fn to_number(text: &str) -> f64 {
    let t = text.trim_start();
    let mut end = 0;
    let bytes = t.as_bytes();
    if end < bytes.len() && (bytes[end] == b'-' || bytes[end] == b'+') {
        end += 1;
    }
    while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b'.') {
        end += 1;
    }
    if end < bytes.len() && (bytes[end] == b'e' || bytes[end] == b'E') {
        let mut e = end + 1;
        if e < bytes.len() && (bytes[e] == b'-' || bytes[e] == b'+') {
            e += 1;
        }
        if e < bytes.len() && bytes[e].is_ascii_digit() {
            end = e;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
        }
    }
    t[..end].parse().unwrap_or(0.0)
}

fn looks_numeric(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty() && t.parse::<f64>().is_ok() && !t.ends_with('.') || t.parse::<i64>().is_ok()
}

#[derive(Debug, Clone)]
enum Value {
    Num(f64),
    Str(String),
    /// Input data (fields, `-v` values): a number when it looks like one.
    Data(String),
}

impl Value {
    fn text(&self) -> String {
        match self {
            Value::Num(n) => format_number(*n),
            Value::Str(s) | Value::Data(s) => s.clone(),
        }
    }

    fn number(&self) -> f64 {
        match self {
            Value::Num(n) => *n,
            Value::Str(s) | Value::Data(s) => to_number(s),
        }
    }

    fn truthy(&self) -> bool {
        match self {
            Value::Num(n) => *n != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Data(s) => {
                if looks_numeric(s) {
                    to_number(s) != 0.0
                } else {
                    !s.is_empty()
                }
            }
        }
    }

    fn is_numeric(&self) -> bool {
        match self {
            Value::Num(_) => true,
            Value::Str(_) => false,
            Value::Data(s) => looks_numeric(s),
        }
    }
}

enum Flow {
    Normal,
    Next,
    Exit,
}

struct Machine {
    vars: BTreeMap<String, Value>,
    record: String,
    fields: Vec<String>,
    nr: usize,
    steps: u64,
    /// Bytes of text moved so far (see [`MAX_TEXT_WORK`]).
    work: u64,
    /// Regular expressions computed at run time, compiled (or refused), by source text.
    regexes: BTreeMap<String, Result<Rc<Regex>, String>>,
    exit_code: i32,
    out: Vec<u8>,
    err: Vec<u8>,
    /// Output for `print > FILE`, per file name: whether the first redirect appended, and the
    /// text. Written to the VFS when the program ends.
    files: BTreeMap<String, (bool, String)>,
}

impl Machine {
    fn var(&self, name: &str) -> Value {
        match name {
            "NR" | "FNR" => Value::Num(self.nr as f64),
            "NF" => Value::Num(self.fields.len() as f64),
            _ => self
                .vars
                .get(name)
                .cloned()
                .unwrap_or(Value::Str(String::new())),
        }
    }

    fn fs(&self) -> String {
        self.vars.get("FS").map_or(" ".into(), Value::text)
    }

    fn split_record(&mut self) -> Result<(), String> {
        let fs = self.fs();
        self.charge(self.record.len() + fs.len())?;
        self.fields = if fs == " " {
            self.record.split_whitespace().map(str::to_string).collect()
        } else if self.record.is_empty() {
            Vec::new()
        } else if fs.chars().count() == 1 && fs != "\\" {
            self.record.split(fs.as_str()).map(str::to_string).collect()
        } else {
            match self.regex(&fs)? {
                Ok(re) => re.split(&self.record).map(str::to_string).collect(),
                Err(_) => vec![self.record.clone()],
            }
        };
        Ok(())
    }

    fn rebuild_record(&mut self) -> Result<(), String> {
        let ofs = self.vars.get("OFS").map_or(" ".into(), Value::text);
        let size = self.fields.iter().map(String::len).sum::<usize>()
            + ofs.len() * self.fields.len().saturating_sub(1);
        check_size(size)?;
        self.charge(size)?;
        self.record = self.fields.join(&ofs);
        Ok(())
    }

    /// `source` compiled as a regular expression (the outer error: the work budget is used
    /// up; the inner one: `source` does not compile). Compiled once per distinct source while
    /// it stays among the last [`REGEX_CACHE`] ones: compiling takes far longer than a step.
    fn regex(&mut self, source: &str) -> Result<Result<Rc<Regex>, String>, String> {
        if let Some(compiled) = self.regexes.get(source) {
            return Ok(compiled.clone());
        }
        self.charge(REGEX_COMPILE_WORK + source.len())?;
        let compiled = compile(source).map(Rc::new);
        if self.regexes.len() >= REGEX_CACHE {
            self.regexes.clear();
        }
        self.regexes.insert(source.to_string(), compiled.clone());
        Ok(compiled)
    }

    /// Counts `bytes` of text moved against [`MAX_TEXT_WORK`].
    fn charge(&mut self, bytes: usize) -> Result<(), String> {
        self.work = self.work.saturating_add(bytes as u64);
        if self.work > MAX_TEXT_WORK {
            return Err(format!(
                "program stopped after moving {} MiB of text (sandbox limit)",
                MAX_TEXT_WORK >> 20
            ));
        }
        Ok(())
    }

    fn field(&self, index: usize) -> Value {
        if index == 0 {
            Value::Data(self.record.clone())
        } else {
            Value::Data(self.fields.get(index - 1).cloned().unwrap_or_default())
        }
    }

    fn set_field(&mut self, index: usize, value: String) -> Result<(), String> {
        if index == 0 {
            check_size(value.len())?;
            self.record = value;
            self.split_record()?;
        } else {
            if index > 100_000 {
                return Err(format!("field index {index} too large"));
            }
            if self.fields.len() < index {
                self.fields.resize(index, String::new());
            }
            self.fields[index - 1] = value;
            self.rebuild_record()?;
        }
        Ok(())
    }

    fn assign(&mut self, target: &Expr, value: Value) -> Result<(), String> {
        match target {
            Expr::Var(name) if name == "NF" => {
                let n = value.number().max(0.0) as usize;
                self.fields.resize(n.min(100_000), String::new());
                self.rebuild_record()
            }
            Expr::Var(name) if name == "NR" => {
                self.nr = value.number().max(0.0) as usize;
                Ok(())
            }
            Expr::Var(name) => {
                self.vars.insert(name.clone(), value);
                Ok(())
            }
            Expr::Field(index) => {
                let index = self.eval(index)?.number().max(0.0) as usize;
                self.set_field(index, value.text())
            }
            _ => Err("assignment to a non-variable".into()),
        }
    }

    /// Evaluates `expr` for its effects only: `x = x …` then appends to `x` in place rather
    /// than copying it (its value, a copy, is not needed).
    fn eval_for_effect(&mut self, expr: &Expr) -> Result<(), String> {
        let Expr::Assign(target, "=", value) = expr else {
            return self.eval(expr).map(drop);
        };
        let (Expr::Var(name), Some(operands)) = (target.as_ref(), appended_to(target, value))
        else {
            return self.eval(expr).map(drop);
        };
        // The operands cannot change `name`, so evaluating them first is what awk does.
        let mut tail = String::new();
        for operand in operands {
            tail.push_str(&self.eval(operand)?.text());
            check_size(tail.len())?;
        }
        let mut text = match self.vars.remove(name) {
            Some(Value::Str(text) | Value::Data(text)) => text,
            Some(Value::Num(n)) => format_number(n),
            None => String::new(),
        };
        let size = text.len() + tail.len();
        let fits = check_size(size).and_then(|()| self.charge(tail.len()));
        if fits.is_ok() {
            text.push_str(&tail);
        }
        self.vars.insert(name.clone(), Value::Str(text));
        fits
    }

    /// Evaluates `expr`; every string it reads or builds counts against [`MAX_TEXT_WORK`].
    fn eval(&mut self, expr: &Expr) -> Result<Value, String> {
        let value = self.eval_uncounted(expr)?;
        if let Value::Str(text) | Value::Data(text) = &value {
            self.charge(text.len())?;
        }
        Ok(value)
    }

    fn eval_uncounted(&mut self, expr: &Expr) -> Result<Value, String> {
        Ok(match expr {
            Expr::Num(n) => Value::Num(*n),
            Expr::Str(s) => Value::Str(s.clone()),
            Expr::Regex(re) => {
                self.charge(self.record.len())?;
                Value::Num(f64::from(u8::from(re.is_match(&self.record))))
            }
            Expr::Field(index) => {
                let index = self.eval(index)?.number();
                if index < 0.0 {
                    return Err(format!("trying to access out of range field {index}"));
                }
                self.field(index as usize)
            }
            Expr::Var(name) => self.var(name),
            Expr::Assign(target, op, value) => {
                let value = self.eval(value)?;
                let value = if *op == "=" {
                    value
                } else {
                    let current = self.eval(target)?.number();
                    Value::Num(arithmetic(&op[..1], current, value.number())?)
                };
                self.assign(target, value.clone())?;
                value
            }
            Expr::Step {
                target,
                delta,
                prefix,
            } => {
                let old = self.eval(target)?.number();
                self.assign(target, Value::Num(old + delta))?;
                Value::Num(if *prefix { old + delta } else { old })
            }
            Expr::Neg(inner) => Value::Num(-self.eval(inner)?.number()),
            Expr::Not(inner) => Value::Num(f64::from(u8::from(!self.eval(inner)?.truthy()))),
            Expr::Binary(op, left, right) => match *op {
                "&&" => {
                    let result = self.eval(left)?.truthy() && self.eval(right)?.truthy();
                    Value::Num(f64::from(u8::from(result)))
                }
                "||" => {
                    let result = self.eval(left)?.truthy() || self.eval(right)?.truthy();
                    Value::Num(f64::from(u8::from(result)))
                }
                "==" | "!=" | "<" | "<=" | ">" | ">=" => {
                    let (a, b) = (self.eval(left)?, self.eval(right)?);
                    let order = if a.is_numeric() && b.is_numeric() {
                        a.number().total_cmp(&b.number())
                    } else {
                        a.text().cmp(&b.text())
                    };
                    let result = match *op {
                        "==" => order.is_eq(),
                        "!=" => order.is_ne(),
                        "<" => order.is_lt(),
                        "<=" => order.is_le(),
                        ">" => order.is_gt(),
                        _ => order.is_ge(),
                    };
                    Value::Num(f64::from(u8::from(result)))
                }
                _ => {
                    let (a, b) = (self.eval(left)?.number(), self.eval(right)?.number());
                    Value::Num(arithmetic(op, a, b)?)
                }
            },
            Expr::Concat(left, right) => {
                let left = self.eval(left)?.text();
                let right = self.eval(right)?.text();
                check_size(left.len() + right.len())?;
                Value::Str(left + &right)
            }
            Expr::Match(left, pattern, negate) => {
                let text = self.eval(left)?.text();
                let matched = match pattern.as_ref() {
                    Expr::Regex(re) => re.is_match(&text),
                    other => {
                        let source = self.eval(other)?.text();
                        self.regex(&source)??.is_match(&text)
                    }
                };
                Value::Num(f64::from(u8::from(matched != *negate)))
            }
            Expr::Cond(condition, yes, no) => {
                if self.eval(condition)?.truthy() {
                    self.eval(yes)?
                } else {
                    self.eval(no)?
                }
            }
            Expr::Call(name, args) => self.call(name, args)?,
        })
    }

    fn call(&mut self, name: &str, args: &[Expr]) -> Result<Value, String> {
        let mut values = Vec::new();
        for arg in args.iter().take(if matches!(name, "sub" | "gsub") {
            2
        } else {
            args.len()
        }) {
            values.push(self.eval(arg)?);
        }
        let text = |i: usize| values.get(i).map(Value::text).unwrap_or_default();
        Ok(match name {
            "length" => Value::Num(match values.first() {
                Some(v) => v.text().chars().count(),
                None => {
                    self.charge(self.record.len())?;
                    self.record.chars().count()
                }
            } as f64),
            "substr" => {
                let chars: Vec<char> = text(0).chars().collect();
                let start = values.get(1).map_or(1.0, Value::number).round();
                let length = values.get(2).map_or(f64::INFINITY, Value::number).round();
                let first = start.max(1.0);
                let last = (start + length).min(chars.len() as f64 + 1.0);
                if last <= first {
                    Value::Str(String::new())
                } else {
                    Value::Str(
                        chars[first as usize - 1..last as usize - 1]
                            .iter()
                            .collect(),
                    )
                }
            }
            "index" => Value::Num(
                text(0)
                    .find(&text(1))
                    .map_or(0, |byte| text(0)[..byte].chars().count() + 1) as f64,
            ),
            "tolower" => Value::Str(text(0).to_lowercase()),
            "toupper" => Value::Str(text(0).to_uppercase()),
            "int" => Value::Num(values.first().map_or(0.0, Value::number).trunc()),
            "sprintf" => Value::Str(sprintf(&values)?),
            _ => {
                let pattern = match args.first() {
                    Some(Expr::Regex(re)) => re.clone(),
                    _ => self.regex(&text(0))??,
                };
                let target = args
                    .get(2)
                    .cloned()
                    .unwrap_or(Expr::Field(Box::new(Expr::Num(0.0))));
                let current = self.eval(&target)?.text();
                let replacement = text(1);
                let mut count = 0;
                let mut result = String::new();
                let mut last = 0;
                let literal = !replacement.contains(['&', '\\']);
                for found in pattern.find_iter(&current) {
                    result.push_str(&current[last..found.start()]);
                    if literal {
                        result.push_str(&replacement);
                    } else {
                        let mut chars = replacement.chars().peekable();
                        while let Some(c) = chars.next() {
                            match c {
                                '\\' if chars.peek() == Some(&'&') => {
                                    result.push('&');
                                    chars.next();
                                }
                                '&' => result.push_str(found.as_str()),
                                _ => result.push(c),
                            }
                            check_size(result.len())?;
                        }
                    }
                    check_size(result.len() + current.len() - found.end())?;
                    last = found.end();
                    count += 1;
                    if name == "sub" {
                        break;
                    }
                }
                if count > 0 {
                    result.push_str(&current[last..]);
                    self.charge(result.len())?;
                    self.assign(&target, Value::Str(result))?;
                }
                Value::Num(count as f64)
            }
        })
    }

    fn run(&mut self, statements: &[Stmt]) -> Result<Flow, String> {
        for statement in statements {
            match self.exec(statement)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn tick(&mut self) -> Result<(), String> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(format!(
                "program stopped after {MAX_STEPS} steps (sandbox limit)"
            ));
        }
        Ok(())
    }

    fn write(&mut self, text: &str) -> Result<(), String> {
        self.write_to(None, text)
    }

    fn write_to(&mut self, redirect: Option<&Redirect>, text: &str) -> Result<(), String> {
        let total =
            self.out.len() + self.err.len() + self.files.values().map(|f| f.1.len()).sum::<usize>();
        if total + text.len() > 64 * 1024 * 1024 {
            return Err("output grew past 64 MiB".into());
        }
        let Some(redirect) = redirect else {
            self.out.extend_from_slice(text.as_bytes());
            return Ok(());
        };
        let target = self.eval(&redirect.target)?.text();
        match target.as_str() {
            "/dev/stdout" | "-" => self.out.extend_from_slice(text.as_bytes()),
            "/dev/stderr" => self.err.extend_from_slice(text.as_bytes()),
            _ => self
                .files
                .entry(target)
                .or_insert_with(|| (redirect.append, String::new()))
                .1
                .push_str(text),
        }
        Ok(())
    }

    fn exec(&mut self, statement: &Stmt) -> Result<Flow, String> {
        self.tick()?;
        match statement {
            Stmt::Print(args, redirect) => {
                let line = if args.is_empty() {
                    self.record.clone()
                } else {
                    let ofs = self.vars.get("OFS").map_or(" ".into(), Value::text);
                    let mut parts = Vec::new();
                    for arg in args {
                        parts.push(self.eval(arg)?.text());
                        self.charge(ofs.len())?;
                    }
                    parts.join(&ofs)
                };
                let ors = self.vars.get("ORS").map_or("\n".into(), Value::text);
                self.charge(line.len() + ors.len())?;
                self.write_to(redirect.as_ref(), &format!("{line}{ors}"))?;
            }
            Stmt::Printf(args, redirect) => {
                let mut values = Vec::new();
                for arg in args {
                    values.push(self.eval(arg)?);
                }
                let text = sprintf(&values)?;
                self.write_to(redirect.as_ref(), &text)?;
            }
            Stmt::Eval(expr) => self.eval_for_effect(expr)?,
            Stmt::If(condition, then, otherwise) => {
                if self.eval(condition)?.truthy() {
                    return self.exec(then);
                } else if let Some(otherwise) = otherwise {
                    return self.exec(otherwise);
                }
            }
            Stmt::While(condition, body) => {
                while self.eval(condition)?.truthy() {
                    self.tick()?;
                    match self.exec(body)? {
                        Flow::Normal => {}
                        other => return Ok(other),
                    }
                }
            }
            Stmt::For(init, condition, step, body) => {
                if let Some(init) = init {
                    self.eval_for_effect(init)?;
                }
                loop {
                    self.tick()?;
                    if let Some(condition) = condition
                        && !self.eval(condition)?.truthy()
                    {
                        break;
                    }
                    match self.exec(body)? {
                        Flow::Normal => {}
                        other => return Ok(other),
                    }
                    if let Some(step) = step {
                        self.eval_for_effect(step)?;
                    }
                }
            }
            Stmt::Block(statements) => return self.run(statements),
            Stmt::Next => return Ok(Flow::Next),
            Stmt::Exit(code) => {
                if let Some(code) = code {
                    self.exit_code = self.eval(code)?.number() as i32;
                }
                return Ok(Flow::Exit);
            }
        }
        Ok(Flow::Normal)
    }
}

/// Refuses a string longer than [`MAX_STRING_BYTES`] before it is built.
fn check_size(bytes: usize) -> Result<(), String> {
    if bytes > MAX_STRING_BYTES {
        return Err(format!("string grew past {} MiB", MAX_STRING_BYTES >> 20));
    }
    Ok(())
}

/// For `name = name a b …` (a variable assigned itself with more appended), the appended
/// operands — when evaluating them cannot change the variable (no assignment, `++`, `sub` or
/// `gsub` among them), so appending them in place gives what copying would.
fn appended_to<'e>(target: &Expr, value: &'e Expr) -> Option<Vec<&'e Expr>> {
    let Expr::Var(name) = target else {
        return None;
    };
    if matches!(name.as_str(), "NF" | "NR" | "FNR") {
        return None;
    }
    let mut operands = Vec::new();
    let mut left = value;
    while let Expr::Concat(inner, right) = left {
        operands.push(right.as_ref());
        left = inner;
    }
    let appends = matches!(left, Expr::Var(first) if first == name);
    if !appends || operands.is_empty() || !operands.iter().all(|e| pure(e)) {
        return None;
    }
    operands.reverse();
    Some(operands)
}

/// Whether evaluating `expr` changes no variable, field or record.
fn pure(expr: &Expr) -> bool {
    match expr {
        Expr::Num(_) | Expr::Str(_) | Expr::Regex(_) | Expr::Var(_) => true,
        Expr::Field(inner) | Expr::Neg(inner) | Expr::Not(inner) => pure(inner),
        Expr::Binary(_, a, b) | Expr::Concat(a, b) | Expr::Match(a, b, _) => pure(a) && pure(b),
        Expr::Cond(a, b, c) => pure(a) && pure(b) && pure(c),
        Expr::Call(name, args) => !matches!(name.as_str(), "sub" | "gsub") && args.iter().all(pure),
        Expr::Assign(..) | Expr::Step { .. } => false,
    }
}

fn arithmetic(op: &str, a: f64, b: f64) -> Result<f64, String> {
    Ok(match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "^" => a.powf(b),
        "/" | "%" if b == 0.0 => return Err("division by zero".into()),
        "/" => a / b,
        _ => a % b,
    })
}

/// awk's `printf`/`sprintf`: the shell `printf`'s conversions, one pass over the format.
fn sprintf(values: &[Value]) -> Result<String, String> {
    let format = values.first().map(Value::text).unwrap_or_default();
    let chars: Vec<char> = format.chars().collect();
    let mut out = String::new();
    let mut next = 1;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '%' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        if chars.get(i + 1) == Some(&'%') {
            out.push('%');
            i += 2;
            continue;
        }
        let start = i + 1;
        i += 1;
        while i < chars.len() && "-+ #0123456789.".contains(chars[i]) {
            i += 1;
        }
        let Some(conv) = chars.get(i).copied() else {
            out.extend(&chars[start - 1..]);
            break;
        };
        i += 1;
        let spec: String = chars[start..i - 1].iter().collect();
        let value = values.get(next);
        next += 1;
        let argument = match (conv, value) {
            ('d' | 'i' | 'x' | 'X' | 'o' | 'u' | 'c', Some(v))
                if v.is_numeric() || matches!(v, Value::Num(_)) =>
            {
                if conv == 'c' {
                    char::from_u32(v.number() as u32)
                        .map(String::from)
                        .unwrap_or_default()
                } else {
                    (v.number().trunc() as i64).to_string()
                }
            }
            ('d' | 'i' | 'x' | 'X' | 'o' | 'u', Some(v)) => {
                (to_number(&v.text()).trunc() as i64).to_string()
            }
            ('e' | 'f' | 'g' | 'E' | 'F' | 'G', Some(v)) => v.number().to_string(),
            (_, Some(v)) => v.text(),
            (_, None) => String::new(),
        };
        let conv = if conv == 'c' {
            's'
        } else {
            conv.to_ascii_lowercase()
        };
        let (text, problem) = format_one(&spec, conv, Some(&argument));
        if let Some(problem) = problem {
            return Err(problem);
        }
        out.push_str(&text);
    }
    Ok(out)
}

pub fn awk(ctx: &mut Ctx, args: &[String]) -> i32 {
    let mut vars: BTreeMap<String, Value> = BTreeMap::new();
    let mut rest = args.iter();
    let mut program = None;
    let mut files = Vec::new();
    while let Some(arg) = rest.next() {
        if program.is_some() {
            if let Some((name, value)) = arg.split_once('=')
                && crate::shell::parse::is_name(name)
            {
                vars.insert(name.into(), Value::Data(value.into()));
                continue;
            }
            files.push(arg.clone());
            continue;
        }
        if let Some(fs) = arg.strip_prefix("-F") {
            let fs = if fs.is_empty() {
                rest.next().cloned().unwrap_or_default()
            } else {
                fs.to_string()
            };
            let fs = if fs == "t" || fs == "\\t" {
                "\t".to_string()
            } else {
                fs
            };
            vars.insert("FS".into(), Value::Str(fs));
        } else if let Some(assignment) = arg.strip_prefix("-v") {
            let assignment = if assignment.is_empty() {
                rest.next().cloned().unwrap_or_default()
            } else {
                assignment.to_string()
            };
            match assignment.split_once('=') {
                Some((name, value)) => {
                    vars.insert(
                        name.into(),
                        Value::Data(crate::commands::text::unescape(value)),
                    );
                }
                None => {
                    return usage_error(
                        ctx,
                        &format!("awk: improper assignment: -v {assignment}"),
                        2,
                    );
                }
            }
        } else if arg == "--" {
            program = rest.next().cloned();
        } else if arg.starts_with('-') && arg.len() > 1 {
            return usage_error(ctx, &format!("awk: not an option: {arg}"), 2);
        } else {
            program = Some(arg.clone());
        }
    }
    let Some(program) = program else {
        return usage_error(
            ctx,
            "usage: awk [-F value] [-v var=value] 'program' [file ...]",
            2,
        );
    };
    let rules = match lex(&program).and_then(|tokens| Parser { tokens, pos: 0 }.program()) {
        Ok(rules) => rules,
        Err(e) => return usage_error(ctx, &format!("awk: {e}"), 2),
    };
    let (inputs, failed) = ctx.inputs("awk", &files);
    let mut machine = Machine {
        vars,
        record: String::new(),
        fields: Vec::new(),
        nr: 0,
        steps: 0,
        work: 0,
        regexes: BTreeMap::new(),
        exit_code: i32::from(failed) * 2,
        out: Vec::new(),
        err: Vec::new(),
        files: BTreeMap::new(),
    };
    let result = execute(&mut machine, &rules, &inputs);
    let out = std::mem::take(&mut machine.out);
    ctx.write(&out);
    ctx.err.append(&mut machine.err);
    for (name, (append, text)) in std::mem::take(&mut machine.files) {
        let path = ctx.resolve(&name);
        let written = if append {
            ctx.vfs.append(&path, text.as_bytes())
        } else {
            ctx.vfs.write(&path, text.into_bytes())
        };
        if let Err(e) = written {
            ctx.warn(&format!("awk: cannot write {name}: {e}"));
            machine.exit_code = 2;
        }
    }
    match result {
        Ok(()) => machine.exit_code,
        Err(e) => usage_error(ctx, &format!("awk: {e}"), 2),
    }
}

fn execute(
    machine: &mut Machine,
    rules: &[Rule],
    inputs: &[(String, Vec<u8>)],
) -> Result<(), String> {
    let mut exited = false;
    for rule in rules.iter().filter(|r| matches!(r.pattern, Pattern::Begin)) {
        if let Some(action) = &rule.action
            && let Flow::Exit = machine.run(action)?
        {
            exited = true;
            break;
        }
    }
    // `exit` skips the remaining input but END rules still run, as in awk.
    let has_main = rules.iter().any(|r| !matches!(r.pattern, Pattern::Begin));
    let mut in_range = vec![false; rules.len()];
    if !exited && has_main {
        'records: for (_, data) in inputs {
            let text = String::from_utf8_lossy(data);
            for line in text.lines() {
                machine.tick()?;
                machine.nr += 1;
                machine.record = line.to_string();
                machine.split_record()?;
                for (index, rule) in rules.iter().enumerate() {
                    let selected = match &rule.pattern {
                        Pattern::Begin | Pattern::End => false,
                        Pattern::All => true,
                        Pattern::When(expr) => machine.eval(expr)?.truthy(),
                        Pattern::Range(start, end) => {
                            if in_range[index] || machine.eval(start)?.truthy() {
                                in_range[index] = !machine.eval(end)?.truthy();
                                true
                            } else {
                                false
                            }
                        }
                    };
                    if !selected {
                        continue;
                    }
                    let flow = match &rule.action {
                        Some(action) => machine.run(action)?,
                        None => {
                            let line = format!("{}\n", machine.record);
                            machine.write(&line)?;
                            Flow::Normal
                        }
                    };
                    match flow {
                        Flow::Normal => {}
                        Flow::Next => break,
                        Flow::Exit => break 'records,
                    }
                }
            }
        }
    }
    for rule in rules.iter().filter(|r| matches!(r.pattern, Pattern::End)) {
        if let Some(action) = &rule.action
            && let Flow::Exit = machine.run(action)?
        {
            break;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::format_number;

    #[test]
    fn numbers_print_like_ofmt() {
        let cases = [
            (3.0, "3"),
            (0.5, "0.5"),
            (1.0 / 3.0, "0.333333"),
            (123456.7, "123457"),
            (1e20, "1e+20"),
            (-2.5, "-2.5"),
            (0.0001234, "0.0001234"),
        ];
        for (n, want) in cases {
            assert_eq!(format_number(n), want, "{n}");
        }
    }
}
