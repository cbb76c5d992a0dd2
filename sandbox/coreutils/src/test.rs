//! `test` and `[`: file tests, string and integer comparisons, `!`, `-a`, `-o`.

use super::Ctx;
use tether_vfs::EntryKind;

pub fn bracket(ctx: &mut Ctx, args: &[String]) -> i32 {
    match args.split_last() {
        Some((last, rest)) if last == "]" => test(ctx, rest),
        _ => {
            ctx.warn("[: missing `]'");
            2
        }
    }
}

pub fn test(ctx: &mut Ctx, args: &[String]) -> i32 {
    match evaluate(ctx, args) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(message) => {
            ctx.warn(&format!("test: {message}"));
            2
        }
    }
}

fn evaluate(ctx: &Ctx, args: &[String]) -> Result<bool, String> {
    if let Some(i) = args.iter().position(|a| a == "-o") {
        return Ok(evaluate(ctx, &args[..i])? || evaluate(ctx, &args[i + 1..])?);
    }
    if let Some(i) = args.iter().position(|a| a == "-a") {
        return Ok(evaluate(ctx, &args[..i])? && evaluate(ctx, &args[i + 1..])?);
    }
    let strs: Vec<&str> = args.iter().map(String::as_str).collect();
    match strs.as_slice() {
        [] => Ok(false),
        ["!", rest @ ..] => Ok(!evaluate(ctx, &args[args.len() - rest.len()..])?),
        [one] => Ok(!one.is_empty()),
        [op, operand] => unary(ctx, op, operand),
        [a, op, b] => binary(a, op, b),
        _ => Err("too many arguments".into()),
    }
}

fn unary(ctx: &Ctx, op: &str, operand: &str) -> Result<bool, String> {
    let kind = || ctx.vfs.kind(&ctx.resolve(operand));
    Ok(match op {
        "-e" | "-a" => kind().is_some(),
        "-f" => kind() == Some(EntryKind::File),
        "-d" => kind() == Some(EntryKind::Dir),
        "-r" | "-w" => kind().is_some(),
        "-x" => kind() == Some(EntryKind::Dir),
        "-s" => ctx
            .vfs
            .read(&ctx.resolve(operand))
            .is_ok_and(|d| !d.is_empty()),
        "-z" => operand.is_empty(),
        "-n" => !operand.is_empty(),
        "-L" | "-h" => false,
        _ => return Err(format!("{op}: unary operator expected")),
    })
}

fn binary(a: &str, op: &str, b: &str) -> Result<bool, String> {
    let int = |s: &str| {
        s.trim()
            .parse::<i64>()
            .map_err(|_| format!("{s}: integer expression expected"))
    };
    Ok(match op {
        "=" | "==" => a == b,
        "!=" => a != b,
        "<" => a < b,
        ">" => a > b,
        "-eq" => int(a)? == int(b)?,
        "-ne" => int(a)? != int(b)?,
        "-lt" => int(a)? < int(b)?,
        "-le" => int(a)? <= int(b)?,
        "-gt" => int(a)? > int(b)?,
        "-ge" => int(a)? >= int(b)?,
        _ => return Err(format!("{op}: binary operator expected")),
    })
}
