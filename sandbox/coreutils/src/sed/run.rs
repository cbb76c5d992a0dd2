//! Running a parsed script over its input: GNU sed's cycle (read a line into the pattern space,
//! run the commands, print it unless `-n`, flush what `a`, `r` and `R` queued), the hold space,
//! ranges, branches, and GNU's keeping of a missing final newline.

use std::collections::BTreeMap;

use regex::Regex;

use super::parse::{Addr, Cmd, Op, Part, RangeEnd, Script, Subst};

/// Branches taken and `D` restarts one run may make, so `:a;ba` ends.
const MAX_JUMPS: usize = 10_000_000;
/// Bytes of pattern space the `s` commands of one run may scan, so `:a;s/^/x/;ta` ends.
const MAX_WORK: usize = 1 << 30;

/// One input line: its text and whether a newline ended it.
pub(super) type Line = (String, bool);

/// What a run leaves behind.
pub(super) struct Outcome {
    pub out: Vec<u8>,
    pub err: Vec<u8>,
    /// Files written by `w`, `W` and `s///w`, whole.
    pub files: BTreeMap<String, Vec<u8>>,
    /// `q`/`Q`'s exit code, or an error's.
    pub exit: Option<i32>,
}

/// Where a range command stands, as GNU sed keeps it: a range whose first address is a line
/// number opens once at most.
#[derive(Clone, Copy, Default, PartialEq)]
enum State {
    #[default]
    Inactive,
    Active,
    Closed,
}

#[derive(Clone, Copy, Default)]
struct Range {
    state: State,
    /// The last line of a `+N` or `~N` end.
    end_line: usize,
}

pub(super) struct Run<'a> {
    script: &'a Script,
    quiet: bool,
    delimiter: char,
    wrap: usize,
    /// Reads a file for `r` and `R` (the VFS).
    pub read_file: &'a dyn Fn(&str) -> Option<String>,
    out: Outcome,
    missing_newline: bool,
    /// What `a`, `r` and `R` queued for the end of the cycle, if anything (even nothing: `a\`
    /// with no text still ends an unterminated last line).
    appended: Option<String>,
    ps: String,
    chomped: bool,
    line_number: usize,
    replaced: bool,
    file_name: String,
    hold: String,
    /// Whether the hold space's text ended with a newline: `g`, `G`, `h`, `H` and `x` carry
    /// it with the text, as GNU sed does.
    hold_chomped: bool,
    last_regex: Option<usize>,
    /// `R`'s read position in each file.
    read_lines: BTreeMap<String, usize>,
    ranges: Vec<Range>,
    jumps: usize,
    work: usize,
}

enum Flow {
    Continue,
    /// End the cycle without printing the pattern space (`d`, `c`).
    EndCycle,
    Quit(bool, i32),
}

impl<'a> Run<'a> {
    pub fn new(
        script: &'a Script,
        quiet: bool,
        delimiter: char,
        wrap: usize,
        read_file: &'a dyn Fn(&str) -> Option<String>,
    ) -> Self {
        Run {
            script,
            quiet: quiet || script.quiet,
            delimiter,
            wrap,
            read_file,
            out: Outcome {
                out: Vec::new(),
                err: Vec::new(),
                files: BTreeMap::new(),
                exit: None,
            },
            missing_newline: false,
            appended: None,
            ps: String::new(),
            chomped: true,
            line_number: 0,
            replaced: false,
            file_name: "-".into(),
            hold: String::new(),
            hold_chomped: true,
            last_regex: None,
            read_lines: BTreeMap::new(),
            ranges: vec![Range::default(); script.cmds.len()],
            jumps: 0,
            work: 0,
        }
    }

    pub fn finish(self) -> Outcome {
        self.out
    }

    /// Takes stdout so far (one file's new content under `-i`).
    pub fn take_out(&mut self) -> Vec<u8> {
        self.missing_newline = false;
        std::mem::take(&mut self.out.out)
    }

    /// Whether `q` or `Q` (or a limit) ended the run.
    pub fn exited(&self) -> bool {
        self.out.exit.is_some()
    }

    /// Writes `text` to stdout, after the newline a previous unterminated line still owes.
    fn emit(&mut self, text: &str, newline: bool) {
        if self.missing_newline {
            self.out.out.push(self.delimiter as u8);
            self.missing_newline = false;
        }
        self.out.out.extend_from_slice(text.as_bytes());
        if newline {
            self.out
                .out
                .extend_from_slice(self.delimiter.to_string().as_bytes());
        } else {
            self.missing_newline = true;
        }
    }

    fn write_to(&mut self, file: &str, text: &str) {
        let line = format!("{text}{}", self.delimiter);
        match file {
            "/dev/stdout" => self.emit(text, true),
            "/dev/stderr" => self.out.err.extend_from_slice(line.as_bytes()),
            _ => self
                .out
                .files
                .entry(file.to_string())
                .or_default()
                .extend_from_slice(line.as_bytes()),
        }
    }

