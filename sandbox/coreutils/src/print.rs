//! Printers: `echo`, `printf` and `seq`, with the backslash escapes they share.

use super::{Ctx, parse_opts, usage_error};

/// Largest `seq` output, so one command cannot fill memory.
const MAX_SEQ_NUMBERS: i64 = 1_000_000;

/// Largest `printf` field width or precision, for the same reason.
const MAX_PRINTF_WIDTH: usize = 1_000_000;

/// Backslash escapes of `echo -e`, `printf` formats and `tr` sets. Returns the text and
/// whether `\c` asked to stop output.
/// Where backslash escapes are read, which decides the octal forms: `echo -e` takes `\0NNN`
/// (`\0` and up to three digits), printf's format `\NNN` (one to three digits, `\0NN` too),
/// `%b` both.
#[derive(Clone, Copy, PartialEq)]
enum Escapes {
    Echo,
    Format,
    Argument,
}

fn unescape_until_stop(text: &str, escapes: Escapes) -> (String, bool) {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\x07'),
            Some('b') => out.push('\x08'),
            Some('f') => out.push('\x0c'),
            Some('v') => out.push('\x0b'),
            Some('e') => out.push('\x1b'),
            Some('\\') => out.push('\\'),
            Some('c') => return (out, true),
            Some(first @ '1'..='7') if escapes != Escapes::Echo => {
                let value = octal(first, &mut chars);
                out.extend(char::from_u32(value));
            }
            Some('0') if escapes == Escapes::Format => {
                let value = octal('0', &mut chars);
                out.extend(char::from_u32(value));
            }
            Some('0') => {
                let mut value = 0u32;
                for _ in 0..3 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.extend(char::from_u32(value));
            }
            Some('x') => {
                let mut value = 0u32;
                let mut digits = 0;
                while digits < 2 {
                    match chars.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            value = value * 16 + d;
                            chars.next();
                            digits += 1;
                        }
                        None => break,
                    }
                }
                if digits == 0 {
                    out.push_str("\\x");
                } else {
                    out.extend(char::from_u32(value));
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    (out, false)
}

/// An octal escape's value: `first` and up to two more digits.
fn octal(first: char, chars: &mut std::iter::Peekable<std::str::Chars>) -> u32 {
    let mut value = first.to_digit(8).unwrap_or(0);
    for _ in 0..2 {
        match chars.peek().and_then(|c| c.to_digit(8)) {
            Some(d) => {
                value = value * 8 + d;
                chars.next();
            }
            None => break,
        }
    }
    value
}

pub fn unescape(text: &str) -> String {
    unescape_until_stop(text, Escapes::Argument).0
}

pub fn echo(ctx: &mut Ctx, args: &[String]) -> i32 {
    let mut newline = true;
    let mut escapes = false;
    let mut start = 0;
    for arg in args {
        let Some(flags) = arg.strip_prefix('-') else {
            break;
        };
        if flags.is_empty() || !flags.chars().all(|c| matches!(c, 'n' | 'e' | 'E')) {
            break;
        }
        for flag in flags.chars() {
            match flag {
                'n' => newline = false,
                'e' => escapes = true,
                _ => escapes = false,
            }
        }
        start += 1;
    }
    let text = args[start..].join(" ");
    if escapes {
        let (text, stop) = unescape_until_stop(&text, Escapes::Echo);
        ctx.print(&text);
        if stop {
            return 0;
        }
    } else {
        ctx.print(&text);
    }
    if newline {
        ctx.print("\n");
    }
    0
}

pub fn printf(ctx: &mut Ctx, args: &[String]) -> i32 {
    let Some(format) = args.first() else {
        return usage_error(ctx, "printf: usage: printf [-v var] format [arguments]", 2);
    };
    let mut values = args[1..].iter();
    let mut status = 0;
    loop {
        let consumed_before = values.len();
        let chars: Vec<char> = format.chars().collect();
        let mut i = 0;
        let mut literal = String::new();
        while i < chars.len() {
            if chars[i] != '%' {
                literal.push(chars[i]);
                i += 1;
                continue;
            }
            if chars.get(i + 1) == Some(&'%') {
                literal.push('%');
                i += 2;
                continue;
            }
            let (text, stop) = unescape_until_stop(&std::mem::take(&mut literal), Escapes::Format);
            ctx.print(&text);
            if stop {
                return status;
            }
            let start = i;
            i += 1;
            while i < chars.len() && "-+ #0".contains(chars[i]) {
                i += 1;
            }
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let Some(conv) = chars.get(i).copied() else {
                ctx.print(&chars[start..].iter().collect::<String>());
                break;
            };
            i += 1;
            let spec: String = chars[start + 1..i - 1].iter().collect();
            let arg = values.next().map(String::as_str);
            let (text, problem) = format_one(&spec, conv, arg);
            ctx.print(&text);
            if let Some(message) = problem {
                ctx.warn(&message);
                status = 1;
            }
        }
        let (text, stop) = unescape_until_stop(&literal, Escapes::Format);
        ctx.print(&text);
        if stop || values.len() == 0 || values.len() == consumed_before {
            break;
        }
    }
    status
}

