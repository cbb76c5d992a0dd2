//! Line filters: `head`, `tail`, `wc`, `uniq`, `nl`, `rev`, `tac`. Output formats follow GNU coreutils under
//! `LC_ALL=C`.

use super::{Ctx, lines, parse_opts, usage_error};

fn with_headers(
    ctx: &mut Ctx,
    cmd: &str,
    files: &[String],
    mut each: impl FnMut(&mut Ctx, &[u8]),
) -> i32 {
    let (inputs, failed) = ctx.inputs(cmd, files);
    let headers = files.len() > 1;
    for (index, (name, data)) in inputs.iter().enumerate() {
        if headers {
            let sep = if index > 0 { "\n" } else { "" };
            let shown = if name == "-" { "standard input" } else { name };
            ctx.print(&format!("{sep}==> {shown} <==\n"));
        }
        each(ctx, data);
    }
    i32::from(failed)
}

pub fn head(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts(
        "head",
        args,
        "nc",
        &[("lines", 'n'), ("bytes", 'c')],
        Some('n'),
    ) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if let Err(refusal) = opts.refuse_unknown("head", "nc") {
        return usage_error(ctx, &refusal, 1);
    }
    // After `yes`, stdin never ends: take what is asked for and leave the rest unread.
    let endless = ctx.stdin.is_endless() && opts.operands.iter().all(|file| file == "-");
    if let Some(bytes) = opts.value('c') {
        let Ok(n) = bytes.parse::<usize>() else {
            return usage_error(ctx, &format!("head: invalid number of bytes: '{bytes}'"), 1);
        };
        if endless && opts.operands.len() < 2 {
            let taken = ctx.stdin.take_bytes(n);
            ctx.write(&taken);
            return 0;
        }
        return with_headers(ctx, "head", &opts.operands, |ctx, data| {
            ctx.write(&data[..n.min(data.len())]);
        });
    }
    let raw = opts.value('n').unwrap_or("10");
    let Ok(count) = raw.parse::<i64>() else {
        return usage_error(ctx, &format!("head: invalid number of lines: '{raw}'"), 1);
    };
    if endless && opts.operands.len() < 2 && count >= 0 {
        let taken = ctx.stdin.take_lines(count as usize);
        ctx.write(&taken);
        return 0;
    }
    with_headers(ctx, "head", &opts.operands, |ctx, data| {
        let pieces: Vec<&[u8]> = data.split_inclusive(|b| *b == b'\n').collect();
        let keep = if count >= 0 {
            (count as usize).min(pieces.len())
        } else {
            pieces.len().saturating_sub(count.unsigned_abs() as usize)
        };
        for piece in &pieces[..keep] {
            ctx.write(piece);
        }
    })
}

pub fn tail(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts(
        "tail",
        args,
        "nc",
        &[("lines", 'n'), ("bytes", 'c')],
        Some('n'),
    ) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if let Err(refusal) = opts.refuse_unknown("tail", "nc") {
        return usage_error(ctx, &refusal, 1);
    }
    if let Some(bytes) = opts.value('c') {
        let Ok(n) = bytes.parse::<usize>() else {
            return usage_error(ctx, &format!("tail: invalid number of bytes: '{bytes}'"), 1);
        };
        return with_headers(ctx, "tail", &opts.operands, |ctx, data| {
            ctx.out
                .extend_from_slice(&data[data.len().saturating_sub(n)..]);
        });
    }
    let raw = opts.value('n').unwrap_or("10");
    let from_start = raw.starts_with('+');
    let Ok(count) = raw.trim_start_matches(['+', '-']).parse::<usize>() else {
        return usage_error(ctx, &format!("tail: invalid number of lines: '{raw}'"), 1);
    };
    with_headers(ctx, "tail", &opts.operands, |ctx, data| {
        let pieces: Vec<&[u8]> = data.split_inclusive(|b| *b == b'\n').collect();
        let skip = if from_start {
            count.saturating_sub(1).min(pieces.len())
        } else {
            pieces.len().saturating_sub(count)
        };
        for piece in &pieces[skip..] {
            ctx.write(piece);
        }
    })
}

