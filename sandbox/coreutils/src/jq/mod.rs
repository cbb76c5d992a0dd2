//! `jq`: the sandbox's own jq, the subset agents use, output as jq 1.6 prints it — chosen over
//! jaq (jaq-core + jaq-std + jaq-json) by measuring what each adds to the browser build (see
//! docs/architecture.md, "The sandbox's jq is its own"). A filter is parsed whole first
//! ([`parse`]): a builtin the sandbox lacks, `def`, `label` and modules are refused by name.
//! [`eval`] runs it on each input ([`json`]), [`builtins`] and [`values`] hold the named
//! filters and the operations they share.
//!
//! Options: `-r`, `-j`, `-c`, `-n`, `-s`, `-e`, `-S`, `-R`, `--tab`, `--indent N`, `--arg`,
//! `--argjson`, `-M`. Exit codes as jq's: 2 usage or a missing file, 3 a filter that does
//! not compile, 4 input that is not JSON, 5 an error while running, 1 or 4 for `-e`.

mod builtins;
mod error;
mod eval;
mod json;
mod parse;
mod values;

use std::rc::Rc;

use self::error::{CompileError, RunError};
use self::eval::Env;
use self::json::{Json, Style};
use super::{Ctx, usage_error};

const INDENTS: [&str; 8] = ["", " ", "  ", "   ", "    ", "     ", "      ", "       "];

struct Options {
    raw: bool,
    join: bool,
    null_input: bool,
    slurp: bool,
    exit_status: bool,
    raw_input: bool,
    style: Style,
}

pub fn jq(ctx: &mut Ctx, args: &[String]) -> i32 {
    let mut options = Options {
        raw: false,
        join: false,
        null_input: false,
        slurp: false,
        exit_status: false,
        raw_input: false,
        style: Style {
            indent: Some("  "),
            sort_keys: false,
        },
    };
    let mut vars: Vec<(String, Json)> = Vec::new();
    let mut filter = None;
    let mut files = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let long = arg.strip_prefix("--");
        match (arg.as_str(), long) {
            (_, Some("raw-output")) => options.raw = true,
            (_, Some("join-output")) => options.join = true,
            (_, Some("compact-output")) => options.style.indent = None,
            (_, Some("null-input")) => options.null_input = true,
            (_, Some("slurp")) => options.slurp = true,
            (_, Some("exit-status")) => options.exit_status = true,
            (_, Some("sort-keys")) => options.style.sort_keys = true,
            (_, Some("raw-input")) => options.raw_input = true,
            (_, Some("monochrome-output")) => {}
            (_, Some("tab")) => options.style.indent = Some("\t"),
            (_, Some("indent")) => {
                let n = rest.next().and_then(|n| n.parse::<usize>().ok());
                match n {
                    Some(0) => options.style.indent = None,
                    Some(n) if n < INDENTS.len() => options.style.indent = Some(INDENTS[n]),
                    _ => return usage_error(ctx, "jq: Cannot indent more than 7 characters", 2),
                }
            }
            (_, Some(kind @ ("arg" | "argjson"))) => {
                let (Some(name), Some(value)) = (rest.next(), rest.next()) else {
                    return usage_error(
                        ctx,
                        &format!("jq: --{kind} takes two parameters (e.g. --{kind} varname value)"),
                        2,
                    );
                };
                let value = if kind == "arg" {
                    Json::str(value)
                } else {
                    match json::parse_stream(value) {
                        Ok(mut values) if values.len() == 1 => values.remove(0),
                        _ => {
                            return usage_error(
                                ctx,
                                "jq: invalid JSON text passed to --argjson",
                                2,
                            );
                        }
                    }
                };
                vars.push((name.clone(), value));
            }
            (_, Some("")) => {
                files.extend(rest.by_ref().cloned());
                break;
            }
            (_, Some(other)) => {
                return usage_error(
                    ctx,
                    &format!("jq: --{other}: not supported in this sandbox"),
                    2,
                );
            }
            (short, None) if short.starts_with('-') && short.len() > 1 => {
                for flag in short[1..].chars() {
                    match flag {
                        'r' => options.raw = true,
                        'j' => {
                            options.raw = true;
                            options.join = true;
                        }
                        'c' => options.style.indent = None,
                        'n' => options.null_input = true,
                        's' => options.slurp = true,
                        'e' => options.exit_status = true,
                        'S' => options.style.sort_keys = true,
                        'R' => options.raw_input = true,
                        'M' => {}
                        other => {
                            return usage_error(
                                ctx,
                                &format!("jq: -{other}: not supported in this sandbox"),
                                2,
                            );
                        }
                    }
                }
            }
            _ if filter.is_none() => filter = Some(arg.clone()),
            _ => files.push(arg.clone()),
        }
    }
    if options.join {
        options.raw = true;
    }
    let Some(source) = filter else {
        return usage_error(ctx, "Usage:\tjq [OPTIONS] FILTER [FILES...]", 2);
    };
    let program = match parse::parse(&source) {
        Ok(program) => program,
        Err(refusal @ CompileError::Unsupported(_)) => {
            return usage_error(ctx, &format!("jq: {refusal}"), 3);
        }
        Err(message @ CompileError::Syntax(_)) => {
            return usage_error(
                ctx,
                &format!("jq: error: {message}\njq: 1 compile error"),
                3,
            );
        }
    };
    let mut text = String::new();
    if files.is_empty() {
        text = String::from_utf8_lossy(&ctx.stdin.take_all()).into_owned();
    }
    for name in &files {
        match ctx.read_operand(name) {
            Ok(data) => text.push_str(&String::from_utf8_lossy(&data)),
            Err(e) => {
                return usage_error(
                    ctx,
                    &format!("jq: error: Could not open file {name}: {e}"),
                    2,
                );
            }
        }
    }
    let environment = Json::Obj(Rc::new(
        ctx.env
            .iter()
            .map(|(k, v)| (Rc::from(k.as_str()), Json::str(v)))
            .collect(),
    ));
    vars.push(("\u{0}ENV".into(), environment));
    let (inputs, parse_error) = read_inputs(&text, &options);
    let mut env = Env::new(vars, Json::Null);
    let mut status = 0;
    let mut last = None;
    for input in inputs {
        let mut outputs = Vec::new();
        let result = eval::stream(&program, &input, &mut env, &mut |value| outputs.push(value));
        for value in outputs {
            write_value(ctx, &value, &options);
            last = Some(value);
        }
        match result {
            Ok(()) => {}
            Err(error @ RunError::Jq(_)) => {
                ctx.warn(&format!("jq: error (at <stdin>:0): {error}"));
                status = 5;
            }
            // A sandbox limit ends the program: the later inputs would meet it too.
            Err(limit @ RunError::Limit(_)) => {
                ctx.warn(&format!("jq: error (at <stdin>:0): {limit}"));
                return 5;
            }
        }
        if ctx.overflowed {
            return 2;
        }
    }
    if let Some(error) = parse_error {
        ctx.warn(&format!(
            "parse error: {} at line {}, column {}",
            error.message, error.line, error.column
        ));
        return 4;
    }
    if status != 0 {
        return status;
    }
    if options.exit_status {
        return match last {
            None => 4,
            Some(v) if !v.truthy() => 1,
            Some(_) => 0,
        };
    }
    0
}