    fn flush_appended(&mut self) {
        if let Some(text) = self.appended.take() {
            if self.missing_newline {
                self.out.out.push(self.delimiter as u8);
                self.missing_newline = false;
            }
            self.out.out.extend_from_slice(text.as_bytes());
        }
    }

    fn regex(&mut self, index: Option<usize>) -> Option<&'a Regex> {
        let index = index.or(self.last_regex)?;
        self.last_regex = Some(index);
        self.script.regexes.get(index)
    }

    fn matches(&mut self, addr: &Addr, last: bool) -> bool {
        let n = self.line_number;
        match addr {
            Addr::Line(l) => n == *l,
            Addr::Last => last,
            Addr::Zero => false,
            Addr::Step(first, step) => {
                if *step == 0 {
                    n == *first
                } else {
                    n >= *first && (n - first).is_multiple_of(*step)
                }
            }
            Addr::Regex(index) => {
                let regex = self.regex(*index);
                regex.is_some_and(|r| r.is_match(&self.ps))
            }
        }
    }

    /// Whether command `index` applies to the current line, moving its range along.
    fn selected(&mut self, index: usize, cmd: &Cmd, last: bool) -> bool {
        let Some(start) = &cmd.start else {
            return true;
        };
        let Some(end) = &cmd.end else {
            return self.matches(start, last);
        };
        let n = self.line_number;
        let mut range = self.ranges[index];
        if range.state != State::Active {
            match start {
                Addr::Line(_) | Addr::Zero if range.state == State::Closed => return false,
                Addr::Line(first) if n < *first => return false,
                Addr::Line(_) | Addr::Zero => {}
                _ if !self.matches(start, last) => return false,
                _ => {}
            }
            range.state = State::Active;
            let opened = match end {
                RangeEnd::Addr(Addr::Regex(_)) => Some(true),
                RangeEnd::Addr(Addr::Line(to)) => {
                    if n >= *to {
                        range.state = State::Closed;
                    }
                    Some(n <= *to || self.matches(start, last))
                }
                RangeEnd::Plus(k) | RangeEnd::Multiple(k) if *k == 0 => {
                    range.state = State::Closed;
                    Some(true)
                }
                RangeEnd::Plus(k) => {
                    range.end_line = n + k;
                    Some(true)
                }
                RangeEnd::Multiple(k) => {
                    range.end_line = n + k - n % k;
                    Some(true)
                }
                RangeEnd::Addr(_) => None,
            };
            if let Some(hit) = opened {
                self.ranges[index] = range;
                return hit;
            }
        }
        let hit = match end {
            RangeEnd::Addr(Addr::Line(to)) => {
                if n >= *to {
                    range.state = State::Closed;
                }
                n <= *to
            }
            RangeEnd::Plus(_) | RangeEnd::Multiple(_) => {
                if range.end_line <= n {
                    range.state = State::Closed;
                }
                true
            }
            RangeEnd::Addr(addr) => {
                if self.matches(addr, last) {
                    range.state = State::Closed;
                }
                true
            }
        };
        self.ranges[index] = range;
        hit
    }

    /// Every range as it stands before the first line: `0,/re/` is open already.
    fn reset_ranges(&mut self) {
        for (range, cmd) in self.ranges.iter_mut().zip(&self.script.cmds) {
            let zero = matches!(cmd.start, Some(Addr::Zero));
            *range = Range {
                state: if zero { State::Active } else { State::Inactive },
                end_line: 0,
            };
        }
    }

    /// Runs the script over `lines`: one file under `-s` and `-i` (`fresh`: line numbers,
    /// ranges, the hold space and `R`'s files start again, as in GNU sed), all of them otherwise.
    pub fn run(&mut self, lines: &[Line], name: &str, fresh: bool) {
        if self.exited() {
            return;
        }
        self.file_name = name.to_string();
        if fresh || self.line_number == 0 {
            self.line_number = 0;
            self.reset_ranges();
            self.hold.clear();
            self.hold_chomped = true;
            self.read_lines.clear();
        }
        let mut next = 0;
        while let Some((text, chomped)) = lines.get(next) {
            next += 1;
            self.ps.clone_from(text);
            self.chomped = *chomped;
            self.line_number += 1;
            self.replaced = false;
            match self.cycle(lines, &mut next) {
                Flow::Continue => self.autoprint(),
                Flow::EndCycle => {}
                Flow::Quit(print, code) => {
                    if print {
                        self.autoprint();
                        self.flush_appended();
                        // `q` ends an unterminated last line, as GNU sed's append dump does.
                        self.emit("", false);
                        self.missing_newline = false;
                    }
                    self.out.exit = Some(code);
                    return;
                }
            }
            self.flush_appended();
        }
    }

    fn autoprint(&mut self) {
        if !self.quiet {
            let ps = std::mem::take(&mut self.ps);
            self.emit(&ps, self.chomped);
            self.ps = ps;
        }
    }

    /// Reads the next line for `n` and `N`; false at the end of the input.
    fn next_line(&mut self, lines: &[Line], next: &mut usize, append: bool) -> bool {
        let Some((text, chomped)) = lines.get(*next) else {
            return false;
        };
        *next += 1;
        self.flush_appended();
        self.replaced = false;
        if append {
            self.ps.push(self.delimiter);
            self.ps.push_str(text);
        } else {
            self.ps.clone_from(text);
        }
        self.chomped = *chomped;
        self.line_number += 1;
        true
    }

    /// The pattern space up to its first newline, and whether one ends it there.
    fn first_line(&self) -> (String, bool) {
        match self.ps.split_once(self.delimiter) {
            Some((first, _)) => (first.to_string(), true),
            None => (self.ps.clone(), self.chomped),
        }
    }

    fn fail(&mut self, message: &str) -> Flow {
        self.out
            .err
            .extend_from_slice(format!("sed: {message} (sandbox limit)\n").as_bytes());
        Flow::Quit(false, 4)
    }

    fn cycle(&mut self, lines: &[Line], next: &mut usize) -> Flow {
        let script = self.script;
        let cmds = &script.cmds;
        let mut pc = 0;
        while pc < cmds.len() {
            let cmd = &cmds[pc];
            let last = *next >= lines.len();
            if self.selected(pc, cmd, last) == cmd.negate {
                pc = match cmd.op {
                    Op::Block(past) => past,
                    _ => pc + 1,
                };
                continue;
            }
            pc += 1;
            match &cmd.op {
                Op::Block(_) | Op::EndBlock | Op::Label => {}
                Op::Branch(kind, target) => {
                    let jump = match kind {
                        't' => std::mem::take(&mut self.replaced),
                        'T' => !std::mem::take(&mut self.replaced),
                        _ => true,
                    };
                    if jump {
                        self.jumps += 1;
                        if self.jumps > MAX_JUMPS {
                            return self.fail(&format!("script stopped after {MAX_JUMPS} jumps"));
                        }
                        pc = *target;
                    }
                }
                Op::Subst(subst) => {
                    self.work += self.ps.len();
                    if self.work > MAX_WORK {
                        return self.fail("script stopped after scanning 1 GiB of text");
                    }
                    if self.substitute(subst) {
                        self.replaced = true;
                        for _ in 0..subst.print {
                            let ps = self.ps.clone();
                            self.emit(&ps, self.chomped);
                        }
                        if let Some(file) = &subst.write {
                            let ps = self.ps.clone();
                            self.write_to(file, &ps);
                        }
                    }
                }
                Op::Translit(pairs) => {
                    self.ps = self
                        .ps
                        .chars()
                        .map(|c| pairs.iter().find(|(f, _)| *f == c).map_or(c, |(_, t)| *t))
                        .collect();
                }
                Op::Simple(c) => match c {
                    'p' => {
                        let ps = self.ps.clone();
                        self.emit(&ps, self.chomped);
                    }
                    'P' => {
                        let (first, newline) = self.first_line();
                        self.emit(&first, newline);
                    }
                    'd' => return Flow::EndCycle,
                    'D' => match self.ps.find(self.delimiter) {
                        None => return Flow::EndCycle,
                        Some(i) => {
                            self.ps.drain(..=i);
                            self.jumps += 1;
                            if self.jumps > MAX_JUMPS {
                                return self
                                    .fail(&format!("script stopped after {MAX_JUMPS} jumps"));
                            }
                            pc = 0;
                        }
                    },
                    'n' => {
                        self.autoprint();
                        if !self.next_line(lines, next, false) {
                            return Flow::EndCycle;
                        }
                    }
                    'N' => {
                        if !self.next_line(lines, next, true) {
                            self.autoprint();
                            return Flow::EndCycle;
                        }
                    }
                    'g' | 'G' => {
                        if *c == 'g' {
                            self.ps.clear();
                        } else {
                            self.ps.push(self.delimiter);
                        }
                        self.ps.push_str(&self.hold);
                        self.chomped = self.hold_chomped;
                    }
                    'h' | 'H' => {
                        if *c == 'h' {
                            self.hold.clear();
                        } else {
                            self.hold.push(self.delimiter);
                        }
                        self.hold.push_str(&self.ps);
                        self.hold_chomped = self.chomped;
                    }
                    'x' => {
                        std::mem::swap(&mut self.ps, &mut self.hold);
                        std::mem::swap(&mut self.chomped, &mut self.hold_chomped);
                    }
                    '=' => self.emit(&self.line_number.to_string(), true),
                    'z' => self.ps.clear(),
                    _ => {
                        let name = self.file_name.clone();
                        self.emit(&name, true);
                    }
                },
                Op::List(width) => {
                    let text = list(&self.ps, width.unwrap_or(self.wrap));
                    self.emit(&text, true);
                }
                Op::Quit(kind, code) => return Flow::Quit(*kind == 'q', *code),
                Op::Text(kind, text) => match kind {
                    'a' => {
                        let queue = self.appended.get_or_insert_default();
                        if !text.is_empty() {
                            queue.push_str(text);
                            queue.push('\n');
                        }
                    }
                    'i' => {
                        if !text.is_empty() {
                            self.emit(text, true);
                        }
                    }
                    _ => {
                        if self.ranges[pc - 1].state != State::Active && !text.is_empty() {
                            self.emit(text, true);
                        }
                        return Flow::EndCycle;
                    }
                },
                Op::File(kind, file) => match kind {
                    'r' => {
                        if let Some(text) = (self.read_file)(file) {
                            let queue = self.appended.get_or_insert_default();
                            queue.push_str(&text);
                            if !text.is_empty() && !text.ends_with('\n') {
                                queue.push('\n');
                            }
                        }
                    }
                    'R' => {
                        let at = self.read_lines.entry(file.clone()).or_default();
                        if let Some(line) = (self.read_file)(file)
                            .and_then(|t| t.lines().nth(*at).map(str::to_string))
                        {
                            *at += 1;
                            let queue = self.appended.get_or_insert_default();
                            queue.push_str(&line);
                            queue.push('\n');
                        }
                    }
                    'w' => {
                        let ps = self.ps.clone();
                        self.write_to(file, &ps);
                    }
                    _ => {
                        let (first, _) = self.first_line();
                        self.write_to(file, &first);
                    }
                },
            }
        }
        Flow::Continue
    }

    fn substitute(&mut self, subst: &Subst) -> bool {
        let Some(regex) = self.regex(subst.regex) else {
            self.out
                .err
                .extend_from_slice(b"sed: no previous regular expression\n");
            return false;
        };
        let line = &self.ps;
        let mut out = String::new();
        let mut last = 0;
        let mut replaced = false;
        for (index, caps) in regex.captures_iter(line).enumerate() {
            if index + 1 < subst.nth {
                continue;
            }
            let Some(whole) = caps.get(0) else {
                continue;
            };
            out.push_str(&line[last..whole.start()]);
            expand(&mut out, &subst.replacement, &caps);
            last = whole.end();
            replaced = true;
            if !subst.global {
                break;
            }
        }
        if replaced {
            out.push_str(&line[last..]);
            self.ps = out;
        }
        replaced
    }
}

