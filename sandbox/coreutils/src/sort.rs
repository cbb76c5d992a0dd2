//! `sort`: byte order under `LC_ALL=C`; keys (`-k F[.C][OPTS][,F[.C][OPTS]]`) and separators
//! (`-t`) located as GNU's `begfield`/`limfield` do; the orders `-n` (exact decimal), `-g`,
//! `-h` (human sizes), `-M`, `-V` (GNU's `filevercmp`), `-d`, `-i`, `-f`, `-b`, `-r`; `-u`,
//! `-s`, `-c`/`-C` (check) and `-o FILE`. As in GNU sort, lines equal on every key are ordered
//! by their bytes (reversed with `-r`) unless `-s` or `-u` is given.

use std::cmp::Ordering;

use super::{Ctx, lines, parse_opts, usage_error};

/// How one key (or the whole line) compares.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Rule {
    kind: Kind,
    reverse: bool,
    fold: bool,
    dictionary: bool,
    printable: bool,
    skip_start_blanks: bool,
    skip_end_blanks: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
enum Kind {
    #[default]
    Text,
    Numeric,
    General,
    Human,
    Month,
    Version,
}

impl Rule {
    /// Applies one ordering letter; false when the letter is not one.
    fn set(&mut self, letter: char, at_end: bool) -> bool {
        match letter {
            'n' => self.kind = Kind::Numeric,
            'g' => self.kind = Kind::General,
            'h' => self.kind = Kind::Human,
            'M' => self.kind = Kind::Month,
            'V' => self.kind = Kind::Version,
            'r' => self.reverse = true,
            'f' => self.fold = true,
            'd' => self.dictionary = true,
            'i' => self.printable = true,
            'b' if at_end => self.skip_end_blanks = true,
            'b' => self.skip_start_blanks = true,
            _ => return false,
        }
        true
    }
}

/// A `-k` key: 0-based start field and character, the end field (`None`: end of line) and end
/// character (0: the end of that field).
#[derive(Debug, Clone, Copy)]
struct Key {
    start_field: usize,
    start_char: usize,
    end_field: Option<usize>,
    end_char: usize,
    rule: Rule,
}

fn parse_key(spec: &str, global: Rule) -> Result<Key, String> {
    let bad = |why: &str| format!("sort: {why}: invalid field specification '{spec}'");
    let (start, end) = match spec.split_once(',') {
        Some((s, e)) => (s, Some(e)),
        None => (spec, None),
    };
    let mut rule = Rule::default();
    // `F[.C]` then ordering letters; returns (F, C).
    let mut position = |part: &str, at_end: bool| -> Result<(usize, Option<usize>), String> {
        let field_len = part.bytes().take_while(u8::is_ascii_digit).count();
        let field = part[..field_len]
            .parse()
            .map_err(|_| bad("invalid number"))?;
        let mut rest = &part[field_len..];
        let mut char_pos = None;
        if let Some(after) = rest.strip_prefix('.') {
            let len = after.bytes().take_while(u8::is_ascii_digit).count();
            char_pos = Some(after[..len].parse().map_err(|_| bad("invalid number"))?);
            rest = &after[len..];
        }
        for letter in rest.chars() {
            if !rule.set(letter, at_end) {
                return Err(format!(
                    "sort: stray character in field spec: invalid field specification '{spec}'"
                ));
            }
        }
        Ok((field, char_pos))
    };
    let (start_field, start_char) = position(start, false)?;
    if start_field == 0 {
        return Err(bad("field number is zero"));
    }
    if start_char == Some(0) {
        return Err(bad("character offset is zero"));
    }
    let (end_field, end_char) = match end {
        Some(end) => {
            let (field, char_pos) = position(end, true)?;
            if field == 0 {
                return Err(bad("field number is zero"));
            }
            (Some(field - 1), char_pos.unwrap_or(0))
        }
        None => (None, 0),
    };
    // A key without ordering letters of its own takes all the global ones.
    if rule == Rule::default() {
        rule = global;
    }
    Ok(Key {
        start_field: start_field - 1,
        start_char: start_char.map_or(0, |c| c - 1),
        end_field,
        end_char,
        rule,
    })
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Moves past `count` fields from `pos`: up to and past the separator, or past blanks then
/// non-blanks when there is none. `skip_last_tab` says whether the last separator is passed.
fn skip_fields(
    line: &[u8],
    mut pos: usize,
    count: usize,
    tab: Option<u8>,
    skip_last: bool,
) -> usize {
    for left in (0..count).rev() {
        if pos >= line.len() {
            break;
        }
        match tab {
            Some(t) => {
                while pos < line.len() && line[pos] != t {
                    pos += 1;
                }
                if pos < line.len() && (left > 0 || skip_last) {
                    pos += 1;
                }
            }
            None => {
                while pos < line.len() && is_blank(line[pos]) {
                    pos += 1;
                }
                while pos < line.len() && !is_blank(line[pos]) {
                    pos += 1;
                }
            }
        }
    }
    pos
}

fn skip_blanks(line: &[u8], mut pos: usize) -> usize {
    while pos < line.len() && is_blank(line[pos]) {
        pos += 1;
    }
    pos
}

/// The bytes of `key` in `line`.
fn key_text<'a>(line: &'a [u8], key: &Key, tab: Option<u8>) -> &'a [u8] {
    let mut start = skip_fields(line, 0, key.start_field, tab, true);
    if key.rule.skip_start_blanks {
        start = skip_blanks(line, start);
    }
    start = (start + key.start_char).min(line.len());
    let end = match key.end_field {
        None => line.len(),
        Some(field) => {
            let fields = if key.end_char == 0 { field + 1 } else { field };
            let mut end = skip_fields(line, 0, fields, tab, key.end_char != 0);
            if key.end_char != 0 {
                if key.rule.skip_end_blanks {
                    end = skip_blanks(line, end);
                }
                end = (end + key.end_char).min(line.len());
            }
            end
        }
    };
    &line[start..end.max(start)]
}

