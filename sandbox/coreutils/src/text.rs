//! Text filters and printers: `head`, `tail`, `wc`, `sort`, `uniq`, `cut`, `tr`, `nl`, `echo`,
//! `printf`, `seq`. Output formats follow GNU coreutils under `LC_ALL=C` (byte-order sorting).

use super::{Ctx, lines, parse_opts, usage_error};

/// Largest `seq` output, so one command cannot fill memory.
const MAX_SEQ_NUMBERS: i64 = 1_000_000;

/// Largest `printf` field width or precision, for the same reason.
const MAX_PRINTF_WIDTH: usize = 1_000_000;

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
    if let Some(bytes) = opts.value('c') {
        let Ok(n) = bytes.parse::<usize>() else {
            return usage_error(ctx, &format!("head: invalid number of bytes: '{bytes}'"), 1);
        };
        return with_headers(ctx, "head", &opts.operands, |ctx, data| {
            ctx.write(&data[..n.min(data.len())]);
        });
    }
    let raw = opts.value('n').unwrap_or("10");
    let Ok(count) = raw.parse::<i64>() else {
        return usage_error(ctx, &format!("head: invalid number of lines: '{raw}'"), 1);
    };
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
        ],
        None,
    ) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    let mut which: Vec<char> = ['l', 'w', 'm', 'c']
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
            .map(|i| rows.iter().map(|r| r.0[i]).sum())
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

/// The leading number of a line as `sort -n` reads it (no number sorts as zero).
fn numeric_key(line: &[u8]) -> f64 {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_start();
    let end = text
        .char_indices()
        .take_while(|(i, c)| c.is_ascii_digit() || *c == '.' || (*i == 0 && *c == '-'))
        .count();
    text[..end].parse().unwrap_or(0.0)
}

/// A `-k START[,END][OPTS]` key: fields are 1-based; without END the key runs to the end of
/// the line; `n`, `r` and `f` after a field number apply to this key only.
#[derive(Debug, Clone, Copy)]
struct SortKey {
    start: usize,
    end: Option<usize>,
    numeric: bool,
    reverse: bool,
    fold: bool,
}

fn parse_key(spec: &str) -> Option<SortKey> {
    let (start, end) = match spec.split_once(',') {
        Some((s, e)) => (s, Some(e)),
        None => (spec, None),
    };
    let mut key = SortKey {
        start: 0,
        end: None,
        numeric: false,
        reverse: false,
        fold: false,
    };
    let field = |part: &str, key: &mut SortKey| -> Option<usize> {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        for flag in part[digits.len()..].chars() {
            match flag {
                'n' => key.numeric = true,
                'r' => key.reverse = true,
                'f' => key.fold = true,
                '.' | 'b' => {}
                c if c.is_ascii_digit() => {}
                _ => return None,
            }
        }
        digits.parse().ok().filter(|n| *n > 0)
    };
    key.start = field(start, &mut key)?;
    if let Some(end) = end {
        key.end = Some(field(end, &mut key)?);
    }
    Some(key)
}

/// Byte offset where field `n` (1-based) begins — with its leading blanks, as GNU counts — and
/// where it ends.
fn field_bounds(line: &[u8], n: usize, separator: Option<u8>) -> (usize, usize) {
    let mut pos = 0;
    for _ in 1..n {
        match separator {
            Some(sep) => match line[pos..].iter().position(|b| *b == sep) {
                Some(i) => pos += i + 1,
                None => return (line.len(), line.len()),
            },
            None => {
                while pos < line.len() && line[pos].is_ascii_whitespace() {
                    pos += 1;
                }
                while pos < line.len() && !line[pos].is_ascii_whitespace() {
                    pos += 1;
                }
            }
        }
    }
    let mut end = pos;
    match separator {
        Some(sep) => {
            end += line[pos..]
                .iter()
                .position(|b| *b == sep)
                .unwrap_or(line.len() - pos);
        }
        None => {
            while end < line.len() && line[end].is_ascii_whitespace() {
                end += 1;
            }
            while end < line.len() && !line[end].is_ascii_whitespace() {
                end += 1;
            }
        }
    }
    (pos, end)
}

