//! Bash arithmetic — `$(( ))`, `(( ))`, `let`, `for (( ; ; ))`, array subscripts and
//! `declare -i` — parsed whole into an [`Expr`] and then evaluated on 64-bit integers that
//! wrap, as bash's do.
//!
//! The operators are bash's, with its precedence (lowest first): `,`; `=` and the compound
//! assignments `*= /= %= += -= <<= >>= &= ^= |=`; `?:`; `||`; `&&`; `|`; `^`; `&`; `== !=`;
//! `< > <= >=`; `<< >>`; `+ -`; `* / %`; `**`; the unary `! ~ + -` and `++`/`--` before or
//! after a name. Numbers are decimal, `0x` hex, `0` octal or `BASE#DIGITS`. A name's value
//! is itself evaluated as an expression (`x=1+2; $((x*2))` is 6), to a bounded depth.
//! `&&`, `||` and `?:` skip the side effects of the branch they do not take.
//!
//! Variables are read and written through [`Variables`], so this file knows nothing of the
//! interpreter and is fuzzed on its own.

use std::cell::Cell;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArithError {
    #[error("{expr}: division by 0 (error token is \"{token}\")")]
    DivisionByZero { expr: String, token: String },
    #[error("{expr}: exponent less than 0 (error token is \"{token}\")")]
    NegativeExponent { expr: String, token: String },
    #[error("{expr}: syntax error: {what} (error token is \"{token}\")")]
    Syntax {
        expr: String,
        what: &'static str,
        token: String,
    },
    #[error("{expr}: value too great for base (error token is \"{token}\")")]
    BadNumber { expr: String, token: String },
    #[error("{0}: expression recursion level exceeded")]
    TooDeep(String),
    /// Reading or writing a variable failed (a readonly variable, a bad subscript).
    #[error("{0}")]
    Variable(String),
}

/// How the evaluator reaches the shell's variables.
pub trait Variables {
    /// The value of `name` (or of `name[subscript]`), `None` when unset.
    fn get(&mut self, name: &str, subscript: Option<&str>) -> Result<Option<String>, ArithError>;
    fn set(&mut self, name: &str, subscript: Option<&str>, value: i64) -> Result<(), ArithError>;
}

/// How deeply variable values may refer to other expressions (bash stops at 1024).
const MAX_DEPTH: usize = 64;

