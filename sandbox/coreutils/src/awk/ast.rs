//! A parsed awk program, as [`super::parse`] leaves it for [`super::eval`]: every operator,
//! builtin function and special variable is an enum variant chosen by the parser, every
//! variable a numbered slot (global, or local to a function), every user function call an
//! index, and every regular-expression literal is compiled — nothing is looked up by name at
//! run time.

use std::rc::Rc;

use regex::Regex;

use crate::search::translate_posix;

/// `+ - * / % ^`, and the arithmetic of `+= -= *= /= %= ^=`.
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

/// The builtin functions of POSIX awk (and mawk's `fflush`, `systime`, `strftime`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    Length,
    Substr,
    Index,
    Split,
    Sub,
    Gsub,
    Match,
    Sprintf,
    ToLower,
    ToUpper,
    Int,
    Sqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Atan2,
    Rand,
    Srand,
    System,
    Close,
    Fflush,
    Systime,
    Strftime,
}

impl Builtin {
    const ALL: [(Builtin, &'static str); 24] = [
        (Builtin::Length, "length"),
        (Builtin::Substr, "substr"),
        (Builtin::Index, "index"),
        (Builtin::Split, "split"),
        (Builtin::Sub, "sub"),
        (Builtin::Gsub, "gsub"),
        (Builtin::Match, "match"),
        (Builtin::Sprintf, "sprintf"),
        (Builtin::ToLower, "tolower"),
        (Builtin::ToUpper, "toupper"),
        (Builtin::Int, "int"),
        (Builtin::Sqrt, "sqrt"),
        (Builtin::Exp, "exp"),
        (Builtin::Log, "log"),
        (Builtin::Sin, "sin"),
        (Builtin::Cos, "cos"),
        (Builtin::Atan2, "atan2"),
        (Builtin::Rand, "rand"),
        (Builtin::Srand, "srand"),
        (Builtin::System, "system"),
        (Builtin::Close, "close"),
        (Builtin::Fflush, "fflush"),
        (Builtin::Systime, "systime"),
        (Builtin::Strftime, "strftime"),
    ];

    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(b, _)| *b)
    }

    /// How many arguments a call may pass: at least, at most.
    pub fn arity(self) -> (usize, usize) {
        match self {
            Builtin::Length | Builtin::Fflush => (0, 1),
            Builtin::Substr | Builtin::Split | Builtin::Sub | Builtin::Gsub => (2, 3),
            Builtin::Index | Builtin::Match | Builtin::Atan2 => (2, 2),
            Builtin::Sprintf => (1, usize::MAX),
            Builtin::Rand | Builtin::Systime => (0, 0),
            Builtin::Srand => (0, 1),
            Builtin::Strftime => (0, 3),
            Builtin::ToLower
            | Builtin::ToUpper
            | Builtin::Int
            | Builtin::Sqrt
            | Builtin::Exp
            | Builtin::Log
            | Builtin::Sin
            | Builtin::Cos
            | Builtin::System
            | Builtin::Close => (1, 1),
        }
    }
}

/// Global slots the machine itself reads and writes, in this order from 0.
pub const FS: u32 = 0;
pub const OFS: u32 = 1;
pub const ORS: u32 = 2;
pub const RS: u32 = 3;
pub const SUBSEP: u32 = 4;
pub const CONVFMT: u32 = 5;
pub const OFMT: u32 = 6;
pub const RSTART: u32 = 7;
pub const RLENGTH: u32 = 8;
pub const FILENAME: u32 = 9;
pub const ARGC: u32 = 10;
pub const ENVIRON: u32 = 11;
pub const ARGV: u32 = 12;

/// The special globals' names, by slot; the last two are arrays.
pub const SPECIAL_GLOBALS: [&str; 13] = [
    "FS", "OFS", "ORS", "RS", "SUBSEP", "CONVFMT", "OFMT", "RSTART", "RLENGTH", "FILENAME", "ARGC",
    "ENVIRON", "ARGV",
];

/// Variables that are the machine's own state rather than a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Nr,
    Fnr,
    Nf,
}

/// Where a variable lives: a global slot, a slot of the running function's frame, or the
/// machine's own counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Global(u32),
    Local(u32),
    Special(Special),
}

