//! The shell: parse a command line ([`parse`]), then run it ([`exec`], with `compound`
//! commands and `builtins`) against the sandbox's VFS with brace expansion ([`brace`]), word
//! expansion ([`expand`]), globbing ([`glob`], tether-vfs's) and arithmetic ([`arith`]).

pub mod arith;
pub mod ast;
pub mod brace;
mod builtins;
mod compound;
pub mod conditional;
pub mod exec;
pub mod expand;
pub mod parse;

pub use parse::{ParseError, parse};

pub use tether_coreutils::Input;
pub use tether_vfs::glob;
