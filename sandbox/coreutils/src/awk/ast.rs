//! A parsed awk program, as [`super::parse`] leaves it for [`super::eval`]: every operator,
//! builtin function and special variable is an enum variant chosen by the parser, and every
//! regular-expression literal is compiled, so nothing is looked up by name at run time.

use std::rc::Rc;

use regex::Regex;

use crate::search::translate_posix;

/// `+ - * / % ^`, and the arithmetic of `+= -= *= /= %=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Pow,
}

/// `== != < <= > >=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// The builtin functions the sandbox's awk has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    Length,
    Substr,
    Index,
    ToLower,
    ToUpper,
    Int,
    Sprintf,
    Sub,
    Gsub,
}

impl Builtin {
    pub fn from_name(name: &str) -> Option<Builtin> {
        Some(match name {
            "length" => Builtin::Length,
            "substr" => Builtin::Substr,
            "index" => Builtin::Index,
            "tolower" => Builtin::ToLower,
            "toupper" => Builtin::ToUpper,
            "int" => Builtin::Int,
            "sprintf" => Builtin::Sprintf,
            "sub" => Builtin::Sub,
            "gsub" => Builtin::Gsub,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Builtin::Length => "length",
            Builtin::Substr => "substr",
            Builtin::Index => "index",
            Builtin::ToLower => "tolower",
            Builtin::ToUpper => "toupper",
            Builtin::Int => "int",
            Builtin::Sprintf => "sprintf",
            Builtin::Sub => "sub",
            Builtin::Gsub => "gsub",
        }
    }

    /// How many arguments a call may pass: at least, at most.
    pub fn arity(self) -> (usize, usize) {
        match self {
            Builtin::Length => (0, 1),
            Builtin::Substr => (2, 3),
            Builtin::Index => (2, 2),
            Builtin::ToLower | Builtin::ToUpper | Builtin::Int => (1, 1),
            Builtin::Sprintf => (1, usize::MAX),
            Builtin::Sub | Builtin::Gsub => (2, 3),
        }
    }
}

/// A variable: the record counters and `NF` are the machine's own state, the rest live in its
/// table by name (`FS`, `OFS` and `ORS` among them, read where they are used).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Var {
    /// `NR` and `FNR`: one count, as the sandbox's awk reads its inputs as one stream.
    RecordNumber,
    /// `NF`.
    FieldCount,
    Named(String),
}

impl Var {
    pub fn from_name(name: &str) -> Var {
        match name {
            "NR" | "FNR" => Var::RecordNumber,
            "NF" => Var::FieldCount,
            _ => Var::Named(name.to_string()),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Expr {
    Num(f64),
    Str(String),
    /// Shared, not cloned: a cloned `Regex` starts with empty match caches, which a search
    /// then has to build again.
    Regex(Rc<Regex>),
    Field(Box<Expr>),
    Var(Var),
    /// `target = value`, or with `op`, `target op= value`.
    Assign {
        target: Box<Expr>,
        op: Option<Arith>,
        value: Box<Expr>,
    },
    Step {
        target: Box<Expr>,
        delta: f64,
        prefix: bool,
    },
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Arith(Arith, Box<Expr>, Box<Expr>),
    Compare(Cmp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Concat(Box<Expr>, Box<Expr>),
    Match {
        text: Box<Expr>,
        pattern: Box<Expr>,
        negate: bool,
    },
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Call(Builtin, Vec<Expr>),
}

impl Expr {
    /// Whether the expression can be assigned to: a variable or a field.
    pub fn is_lvalue(&self) -> bool {
        matches!(self, Expr::Var(_) | Expr::Field(_))
    }
}

#[derive(Debug, Clone)]
pub enum Stmt {
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
pub struct Redirect {
    pub target: Expr,
    pub append: bool,
}

pub enum Pattern {
    Begin,
    End,
    All,
    When(Expr),
    Range(Expr, Expr),
}

pub struct Rule {
    pub pattern: Pattern,
    pub action: Option<Vec<Stmt>>,
}

/// A POSIX extended regular expression, translated like `grep -E`'s.
pub fn compile(pattern: &str) -> Result<Regex, String> {
    let translated = translate_posix(pattern, true)?;
    Regex::new(&translated).map_err(|_| format!("regular expression compile failed: {pattern}"))
}
