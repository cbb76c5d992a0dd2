//! The shell: parse a command line ([`parse`]), then run it ([`exec`], with `compound`
//! commands and `builtins`) against the sandbox's VFS with brace expansion ([`brace`]), word
//! expansion ([`expand`]), globbing ([`glob`], tether-vfs's) and arithmetic ([`arith`]).

pub mod arith;
mod assign;
pub mod ast;
pub mod brace;
mod builtins;
mod compound;
pub mod conditional;
mod declare;
pub mod exec;
pub mod expand;
mod getopts;
mod ifs;
mod names;
pub mod param;
mod parameter;
pub mod parse;
mod procsub;
mod read;
mod redirect;
mod state;
mod traps;
mod variables;
pub(crate) mod vars;

pub use parse::{ParseError, parse};
pub use state::ShellState;

pub use tether_coreutils::Input;
pub use tether_vfs::glob;