fn sort_key<'a>(line: &'a [u8], key: Option<&SortKey>, separator: Option<u8>) -> &'a [u8] {
    let Some(key) = key else {
        return line;
    };
    let (start, _) = field_bounds(line, key.start, separator);
    let end = key
        .end
        .map_or(line.len(), |e| field_bounds(line, e, separator).1);
    &line[start..end.max(start)]
}

pub fn sort(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts(
        "sort",
        args,
        "kto",
        &[("numeric-sort", 'n'), ("reverse", 'r'), ("unique", 'u')],
        None,
    ) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 2),
    };
    let mut keys = Vec::new();
    for spec in opts.all('k') {
        match parse_key(spec) {
            Some(key) => keys.push(key),
            None => {
                return usage_error(ctx, &format!("sort: invalid key specification '{spec}'"), 2);
            }
        }
    }
    let global = SortKey {
        start: 1,
        end: None,
        numeric: opts.has('n'),
        reverse: opts.has('r'),
        fold: opts.has('f'),
    };
    let separator = opts.value('t').and_then(|t| t.bytes().next());
    let (inputs, failed) = ctx.inputs("sort", &opts.operands);
    if failed {
        return 2;
    }
    let data: Vec<u8> = inputs
        .into_iter()
        .flat_map(|(_, mut d)| {
            if !d.is_empty() && !d.ends_with(b"\n") {
                d.push(b'\n');
            }
            d
        })
        .collect();
    let mut rows: Vec<&[u8]> = lines(&data);
    let compare_by = |key: &SortKey, a: &[u8], b: &[u8]| {
        let own = key.numeric || key.reverse || key.fold;
        let rule = if own { key } else { &global };
        let (ka, kb) = if keys.is_empty() {
            (a, b)
        } else {
            (
                sort_key(a, Some(key), separator),
                sort_key(b, Some(key), separator),
            )
        };
        let order = if rule.numeric {
            numeric_key(ka).total_cmp(&numeric_key(kb))
        } else if rule.fold {
            ka.to_ascii_uppercase().cmp(&kb.to_ascii_uppercase())
        } else {
            ka.cmp(kb)
        };
        if rule.reverse { order.reverse() } else { order }
    };
    let compare = |a: &&[u8], b: &&[u8]| {
        if keys.is_empty() {
            return compare_by(&global, a, b);
        }
        keys.iter()
            .map(|key| compare_by(key, a, b))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    rows.sort_by(|a, b| {
        let primary = compare(a, b);
        if opts.has('u') || opts.has('s') {
            primary
        } else {
            let last_resort = if global.reverse { b.cmp(a) } else { a.cmp(b) };
            primary.then(last_resort)
        }
    });
    if opts.has('u') {
        rows.dedup_by(|a, b| compare(a, b).is_eq());
    }
    for row in rows {
        ctx.write(row);
        ctx.write(b"\n");
    }
    0
}

