//! Column filters: `cut`, and the two that make columns of several inputs, `paste` and `comm`.

use super::{Ctx, lines, parse_opts, usage_error};

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
    if let Err(refusal) = opts.refuse_unknown("cut", "dfcbs") {
        return usage_error(ctx, &refusal, 1);
    }
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
    let mut out = Vec::new();
    for (_, data) in inputs {
        if by_field {
            cut_fields(
                &data,
                delimiter.as_bytes(),
                &selected,
                opts.has('s'),
                &mut out,
            );
            continue;
        }
        let text = String::from_utf8_lossy(&data).into_owned();
        for line in text.lines() {
            out.extend(
                line.chars()
                    .enumerate()
                    .filter(|(i, _)| selected(i + 1))
                    .map(|(_, c)| c)
                    .collect::<String>()
                    .bytes(),
            );
            out.push(b'\n');
        }
    }
    ctx.write(&out);
    i32::from(failed)
}

/// `cut -f` over `data`'s lines, on their bytes as GNU cut reads them: the selected fields in
/// their order, joined by `delimiter`; a line without it whole, or left out under `-s`.
fn cut_fields(
    data: &[u8],
    delimiter: &[u8],
    selected: &dyn Fn(usize) -> bool,
    only_delimited: bool,
    out: &mut Vec<u8>,
) {
    for line in lines(data) {
        if !contains(line, delimiter) {
            if !only_delimited {
                out.extend_from_slice(line);
                out.push(b'\n');
            }
            continue;
        }
        let mut first = true;
        let mut rest = line;
        let mut index = 1;
        loop {
            let (field, next) = match find(rest, delimiter) {
                Some(at) => (&rest[..at], Some(&rest[at + delimiter.len()..])),
                None => (rest, None),
            };
            if selected(index) {
                if !first {
                    out.extend_from_slice(delimiter);
                }
                out.extend_from_slice(field);
                first = false;
            }
            match next {
                Some(next) => rest = next,
                None => break,
            }
            index += 1;
        }
        out.push(b'\n');
    }
}

/// Where `needle` (one character's bytes) first stands in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    match needle {
        [byte] => haystack.iter().position(|b| b == byte),
        _ => haystack.windows(needle.len()).position(|w| w == needle),
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    find(haystack, needle).is_some()
}

/// `paste [-s] [-d LIST] FILE…`: line N of each input joined by the delimiters of LIST in turn
/// (a tab by default; `\n`, `\t`, `\\` and `\0`, none, as escapes); with `-s` each input's lines
/// joined into one. Several `-` operands take stdin's lines in turn, as GNU's do.
pub fn paste(ctx: &mut Ctx, args: &[String]) -> i32 {
    let long = [("delimiters", 'd'), ("serial", 's')];
    let opts = match parse_opts("paste", args, "d", &long, None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if let Err(refusal) = opts.refuse_unknown("paste", "ds") {
        return usage_error(ctx, &refusal, 1);
    }
    let mut delimiters: Vec<String> = Vec::new();
    let mut chars = opts.value('d').unwrap_or("\t").chars();
    while let Some(c) = chars.next() {
        delimiters.push(match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('n') => "\n".into(),
                Some('t') => "\t".into(),
                Some('0') => String::new(),
                Some(other) => other.to_string(),
                None => {
                    return usage_error(
                        ctx,
                        "paste: delimiter list ends with an unescaped backslash: \\",
                        1,
                    );
                }
            },
            (c, false) => c.to_string(),
        });
    }
    if delimiters.is_empty() {
        delimiters.push(String::new());
    }
    let mut operands = opts.operands.clone();
    if operands.is_empty() {
        operands.push("-".into());
    }
    let stdin = ctx.stdin.take_all();
    let stdin_lines = lines(&stdin);
    let dashes = operands.iter().filter(|o| *o == "-").count();
    let mut status = 0;
    let mut columns: Vec<Vec<Vec<u8>>> = Vec::new();
    for name in &operands {
        if name == "-" {
            let turn = columns
                .iter()
                .zip(&operands)
                .filter(|(_, o)| *o == "-")
                .count();
            let mine = stdin_lines.iter().skip(turn).step_by(dashes.max(1));
            columns.push(mine.map(|l| l.to_vec()).collect());
            continue;
        }
        match ctx.read_operand(name) {
            Ok(data) => columns.push(lines(&data).iter().map(|l| l.to_vec()).collect()),
            Err(e) => {
                ctx.warn(&format!("paste: {name}: {e}"));
                status = 1;
                columns.push(Vec::new());
            }
        }
    }
    if status != 0 {
        return status;
    }
    let join = |cells: &mut dyn Iterator<Item = &[u8]>| -> Vec<u8> {
        let mut out = Vec::new();
        for (i, cell) in cells.enumerate() {
            if i > 0 {
                out.extend_from_slice(delimiters[(i - 1) % delimiters.len()].as_bytes());
            }
            out.extend_from_slice(cell);
        }
        out.push(b'\n');
        out
    };
    if opts.has('s') {
        for column in &columns {
            let line = join(&mut column.iter().map(Vec::as_slice));
            ctx.write(&line);
        }
        return 0;
    }
    let rows = columns.iter().map(Vec::len).max().unwrap_or(0);
    for row in 0..rows {
        let line = join(
            &mut columns
                .iter()
                .map(|c| c.get(row).map_or(&[][..], Vec::as_slice)),
        );
        ctx.write(&line);
    }
    0
}