/// Where an array lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayRef {
    Global(u32),
    Local(u32),
}

/// Where `getline` reads from.
#[derive(Debug, Clone)]
pub enum Source {
    /// The main input (the next record of the current file, or of the next).
    Main,
    /// `getline < file`.
    File(Box<Expr>),
    /// `cmd | getline`.
    Command(Box<Expr>),
}

#[derive(Debug, Clone)]
pub enum Expr {
    Num(f64),
    Str(String),
    /// A regular-expression literal, matched against `$0` where it stands alone. Shared, not
    /// cloned: a cloned `Regex` starts with empty match caches.
    Regex(Rc<Regex>),
    Field(Box<Expr>),
    Var(Slot),
    /// `a[i]`, or `a[i, j]` (the subscripts joined by `SUBSEP`).
    Index(ArrayRef, Vec<Expr>),
    /// `(i, j) in a`.
    In(Vec<Expr>, ArrayRef),
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
    /// Unary `+`: the operand as a number.
    Plus(Box<Expr>),
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
    /// A user function, by index into [`Program::functions`].
    User(u32, Vec<Expr>),
    Getline {
        source: Source,
        target: Option<Box<Expr>>,
    },
}

impl Expr {
    /// Whether the expression can be assigned to: a variable, an element or a field.
    pub fn is_lvalue(&self) -> bool {
        matches!(self, Expr::Var(_) | Expr::Field(_) | Expr::Index(..))
    }
}

/// Where `print` and `printf` write.
#[derive(Debug, Clone)]
pub struct Output {
    pub mode: OutputMode,
    pub target: Expr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// `> file`: truncated when first opened, then appended to.
    Truncate,
    /// `>> file`.
    Append,
    /// `| "command"`.
    Pipe,
}

#[derive(Debug, Clone)]
pub struct Stmt {
    /// The program line the statement starts on, for run-time errors.
    pub line: usize,
    pub kind: StmtKind,
}

#[derive(Debug, Clone)]
pub enum StmtKind {
    Print(Vec<Expr>, Option<Output>),
    Printf(Vec<Expr>, Option<Output>),
    Eval(Expr),
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    While(Expr, Box<Stmt>),
    DoWhile(Box<Stmt>, Expr),
    For(Option<Expr>, Option<Expr>, Option<Expr>, Box<Stmt>),
    ForIn(Slot, ArrayRef, Box<Stmt>),
    Block(Vec<Stmt>),
    /// `delete a[i]`, or `delete a` (no subscripts).
    Delete(ArrayRef, Option<Vec<Expr>>),
    Next,
    NextFile,
    Exit(Option<Expr>),
    Return(Option<Expr>),
    Break,
    Continue,
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

pub struct Function {
    pub name: String,
    /// Parameters (the extra ones are awk's local variables).
    pub params: usize,
    /// Which parameters are arrays (passed by reference).
    pub arrays: Vec<bool>,
    pub body: Vec<Stmt>,
}

pub struct Program {
    pub rules: Vec<Rule>,
    pub functions: Vec<Function>,
    /// Every global's name and whether it is an array, by slot (the special ones first).
    pub globals: Vec<(String, bool)>,
}

/// A POSIX extended regular expression with awk's escapes (`\t`, `\n`, `\/`, `\"`, octal),
/// translated like `grep -E`'s.
pub fn compile(pattern: &str) -> Result<Regex, String> {
    let translated = translate_posix(&awk_escapes(pattern), true)?;
    Regex::new(&translated).map_err(|_| format!("regular expression compile failed: {pattern}"))
}

/// Resolves the escapes awk gives a regular expression (inside brackets too) that POSIX's
/// grammar leaves to it; every other `\c` is left for the translation.
fn awk_escapes(pattern: &str) -> String {
    if !pattern.contains('\\') {
        return pattern.to_string();
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' || i + 1 == chars.len() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let literal = match chars[i + 1] {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            'a' => Some('\x07'),
            '/' => Some('/'),
            '"' => Some('"'),
            _ => None,
        };
        match literal {
            Some(c) => {
                out.push(c);
                i += 2;
            }
            None => {
                out.push('\\');
                out.push(chars[i + 1]);
                i += 2;
            }
        }
    }
    out
}
