//! `awk`: POSIX awk — patterns and actions, `BEGIN`/`END`, ranges, fields, associative arrays
//! (`a[i]`, `a[i,j]`, `in`, `delete`, `for (k in a)` in mawk's order), user functions (arrays
//! by reference), `getline` in all forms, `printf` as C does it, output to files and to
//! commands of the sandbox's own table, and every POSIX builtin. The program is parsed whole
//! before it runs: a construct the sandbox lacks is an error naming it, with its line and
//! column.
//!
//! Steps, a file each: [`lex`] cuts the program into tokens, [`parse`] (statements) and
//! [`parse_expr`] (expressions) build the [`ast`], resolving names through [`symbols`];
//! [`eval`] runs it, with records and I/O in [`io`], builtins in [`builtins`], commands in
//! [`command`], arrays in [`array`], values in [`value`], errors as types in [`error`].

mod array;
mod ast;
mod builtins;
mod command;
mod error;
mod eval;
mod expr;
mod io;
mod lex;
mod parse;
mod parse_expr;
mod symbols;
mod value;

use self::eval::Machine;
use super::{Ctx, usage_error};

const USAGE: &str = "usage: awk [-F fs] [-v var=value] [-f progfile | 'program'] [file ...]";

pub fn awk(ctx: &mut Ctx, args: &[String]) -> i32 {
    let mut assigned = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    let mut rest = args.iter();
    let mut operands = Vec::new();
    let mut fs = None;
    while let Some(arg) = rest.next() {
        let mut value_of = |inline: &str, option: &str| -> Result<String, String> {
            if inline.is_empty() {
                rest.next()
                    .cloned()
                    .ok_or_else(|| format!("awk: option requires an argument -- {option}"))
            } else {
                Ok(inline.to_string())
            }
        };
        let parsed = if arg == "--" {
            operands.extend(rest.by_ref().cloned());
            break;
        } else if let Some(inline) = arg.strip_prefix("-F") {
            value_of(inline, "F").map(|v| fs = Some(crate::print::unescape(&v)))
        } else if let Some(inline) = arg.strip_prefix("-v") {
            value_of(inline, "v").and_then(|v| match v.split_once('=') {
                Some((name, value)) if crate::is_name(name) => {
                    assigned.push((name.to_string(), crate::print::unescape(value)));
                    Ok(())
                }
                _ => Err(format!("awk: improper assignment: -v {v}")),
            })
        } else if let Some(inline) = arg.strip_prefix("-f") {
            value_of(inline, "f").and_then(|name| match ctx.read_operand(&name) {
                Ok(data) => {
                    sources.push(String::from_utf8_lossy(&data).into_owned());
                    Ok(())
                }
                Err(e) => Err(format!("awk: cannot open {name} ({e})")),
            })
        } else if arg.starts_with('-') && arg.len() > 1 {
            Err(format!("awk: not an option: {arg}"))
        } else {
            operands.push(arg.clone());
            operands.extend(rest.by_ref().cloned());
            break;
        };
        if let Err(message) = parsed {
            return usage_error(ctx, &message, 2);
        }
    }
    let program_text = if sources.is_empty() {
        if operands.is_empty() {
            return usage_error(ctx, USAGE, 2);
        }
        operands.remove(0)
    } else {
        sources.join("\n")
    };
    let program = match parse::parse(&program_text) {
        Ok(program) => program,
        Err(e) => return usage_error(ctx, &format!("awk: {e}"), 2),
    };
    if let Some(fs) = fs {
        assigned.insert(0, ("FS".to_string(), fs));
    }
    let mut machine = Machine::new(&program, ctx, &operands, assigned);
    let result = machine.execute();
    let finished = machine.finish_outputs();
    let exit_code = machine.exit_code;
    let error = match (result, finished) {
        (Err(e), _) => Some(e),
        (Ok(()), Err(eval::Stop::Error(e))) => Some(e),
        _ => None,
    };
    // A limit of the call stopped the run: the shell says so once, at the call's end.
    if let Some(error::AwkError {
        kind: error::AwkErrorKind::Limit(_),
        ..
    }) = &error
    {
        return 2;
    }
    let error = error.map(|e| e.to_string());
    match error {
        Some(message) => usage_error(ctx, &format!("awk: {message}"), 2),
        None => exit_code,
    }
}

#[cfg(test)]
mod tests;
