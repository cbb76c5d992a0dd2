//! `sed`: the stream editor subset models use — `-n`, `-i`, `-e`, `-E`; addresses (line
//! numbers, `$`, `/regex/`, ranges, `!`); commands `s///` (flags `g`, `p`, `i`, N), `p`, `d`,
//! `q`, `Q`, `=`, `a`, `i`, `c`, `y`. Regular expressions are POSIX basic (or extended with
//! `-E`), translated like `grep`'s. A missing final newline is preserved, as GNU sed does.

use regex::{Regex, RegexBuilder};

use super::search::translate_posix;
use super::{Ctx, parse_opts, usage_error};

enum Address {
    Line(usize),
    Last,
    Pattern(Regex),
}

enum Replacement {
    Text(String),
    Whole,
    Group(usize),
}

enum Action {
    Substitute {
        regex: Regex,
        replacement: Vec<Replacement>,
        global: bool,
        nth: usize,
        print: bool,
    },
    Print,
    Delete,
    Quit {
        print: bool,
        code: i32,
    },
    Append(String),
    Insert(String),
    Change(String),
    LineNumber,
    Transliterate(Vec<(char, char)>),
}

struct Command {
    start: Option<Address>,
    end: Option<Address>,
    negate: bool,
    action: Action,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    extended: bool,
}

impl Parser {
    fn error(&self, message: &str) -> String {
        format!("sed: -e expression #1, char {}: {message}", self.pos)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    /// Reads up to an unescaped `delim`; `\delim` becomes `delim`, other escapes are kept.
    fn delimited(&mut self, delim: char, what: &str) -> Result<String, String> {
        let mut text = String::new();
        loop {
            match self.peek() {
                None => return Err(self.error(&format!("unterminated {what}"))),
                Some(c) if c == delim => {
                    self.pos += 1;
                    return Ok(text);
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(c) if c == delim => text.push(c),
                        Some('n') if delim != 'n' => text.push_str("\\n"),
                        Some(c) => {
                            text.push('\\');
                            text.push(c);
                        }
                        None => return Err(self.error(&format!("unterminated {what}"))),
                    }
                    self.pos += 1;
                }
                Some(c) => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn regex(&self, pattern: &str, ignore_case: bool) -> Result<Regex, String> {
        let translated = translate_posix(pattern, self.extended)
            .map_err(|e| self.error(&e))?
            .replace("\\n", "\n");
        RegexBuilder::new(&translated)
            .case_insensitive(ignore_case)
            .build()
            .map_err(|_| self.error("invalid regular expression"))
    }

    fn address(&mut self) -> Result<Option<Address>, String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                let n = text
                    .parse()
                    .map_err(|_| self.error("invalid line number"))?;
                if n == 0 {
                    return Err(self.error("invalid usage of line address 0"));
                }
                Ok(Some(Address::Line(n)))
            }
            Some('$') => {
                self.pos += 1;
                Ok(Some(Address::Last))
            }
            Some(c @ ('/' | '\\')) => {
                self.pos += 1;
                let delim = if c == '\\' {
                    let d = self.peek().ok_or_else(|| self.error("unexpected end"))?;
                    self.pos += 1;
                    d
                } else {
                    '/'
                };
                let pattern = self.delimited(delim, "address regex")?;
                let ignore_case = self.peek() == Some('I');
                if ignore_case {
                    self.pos += 1;
                }
                Ok(Some(Address::Pattern(self.regex(&pattern, ignore_case)?)))
            }
            _ => Ok(None),
        }
    }