/// A name that can be assigned: `x` or `a[SUBSCRIPT]` (the subscript kept as text: an
/// associative array takes it as a key, an indexed one evaluates it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub name: String,
    pub subscript: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binary {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    Pow,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Number(i64),
    Read(Place),
    Negate(Box<Expr>),
    Not(Box<Expr>),
    Complement(Box<Expr>),
    Binary(Binary, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Conditional(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `place = value`, or `place OP= value`.
    Assign(Place, Option<Binary>, Box<Expr>),
    /// `++x` / `--x` (delta ±1, `prefix`) and `x++` / `x--`.
    Step {
        place: Place,
        delta: i64,
        prefix: bool,
    },
    Comma(Box<Expr>, Box<Expr>),
}

/// Parses and evaluates `text`; an empty expression is 0.
pub fn evaluate(text: &str, vars: &mut dyn Variables) -> Result<i64, ArithError> {
    evaluate_at(text, vars, 0)
}

fn evaluate_at(text: &str, vars: &mut dyn Variables, depth: usize) -> Result<i64, ArithError> {
    if depth > MAX_DEPTH {
        return Err(ArithError::TooDeep(text.trim().to_string()));
    }
    let _active = Active::enter(text)?;
    match parse(text)? {
        None => Ok(0),
        Some(expr) => Evaluator { text, vars, depth }.eval(&expr),
    }
}

/// Evaluates an expression already parsed from `text` (see [`parse`]).
pub fn evaluate_parsed(
    text: &str,
    expr: &Expr,
    vars: &mut dyn Variables,
) -> Result<i64, ArithError> {
    let _active = Active::enter(text)?;
    Evaluator {
        text,
        vars,
        depth: 0,
    }
    .eval(expr)
}

thread_local! {
    /// The evaluations running on this thread, however they were entered: a [`Variables`]
    /// implementation evaluates a subscript with a fresh [`evaluate`] (`a[b]` with `b='a[b]'`),
    /// whose own depth starts at 0, so only this count bounds that recursion.
    static ACTIVE: Cell<usize> = const { Cell::new(0) };
}

/// One running evaluation, counted in [`ACTIVE`] until dropped.
struct Active;

impl Active {
    fn enter(text: &str) -> Result<Active, ArithError> {
        ACTIVE.with(|active| {
            if active.get() > MAX_DEPTH {
                return Err(ArithError::TooDeep(text.trim().to_string()));
            }
            active.set(active.get() + 1);
            Ok(Active)
        })
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE.with(|active| active.set(active.get() - 1));
    }
}

/// Parses an expression; `None` when it is empty (only blanks).
pub fn parse(text: &str) -> Result<Option<Expr>, ArithError> {
    let tokens = tokenize(text)?;
    if tokens.is_empty() {
        return Ok(None);
    }
    let mut parser = Parser {
        text,
        tokens,
        pos: 0,
        depth: 0,
    };
    let expr = parser.comma()?;
    match parser.tokens.get(parser.pos) {
        None => Ok(Some(expr)),
        Some(_) => Err(parser.error("invalid arithmetic operator")),
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Num(i64),
    Name(String),
    /// `[…]` right after a name: the subscript text.
    Subscript(String),
    Op(&'static str),
}

const OPS: [&str; 39] = [
    "<<=", ">>=", "**", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=",
    "*=", "/=", "%=", "&=", "^=", "|=", "+", "-", "*", "/", "%", "<", ">", "!", "~", "&", "^", "|",
    "?", ":", "=", ",", "(", ")",
];

/// Tokens with the byte offset each starts at (for the error's "error token").
fn tokenize(text: &str) -> Result<Vec<(Tok, usize)>, ArithError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'#') {
                i += 1;
            }
            if i < bytes.len() && matches!(bytes[i], b'@' | b'_') {
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || b"@_".contains(&bytes[i]))
                {
                    i += 1;
                }
            }
            let literal = &text[start..i];
            let value = number(literal).ok_or_else(|| ArithError::BadNumber {
                expr: text.trim().to_string(),
                token: literal.to_string(),
            })?;
            tokens.push((Tok::Num(value), start));
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let start = i;
            if c == b'$' {
                i += 1;
            }
            let name_start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            if i == name_start {
                return Err(syntax(text, "operand expected", &text[start..]));
            }
            tokens.push((Tok::Name(text[name_start..i].to_string()), start));
            if bytes.get(i) == Some(&b'[') {
                let open = i;
                let mut depth = 0;
                let mut end = None;
                for (offset, b) in bytes[open..].iter().enumerate() {
                    match b {
                        b'[' => depth += 1,
                        b']' => {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(open + offset);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let Some(end) = end else {
                    return Err(syntax(text, "missing `]'", &text[open..]));
                };
                tokens.push((Tok::Subscript(text[open + 1..end].to_string()), open));
                i = end + 1;
            }
        } else if let Some(op) = OPS.iter().find(|op| text[i..].starts_with(**op)) {
            tokens.push((Tok::Op(op), i));
            i += op.len();
        } else {
            return Err(syntax(text, "operand expected", &text[i..]));
        }
    }
    Ok(tokens)
}

/// A numeric literal: decimal, `0x` hex, leading-`0` octal, or `BASE#DIGITS` (bases 2–64,
/// digits `0-9a-zA-Z@_`, letters case-blind up to base 36).
fn number(literal: &str) -> Option<i64> {
    let (base, digits) = if let Some((base, digits)) = literal.split_once('#') {
        (
            base.parse::<u32>().ok().filter(|b| (2..=64).contains(b))?,
            digits,
        )
    } else if let Some(hex) = literal
        .strip_prefix("0x")
        .or_else(|| literal.strip_prefix("0X"))
    {
        (16, hex)
    } else if literal.len() > 1 && literal.starts_with('0') {
        (8, &literal[1..])
    } else {
        (10, literal)
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i64 = 0;
    for c in digits.chars() {
        let digit = match c {
            '0'..='9' => c as u32 - '0' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 10,
            'A'..='Z' if base <= 36 => c as u32 - 'A' as u32 + 10,
            'A'..='Z' => c as u32 - 'A' as u32 + 36,
            '@' => 62,
            '_' => 63,
            _ => return None,
        };
        if digit >= base {
            return None;
        }
        value = value
            .wrapping_mul(i64::from(base))
            .wrapping_add(i64::from(digit));
    }
    Some(value)
}

fn syntax(text: &str, what: &'static str, token: &str) -> ArithError {
    ArithError::Syntax {
        expr: text.trim().to_string(),
        what,
        token: token.trim().to_string(),
    }
}

/// How deep an expression's tree may be — nested parentheses, unary operators and chains of
/// binary ones all count — so that parsing and evaluating, both recursive, stay within a
/// small stack.
const MAX_NESTING: usize = 128;

struct Parser<'a> {
    text: &'a str,
    tokens: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos).map(|(t, _)| t)
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.peek() {
            Some(Tok::Op(op)) => Some(op),
            _ => None,
        }
    }

    fn error(&self, what: &'static str) -> ArithError {
        let rest = self
            .tokens
            .get(self.pos)
            .map_or("", |(_, at)| &self.text[*at..]);
        syntax(self.text, what, rest)
    }

    fn expect(&mut self, op: &str) -> Result<(), ArithError> {
        if self.peek_op() == Some(op) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(if op == ")" {
                "missing `)'"
            } else {
                "`:' expected for conditional expression"
            }))
        }
    }

    fn comma(&mut self) -> Result<Expr, ArithError> {
        let mut left = self.assignment()?;
        let outer = self.depth;
        while self.peek_op() == Some(",") {
            self.pos += 1;
            self.depth += 1;
            if self.depth > MAX_NESTING {
                return Err(self.error("expression nested too deeply"));
            }
            let right = self.assignment()?;
            left = Expr::Comma(Box::new(left), Box::new(right));
        }
        self.depth = outer;
        Ok(left)
    }

    fn assignment(&mut self) -> Result<Expr, ArithError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error("expression nested too deeply"));
        }
        let result = self.assignment_inner();
        self.depth -= 1;
        result
    }

    fn assignment_inner(&mut self) -> Result<Expr, ArithError> {
        let start = self.pos;
        if let Some(place) = self.place()? {
            let op = match self.peek_op() {
                Some("=") => Some(None),
                Some(op) => compound_assignment(op).map(Some),
                None => None,
            };
            if let Some(op) = op {
                self.pos += 1;
                let value = self.assignment()?;
                return Ok(Expr::Assign(place, op, Box::new(value)));
            }
            self.pos = start;
        }
        self.conditional()
    }

    /// A name with its optional subscript, consumed; `None` (nothing consumed) otherwise.
    fn place(&mut self) -> Result<Option<Place>, ArithError> {
        let Some(Tok::Name(name)) = self.peek().cloned() else {
            return Ok(None);
        };
        self.pos += 1;
        let subscript = match self.peek() {
            Some(Tok::Subscript(s)) => {
                let s = s.clone();
                self.pos += 1;
                Some(s)
            }
            _ => None,
        };
        Ok(Some(Place { name, subscript }))
    }

    fn conditional(&mut self) -> Result<Expr, ArithError> {
        let condition = self.binary(0)?;
        if self.peek_op() != Some("?") {
            return Ok(condition);
        }
        self.pos += 1;
        let then = self.assignment()?;
        self.expect(":")?;
        let otherwise = self.assignment()?;
        Ok(Expr::Conditional(
            Box::new(condition),
            Box::new(then),
            Box::new(otherwise),
        ))
    }

    /// Binary operators by precedence climbing: operands are parsed once, not once per level.
    fn binary(&mut self, min: usize) -> Result<Expr, ArithError> {
        let mut left = self.power()?;
        let outer = self.depth;
        while let Some((op, level)) = self
            .peek_op()
            .and_then(|op| binary_level(op).map(|level| (op, level)))
            .filter(|(_, level)| *level >= min)
        {
            self.pos += 1;
            self.depth += 1;
            if self.depth > MAX_NESTING {
                return Err(self.error("expression nested too deeply"));
            }
            let right = self.binary(level + 1)?;
            left = match op {
                "||" => Expr::Or(Box::new(left), Box::new(right)),
                "&&" => Expr::And(Box::new(left), Box::new(right)),
                _ => Expr::Binary(binary_op(op), Box::new(left), Box::new(right)),
            };
        }
        self.depth = outer;
        Ok(left)
    }

    /// `**`, right-associative, above the multiplicative operators and below the unary ones.
    fn power(&mut self) -> Result<Expr, ArithError> {
        let base = self.unary()?;
        if self.peek_op() != Some("**") {
            return Ok(base);
        }
        self.pos += 1;
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error("expression nested too deeply"));
        }
        let exponent = self.power();
        self.depth -= 1;
        Ok(Expr::Binary(
            Binary::Pow,
            Box::new(base),
            Box::new(exponent?),
        ))
    }

    fn unary(&mut self) -> Result<Expr, ArithError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error("expression nested too deeply"));
        }
        let result = self.unary_inner();
        self.depth -= 1;
        result
    }

    fn unary_inner(&mut self) -> Result<Expr, ArithError> {
        match self.peek().cloned() {
            None => Err(syntax(self.text, "operand expected", "")),
            Some(Tok::Op(op @ ("++" | "--"))) => {
                self.pos += 1;
                let Some(place) = self.place()? else {
                    return Err(self.error("operand expected"));
                };
                Ok(Expr::Step {
                    place,
                    delta: if op == "++" { 1 } else { -1 },
                    prefix: true,
                })
            }
            Some(Tok::Op(op @ ("-" | "+" | "!" | "~"))) => {
                self.pos += 1;
                let operand = Box::new(self.unary()?);
                Ok(match op {
                    "-" => Expr::Negate(operand),
                    "+" => *operand,
                    "!" => Expr::Not(operand),
                    _ => Expr::Complement(operand),
                })
            }
            Some(Tok::Op("(")) => {
                self.pos += 1;
                let inner = self.comma()?;
                self.expect(")")?;
                Ok(inner)
            }
            Some(Tok::Num(n)) => {
                self.pos += 1;
                Ok(Expr::Number(n))
            }
            Some(Tok::Name(_)) => {
                let Some(place) = self.place()? else {
                    return Err(self.error("operand expected"));
                };
                match self.peek_op() {
                    Some(op @ ("++" | "--")) => {
                        self.pos += 1;
                        Ok(Expr::Step {
                            place,
                            delta: if op == "++" { 1 } else { -1 },
                            prefix: false,
                        })
                    }
                    _ => Ok(Expr::Read(place)),
                }
            }
            Some(_) => Err(self.error("operand expected")),
        }
    }
}