pub fn wc(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts(
        "wc",
        args,
        "",
        &[
            ("lines", 'l'),
            ("words", 'w'),
            ("bytes", 'c'),
            ("chars", 'm'),
            ("max-line-length", 'L'),
        ],
        None,
    ) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if let Err(refusal) = opts.refuse_unknown("wc", "lwcmL") {
        return usage_error(ctx, &refusal, 1);
    }
    let mut which: Vec<char> = ['l', 'w', 'm', 'c', 'L']
        .into_iter()
        .filter(|f| opts.has(*f))
        .collect();
    if which.is_empty() {
        which = vec!['l', 'w', 'c'];
    }
    let (inputs, failed) = ctx.inputs("wc", &opts.operands);
    let mut rows: Vec<(Vec<usize>, String)> = inputs
        .iter()
        .map(|(name, data)| {
            let counts = which
                .iter()
                .map(|f| match f {
                    'l' => data.iter().filter(|b| **b == b'\n').count(),
                    'w' => data
                        .split(|b| b.is_ascii_whitespace())
                        .filter(|w| !w.is_empty())
                        .count(),
                    'm' => String::from_utf8_lossy(data).chars().count(),
                    'L' => longest_line(data),
                    _ => data.len(),
                })
                .collect();
            let shown = if name == "-" {
                String::new()
            } else {
                name.clone()
            };
            (counts, shown)
        })
        .collect();
    let total_bytes: usize = inputs.iter().map(|(_, d)| d.len()).sum();
    if rows.len() > 1 {
        let totals = (0..which.len())
            .map(|i| {
                let column = rows.iter().map(|r| r.0[i]);
                if which[i] == 'L' {
                    column.max().unwrap_or(0)
                } else {
                    column.sum()
                }
            })
            .collect();
        rows.push((totals, "total".into()));
    }
    let from_stdin = opts.operands.is_empty() || opts.operands.iter().any(|o| o == "-");
    let width = if which.len() == 1 && rows.len() == 1 {
        1
    } else if from_stdin {
        7
    } else {
        total_bytes.to_string().len()
    };
    for (counts, name) in rows {
        let cells: Vec<String> = counts.iter().map(|c| format!("{c:>width$}")).collect();
        let mut line = cells.join(" ");
        if !name.is_empty() {
            line.push(' ');
            line.push_str(&name);
        }
        ctx.print(&format!("{line}\n"));
    }
    i32::from(failed)
}

/// `wc -L`: the widest line, tabs reaching the next multiple of 8.
fn longest_line(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    let width = |line: &str| {
        line.chars()
            .fold(0, |w, c| if c == '\t' { w / 8 * 8 + 8 } else { w + 1 })
    };
    text.split('\n').map(width).max().unwrap_or(0)
}

pub fn uniq(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("uniq", args, "", &[("count", 'c')], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if let Err(refusal) = opts.refuse_unknown("uniq", "cdui") {
        return usage_error(ctx, &refusal, 1);
    }
    let (inputs, failed) = ctx.inputs("uniq", &opts.operands[..opts.operands.len().min(1)]);
    if failed {
        return 1;
    }
    let data = inputs
        .into_iter()
        .next()
        .map(|(_, d)| d)
        .unwrap_or_default();
    let mut groups: Vec<(&[u8], usize)> = Vec::new();
    for line in lines(&data) {
        let same = groups.last().is_some_and(|(prev, _)| {
            if opts.has('i') {
                prev.eq_ignore_ascii_case(line)
            } else {
                *prev == line
            }
        });
        match groups.last_mut() {
            Some((_, count)) if same => *count += 1,
            _ => groups.push((line, 1)),
        }
    }
    for (line, count) in groups {
        if (opts.has('d') && count < 2) || (opts.has('u') && count > 1) {
            continue;
        }
        if opts.has('c') {
            ctx.print(&format!("{count:>7} "));
        }
        ctx.write(line);
        ctx.write(b"\n");
    }
    0
}

pub fn nl(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("nl", args, "bwsv", &[], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    let all = opts.value('b') == Some("a");
    let width: usize = opts.value('w').and_then(|w| w.parse().ok()).unwrap_or(6);
    let separator = opts.value('s').unwrap_or("\t").to_string();
    let mut number: i64 = opts.value('v').and_then(|v| v.parse().ok()).unwrap_or(1);
    let (inputs, failed) = ctx.inputs("nl", &opts.operands);
    for (_, data) in inputs {
        for line in lines(&data) {
            if line.is_empty() && !all {
                ctx.print(
                    &format!("{:width$}\n", "", width = width + separator.len())
                        .replace(|c: char| c != ' ' && c != '\n', " "),
                );
                continue;
            }
            ctx.print(&format!("{number:>width$}{separator}"));
            ctx.write(line);
            ctx.write(b"\n");
            number += 1;
        }
    }
    i32::from(failed)
}

/// `rev`: each line's characters reversed (a last line without a newline stays without one).
pub fn rev(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("rev", args, "", &[], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if let Err(refusal) = opts.refuse_unknown("rev", "") {
        return usage_error(ctx, &refusal, 1);
    }
    let (inputs, failed) = ctx.inputs("rev", &opts.operands);
    for (_, data) in inputs {
        for piece in data.split_inclusive(|b| *b == b'\n') {
            let (body, newline) = match piece.strip_suffix(b"\n") {
                Some(body) => (body, "\n"),
                None => (piece, ""),
            };
            let reversed: String = String::from_utf8_lossy(body).chars().rev().collect();
            ctx.print(&format!("{reversed}{newline}"));
        }
    }
    i32::from(failed)
}

/// `tac`: the lines of each input, last first. As GNU's, a last line without a newline is
/// printed as it is, so it runs into the line after it.
pub fn tac(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("tac", args, "", &[], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if let Err(refusal) = opts.refuse_unknown("tac", "") {
        return usage_error(ctx, &refusal, 1);
    }
    let (inputs, failed) = ctx.inputs("tac", &opts.operands);
    for (_, data) in inputs {
        for piece in data.split_inclusive(|b| *b == b'\n').rev() {
            ctx.write(piece);
        }
    }
    i32::from(failed)
}
