//! `grep` (POSIX basic and extended regular expressions, translated to the `regex` crate's
//! syntax) and a basic `rg` (Rust regex syntax natively, recursive, hidden files skipped).
//! Recursive walks visit entries in byte order; real `grep -r` follows directory order, which
//! is unspecified, so scripts that care sort the output.

use regex::bytes::{Regex, RegexBuilder};

use super::{Ctx, Opts, lines, parse_opts, usage_error};
use tether_vfs::glob;
use tether_vfs::{self as vfs, EntryKind};

/// Why a POSIX regular expression has no translation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternError {
    /// Not a valid expression: GNU's message.
    Invalid(String),
    /// Valid, but beyond the `regex` crate (back-references): what it is.
    Refused(String),
}

impl std::fmt::Display for PatternError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PatternError::Invalid(message) => f.write_str(message),
            PatternError::Refused(what) => write!(f, "{what}: not supported in this sandbox"),
        }
    }
}

impl From<PatternError> for String {
    fn from(error: PatternError) -> Self {
        error.to_string()
    }
}

/// Translates a POSIX regular expression (basic when `extended` is false) to `regex` syntax.
/// GNU's `` \` `` and `\'` become `\A` and `\z`; back-references are refused.
pub fn translate_posix(pattern: &str, extended: bool) -> Result<String, PatternError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let mut at_start = true;
    while i < chars.len() {
        let c = chars[i];
        let starts_atom = at_start;
        at_start = false;
        match c {
            '[' => {
                let (class, len) = bracket(&chars[i..]).ok_or_else(|| {
                    PatternError::Invalid("Unmatched [, [^, [:, [., or [=".to_string())
                })?;
                out.push_str(&class);
                i += len;
                continue;
            }
            '\\' if i + 1 < chars.len() => {
                let next = chars[i + 1];
                i += 2;
                match next {
                    '(' | ')' | '{' | '}' | '|' | '+' | '?' if !extended => {
                        out.push(next);
                        at_start = next == '(' || next == '|';
                    }
                    '<' | '>' => out.push_str("\\b"),
                    '`' => out.push_str("\\A"),
                    '\'' => out.push_str("\\z"),
                    '1'..='9' => {
                        return Err(PatternError::Refused(format!(
                            "back-reference \\{next} in a regular expression"
                        )));
                    }
                    'w' | 'W' | 's' | 'S' | 'b' | 'B' => {
                        out.push('\\');
                        out.push(next);
                    }
                    _ => out.push_str(&regex::escape(&next.to_string())),
                }
                continue;
            }
            '(' | ')' | '|' | '+' | '?' if !extended => {
                out.push('\\');
                out.push(c);
            }
            '{' | '}' if !extended => {
                out.push('\\');
                out.push(c);
            }
            '{' if extended && !chars.get(i + 1).is_some_and(char::is_ascii_digit) => {
                out.push_str("\\{");
            }
            '}' if extended && !out.contains('{') => out.push_str("\\}"),
            '*' if starts_atom => out.push_str("\\*"),
            '^' => {
                out.push(c);
                at_start = true;
            }
            '(' | '|' => {
                out.push(c);
                at_start = true;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    Ok(out)
}

/// A POSIX bracket expression at the start of `chars`, as `regex` syntax, and its length;
/// `None` when it is not closed.
fn bracket(chars: &[char]) -> Option<(String, usize)> {
    let mut out = String::from("[");
    let mut i = 1;
    if chars.get(i) == Some(&'^') {
        out.push('^');
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        out.push_str("\\]");
        i += 1;
    }
    while i < chars.len() {
        let c = chars[i];
        if c == ']' {
            out.push(']');
            return Some((out, i + 1));
        }
        if c == '[' && chars.get(i + 1) == Some(&':') {
            let rest: String = chars[i..].iter().collect();
            if let Some(end) = rest.find(":]") {
                out.push_str(&rest[..end + 2]);
                i += rest[..end + 2].chars().count();
                continue;
            }
        }
        if matches!(c, '\\' | '[' | '&' | '~' | '-')
            && !(c == '-' && i > 1 && chars.get(i + 1) != Some(&']'))
        {
            out.push('\\');
        }
        out.push(c);
        i += 1;
    }
    None
}

/// How lines are matched, shared by `grep` and `rg`.
struct Matcher {
    regex: Regex,
    invert: bool,
}

impl Matcher {
    fn is_match(&self, line: &[u8]) -> bool {
        self.regex.is_match(line) != self.invert
    }
}

fn build_matcher(
    patterns: &[String],
    syntax: Syntax,
    ignore_case: bool,
    word: bool,
    whole_line: bool,
    invert: bool,
) -> Result<Matcher, String> {
    let translated: Vec<String> = patterns
        .iter()
        .flat_map(|p| p.split('\n').map(str::to_string).collect::<Vec<_>>())
        .map(|p| match syntax {
            Syntax::Fixed => Ok(regex::escape(&p)),
            Syntax::Basic => translate_posix(&p, false),
            Syntax::Extended => translate_posix(&p, true),
            Syntax::Rust => Ok(p),
        })
        .collect::<Result<_, _>>()?;
    let alternatives: Vec<String> = translated
        .into_iter()
        .map(|p| {
            if whole_line {
                format!("^(?:{p})$")
            } else if word {
                format!("\\b(?:{p})\\b")
            } else {
                format!("(?:{p})")
            }
        })
        .collect();
    let regex = RegexBuilder::new(&alternatives.join("|"))
        .case_insensitive(ignore_case)
        .multi_line(true)
        .build()
        .map_err(|e| {
            let detail = e.to_string();
            detail
                .lines()
                .last()
                .unwrap_or("invalid regular expression")
                .trim()
                .to_string()
        })?;
    Ok(Matcher { regex, invert })
}

#[derive(Clone, Copy)]
enum Syntax {
    Basic,
    Extended,
    Fixed,
    Rust,
}

/// Output switches common to both tools.
struct Report {
    names: bool,
    numbers: bool,
    count: bool,
    files_with: bool,
    files_without: bool,
    only: bool,
    quiet: bool,
    /// Context lines before and after each match (`-B`, `-A`, `-C`).
    before: usize,
    after: usize,
    /// Whether any line was printed yet, so context groups get their `--` separators.
    printed: std::cell::Cell<bool>,
    /// `-m NUM`: the selected lines to stop after, in each file.
    max: usize,
}

/// Searches one file's content; returns whether anything matched.
fn search(ctx: &mut Ctx, name: &str, data: &[u8], matcher: &Matcher, report: &Report) -> bool {
    let prefix = if report.names {
        format!("{name}:")
    } else {
        String::new()
    };
    if data.contains(&0) && !report.count && !report.files_with && !report.files_without {
        let matched = lines(data).iter().any(|l| matcher.is_match(l));
        if matched && !report.quiet {
            ctx.warn(&format!("grep: {name}: binary file matches"));
        }
        return matched;
    }
    let with_context = (report.before > 0 || report.after > 0)
        && !(report.count
            || report.files_with
            || report.files_without
            || report.quiet
            || report.only);
    if with_context {
        return search_with_context(ctx, &prefix, name, data, matcher, report);
    }
    let mut count = 0;
    for (index, line) in lines(data).iter().enumerate() {
        if count >= report.max {
            break;
        }
        if !matcher.is_match(line) {
            continue;
        }
        count += 1;
        if report.quiet || report.files_with || report.files_without {
            break;
        }
        if report.count {
            continue;
        }
        let number = if report.numbers {
            format!("{}:", index + 1)
        } else {
            String::new()
        };
        if report.only && !matcher.invert {
            for found in matcher
                .regex
                .find_iter(line)
                .filter(|m| !m.as_bytes().is_empty())
            {
                ctx.print(&format!("{prefix}{number}"));
                ctx.write(found.as_bytes());
                ctx.write(b"\n");
            }
        } else {
            ctx.print(&format!("{prefix}{number}"));
            ctx.write(line);
            ctx.write(b"\n");
        }
    }
    if report.count {
        ctx.print(&format!("{prefix}{count}\n"));
    } else if (report.files_with && count > 0) || (report.files_without && count == 0) {
        ctx.print(&format!("{name}\n"));
    }
    if report.files_without {
        count == 0
    } else {
        count > 0
    }
}

/// `grep -A/-B/-C`: matching lines marked `:`, context lines `-`, groups separated by `--`.
fn search_with_context(
    ctx: &mut Ctx,
    prefix: &str,
    name: &str,
    data: &[u8],
    matcher: &Matcher,
    report: &Report,
) -> bool {
    let all = lines(data);
    let context_prefix = if prefix.is_empty() {
        String::new()
    } else {
        format!("{name}-")
    };
    let mut last_printed: Option<usize> = None;
    let mut after_left = 0;
    let mut matched = false;
    let print = |ctx: &mut Ctx, index: usize, is_match: bool, last: &mut Option<usize>| {
        let gap = match *last {
            Some(l) => index > l + 1,
            None => report.printed.get(),
        };
        if gap {
            ctx.print("--\n");
        }
        let (file, sep) = if is_match {
            (prefix, ":")
        } else {
            (context_prefix.as_str(), "-")
        };
        let number = if report.numbers {
            format!("{}{sep}", index + 1)
        } else {
            String::new()
        };
        ctx.print(&format!("{file}{number}"));
        ctx.write(all[index]);
        ctx.write(b"\n");
        *last = Some(index);
        report.printed.set(true);
    };
    let mut found = 0;
    for (index, line) in all.iter().enumerate() {
        if found >= report.max && after_left == 0 {
            break;
        }
        if found < report.max && matcher.is_match(line) {
            matched = true;
            found += 1;
            let start = index
                .saturating_sub(report.before)
                .max(last_printed.map_or(0, |l| l + 1));
            for before in start..index {
                print(ctx, before, false, &mut last_printed);
            }
            print(ctx, index, true, &mut last_printed);
            after_left = report.after;
        } else if after_left > 0 {
            print(ctx, index, false, &mut last_printed);
            after_left -= 1;
        }
    }
    matched
}

/// Files below `dir` (shown with `shown` as prefix), filtered by name globs.
struct Walk<'a> {
    include: Vec<&'a str>,
    exclude: Vec<&'a str>,
    exclude_dir: Vec<&'a str>,
    hidden: bool,
}

impl Walk<'_> {
    fn files(&self, ctx: &Ctx, dir: &str, shown: &str) -> Vec<(String, String)> {
        let mut found = Vec::new();
        let Ok(entries) = ctx.vfs.list(dir) else {
            return found;
        };
        for (name, kind) in entries {
            if !self.hidden && name.starts_with('.') {
                continue;
            }
            let real = vfs::join(dir, &name);
            let display = if shown.is_empty() {
                name.clone()
            } else if shown.ends_with('/') {
                format!("{shown}{name}")
            } else {
                format!("{shown}/{name}")
            };
            match kind {
                EntryKind::Dir => {
                    if !self.exclude_dir.iter().any(|g| glob::matches(g, &name)) {
                        found.extend(self.files(ctx, &real, &display));
                    }
                }
                EntryKind::File => {
                    let included = self.include.is_empty()
                        || self.include.iter().any(|g| glob::matches(g, &name));
                    let excluded = self.exclude.iter().any(|g| glob::matches(g, &name));
                    if included && !excluded {
                        found.push((display, real));
                    }
                }
            }
        }
        found
    }
}