/// A decimal number as `-n` reads it: sign, integer digits without leading zeros, fraction
/// digits without trailing zeros; no digits at all reads as zero.
fn decimal(text: &[u8]) -> (bool, &[u8], &[u8]) {
    let text = &text[skip_blanks(text, 0)..];
    let negative = text.first() == Some(&b'-');
    let body = &text[usize::from(negative)..];
    let int_len = body.iter().take_while(|b| b.is_ascii_digit()).count();
    let int = &body[body[..int_len].iter().take_while(|b| **b == b'0').count()..int_len];
    let mut frac: &[u8] = &[];
    if body.get(int_len) == Some(&b'.') {
        let rest = &body[int_len + 1..];
        frac = &rest[..rest.iter().take_while(|b| b.is_ascii_digit()).count()];
        while let [head @ .., b'0'] = frac {
            frac = head;
        }
    }
    let zero = int.is_empty() && frac.is_empty();
    (negative && !zero, int, frac)
}

fn compare_decimal(a: &[u8], b: &[u8]) -> Ordering {
    compare_decimals(decimal(a), decimal(b))
}

/// Two numbers as [`decimal`] reads them.
fn compare_decimals(
    (na, ia, fa): (bool, &[u8], &[u8]),
    (nb, ib, fb): (bool, &[u8], &[u8]),
) -> Ordering {
    let magnitude = ia.len().cmp(&ib.len()).then(ia.cmp(ib)).then(fa.cmp(fb));
    match (na, nb) {
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
        (negative, _) => {
            if negative {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
    }
}

/// The power of a `-h` number's unit suffix (K = 1 … Q = 10), negated for negative numbers;
/// 0 for a number without one and for zero, as GNU's `find_unit_order`.
fn unit_order(text: &[u8]) -> i32 {
    let (negative, int, frac) = decimal(text);
    let text = &text[skip_blanks(text, 0)..];
    let digits = text
        .iter()
        .skip(usize::from(text.first() == Some(&b'-')))
        .take_while(|b| b.is_ascii_digit() || **b == b'.')
        .count();
    let suffix = text.get(digits + usize::from(text.first() == Some(&b'-')));
    if int.is_empty() && frac.is_empty() {
        return 0;
    }
    let order = suffix.and_then(|s| {
        b"KMGTPEZYRQ"
            .iter()
            .position(|u| u == s || (*s == b'k' && *u == b'K'))
    });
    let order = order.map_or(0, |o| o as i32 + 1);
    if negative { -order } else { order }
}

/// A `-g` number: what `strtod` reads at the start, `None` when nothing is.
fn general(text: &[u8]) -> Option<f64> {
    let t = &text[skip_blanks(text, 0)..];
    let digits = |i: &mut usize| {
        let start = *i;
        while t.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut end = usize::from(matches!(t.first(), Some(b'+' | b'-')));
    let mut count = digits(&mut end);
    if t.get(end) == Some(&b'.') {
        end += 1;
        count += digits(&mut end);
    }
    if count == 0 {
        let word = &t[end..];
        let named = [&b"infinity"[..], b"inf", b"nan"]
            .into_iter()
            .find(|w| word.len() >= w.len() && word[..w.len()].eq_ignore_ascii_case(w))?;
        end += named.len();
    } else if matches!(t.get(end), Some(b'e' | b'E')) {
        let mut exponent = end + 1 + usize::from(matches!(t.get(end + 1), Some(b'+' | b'-')));
        if digits(&mut exponent) > 0 {
            end = exponent;
        }
    }
    std::str::from_utf8(&t[..end]).ok()?.parse().ok()
}

fn month(text: &[u8]) -> usize {
    const MONTHS: [&[u8]; 12] = [
        b"JAN", b"FEB", b"MAR", b"APR", b"MAY", b"JUN", b"JUL", b"AUG", b"SEP", b"OCT", b"NOV",
        b"DEC",
    ];
    let text = &text[skip_blanks(text, 0)..];
    MONTHS
        .iter()
        .position(|m| text.len() >= 3 && text[..3].eq_ignore_ascii_case(m))
        .map_or(0, |i| i + 1)
}

/// GNU's `filevercmp`: `.` and `..` and hidden names first, then file names compared as
/// versions without their suffixes (`.tar.gz`), then with them.
fn version_compare(a: &[u8], b: &[u8]) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        _ => {}
    }
    let rank = |s: &[u8]| match s {
        b"." => 0,
        b".." => 1,
        [b'.', ..] => 2,
        _ => 3,
    };
    let (ra, rb) = (rank(a), rank(b));
    if ra != rb || ra < 2 {
        return ra.cmp(&rb);
    }
    let (pa, pb) = (prefix_len(a), prefix_len(b));
    let first = verrevcmp(&a[..pa], &b[..pb]);
    if first.is_ne() || (pa == a.len() && pb == b.len()) {
        first
    } else {
        verrevcmp(a, b)
    }
}

/// The length of a file name without its suffix: trailing `.` + letter or `~` + alphanumerics.
fn prefix_len(s: &[u8]) -> usize {
    let mut prefix = 0;
    let mut i = 0;
    while i < s.len() {
        i += 1;
        prefix = i;
        while i + 1 < s.len()
            && s[i] == b'.'
            && (s[i + 1].is_ascii_alphabetic() || s[i + 1] == b'~')
        {
            i += 2;
            while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'~') {
                i += 1;
            }
        }
    }
    prefix
}