    /// The text of `a`, `i` and `c`: the rest of the line, after an optional `\` and newline.
    fn text_argument(&mut self) -> String {
        self.skip_blanks();
        if self.peek() == Some('\\') {
            self.pos += 1;
            if self.peek() == Some('\n') {
                self.pos += 1;
            }
        }
        let mut text = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '\n' => break,
                '\\' => {
                    if let Some(next) = self.peek() {
                        self.pos += 1;
                        text.push(if next == 't' { '\t' } else { next });
                    }
                }
                _ => text.push(c),
            }
        }
        text
    }

    fn commands(&mut self) -> Result<Vec<Command>, String> {
        let mut commands = Vec::new();
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.pos += 1;
            }
            if self.peek().is_none() {
                return Ok(commands);
            }
            let start = self.address()?;
            let end = if start.is_some() && self.peek() == Some(',') {
                self.pos += 1;
                Some(
                    self.address()?
                        .ok_or_else(|| self.error("unexpected `,'"))?,
                )
            } else {
                None
            };
            self.skip_blanks();
            let negate = self.peek() == Some('!');
            if negate {
                self.pos += 1;
                self.skip_blanks();
            }
            let Some(name) = self.peek() else {
                return Err(self.error("missing command"));
            };
            self.pos += 1;
            let action = match name {
                's' => {
                    let delim = self
                        .peek()
                        .ok_or_else(|| self.error("unterminated `s' command"))?;
                    self.pos += 1;
                    let pattern = self.delimited(delim, "`s' command")?;
                    let replacement = parse_replacement(&self.delimited(delim, "`s' command")?);
                    let (mut global, mut print, mut nth, mut ignore_case) =
                        (false, false, 1, false);
                    while let Some(flag) = self.peek() {
                        match flag {
                            'g' => global = true,
                            'p' => print = true,
                            'i' | 'I' => ignore_case = true,
                            d if d.is_ascii_digit() => nth = d.to_digit(10).unwrap_or(1) as usize,
                            ';' | '\n' | ' ' | '}' => break,
                            _ => return Err(self.error("unknown option to `s'")),
                        }
                        self.pos += 1;
                    }
                    Action::Substitute {
                        regex: self.regex(&pattern, ignore_case)?,
                        replacement,
                        global,
                        nth: nth.max(1),
                        print,
                    }
                }
                'y' => {
                    let delim = self
                        .peek()
                        .ok_or_else(|| self.error("unterminated `y' command"))?;
                    self.pos += 1;
                    let from: Vec<char> = self.delimited(delim, "`y' command")?.chars().collect();
                    let to: Vec<char> = self.delimited(delim, "`y' command")?.chars().collect();
                    if from.len() != to.len() {
                        return Err(self.error("strings for `y' command are different lengths"));
                    }
                    Action::Transliterate(from.into_iter().zip(to).collect())
                }
                'p' => Action::Print,
                'd' => Action::Delete,
                '=' => Action::LineNumber,
                'q' | 'Q' => {
                    self.skip_blanks();
                    let start = self.pos;
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.pos += 1;
                    }
                    let code = self.chars[start..self.pos]
                        .iter()
                        .collect::<String>()
                        .parse()
                        .unwrap_or(0);
                    Action::Quit {
                        print: name == 'q',
                        code,
                    }
                }
                'a' => Action::Append(self.text_argument()),
                'i' => Action::Insert(self.text_argument()),
                'c' => Action::Change(self.text_argument()),
                other => return Err(self.error(&format!("unknown command: `{other}'"))),
            };
            commands.push(Command {
                start,
                end,
                negate,
                action,
            });
        }
    }
}

fn parse_replacement(text: &str) -> Vec<Replacement> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '&' => {
                parts.push(Replacement::Text(std::mem::take(&mut literal)));
                parts.push(Replacement::Whole);
            }
            '\\' => match chars.next() {
                Some(d) if d.is_ascii_digit() => {
                    parts.push(Replacement::Text(std::mem::take(&mut literal)));
                    parts.push(Replacement::Group(d.to_digit(10).unwrap_or(0) as usize));
                }
                Some('n') => literal.push('\n'),
                Some('t') => literal.push('\t'),
                Some(other) => literal.push(other),
                None => literal.push('\\'),
            },
            _ => literal.push(c),
        }
    }
    parts.push(Replacement::Text(literal));
    parts
}

fn substitute(
    line: &str,
    regex: &Regex,
    replacement: &[Replacement],
    global: bool,
    nth: usize,
) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    let mut replaced = false;
    for (index, caps) in regex.captures_iter(line).enumerate() {
        if index + 1 < nth {
            continue;
        }
        let whole = caps.get(0)?;
        out.push_str(&line[last..whole.start()]);
        for part in replacement {
            match part {
                Replacement::Text(t) => out.push_str(t),
                Replacement::Whole => out.push_str(whole.as_str()),
                Replacement::Group(g) => out.push_str(caps.get(*g).map_or("", |m| m.as_str())),
            }
        }
        last = whole.end();
        replaced = true;
        if !global {
            break;
        }
    }
    replaced.then(|| {
        out.push_str(&line[last..]);
        out
    })
}