/// Appends the replacement for one match, with GNU's case conversions.
fn expand(out: &mut String, parts: &[Part], caps: &regex::Captures) {
    let mut mode = 'E';
    let mut once: Option<char> = None;
    let push = |out: &mut String, text: &str, mode: char, once: &mut Option<char>| {
        for c in text.chars() {
            let c: String = match once.take() {
                Some('u') => c.to_uppercase().collect(),
                Some(_) => c.to_lowercase().collect(),
                None => match mode {
                    'U' => c.to_uppercase().collect(),
                    'L' => c.to_lowercase().collect(),
                    _ => c.to_string(),
                },
            };
            out.push_str(&c);
        }
    };
    for part in parts {
        match part {
            Part::Text(t) => push(out, t, mode, &mut once),
            Part::Whole => push(out, caps.get(0).map_or("", |m| m.as_str()), mode, &mut once),
            Part::Group(g) => push(
                out,
                caps.get(*g).map_or("", |m| m.as_str()),
                mode,
                &mut once,
            ),
            Part::Case(c @ ('u' | 'l')) => once = Some(*c),
            Part::Case(c) => {
                mode = *c;
                once = None;
            }
        }
    }
}

/// The `l` command's unambiguous form: escapes, octal for other bytes, lines cut at `width`
/// (0: never) with a trailing `\`, and `$` at the end.
fn list(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut column = 0;
    for byte in text.bytes() {
        let piece = match byte {
            b'\\' => "\\\\".to_string(),
            0x07 => "\\a".into(),
            0x08 => "\\b".into(),
            0x0c => "\\f".into(),
            b'\n' => "\\n".into(),
            b'\r' => "\\r".into(),
            b'\t' => "\\t".into(),
            0x0b => "\\v".into(),
            b if b.is_ascii_graphic() || b == b' ' => (b as char).to_string(),
            b => format!("\\{b:03o}"),
        };
        if width > 1 && column + piece.len() > width - 1 {
            out.push_str("\\\n");
            column = 0;
        }
        column += piece.len();
        out.push_str(&piece);
    }
    out.push('$');
    out
}