/// A binary operator's precedence, 0 (`||`) to 9 (`* / %`); `**` is parsed apart.
fn binary_level(op: &str) -> Option<usize> {
    Some(match op {
        "||" => 0,
        "&&" => 1,
        "|" => 2,
        "^" => 3,
        "&" => 4,
        "==" | "!=" => 5,
        "<" | ">" | "<=" | ">=" => 6,
        "<<" | ">>" => 7,
        "+" | "-" => 8,
        "*" | "/" | "%" => 9,
        _ => return None,
    })
}

fn binary_op(op: &str) -> Binary {
    match op {
        "*" => Binary::Mul,
        "/" => Binary::Div,
        "%" => Binary::Rem,
        "+" => Binary::Add,
        "-" => Binary::Sub,
        "<<" => Binary::Shl,
        ">>" => Binary::Shr,
        "<" => Binary::Lt,
        ">" => Binary::Gt,
        "<=" => Binary::Le,
        ">=" => Binary::Ge,
        "==" => Binary::Eq,
        "!=" => Binary::Ne,
        "&" => Binary::BitAnd,
        "^" => Binary::BitXor,
        "|" => Binary::BitOr,
        _ => Binary::Pow,
    }
}

fn compound_assignment(op: &str) -> Option<Binary> {
    let base = op.strip_suffix('=')?;
    matches!(
        base,
        "*" | "/" | "%" | "+" | "-" | "<<" | ">>" | "&" | "^" | "|"
    )
    .then(|| binary_op(base))
}