/// Runs the commands over one stream of lines; returns the output and the exit code of `q`.
fn run(commands: &[Command], input: &str, quiet: bool) -> (String, Option<i32>) {
    let mut out = String::new();
    let ends_with_newline = input.ends_with('\n');
    let lines: Vec<&str> = input.lines().collect();
    let mut active = vec![false; commands.len()];
    for (index, line) in lines.iter().enumerate() {
        let number = index + 1;
        let is_last = number == lines.len();
        let newline = if is_last && !ends_with_newline {
            ""
        } else {
            "\n"
        };
        let mut space = line.to_string();
        let mut appended = String::new();
        let mut deleted = false;
        let mut quit = None;
        for (ci, command) in commands.iter().enumerate() {
            let matches = |address: &Address, text: &str| match address {
                Address::Line(n) => *n == number,
                Address::Last => is_last,
                Address::Pattern(r) => r.is_match(text),
            };
            let selected = match (&command.start, &command.end) {
                (None, _) => true,
                (Some(start), None) => matches(start, &space),
                (Some(start), Some(end)) => {
                    if active[ci] {
                        let finished = match end {
                            Address::Line(n) => number >= *n,
                            other => matches(other, &space),
                        };
                        active[ci] = !finished;
                        true
                    } else if matches(start, &space) {
                        active[ci] = match end {
                            Address::Line(n) => *n > number,
                            Address::Last => !is_last,
                            Address::Pattern(_) => true,
                        };
                        true
                    } else {
                        false
                    }
                }
            };
            if selected == command.negate {
                continue;
            }
            match &command.action {
                Action::Substitute {
                    regex,
                    replacement,
                    global,
                    nth,
                    print,
                } => {
                    if let Some(new) = substitute(&space, regex, replacement, *global, *nth) {
                        space = new;
                        if *print {
                            out.push_str(&space);
                            out.push('\n');
                        }
                    }
                }
                Action::Print => {
                    out.push_str(&space);
                    out.push('\n');
                }
                Action::Delete => {
                    deleted = true;
                    break;
                }
                Action::Quit { print, code } => {
                    quit = Some(*code);
                    deleted = !print;
                    break;
                }
                Action::Append(text) => {
                    appended.push_str(text);
                    appended.push('\n');
                }
                Action::Insert(text) => {
                    out.push_str(text);
                    out.push('\n');
                }
                Action::Change(text) => {
                    if !active[ci] {
                        out.push_str(text);
                        out.push('\n');
                    }
                    deleted = true;
                    break;
                }
                Action::LineNumber => out.push_str(&format!("{number}\n")),
                Action::Transliterate(pairs) => {
                    space = space
                        .chars()
                        .map(|c| pairs.iter().find(|(f, _)| *f == c).map_or(c, |(_, t)| *t))
                        .collect();
                }
            }
        }
        if !deleted && !quiet {
            out.push_str(&space);
            out.push_str(newline);
        }
        out.push_str(&appended);
        if quit.is_some() {
            return (out, quit);
        }
    }
    (out, None)
}

pub fn sed(ctx: &mut Ctx, args: &[String]) -> i32 {
    let mut args = args.to_vec();
    let mut in_place = false;
    let mut backup_suffix = String::new();
    args.retain(|a| {
        let is_in_place =
            a == "-i" || (a.starts_with("-i") && !a.starts_with("-i-")) || a == "--in-place";
        if is_in_place {
            in_place = true;
            backup_suffix = a.strip_prefix("-i").unwrap_or("").to_string();
        }
        !is_in_place
    });
    let opts = match parse_opts(
        "sed",
        &args,
        "ef",
        &[
            ("quiet", 'n'),
            ("silent", 'n'),
            ("expression", 'e'),
            ("regexp-extended", 'E'),
        ],
        None,
    ) {
        Ok(o) => o,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    let mut operands = opts.operands.clone();
    let scripts: Vec<&str> = opts.all('e').collect();
    let script = if scripts.is_empty() {
        if operands.is_empty() {
            return usage_error(
                ctx,
                "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...",
                1,
            );
        }
        operands.remove(0)
    } else {
        scripts.join("\n")
    };
    let mut parser = Parser {
        chars: script.chars().collect(),
        pos: 0,
        extended: opts.has('E') || opts.has('r'),
    };
    let commands = match parser.commands() {
        Ok(c) => c,
        Err(e) => return usage_error(ctx, &e, 1),
    };
    let quiet = opts.has('n');
    if in_place {
        if operands.is_empty() {
            return usage_error(ctx, "sed: no input files", 1);
        }
        let mut status = 0;
        for name in &operands {
            let path = ctx.resolve(name);
            match ctx.vfs.read_text(&path) {
                Ok(text) => {
                    let (output, quit) = run(&commands, &text, quiet);
                    let backup = if backup_suffix.is_empty() {
                        Ok(())
                    } else {
                        ctx.vfs
                            .write(&format!("{path}{backup_suffix}"), text.into_bytes())
                    };
                    if let Err(e) = backup.and_then(|()| ctx.vfs.write(&path, output.into_bytes()))
                    {
                        ctx.warn(&format!("sed: couldn't edit {name}: {e}"));
                        status = 4;
                    }
                    if let Some(code) = quit {
                        return code;
                    }
                }
                Err(e) => {
                    ctx.warn(&format!("sed: can't read {name}: {e}"));
                    status = 2;
                }
            }
        }
        return status;
    }
    let mut input = String::new();
    let mut status = 0;
    if operands.is_empty() {
        input = String::from_utf8_lossy(&ctx.stdin.take_all()).into_owned();
    }
    for name in &operands {
        match ctx.read_operand(name) {
            Ok(data) => {
                if !input.is_empty() && !input.ends_with('\n') {
                    input.push('\n');
                }
                input.push_str(&String::from_utf8_lossy(&data));
            }
            Err(e) => {
                ctx.warn(&format!("sed: can't read {name}: {e}"));
                status = 2;
            }
        }
    }
    let (output, quit) = run(&commands, &input, quiet);
    ctx.print(&output);
    quit.unwrap_or(status)
}