fn pad(text: String, flags: &str, width: usize) -> String {
    if text.chars().count() >= width {
        return text;
    }
    let fill = width - text.chars().count();
    if flags.contains('-') {
        format!("{text}{}", " ".repeat(fill))
    } else if flags.contains('0') && text.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        let (sign, digits) = text.split_at(usize::from(text.starts_with('-')));
        format!("{sign}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{text}", " ".repeat(fill))
    }
}

/// Formats one conversion. An invalid number formats as 0 and reports the error, as bash does.
pub(crate) fn format_one(spec: &str, conv: char, arg: Option<&str>) -> (String, Option<String>) {
    match format_checked(spec, conv, arg) {
        Ok(text) => (text, None),
        Err(message) if "diuxXofFeg".contains(conv) => (
            format_checked(spec, conv, Some("0")).unwrap_or_default(),
            Some(message),
        ),
        Err(message) => (String::new(), Some(message)),
    }
}

/// `%q`: the word quoted so the shell reads it back, as bash's printf under `LC_ALL=C`: `''`
/// when empty, `$'…'` with escapes when a byte is not printable ASCII, else backslashes before
/// the characters the shell treats specially.
fn shell_quote(word: &str) -> String {
    if word.is_empty() {
        return "''".into();
    }
    let mut out = String::new();
    if word.bytes().any(|b| !(0x20..0x7f).contains(&b)) {
        out.push_str("$'");
        for byte in word.bytes() {
            match byte {
                b'\'' | b'\\' => out.extend(['\\', char::from(byte)]),
                0x20..0x7f => out.push(char::from(byte)),
                0x07 => out.push_str("\\a"),
                0x08 => out.push_str("\\b"),
                0x1b => out.push_str("\\E"),
                0x0c => out.push_str("\\f"),
                b'\n' => out.push_str("\\n"),
                b'\r' => out.push_str("\\r"),
                b'\t' => out.push_str("\\t"),
                0x0b => out.push_str("\\v"),
                other => out.push_str(&format!("\\{other:03o}")),
            }
        }
        out.push('\'');
        return out;
    }
    let mut previous = None;
    for c in word.chars() {
        let special = " !\"$&'()*,;<>?[\\]^`{|}".contains(c)
            || (c == '#' && previous.is_none())
            || (c == '~' && matches!(previous, None | Some(':' | '=')));
        if special {
            out.push('\\');
        }
        out.push(c);
        previous = Some(c);
    }
    out
}

fn format_checked(spec: &str, conv: char, arg: Option<&str>) -> Result<String, String> {
    let flags: String = spec.chars().take_while(|c| "-+ #0".contains(*c)).collect();
    let rest = &spec[flags.len()..];
    let (width, precision) = match rest.split_once('.') {
        Some((w, p)) => (w.parse().unwrap_or(0), Some(p.parse().unwrap_or(0))),
        None => (rest.parse().unwrap_or(0), None),
    };
    if width > MAX_PRINTF_WIDTH || precision.is_some_and(|p| p > MAX_PRINTF_WIDTH) {
        return Err(format!(
            "printf: %{spec}{conv}: field width above {MAX_PRINTF_WIDTH} is refused in the sandbox"
        ));
    }
    let integer = |arg: Option<&str>| -> Result<i64, String> {
        let raw = arg.unwrap_or("0").trim();
        if let Some(c) = raw.strip_prefix(['\'', '"']) {
            return Ok(c.chars().next().map_or(0, |c| c as i64));
        }
        raw.parse::<i64>()
            .or_else(|_| raw.parse::<f64>().map(|f| f as i64))
            .map_err(|_| format!("printf: {raw}: invalid number"))
    };
    let text = match conv {
        's' => {
            let s = arg.unwrap_or("");
            match precision {
                Some(p) => s.chars().take(p).collect(),
                None => s.to_string(),
            }
        }
        'b' => unescape(arg.unwrap_or("")),
        'c' => arg
            .and_then(|a| a.chars().next())
            .map(String::from)
            .unwrap_or_default(),
        'd' | 'i' => {
            let n = integer(arg)?;
            if flags.contains('+') && n >= 0 {
                format!("+{n}")
            } else {
                n.to_string()
            }
        }
        'u' => integer(arg)?.to_string(),
        'x' => format!("{:x}", integer(arg)?),
        'X' => format!("{:X}", integer(arg)?),
        'o' => format!("{:o}", integer(arg)?),
        'f' | 'F' | 'e' | 'g' => {
            let raw = arg.unwrap_or("0").trim();
            let value: f64 = raw
                .parse()
                .map_err(|_| format!("printf: {raw}: invalid number"))?;
            match conv {
                'e' => format!("{:.*e}", precision.unwrap_or(6), value),
                'g' => value.to_string(),
                _ => format!("{:.*}", precision.unwrap_or(6), value),
            }
        }
        'q' => shell_quote(arg.unwrap_or("")),
        other @ ('a' | 'A' | 'E' | 'G' | '(') => {
            return Err(format!("printf: %{other}{}", super::REFUSAL));
        }
        other => return Err(format!("printf: %{other}: invalid directive")),
    };
    Ok(pad(text, &flags, width))
}