struct Evaluator<'a> {
    text: &'a str,
    vars: &'a mut dyn Variables,
    depth: usize,
}

impl Evaluator<'_> {
    fn eval(&mut self, expr: &Expr) -> Result<i64, ArithError> {
        Ok(match expr {
            Expr::Number(n) => *n,
            Expr::Read(place) => self.read(place)?,
            Expr::Negate(e) => self.eval(e)?.wrapping_neg(),
            Expr::Not(e) => i64::from(self.eval(e)? == 0),
            Expr::Complement(e) => !self.eval(e)?,
            Expr::Binary(op, left, right) => {
                let left = self.eval(left)?;
                let right = self.eval(right)?;
                self.apply(*op, left, right)?
            }
            Expr::And(left, right) => i64::from(self.eval(left)? != 0 && self.eval(right)? != 0),
            Expr::Or(left, right) => i64::from(self.eval(left)? != 0 || self.eval(right)? != 0),
            Expr::Conditional(condition, then, otherwise) => {
                if self.eval(condition)? != 0 {
                    self.eval(then)?
                } else {
                    self.eval(otherwise)?
                }
            }
            Expr::Assign(place, op, value) => {
                let value = self.eval(value)?;
                let value = match op {
                    None => value,
                    Some(op) => {
                        let current = self.read(place)?;
                        self.apply(*op, current, value)?
                    }
                };
                self.vars
                    .set(&place.name, place.subscript.as_deref(), value)?;
                value
            }
            Expr::Step {
                place,
                delta,
                prefix,
            } => {
                let old = self.read(place)?;
                let new = old.wrapping_add(*delta);
                self.vars
                    .set(&place.name, place.subscript.as_deref(), new)?;
                if *prefix { new } else { old }
            }
            Expr::Comma(left, right) => {
                self.eval(left)?;
                self.eval(right)?
            }
        })
    }

    /// A variable's value: unset or empty is 0, a number is itself, anything else is
    /// evaluated as an expression of its own.
    fn read(&mut self, place: &Place) -> Result<i64, ArithError> {
        let value = self.vars.get(&place.name, place.subscript.as_deref())?;
        let value = value.as_deref().unwrap_or("").trim();
        if value.is_empty() {
            return Ok(0);
        }
        if (!value.starts_with('0') || value == "0")
            && let Ok(n) = value.parse::<i64>()
        {
            return Ok(n);
        }
        evaluate_at(value, self.vars, self.depth + 1)
    }

    fn apply(&self, op: Binary, left: i64, right: i64) -> Result<i64, ArithError> {
        Ok(match op {
            Binary::Mul => left.wrapping_mul(right),
            Binary::Div | Binary::Rem if right == 0 => {
                return Err(ArithError::DivisionByZero {
                    expr: self.text.trim().to_string(),
                    token: right.to_string(),
                });
            }
            Binary::Div => left.wrapping_div(right),
            Binary::Rem => left.wrapping_rem(right),
            Binary::Add => left.wrapping_add(right),
            Binary::Sub => left.wrapping_sub(right),
            Binary::Shl => left.wrapping_shl((right & 63) as u32),
            Binary::Shr => left.wrapping_shr((right & 63) as u32),
            Binary::Lt => i64::from(left < right),
            Binary::Gt => i64::from(left > right),
            Binary::Le => i64::from(left <= right),
            Binary::Ge => i64::from(left >= right),
            Binary::Eq => i64::from(left == right),
            Binary::Ne => i64::from(left != right),
            Binary::BitAnd => left & right,
            Binary::BitXor => left ^ right,
            Binary::BitOr => left | right,
            Binary::Pow if right < 0 => {
                return Err(ArithError::NegativeExponent {
                    expr: self.text.trim().to_string(),
                    token: right.to_string(),
                });
            }
            Binary::Pow => {
                let mut result: i64 = 1;
                let mut base = left;
                let mut exponent = right;
                while exponent > 0 {
                    if exponent & 1 == 1 {
                        result = result.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    exponent >>= 1;
                }
                result
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[derive(Default)]
    struct Vars(BTreeMap<String, String>);

    impl Variables for Vars {
        fn get(
            &mut self,
            name: &str,
            subscript: Option<&str>,
        ) -> Result<Option<String>, ArithError> {
            let key = match subscript {
                Some(s) => format!("{name}[{}]", evaluate(s, self)?),
                None => name.to_string(),
            };
            Ok(self.0.get(&key).cloned())
        }

        fn set(
            &mut self,
            name: &str,
            subscript: Option<&str>,
            value: i64,
        ) -> Result<(), ArithError> {
            let key = match subscript {
                Some(s) => format!("{name}[{}]", evaluate(s, self)?),
                None => name.to_string(),
            };
            self.0.insert(key, value.to_string());
            Ok(())
        }
    }

    /// Each expected value printed by bash 5.2's `echo $((EXPR))`.
    #[test]
    fn operators_precedence_and_side_effects_match_bash() {
        let cases = [
            ("1 + 2 * 3", 7),
            ("(1 + 2) * 3", 9),
            ("2 ** 10", 1024),
            ("2 ** 3 ** 2", 512),
            ("-2 ** 2", 4),
            ("7 % 3 == 1 && !0", 1),
            ("5 > 3 ? 10 : 20", 10),
            ("1 << 4", 16),
            ("~5", -6),
            ("7 & 3 | 8 ^ 1", 11),
            ("x = 3, x += 2, x++, x", 6),
            ("0x1F + 010 + 2#101", 44),
            ("y = 1 + 2, y * 2", 6),
            ("0 && (z = 5), z", 0),
            ("1 || (z = 5), z", 0),
            ("a[1] = 4, a[2] = 5, a[1] + a[2]", 9),
            ("i = 5, i--, --i", 3),
            ("", 0),
            ("64#_", 63),
        ];
        for (expr, want) in cases {
            let mut vars = Vars::default();
            assert_eq!(evaluate(expr, &mut vars), Ok(want), "{expr}");
        }
        let mut vars = Vars::default();
        vars.0.insert("e".into(), "1+2".into());
        assert_eq!(evaluate("e * 2", &mut vars), Ok(6));
        vars.0.insert("loop".into(), "loop".into());
        assert!(matches!(
            evaluate("loop", &mut vars),
            Err(ArithError::TooDeep(_))
        ));
    }

    #[test]
    fn errors_are_bash_errors() {
        let mut vars = Vars::default();
        let cases = [
            ("1 / 0", "1 / 0: division by 0 (error token is \"0\")"),
            (
                "2 ** -1",
                "2 ** -1: exponent less than 0 (error token is \"-1\")",
            ),
            ("08", "08: value too great for base (error token is \"08\")"),
        ];
        for (expr, want) in cases {
            assert_eq!(evaluate(expr, &mut vars).unwrap_err().to_string(), want);
        }
        for bad in ["1 +", "(1", "1 ? 2", "3 = 4", "@", "a[1", "1 2"] {
            assert!(
                matches!(evaluate(bad, &mut vars), Err(ArithError::Syntax { .. })),
                "{bad}"
            );
        }
        for deep in [
            "(".repeat(10_000),
            "1+".repeat(10_000) + "1",
            "-".repeat(10_000) + "1",
            "x=".repeat(10_000) + "1",
            "1,".repeat(10_000) + "1",
            "2**".repeat(10_000) + "1",
        ] {
            assert!(evaluate(&deep, &mut vars).is_err());
        }
        assert_eq!(evaluate(&("1+".repeat(100) + "1"), &mut vars), Ok(101));
    }
}