pub fn uniq(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts("uniq", args, "", &[("count", 'c')], None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
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

/// A `cut` list such as `1,3-5,7-`: sorted inclusive ranges, 1-based.
fn parse_ranges(list: &str) -> Option<Vec<(usize, usize)>> {
    let mut ranges = Vec::new();
    for item in list.split(',') {
        let (start, end) = match item.split_once('-') {
            Some((a, b)) => (
                if a.is_empty() { 1 } else { a.parse().ok()? },
                if b.is_empty() {
                    usize::MAX
                } else {
                    b.parse().ok()?
                },
            ),
            None => {
                let n = item.parse().ok()?;
                (n, n)
            }
        };
        if start == 0 || end < start {
            return None;
        }
        ranges.push((start, end));
    }
    Some(ranges)
}

pub fn cut(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts(
        "cut",
        args,
        "dfcb",
        &[("delimiter", 'd'), ("fields", 'f'), ("characters", 'c')],
        None,
    ) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    let (list, by_field) = match (opts.value('f'), opts.value('c').or(opts.value('b'))) {
        (Some(f), _) => (f, true),
        (None, Some(c)) => (c, false),
        (None, None) => {
            return usage_error(
                ctx,
                "cut: you must specify a list of bytes, characters, or fields",
                1,
            );
        }
    };
    let Some(ranges) = parse_ranges(list) else {
        return usage_error(ctx, &format!("cut: invalid field value '{list}'"), 1);
    };
    let selected = |i: usize| ranges.iter().any(|(a, b)| *a <= i && i <= *b);
    let delimiter = opts.value('d').unwrap_or("\t").to_string();
    if delimiter.chars().count() != 1 {
        return usage_error(ctx, "cut: the delimiter must be a single character", 1);
    }
    let (inputs, failed) = ctx.inputs("cut", &opts.operands);
    for (_, data) in inputs {
        let text = String::from_utf8_lossy(&data).into_owned();
        for line in text.lines() {
            let output = if by_field {
                if !line.contains(delimiter.as_str()) {
                    if opts.has('s') {
                        continue;
                    }
                    line.to_string()
                } else {
                    line.split(delimiter.as_str())
                        .enumerate()
                        .filter(|(i, _)| selected(i + 1))
                        .map(|(_, f)| f)
                        .collect::<Vec<_>>()
                        .join(&delimiter)
                }
            } else {
                line.chars()
                    .enumerate()
                    .filter(|(i, _)| selected(i + 1))
                    .map(|(_, c)| c)
                    .collect()
            };
            ctx.print(&format!("{output}\n"));
        }
    }
    i32::from(failed)
}

/// Expands a `tr` set: ranges, escapes and `[:class:]`.
fn tr_set(spec: &str) -> Vec<char> {
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
            set.extend((a..=b).filter(|_| a <= b));
            i += 3;
        } else {
            set.push(chars[i]);
            i += 1;
        }
    }
    set
}

pub fn tr(ctx: &mut Ctx, args: &[String]) -> i32 {
    let opts = match parse_opts(
        "tr",
        args,
        "",
        &[("delete", 'd'), ("squeeze-repeats", 's')],
        None,
    ) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    let Some(first) = opts.operands.first() else {
        return usage_error(ctx, "tr: missing operand", 1);
    };
    let from = tr_set(first);
    let to = opts.operands.get(1).map(|s| tr_set(s));
    if !opts.has('d') && !opts.has('s') && to.is_none() {
        return usage_error(ctx, &format!("tr: missing operand after '{first}'"), 1);
    }
    let input = String::from_utf8_lossy(&ctx.stdin.take_all()).into_owned();
    let mut output = String::with_capacity(input.len());
    let squeeze_set = if opts.has('d') {
        to.clone().unwrap_or_default()
    } else {
        to.clone().unwrap_or_else(|| from.clone())
    };
    for c in input.chars() {
        let mapped = if opts.has('d') {
            if from.contains(&c) {
                continue;
            }
            c
        } else {
            match (&to, from.iter().position(|f| *f == c)) {
                (Some(to), Some(i)) if !to.is_empty() => to[i.min(to.len() - 1)],
                _ => c,
            }
        };
        if opts.has('s') && squeeze_set.contains(&mapped) && output.ends_with(mapped) {
            continue;
        }
        output.push(mapped);
    }
    ctx.print(&output);
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

/// Backslash escapes of `echo -e`, `printf` formats and `tr` sets. Returns the text and
/// whether `\c` asked to stop output.
fn unescape_until_stop(text: &str) -> (String, bool) {
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

pub fn unescape(text: &str) -> String {
    unescape_until_stop(text).0
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
        let (text, stop) = unescape_until_stop(&text);
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
            let (text, stop) = unescape_until_stop(&std::mem::take(&mut literal));
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
        let (text, stop) = unescape_until_stop(&literal);
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
        other => return Err(format!("printf: %{other}: invalid directive")),
    };
    Ok(pad(text, &flags, width))
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
