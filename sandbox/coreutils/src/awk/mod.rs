//! `awk`: the one-liner subset — `-F`, `-v`, `BEGIN`/`END`, `/regex/` and expression patterns
//! and ranges, `print`/`printf`, fields (`$0`, `$N`, `NF`, `$NF`), `NR`, `FS`, `OFS`,
//! variables, arithmetic, comparisons (numeric when both sides look numeric), `~`, `!~`,
//! `&&`, `||`, `!`, `?:`, string concatenation, assignments (`=`, `+=`, …, `++`, `--`), `if`,
//! `while`, `for (;;)`, `next`, `exit`, and the functions `length`, `substr`, `index`,
//! `tolower`, `toupper`, `int`, `sprintf`, `sub`, `gsub`. No arrays or user functions.
//! Numbers print as integers when whole, otherwise with `%.6g`, as awk's `OFMT`. Regular
//! expressions are POSIX extended, translated like `grep -E`.
//!
//! Three steps, a file each: [`lex`] cuts the program into tokens with their positions,
//! [`parse`] builds the [`ast`] with every operator and builtin resolved (an unknown one is
//! an error naming its line and column, before anything runs), and [`eval`] runs it within
//! its step and text budgets; [`value`] is what it computes with.

mod ast;
mod eval;
mod lex;
mod parse;
mod value;

use std::collections::BTreeMap;

use self::eval::Machine;
use self::value::Value;
use super::{Ctx, usage_error};

pub fn awk(ctx: &mut Ctx, args: &[String]) -> i32 {
    let mut vars: BTreeMap<String, Value> = BTreeMap::new();
    let mut rest = args.iter();
    let mut program = None;
    let mut files = Vec::new();
    while let Some(arg) = rest.next() {
        if program.is_some() {
            if let Some((name, value)) = arg.split_once('=')
                && crate::is_name(name)
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
                    vars.insert(name.into(), Value::Data(crate::text::unescape(value)));
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
    let rules = match parse::parse(&program) {
        Ok(rules) => rules,
        Err(e) => return usage_error(ctx, &format!("awk: {e}"), 2),
    };
    let (inputs, failed) = ctx.inputs("awk", &files);
    let mut machine = Machine::new(vars, i32::from(failed) * 2);
    let result = machine.execute(&rules, &inputs);
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