/// The line `yes` repeats: its operands joined by spaces, or `y`, and a newline. GNU yes takes
/// no option but `--help`/`--version` (refused here) and drops a first `--`; any other option,
/// anywhere before `--`, is an error (exit 1), as getopt reports it.
pub fn yes_line(args: &[String]) -> Result<Vec<u8>, (String, i32)> {
    let mut operands = Vec::new();
    let mut options_end = false;
    for arg in args {
        if !options_end && arg == "--" {
            options_end = true;
        } else if !options_end && arg.starts_with("--") {
            return Err(match arg.as_str() {
                "--help" | "--version" => (format!("yes: {arg}{}", crate::REFUSAL), 2),
                _ => (
                    format!(
                        "yes: unrecognized option '{arg}'\nTry 'yes --help' for more information."
                    ),
                    1,
                ),
            });
        } else if !options_end && arg.len() > 1 && arg.starts_with('-') {
            let letter = arg.chars().nth(1).unwrap_or('-');
            return Err((
                format!(
                    "yes: invalid option -- '{letter}'\nTry 'yes --help' for more information."
                ),
                1,
            ));
        } else {
            operands.push(arg.as_str());
        }
    }
    let mut line = if operands.is_empty() {
        b"y".to_vec()
    } else {
        operands.join(" ").into_bytes()
    };
    line.push(b'\n');
    Ok(line)
}

/// `yes [STRING...]`: its line again and again. Run alone it fills the output limit, and the
/// call ends with that limit's error; after a pipe the shell gives its reader an endless input
/// instead ([`Input::endless`](crate::Input::endless)), so `yes | head -n 3` ends as in bash.
pub fn yes(ctx: &mut Ctx, args: &[String]) -> i32 {
    let line = match yes_line(args) {
        Ok(line) => line,
        Err((message, status)) => return usage_error(ctx, &message, status),
    };
    let block = line.repeat((64 * 1024 / line.len()).max(1));
    while !ctx.overflowed {
        let room = ctx.max_output.saturating_sub(ctx.out.len());
        if room >= block.len() {
            ctx.write(&block);
        } else {
            // The room left filled, then one more line overflows.
            ctx.write(&block[..room]);
            ctx.write(&line);
        }
    }
    1
}

pub fn seq(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("seq", args, "s", &[("separator", 's')], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    let numbers: Result<Vec<i64>, _> = opts.operands.iter().map(|a| a.parse::<i64>()).collect();
    let Ok(numbers) = numbers else {
        return usage_error(ctx, "seq: invalid integer argument", 1);
    };
    let (first, step, last) = match numbers.as_slice() {
        [last] => (1, 1, *last),
        [first, last] => (*first, 1, *last),
        [first, step, last] if *step != 0 => (*first, *step, *last),
        _ => return usage_error(ctx, "seq: missing or invalid operand", 1),
    };
    let count = last
        .checked_sub(first)
        .and_then(|span| span.checked_div(step))
        .map_or(i64::MAX, |steps| steps.saturating_add(1));
    if count > MAX_SEQ_NUMBERS {
        return usage_error(
            ctx,
            &format!("seq: refusing to print more than {MAX_SEQ_NUMBERS} numbers in the sandbox"),
            1,
        );
    }
    let separator = opts.value('s').unwrap_or("\n").to_string();
    let items: Vec<String> = (0..count.max(0))
        .map(|i| (first + i * step).to_string())
        .collect();
    if !items.is_empty() {
        ctx.print(&items.join(&separator));
        ctx.print("\n");
    }
    0
}