/// The globs of `rg -t TYPE` for the languages a project here is likely to hold.
fn type_globs(file_type: &str) -> Option<&'static [&'static str]> {
    Some(match file_type {
        "js" => &["*.js", "*.jsx", "*.mjs", "*.cjs"],
        "ts" => &["*.ts", "*.tsx", "*.mts", "*.cts"],
        "json" => &["*.json"],
        "md" | "markdown" => &["*.md", "*.markdown"],
        "rust" => &["*.rs"],
        "py" => &["*.py"],
        "css" => &["*.css", "*.scss"],
        "html" => &["*.html", "*.htm"],
        "sh" => &["*.sh", "*.bash"],
        "toml" => &["*.toml"],
        "yaml" => &["*.yaml", "*.yml"],
        "txt" => &["*.txt"],
        _ => return None,
    })
}

fn count_option(value: Option<&str>) -> usize {
    value.and_then(|v| v.parse().ok()).unwrap_or(0)
}

pub fn grep(ctx: &mut Ctx, args: &[String]) -> i32 {
    let long = [
        ("recursive", 'r'),
        ("line-number", 'n'),
        ("ignore-case", 'i'),
        ("files-with-matches", 'l'),
        ("files-without-match", 'L'),
        ("invert-match", 'v'),
        ("extended-regexp", 'E'),
        ("fixed-strings", 'F'),
        ("count", 'c'),
        ("regexp", 'e'),
        ("word-regexp", 'w'),
        ("line-regexp", 'x'),
        ("only-matching", 'o'),
        ("quiet", 'q'),
        ("silent", 'q'),
        ("no-messages", 's'),
        ("with-filename", 'H'),
        ("no-filename", 'h'),
        ("include", '\u{1}'),
        ("exclude", '\u{2}'),
        ("exclude-dir", '\u{3}'),
        ("color", '\u{4}'),
        ("after-context", 'A'),
        ("before-context", 'B'),
        ("context", 'C'),
        ("max-count", 'm'),
    ];
    let opts = match parse_opts("grep", args, "e\u{1}\u{2}\u{3}\u{4}fmABC", &long, None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 2),
    };
    if let Err(refusal) =
        opts.refuse_unknown("grep", "rRniylLvEFPcewxoqshHfmABC\u{1}\u{2}\u{3}\u{4}")
    {
        return usage_error(ctx, &refusal, 2);
    }
    let max = match opts.value('m').map(str::parse::<i64>) {
        None => usize::MAX,
        // As GNU grep: a negative count is no limit.
        Some(Ok(n)) => usize::try_from(n).unwrap_or(usize::MAX),
        Some(Err(_)) => return usage_error(ctx, "grep: invalid max count", 2),
    };
    let mut operands = opts.operands.clone();
    let mut patterns: Vec<String> = opts.all('e').map(str::to_string).collect();
    if let Some(file) = opts.value('f') {
        match ctx.read_operand(file) {
            Ok(data) => patterns.extend(
                lines(&data)
                    .iter()
                    .map(|l| String::from_utf8_lossy(l).into_owned()),
            ),
            Err(e) => return usage_error(ctx, &format!("grep: {file}: {e}"), 2),
        }
    }
    if patterns.is_empty() {
        if operands.is_empty() {
            return usage_error(ctx, "Usage: grep [OPTION]... PATTERNS [FILE]...", 2);
        }
        patterns.push(operands.remove(0));
    }
    let syntax = if opts.has('F') {
        Syntax::Fixed
    } else if opts.has('P') {
        Syntax::Rust
    } else if opts.has('E') {
        Syntax::Extended
    } else {
        Syntax::Basic
    };
    let matcher = match build_matcher(
        &patterns,
        syntax,
        opts.has('i') || opts.has('y'),
        opts.has('w'),
        opts.has('x'),
        opts.has('v'),
    ) {
        Ok(m) => m,
        Err(e) => return usage_error(ctx, &format!("grep: {e}"), 2),
    };
    let recursive = opts.has('r') || opts.has('R');
    let walk = Walk {
        include: opts.all('\u{1}').collect(),
        exclude: opts.all('\u{2}').collect(),
        exclude_dir: opts.all('\u{3}').collect(),
        hidden: true,
    };
    let implicit_cwd = recursive && operands.is_empty();
    let mut targets: Vec<(String, Option<String>)> = Vec::new();
    if implicit_cwd {
        let cwd = ctx.cwd.to_string();
        targets.extend(
            walk.files(ctx, &cwd, "")
                .into_iter()
                .map(|(s, r)| (s, Some(r))),
        );
    } else if operands.is_empty() {
        targets.push(("(standard input)".into(), None));
    }
    let mut errors = false;
    for operand in &operands {
        if operand == "-" {
            targets.push(("(standard input)".into(), None));
            continue;
        }
        let path = ctx.resolve(operand);
        match ctx.vfs.kind(&path) {
            Some(EntryKind::Dir) if recursive => {
                targets.extend(
                    walk.files(ctx, &path, operand)
                        .into_iter()
                        .map(|(s, r)| (s, Some(r))),
                );
            }
            Some(EntryKind::Dir) => {
                if !opts.has('s') {
                    ctx.warn(&format!("grep: {operand}: Is a directory"));
                }
                errors = true;
            }
            Some(EntryKind::File) => targets.push((operand.clone(), Some(path))),
            None => {
                if !opts.has('s') {
                    ctx.warn(&format!("grep: {operand}: No such file or directory"));
                }
                errors = true;
            }
        }
    }
    // As GNU grep: file names prefix the lines when there are several operands, or when -r
    // walks a directory — not for -r over a single file.
    let walks_a_directory = recursive
        && (operands.is_empty()
            || operands
                .iter()
                .any(|operand| ctx.vfs.kind(&ctx.resolve(operand)) == Some(EntryKind::Dir)));
    let report = Report {
        names: !opts.has('h') && (opts.has('H') || walks_a_directory || operands.len() > 1),
        numbers: opts.has('n'),
        count: opts.has('c'),
        files_with: opts.has('l'),
        files_without: opts.has('L'),
        only: opts.has('o'),
        quiet: opts.has('q'),
        before: count_option(opts.value('B').or(opts.value('C'))),
        after: count_option(opts.value('A').or(opts.value('C'))),
        printed: std::cell::Cell::new(false),
        max,
    };
    let mut matched = false;
    for (shown, real) in targets {
        let data = match real {
            Some(path) => ctx.vfs.read(&path).map(<[u8]>::to_vec).unwrap_or_default(),
            None => ctx.stdin.take_all(),
        };
        matched |= search(ctx, &shown, &data, &matcher, &report);
        if matched && report.quiet {
            return 0;
        }
    }
    match (errors, matched) {
        (true, _) => 2,
        (false, true) => 0,
        (false, false) => 1,
    }
}