/// The Debian version comparison at the heart of `filevercmp`.
fn verrevcmp(a: &[u8], b: &[u8]) -> Ordering {
    let order = |s: &[u8], i: usize| -> i32 {
        match s.get(i) {
            None => -1,
            Some(c) if c.is_ascii_digit() => 0,
            Some(c) if c.is_ascii_alphabetic() => i32::from(*c),
            Some(b'~') => -2,
            Some(c) => i32::from(*c) + 256,
        }
    };
    let digit = |s: &[u8], i: usize| s.get(i).is_some_and(u8::is_ascii_digit);
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        while (i < a.len() && !digit(a, i)) || (j < b.len() && !digit(b, j)) {
            let (oa, ob) = (order(a, i), order(b, j));
            if oa != ob {
                return oa.cmp(&ob);
            }
            i += 1;
            j += 1;
        }
        while a.get(i) == Some(&b'0') {
            i += 1;
        }
        while b.get(j) == Some(&b'0') {
            j += 1;
        }
        let mut first_diff = Ordering::Equal;
        while digit(a, i) && digit(b, j) {
            if first_diff.is_eq() {
                first_diff = a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
        if digit(a, i) {
            return Ordering::Greater;
        }
        if digit(b, j) {
            return Ordering::Less;
        }
        if first_diff.is_ne() {
            return first_diff;
        }
    }
    Ordering::Equal
}

/// Compares two keys' text under `rule`, before `-r`.
fn compare_text(rule: &Rule, a: &[u8], b: &[u8]) -> Ordering {
    match rule.kind {
        Kind::Numeric => return compare_decimal(a, b),
        Kind::Human => {
            return unit_order(a)
                .cmp(&unit_order(b))
                .then_with(|| compare_decimal(a, b));
        }
        Kind::General => {
            return match (general(a), general(b)) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                (x, y) => x.is_some().cmp(&y.is_some()),
            };
        }
        Kind::Month => return month(a).cmp(&month(b)),
        Kind::Version => return version_compare(a, b),
        Kind::Text => {}
    }
    if !rule.fold && !rule.dictionary && !rule.printable {
        return a.cmp(b);
    }
    let keep = |c: &u8| {
        !(rule.dictionary && !(c.is_ascii_alphanumeric() || is_blank(*c)))
            && !(rule.printable && !(c.is_ascii_graphic() || *c == b' '))
    };
    let fold = |c: &u8| {
        if rule.fold {
            c.to_ascii_uppercase()
        } else {
            *c
        }
    };
    a.iter()
        .filter(|c| keep(c))
        .map(fold)
        .cmp(b.iter().filter(|c| keep(c)).map(fold))
}

