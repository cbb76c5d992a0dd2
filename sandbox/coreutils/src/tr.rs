//! `tr`: translate, delete and squeeze characters, sets with ranges, escapes and classes.

use super::print::unescape;
use super::{Ctx, parse_opts, usage_error};

/// Expands a `tr` set: ranges, escapes and `[:class:]`; a range whose ends are reversed is
/// an error, as in GNU tr.
fn tr_set(spec: &str) -> Result<Vec<char>, String> {
    let chars: Vec<char> = unescape(spec).chars().collect();
    let mut set = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let rest: String = chars[i..].iter().collect();
        if rest.starts_with("[:")
            && let Some(end) = rest.find(":]")
        {
            let class = &rest[2..end];
            let members: Vec<char> = (0u8..128)
                .map(char::from)
                .filter(|c| match class {
                    "lower" => c.is_ascii_lowercase(),
                    "upper" => c.is_ascii_uppercase(),
                    "digit" => c.is_ascii_digit(),
                    "alpha" => c.is_ascii_alphabetic(),
                    "alnum" => c.is_ascii_alphanumeric(),
                    "space" => c.is_ascii_whitespace() || *c == '\x0b',
                    "blank" => *c == ' ' || *c == '\t',
                    "punct" => c.is_ascii_punctuation(),
                    _ => false,
                })
                .collect();
            set.extend(members);
            i += rest[..end + 2].chars().count();
        } else if i + 2 < chars.len() && chars[i + 1] == '-' {
            let (a, b) = (chars[i], chars[i + 2]);
            if a > b {
                let shown = |c: char| {
                    if c.is_ascii_graphic() || c == ' ' {
                        c.to_string()
                    } else {
                        format!("\\{:03o}", c as u32)
                    }
                };
                return Err(format!(
                    "tr: range-endpoints of '{}-{}' are in reverse collating sequence order",
                    shown(a),
                    shown(b)
                ));
            }
            set.extend(a..=b);
            i += 3;
        } else {
            set.push(chars[i]);
            i += 1;
        }
    }
    Ok(set)
}

pub fn tr(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts(
        "tr",
        args,
        "",
        &[
            ("delete", 'd'),
            ("squeeze-repeats", 's'),
            ("complement", 'c'),
        ],
        None,
    ) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    let Some(first) = opts.operands.first() else {
        return usage_error(ctx, "tr: missing operand", 1);
    };
    let sets = (
        tr_set(first),
        opts.operands.get(1).map(|s| tr_set(s)).transpose(),
    );
    let (from, to) = match sets {
        (Ok(from), Ok(to)) => (from, to),
        (Err(e), _) | (_, Err(e)) => return usage_error(ctx, &e, 1),
    };
    // `-c`: the set is every character not in SET1.
    let complement = opts.has('c') || opts.has('C');
    let in_from = |c: char| from.contains(&c) != complement;
    if !opts.has('d') && !opts.has('s') && to.is_none() {
        return usage_error(ctx, &format!("tr: missing operand after '{first}'"), 1);
    }
    let input = String::from_utf8_lossy(&ctx.stdin.take_all()).into_owned();
    let mut output = String::with_capacity(input.len());
    // What `-s` squeezes: SET2 when there is one to translate or delete by, else SET1.
    let squeeze = |c: char| match &to {
        Some(to) if opts.has('d') || !to.is_empty() => to.contains(&c),
        _ => in_from(c),
    };
    for c in input.chars() {
        let mapped = if opts.has('d') {
            if in_from(c) {
                continue;
            }
            c
        } else if complement {
            match &to {
                Some(to) if !in_from(c) => c,
                Some(to) => to.last().copied().unwrap_or(c),
                None => c,
            }
        } else {
            match (&to, from.iter().position(|f| *f == c)) {
                (Some(to), Some(i)) if !to.is_empty() => to[i.min(to.len() - 1)],
                _ => c,
            }
        };
        if opts.has('s') && squeeze(mapped) && output.ends_with(mapped) {
            continue;
        }
        output.push(mapped);
    }
    ctx.print(&output);
    0
}