/// `egrep` and `fgrep`: `grep -E` and `grep -F`, as the scripts GNU ships.
pub fn egrep(ctx: &mut Ctx, args: &[String]) -> i32 {
    grep(ctx, &[&["-E".to_string()], args].concat())
}

pub fn fgrep(ctx: &mut Ctx, args: &[String]) -> i32 {
    grep(ctx, &[&["-F".to_string()], args].concat())
}

pub fn rg(ctx: &mut Ctx, args: &[String]) -> i32 {
    let long = [
        ("line-number", 'n'),
        ("no-line-number", 'N'),
        ("ignore-case", 'i'),
        ("files-with-matches", 'l'),
        ("invert-match", 'v'),
        ("fixed-strings", 'F'),
        ("count", 'c'),
        ("regexp", 'e'),
        ("word-regexp", 'w'),
        ("only-matching", 'o'),
        ("quiet", 'q'),
        ("glob", 'g'),
        ("type", 't'),
        ("hidden", '.'),
        ("files", '\u{1}'),
        ("no-heading", '\u{2}'),
        ("with-filename", 'H'),
        ("no-filename", 'I'),
        ("files-without-match", '\u{3}'),
    ];
    let opts: Opts = match parse_opts("rg", args, "egt", &long, None) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &format!("error: {e}"), 2),
    };
    if let Err(refusal) = opts.refuse_unknown("rg", "nNilvFcewoqgt.HIS\u{1}\u{2}\u{3}") {
        return usage_error(ctx, &refusal, 2);
    }
    let mut operands = opts.operands.clone();
    let mut include: Vec<&str> = opts.all('g').filter(|g| !g.starts_with('!')).collect();
    for file_type in opts.all('t') {
        match type_globs(file_type) {
            Some(globs) => include.extend(globs),
            None => {
                return usage_error(ctx, &format!("rg: unrecognized file type: {file_type}"), 2);
            }
        }
    }
    let walk = Walk {
        include,
        exclude: opts.all('g').filter_map(|g| g.strip_prefix('!')).collect(),
        exclude_dir: opts.all('g').filter_map(|g| g.strip_prefix('!')).collect(),
        hidden: opts.has('.'),
    };
    let list_files = opts.has('\u{1}');
    let mut patterns: Vec<String> = opts.all('e').map(str::to_string).collect();
    if patterns.is_empty() && !list_files {
        if operands.is_empty() {
            return usage_error(
                ctx,
                "error: no pattern given (usage: rg [OPTIONS] PATTERN [PATH ...])",
                2,
            );
        }
        patterns.push(operands.remove(0));
    }
    // As rg: stdin is searched only without paths, and never read by `--files`.
    let stdin = if operands.is_empty() && !list_files {
        ctx.stdin.take_all()
    } else {
        Vec::new()
    };
    let from_stdin = !stdin.is_empty();
    let mut targets: Vec<(String, Option<String>)> = Vec::new();
    let mut errors = false;
    if from_stdin {
        targets.push(("<stdin>".into(), None));
    } else if operands.is_empty() {
        let cwd = ctx.cwd.to_string();
        targets.extend(
            walk.files(ctx, &cwd, "")
                .into_iter()
                .map(|(s, r)| (s, Some(r))),
        );
    }
    for operand in &operands {
        let path = ctx.resolve(operand);
        match ctx.vfs.kind(&path) {
            Some(EntryKind::Dir) => targets.extend(
                walk.files(ctx, &path, operand)
                    .into_iter()
                    .map(|(s, r)| (s, Some(r))),
            ),
            Some(EntryKind::File) => targets.push((operand.clone(), Some(path))),
            None => {
                ctx.warn(&format!(
                    "rg: {operand}: No such file or directory (os error 2)"
                ));
                errors = true;
            }
        }
    }
    if list_files {
        for (shown, _) in &targets {
            ctx.print(&format!("{shown}\n"));
        }
        return if targets.is_empty() {
            1
        } else {
            i32::from(errors) * 2
        };
    }
    let ignore_case =
        opts.has('i') || (opts.has('S') && patterns.iter().all(|p| p.to_lowercase() == *p));
    let matcher = match build_matcher(
        &patterns,
        if opts.has('F') {
            Syntax::Fixed
        } else {
            Syntax::Rust
        },
        ignore_case,
        opts.has('w'),
        false,
        opts.has('v'),
    ) {
        Ok(m) => m,
        Err(e) => return usage_error(ctx, &format!("rg: regex parse error: {e}"), 2),
    };
    let single_file =
        operands.len() == 1 && targets.len() == 1 && ctx.vfs.is_file(&ctx.resolve(&operands[0]));
    let report = Report {
        names: !opts.has('I') && (opts.has('H') || !single_file) && !from_stdin,
        numbers: opts.has('n') && !opts.has('N'),
        count: opts.has('c'),
        files_with: opts.has('l'),
        files_without: opts.has('\u{3}'),
        only: opts.has('o'),
        quiet: opts.has('q'),
        before: 0,
        after: 0,
        printed: std::cell::Cell::new(false),
        max: usize::MAX,
    };
    let mut matched = false;
    for (shown, real) in targets {
        let data = match real {
            Some(path) => ctx.vfs.read(&path).map(<[u8]>::to_vec).unwrap_or_default(),
            None => stdin.clone(),
        };
        matched |= search(ctx, &shown, &data, &matcher, &report);
    }
    match (errors, matched) {
        (true, _) => 2,
        (false, true) => 0,
        (false, false) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::translate_posix;

    #[test]
    fn basic_and_extended_translation() {
        let cases = [
            ("a\\(b\\)*", false, "a(b)*"),
            ("a(b)+", false, "a\\(b\\)\\+"),
            ("a(b)+", true, "a(b)+"),
            ("*x", false, "\\*x"),
            ("[]a]", false, "[\\]a]"),
            ("[[:digit:]]\\{2\\}", false, "[[:digit:]]{2}"),
            ("\\<word\\>", true, "\\bword\\b"),
            ("a.b", false, "a.b"),
            ("x{", true, "x\\{"),
        ];
        for (pattern, extended, want) in cases {
            assert_eq!(
                translate_posix(pattern, extended).unwrap(),
                want,
                "{pattern}"
            );
        }
        assert!(translate_posix("[abc", false).is_err());
        {}
    }
}