/// The values the filter runs on, and the parse error that ended the input early, if any.
fn read_inputs(text: &str, options: &Options) -> (Vec<Json>, Option<json::ParseError>) {
    if options.raw_input {
        let values = if options.slurp {
            vec![Json::str(text)]
        } else {
            super::lines(text.as_bytes())
                .into_iter()
                .map(|l| Json::str(&String::from_utf8_lossy(l)))
                .collect()
        };
        return if options.null_input {
            (vec![Json::Null], None)
        } else {
            (values, None)
        };
    }
    let (values, error) = json::parse_values(text);
    if options.null_input {
        return (vec![Json::Null], error);
    }
    if options.slurp {
        return (vec![Json::Arr(Rc::new(values))], error);
    }
    (values, error)
}

fn write_value(ctx: &mut Ctx, value: &Json, options: &Options) {
    let mut out = String::new();
    match value {
        Json::Str(s) if options.raw => out.push_str(s),
        other => json::write(&mut out, other, options.style, 0),
    }
    if !options.join {
        out.push('\n');
    }
    ctx.print(&out);
}

#[cfg(test)]
mod tests {
    use super::error::{CompileError, RunError};
    use super::eval::{Env, stream};
    use super::json::Json;
    use super::parse::parse;

    fn run(program: &str) -> Result<Vec<Json>, RunError> {
        let filter = parse(program).expect("the program compiles");
        let mut env = Env::new(Vec::new(), Json::Null);
        let mut out = Vec::new();
        stream(&filter, &Json::Null, &mut env, &mut |value| out.push(value))?;
        Ok(out)
    }

    #[test]
    fn a_program_that_does_not_compile_says_which_kind() {
        assert_eq!(
            parse("def f: 1; f").err(),
            Some(CompileError::Unsupported("def".into()))
        );
        assert!(matches!(parse(".["), Err(CompileError::Syntax(_))));
    }

    #[test]
    fn try_catches_jq_errors_and_never_a_sandbox_limit() {
        assert_eq!(
            run(r#"try error("boom") catch ."#),
            Ok(vec![Json::str("boom")])
        );
        assert!(matches!(run(r#"error("boom")"#), Err(RunError::Jq(m)) if m == "boom"));
        for program in [
            r#"try ("x" * 1e12) catch "caught""#,
            r#"("x" * 1e12)?"#,
            r#"("x" * 1e12) // "alternative""#,
            r#"isvalid("x" * 1e12)"#,
        ] {
            assert!(matches!(run(program), Err(RunError::Limit(_))), "{program}");
        }
        assert_eq!(
            run(r#"error("e")? , (null // 1)"#),
            Ok(vec![Json::Num(1.0)])
        );
    }
}