/// `comm [-123] FILE1 FILE2`: the lines only in FILE1, only in FILE2 and in both, in three
/// tab-indented columns, of inputs sorted by bytes. As GNU's, an input out of order is said on
/// stderr (at once with `--check-order`, and only once lines fail to pair otherwise) and makes
/// the status 1.
pub fn comm(ctx: &mut Ctx, args: &[String]) -> i32 {
    let long = [
        ("check-order", '\u{1}'),
        ("nocheck-order", '\u{2}'),
        ("output-delimiter", '\u{3}'),
    ];
    let opts = match parse_opts("comm", args, "\u{3}", &long, None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    if let Err(refusal) = opts.refuse_unknown("comm", "123\u{1}\u{2}\u{3}") {
        return usage_error(ctx, &refusal, 1);
    }
    let (first, second) = match opts.operands.as_slice() {
        [first, second] => (first.clone(), second.clone()),
        [] => return usage_error(ctx, "comm: missing operand", 1),
        [one] => return usage_error(ctx, &format!("comm: missing operand after '{one}'"), 1),
        [_, _, extra, ..] => {
            return usage_error(ctx, &format!("comm: extra operand '{extra}'"), 1);
        }
    };
    let mut inputs = Vec::new();
    for name in [first, second] {
        match ctx.read_operand(&name) {
            Ok(data) => inputs.push(data),
            Err(e) => return usage_error(ctx, &format!("comm: {name}: {e}"), 1),
        }
    }
    let files = [lines(&inputs[0]), lines(&inputs[1])];
    let delimiter = opts.value('\u{3}').unwrap_or("\t").to_string();
    let shown = [!opts.has('1'), !opts.has('2'), !opts.has('3')];
    let strict = opts.has('\u{1}');
    let check = strict || !opts.has('\u{2}');
    let (mut at, mut unpairable, mut disorder) = ([0, 0], false, [false, false]);
    while at[0] < files[0].len() || at[1] < files[1].len() {
        let order = match (files[0].get(at[0]), files[1].get(at[1])) {
            (Some(a), Some(b)) => a.cmp(b),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let column = match order {
            std::cmp::Ordering::Less => 0,
            std::cmp::Ordering::Greater => 1,
            std::cmp::Ordering::Equal => 2,
        };
        unpairable |= column != 2;
        if shown[column] {
            let indent = shown[..column].iter().filter(|s| **s).count();
            let line = if column == 1 {
                files[1][at[1]]
            } else {
                files[0][at[0]]
            };
            ctx.print(&delimiter.repeat(indent));
            ctx.write(line);
            ctx.write(b"\n");
        }
        for file in 0..2 {
            if column != 1 - file {
                at[file] += 1;
                let (prev, next) = (files[file].get(at[file] - 1), files[file].get(at[file]));
                let out_of_order = matches!((prev, next), (Some(p), Some(n)) if p > n);
                if check && (strict || unpairable) && out_of_order && !disorder[file] {
                    disorder[file] = true;
                    ctx.warn(&format!("comm: file {} is not in sorted order", file + 1));
                    if strict {
                        return 1;
                    }
                }
            }
        }
    }
    if disorder[0] || disorder[1] {
        return usage_error(ctx, "comm: input is not in sorted order", 1);
    }
    0
}
