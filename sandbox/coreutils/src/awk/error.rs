//! What can go wrong in awk, as types: a [`SyntaxError`] is found before anything runs and
//! names the line and column of the program; an [`AwkError`] stops a running program and names
//! the program line it was on. Each kind is a variant, so tests match on what went wrong
//! rather than on wording.

use std::fmt;

/// Where a token starts: 1-based line and column, the column counted in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

/// A mistake in the program text, found before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub pos: Pos,
    pub kind: SyntaxErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyntaxErrorKind {
    UnexpectedChar(char),
    RunawayString,
    RunawayRegex,
    BadNumber(String),
    /// A token other than the one the grammar needs here (named as written).
    Expected(&'static str),
    /// A token that cannot stand here (described).
    Unexpected(String),
    UnexpectedEnd,
    /// `BEGIN` or `END` without `{ … }`.
    NeedsAction,
    /// A construct of awk (or of gawk) that the sandbox's awk does not have.
    NotSupported(String),
    UndefinedFunction(String),
    Arity {
        function: String,
        given: usize,
        least: usize,
        most: usize,
    },
    /// The target of `sub`/`gsub`, `getline var`, `split`'s array and the like.
    NotAssignable(String),
    Regex(String),
    /// A name used both as an array and as a scalar.
    ArrayScalarClash(String),
    FunctionRedefined(String),
    /// A function's parameter named like a function, or listed twice.
    BadParameter(String),
    /// `break`, `continue`, `next`, `return` where they mean nothing.
    OutOfPlace(&'static str),
    /// Parentheses or blocks nested past the parser's limit.
    TooDeep,
}

impl SyntaxError {
    pub fn new(pos: Pos, kind: SyntaxErrorKind) -> Self {
        SyntaxError { pos, kind }
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Pos { line, column } = self.pos;
        write!(f, "line {line}, column {column}: ")?;
        match &self.kind {
            SyntaxErrorKind::UnexpectedChar(c) => {
                write!(f, "syntax error: unexpected character '{c}'")
            }
            SyntaxErrorKind::RunawayString => write!(f, "runaway string constant"),
            SyntaxErrorKind::RunawayRegex => write!(f, "runaway regular expression"),
            SyntaxErrorKind::BadNumber(text) => write!(f, "bad number {text}"),
            SyntaxErrorKind::Expected(what) => write!(f, "syntax error: expected `{what}'"),
            SyntaxErrorKind::Unexpected(what) => write!(f, "syntax error at {what}"),
            SyntaxErrorKind::UnexpectedEnd => write!(f, "syntax error: unexpected end of program"),
            SyntaxErrorKind::NeedsAction => {
                write!(f, "syntax error: BEGIN and END need an action")
            }
            SyntaxErrorKind::NotSupported(what) => {
                write!(f, "{what}: not supported in this sandbox")
            }
            SyntaxErrorKind::UndefinedFunction(name) => {
                write!(f, "function `{name}' is not defined")
            }
            SyntaxErrorKind::Arity {
                function,
                given,
                least,
                most,
            } => {
                if given < least {
                    write!(f, "{function}: not enough arguments ({given} for {least})")
                } else {
                    write!(f, "{function}: too many arguments ({given} for {most})")
                }
            }
            SyntaxErrorKind::NotAssignable(what) => {
                write!(f, "{what} must be a variable, an array element or a field")
            }
            SyntaxErrorKind::Regex(message) => write!(f, "{message}"),
            SyntaxErrorKind::ArrayScalarClash(name) => {
                write!(f, "`{name}' is used both as an array and as a scalar")
            }
            SyntaxErrorKind::FunctionRedefined(name) => {
                write!(f, "function `{name}' is defined twice")
            }
            SyntaxErrorKind::BadParameter(name) => write!(f, "bad parameter name `{name}'"),
            SyntaxErrorKind::OutOfPlace(word) => write!(f, "`{word}' used outside {}", {
                match *word {
                    "return" => "a function",
                    "next" | "nextfile" => "a rule",
                    _ => "a loop",
                }
            }),
            SyntaxErrorKind::TooDeep => write!(f, "program nested too deeply"),
        }
    }
}

/// Why a running program stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum AwkErrorKind {
    /// The statement budget (sandbox limit) is used up.
    Steps(u64),
    /// The text-work budget (sandbox limit) is used up; in MiB.
    Work(u64),
    /// A string would grow past the cap; in MiB.
    StringSize(usize),
    /// Arrays would hold more elements than the cap.
    Elements(usize),
    /// Output grew past the command's output cap.
    Output,
    DivisionByZero,
    /// `$n` with a negative or too large `n`.
    FieldIndex(f64),
    Regex(String),
    Format(String),
    /// A scalar where an array is needed or the other way round (a function's parameter).
    ArrayScalar(String),
    /// User functions calling each other more deeply than the limit.
    CallDepth(usize),
    /// Expressions, statements and calls nested more deeply than the limit.
    Nesting(usize),
    NotSupported(String),
    /// The caller's limits stopped a command awk would run (its message).
    Limit(String),
    /// A file or command could not be read or written.
    Io(String),
}

/// A run-time error, with the program line of the statement that met it.
#[derive(Debug, Clone, PartialEq)]
pub struct AwkError {
    pub kind: AwkErrorKind,
    pub line: usize,
}

impl From<AwkErrorKind> for AwkError {
    fn from(kind: AwkErrorKind) -> Self {
        AwkError { kind, line: 0 }
    }
}

impl fmt::Display for AwkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: ", self.line)?;
        }
        match &self.kind {
            AwkErrorKind::Steps(n) => write!(f, "program stopped after {n} steps (sandbox limit)"),
            AwkErrorKind::Work(mib) => write!(
                f,
                "program stopped after moving {mib} MiB of text (sandbox limit)"
            ),
            AwkErrorKind::StringSize(mib) => write!(f, "string grew past {mib} MiB"),
            AwkErrorKind::Elements(n) => {
                write!(f, "arrays grew past {n} elements (sandbox limit)")
            }
            AwkErrorKind::Output => write!(f, "output limit exceeded"),
            AwkErrorKind::Limit(message) => f.write_str(message),
            AwkErrorKind::DivisionByZero => write!(f, "division by zero"),
            AwkErrorKind::FieldIndex(n) => write!(f, "field index {n} out of range"),
            AwkErrorKind::Regex(message) | AwkErrorKind::Format(message) => {
                write!(f, "{message}")
            }
            AwkErrorKind::ArrayScalar(message) => write!(f, "{message}"),
            AwkErrorKind::CallDepth(n) => {
                write!(f, "function calls nested deeper than {n} (sandbox limit)")
            }
            AwkErrorKind::Nesting(n) => write!(
                f,
                "expressions and calls nested deeper than {n} (sandbox limit)"
            ),
            AwkErrorKind::NotSupported(what) => write!(f, "{what}: not supported in this sandbox"),
            AwkErrorKind::Io(message) => write!(f, "{message}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_where_they_are() {
        let error = SyntaxError::new(
            Pos { line: 2, column: 7 },
            SyntaxErrorKind::NotSupported("function `gensub'".into()),
        );
        assert_eq!(
            error.to_string(),
            "line 2, column 7: function `gensub': not supported in this sandbox"
        );
        let error = AwkError {
            kind: AwkErrorKind::DivisionByZero,
            line: 3,
        };
        assert_eq!(error.to_string(), "line 3: division by zero");
    }
}