struct Sorter {
    keys: Vec<Key>,
    tab: Option<u8>,
    /// `-s` or `-u`: no last-resort comparison of whole lines.
    stable: bool,
    reverse: bool,
}

/// A line with its first key's bytes, found once rather than at every comparison, and read
/// as a number when that key sorts by `-n`.
struct Row<'a> {
    line: &'a [u8],
    key: &'a [u8],
    number: Option<(bool, &'a [u8], &'a [u8])>,
}

impl Sorter {
    fn row<'a>(&self, line: &'a [u8]) -> Row<'a> {
        let Some(first) = self.keys.first() else {
            return Row {
                line,
                key: line,
                number: None,
            };
        };
        let key = key_text(line, first, self.tab);
        let number = matches!(first.rule.kind, Kind::Numeric).then(|| decimal(key));
        Row { line, key, number }
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        self.compare_rows(&self.row(a), &self.row(b))
    }

    fn compare_rows(&self, a: &Row, b: &Row) -> Ordering {
        let keys = self
            .keys
            .iter()
            .enumerate()
            .map(|(index, key)| match index {
                0 => (key, a.key, b.key),
                _ => (
                    key,
                    key_text(a.line, key, self.tab),
                    key_text(b.line, key, self.tab),
                ),
            });
        for (index, (key, ka, kb)) in keys.enumerate() {
            let order = match (index, a.number, b.number) {
                (0, Some(x), Some(y)) => compare_decimals(x, y),
                _ => compare_text(&key.rule, ka, kb),
            };
            let order = if key.rule.reverse {
                order.reverse()
            } else {
                order
            };
            if order.is_ne() {
                return order;
            }
        }
        if self.stable && !self.keys.is_empty() {
            return Ordering::Equal;
        }
        if self.reverse {
            b.line.cmp(a.line)
        } else {
            a.line.cmp(b.line)
        }
    }
}

