//! jq's errors: a program that does not compile, and what a running one meets.

use std::fmt;

/// Why a jq program was not run.
#[derive(Debug, Clone, PartialEq)]
pub enum CompileError {
    /// What jq would say of it (`syntax error, unexpected …`).
    Syntax(String),
    /// A construct jq has and the sandbox does not (`def`, destructuring, a builtin).
    Unsupported(String),
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Syntax(message) => f.write_str(message),
            CompileError::Unsupported(what) => write!(f, "{what}: not supported in this sandbox"),
        }
    }
}

impl From<String> for CompileError {
    fn from(message: String) -> Self {
        CompileError::Syntax(message)
    }
}

impl From<&str> for CompileError {
    fn from(message: &str) -> Self {
        CompileError::Syntax(message.into())
    }
}

/// What stopped a running program.
#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    /// jq's own error, with its message — what `try … catch` catches and `error(v)` raises.
    Jq(String),
    /// A sandbox limit (values produced, nesting, sizes): not catchable, it ends the program.
    Limit(String),
}

impl RunError {
    /// `Ok` for what a catching construct (`try`, `?`, `//`, `isvalid`) may turn into its
    /// fallback — jq's errors, as `None`; a sandbox limit stays an error.
    pub fn caught<T>(result: Result<T, RunError>) -> Result<Option<T>, RunError> {
        match result {
            Ok(value) => Ok(Some(value)),
            Err(RunError::Jq(_)) => Ok(None),
            Err(limit @ RunError::Limit(_)) => Err(limit),
        }
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Jq(message) | RunError::Limit(message) => f.write_str(message),
        }
    }
}

impl From<String> for RunError {
    fn from(message: String) -> Self {
        RunError::Jq(message)
    }
}

impl From<&str> for RunError {
    fn from(message: &str) -> Self {
        RunError::Jq(message.into())
    }
}