pub fn sort(ctx: &mut Ctx, args: &[String]) -> i32 {
    let long = [
        ("numeric-sort", 'n'),
        ("general-numeric-sort", 'g'),
        ("human-numeric-sort", 'h'),
        ("month-sort", 'M'),
        ("version-sort", 'V'),
        ("reverse", 'r'),
        ("ignore-case", 'f'),
        ("dictionary-order", 'd'),
        ("ignore-nonprinting", 'i'),
        ("ignore-leading-blanks", 'b'),
        ("unique", 'u'),
        ("stable", 's'),
        ("check", 'c'),
        ("merge", 'm'),
        ("key", 'k'),
        ("field-separator", 't'),
        ("output", 'o'),
        ("buffer-size", 'S'),
        ("parallel", '\u{1}'),
        ("temporary-directory", 'T'),
    ];
    let opts = match parse_opts("sort", args, "ktoST\u{1}", &long, None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 2),
    };
    // -m, -S, -T and --parallel change how GNU sort works, not what it prints.
    if let Err(refusal) = opts.refuse_unknown("sort", "nghMVrfdibuscCmktoST\u{1}") {
        return usage_error(ctx, &refusal, 2);
    }
    let mut global = Rule::default();
    for letter in ['n', 'g', 'h', 'M', 'V', 'r', 'f', 'd', 'i'] {
        if opts.has(letter) {
            global.set(letter, false);
        }
    }
    if opts.has('b') {
        global.skip_start_blanks = true;
        global.skip_end_blanks = true;
    }
    let kinds = ['n', 'g', 'h', 'M', 'V']
        .iter()
        .filter(|k| opts.has(**k))
        .count();
    if kinds > 1 {
        return usage_error(ctx, "sort: options '-gh...' are incompatible", 2);
    }
    let mut keys = Vec::new();
    for spec in opts.all('k') {
        match parse_key(spec, global) {
            Ok(key) => keys.push(key),
            Err(e) => return usage_error(ctx, &e, 2),
        }
    }
    if keys.is_empty() && global != Rule::default() {
        keys.push(Key {
            start_field: 0,
            start_char: 0,
            end_field: None,
            end_char: 0,
            rule: global,
        });
    }
    let tab = match opts.value('t') {
        None => None,
        Some(t) if t.len() == 1 => t.bytes().next(),
        Some("\\0") => Some(0),
        Some(t) => return usage_error(ctx, &format!("sort: multi-character tab '{t}'"), 2),
    };
    let sorter = Sorter {
        keys,
        tab,
        stable: opts.has('s') || opts.has('u'),
        reverse: global.reverse,
    };
    let check = opts.has('c') || opts.has('C');
    if check && opts.operands.len() > 1 {
        let extra = &opts.operands[1];
        return usage_error(
            ctx,
            &format!("sort: extra operand '{extra}' not allowed with -c"),
            2,
        );
    }
    let mut data = Vec::new();
    let names = if opts.operands.is_empty() {
        vec!["-".to_string()]
    } else {
        opts.operands.clone()
    };
    for name in &names {
        match ctx.read_operand(name) {
            Ok(mut d) => {
                if !d.is_empty() && !d.ends_with(b"\n") {
                    d.push(b'\n');
                }
                data.extend(d);
            }
            Err(e) => return usage_error(ctx, &format!("sort: cannot read: {name}: {e}"), 2),
        }
    }
    let rows: Vec<&[u8]> = lines(&data);
    if check {
        let strict = opts.has('u');
        for (index, pair) in rows.windows(2).enumerate() {
            let order = sorter.compare(pair[0], pair[1]);
            if order.is_gt() || (strict && order.is_eq()) {
                if opts.has('c') {
                    let line = String::from_utf8_lossy(pair[1]);
                    ctx.warn(&format!(
                        "sort: {}:{}: disorder: {line}",
                        names[0],
                        index + 2
                    ));
                }
                return 1;
            }
        }
        return 0;
    }
    let mut rows: Vec<Row> = rows.into_iter().map(|line| sorter.row(line)).collect();
    rows.sort_by(|a, b| sorter.compare_rows(a, b));
    if opts.has('u') {
        rows.dedup_by(|b, a| sorter.compare_rows(a, b).is_eq());
    }
    let mut out = Vec::with_capacity(data.len());
    for row in rows {
        out.extend_from_slice(row.line);
        out.push(b'\n');
    }
    match opts.value('o') {
        Some(file) => {
            let path = ctx.resolve(file);
            if let Err(e) = ctx.vfs.write(&path, out) {
                return usage_error(ctx, &format!("sort: open failed: {file}: {e}"), 2);
            }
        }
        None => ctx.write(&out),
    }
    0
}
