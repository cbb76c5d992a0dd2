//! sed scripts into a flat list of commands: `{` holds the index just past its `}`, branches
//! hold the index of their label, so running is a walk with a program counter.

use regex::{Regex, RegexBuilder};

use crate::search::translate_posix;

/// Where a command applies.
#[derive(Debug, Clone)]
pub(super) enum Addr {
    Line(usize),
    Last,
    /// Index into [`Script::regexes`]; `None` is the empty regex: the last one used.
    Regex(Option<usize>),
    /// `first~step`.
    Step(usize, usize),
    /// `0` in `0,/re/`.
    Zero,
}

/// The second address of a range.
#[derive(Debug, Clone)]
pub(super) enum RangeEnd {
    Addr(Addr),
    /// `addr,+N`.
    Plus(usize),
    /// `addr,~N`.
    Multiple(usize),
}

#[derive(Debug, Clone)]
pub(super) enum Part {
    Text(String),
    Whole,
    Group(usize),
    /// `\U`, `\L`, `\E`, `\u`, `\l`.
    Case(char),
}

#[derive(Debug, Clone)]
pub(super) struct Subst {
    pub regex: Option<usize>,
    pub replacement: Vec<Part>,
    pub global: bool,
    pub nth: usize,
    pub print: usize,
    pub write: Option<String>,
}

#[derive(Debug, Clone)]
pub(super) enum Op {
    /// `{`: the index just past the matching `}`.
    Block(usize),
    EndBlock,
    Label,
    /// `b`, `t`, `T` and the index of the target (the script's end without a label).
    Branch(char, usize),
    Subst(Box<Subst>),
    Translit(Vec<(char, char)>),
    /// Commands without an argument: `p P d D n N g G h H x = z F`.
    Simple(char),
    List(Option<usize>),
    Quit(char, i32),
    /// `a`, `i`, `c` and their text.
    Text(char, String),
    /// `r`, `R`, `w`, `W` and their file name.
    File(char, String),
}

#[derive(Debug, Clone)]
pub(super) struct Cmd {
    pub start: Option<Addr>,
    pub end: Option<RangeEnd>,
    pub negate: bool,
    pub op: Op,
}

#[derive(Debug, Default)]
pub(super) struct Script {
    pub cmds: Vec<Cmd>,
    pub regexes: Vec<Regex>,
    /// The script began with `#n` on a line of its own: as `-n`.
    pub quiet: bool,
}

pub(super) struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    extended: bool,
    script: &'a mut Script,
    /// Open `{`s, by index into the commands.
    blocks: Vec<usize>,
    /// Branches waiting for their label: command index and label.
    jumps: Vec<(usize, String)>,
    labels: Vec<(String, usize)>,
}

/// Why a script does not run: the message and sed's exit status (1 for a bad script, 2 for a
/// refusal, 4 for a missing label, as GNU sed).
#[derive(Debug)]
pub(super) struct SedError {
    pub message: String,
    pub status: i32,
}

impl From<String> for SedError {
    fn from(message: String) -> Self {
        SedError { message, status: 1 }
    }
}

/// `sed: WHAT: not supported in this sandbox`, exit 2.
pub(super) fn refused(what: &str) -> SedError {
    SedError {
        message: format!("sed: {what}{}", crate::REFUSAL),
        status: 2,
    }
}

impl<'a> Parser<'a> {
    pub fn new(text: &str, extended: bool, script: &'a mut Script) -> Self {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            extended,
            script,
            blocks: Vec::new(),
            jumps: Vec::new(),
            labels: Vec::new(),
        }
    }

    fn error(&self, message: &str) -> SedError {
        SedError::from(format!(
            "sed: -e expression #1, char {}: {message}",
            self.pos
        ))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        self.pos += usize::from(found);
        found
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    fn number(&mut self) -> Option<usize> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        text.parse().ok()
    }

    /// Reads up to an unescaped `delim`; `\delim` becomes a plain `delim` (which a regex then
    /// reads as it would any such character, as GNU sed does), an escaped newline `\n`.
    fn delimited(&mut self, delim: char, what: &str, regex: bool) -> Result<String, SedError> {
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
                        Some('\n') => text.push_str("\\n"),
                        Some(c) => {
                            text.push('\\');
                            text.push(c);
                        }
                        None => return Err(self.error(&format!("unterminated {what}"))),
                    }
                    self.pos += 1;
                }
                Some('\n') if regex => {
                    return Err(self.error(&format!("unterminated {what}")));
                }
                Some(c) => {
                    text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// Compiles a regex (`None` for the empty one) with GNU sed's escapes `\n` and `\t`.
    fn regex(
        &mut self,
        pattern: &str,
        fold: bool,
        multiline: bool,
    ) -> Result<Option<usize>, SedError> {
        if pattern.is_empty() {
            return Ok(None);
        }
        let mut plain = String::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            match (c, c == '\\') {
                (_, true) => match chars.next() {
                    Some('n') => plain.push('\n'),
                    Some('t') => plain.push('\t'),
                    Some(d) => {
                        plain.push('\\');
                        plain.push(d);
                    }
                    None => plain.push('\\'),
                },
                _ => plain.push(c),
            }
        }
        let translated = translate_posix(&plain, self.extended).map_err(|e| match e {
            crate::search::PatternError::Refused(what) => refused(&what),
            crate::search::PatternError::Invalid(e) => self.error(&e),
        })?;
        let regex = RegexBuilder::new(&translated)
            .case_insensitive(fold)
            .multi_line(multiline)
            .dot_matches_new_line(true)
            .build()
            .map_err(|_| self.error("invalid regular expression"))?;
        self.script.regexes.push(regex);
        Ok(Some(self.script.regexes.len() - 1))
    }

    fn address(&mut self) -> Result<Option<Addr>, SedError> {
        let addr = match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                let n = self
                    .number()
                    .ok_or_else(|| self.error("invalid line number"))?;
                if self.eat('~') {
                    let step = self.number().unwrap_or(0);
                    return Ok(Some(Addr::Step(n, step)));
                }
                if n == 0 { Addr::Zero } else { Addr::Line(n) }
            }
            Some('$') => {
                self.pos += 1;
                Addr::Last
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
                let pattern = self.delimited(delim, "address regex", true)?;
                let (mut fold, mut multiline) = (false, false);
                loop {
                    match self.peek() {
                        Some('I') => fold = true,
                        Some('M') => multiline = true,
                        _ => break,
                    }
                    self.pos += 1;
                }
                Addr::Regex(self.regex(&pattern, fold, multiline)?)
            }
            _ => return Ok(None),
        };
        Ok(Some(addr))
    }

    /// The text of `a`, `i` and `c`: the rest of the line after blanks (GNU's one-liner form),
    /// or after `\\` and a newline; a trailing backslash continues it on the next line.
    fn text_argument(&mut self) -> String {
        self.skip_blanks();
        if self.eat('\\') && !self.eat('\n') && self.peek().is_none() {
            return String::new();
        }
        let mut text = String::new();
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            self.pos += 1;
            if c != '\\' {
                text.push(c);
                continue;
            }
            if let Some(next) = self.peek() {
                self.pos += 1;
                text.push(match next {
                    't' => '\t',
                    'n' => '\n',
                    other => other,
                });
            }
        }
        text
    }

    /// A label or file name: the rest of the line (a label also ends at `;`).
    fn word(&mut self, label: bool) -> String {
        self.skip_blanks();
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c == '\n' || (label && (c == ';' || c == '}' || (c.is_whitespace()))) {
                break;
            }
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    fn substitute(&mut self) -> Result<Op, SedError> {
        let delim = self.peek().filter(|c| *c != '\n' && *c != '\\');
        let delim = delim.ok_or_else(|| self.error("unterminated `s' command"))?;
        self.pos += 1;
        let pattern = self.delimited(delim, "`s' command", true)?;
        let replacement = parse_replacement(&self.delimited(delim, "`s' command", false)?);
        let mut subst = Subst {
            regex: None,
            replacement,
            global: false,
            nth: 1,
            print: 0,
            write: None,
        };
        let (mut fold, mut multiline) = (false, false);
        loop {
            match self.peek() {
                Some('g') => subst.global = true,
                Some('p') => subst.print += 1,
                Some('i' | 'I') => fold = true,
                Some('m' | 'M') => multiline = true,
                Some('e') => return Err(refused("s///e (run the pattern space)")),
                Some('w') => {
                    self.pos += 1;
                    subst.write = Some(self.word(false));
                    break;
                }
                Some(d) if d.is_ascii_digit() => {
                    subst.nth = self.number().filter(|n| *n > 0).ok_or_else(|| {
                        self.error("number option to `s' command may not be zero")
                    })?;
                    continue;
                }
                Some(';' | '\n' | ' ' | '\t' | '}' | '#') | None => break,
                Some(_) => return Err(self.error("unknown option to `s'")),
            }
            self.pos += 1;
        }
        subst.regex = self.regex(&pattern, fold, multiline)?;
        let groups = subst
            .regex
            .map(|i| self.script.regexes[i].captures_len() - 1);
        let highest = subst.replacement.iter().filter_map(|p| match p {
            Part::Group(g) => Some(*g),
            _ => None,
        });
        if let (Some(groups), Some(highest)) = (groups, highest.max())
            && highest > groups
        {
            self.pos += 1;
            return Err(self.error(&format!(
                "invalid reference \\{highest} on `s' command's RHS"
            )));
        }
        Ok(Op::Subst(Box::new(subst)))
    }

    fn translit(&mut self) -> Result<Op, SedError> {
        let delim = self
            .peek()
            .ok_or_else(|| self.error("unterminated `y' command"))?;
        self.pos += 1;
        let unescape = |text: String| -> Vec<char> {
            let mut out = Vec::new();
            let mut chars = text.chars();
            while let Some(c) = chars.next() {
                out.push(match (c, chars.clone().next()) {
                    ('\\', Some(n)) => {
                        chars.next();
                        match n {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        }
                    }
                    _ => c,
                });
            }
            out
        };
        let from = unescape(self.delimited(delim, "`y' command", false)?);
        let to = unescape(self.delimited(delim, "`y' command", false)?);
        if from.len() != to.len() {
            return Err(self.error("strings for `y' command are different lengths"));
        }
        Ok(Op::Translit(from.into_iter().zip(to).collect()))
    }

    /// Parses the whole script; labels are resolved at the end.
    pub fn parse(mut self) -> Result<(), SedError> {
        if self.chars.starts_with(&['#', 'n']) && matches!(self.chars.get(2), None | Some('\n')) {
            self.script.quiet = true;
        }
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.pos += 1;
            }
            let Some(first) = self.peek() else {
                break;
            };
            if first == '#' {
                while self.peek().is_some_and(|c| c != '\n') {
                    self.pos += 1;
                }
                continue;
            }
            self.command()?;
        }
        if !self.blocks.is_empty() {
            self.pos = 0;
            return Err(self.error("unmatched `{'"));
        }
        let end = self.script.cmds.len();
        for (at, label) in std::mem::take(&mut self.jumps) {
            let target = if label.is_empty() {
                end
            } else {
                self.labels
                    .iter()
                    .find(|(l, _)| *l == label)
                    .map(|(_, i)| *i)
                    .ok_or_else(|| SedError {
                        message: format!("sed: can't find label for jump to `{label}'"),
                        status: 4,
                    })?
            };
            if let Op::Branch(_, to) = &mut self.script.cmds[at].op {
                *to = target;
            }
        }
        Ok(())
    }

    fn command(&mut self) -> Result<(), SedError> {
        let start = self.address()?;
        let mut end = None;
        if start.is_some() && self.eat(',') {
            self.skip_blanks();
            end = Some(if self.eat('+') {
                RangeEnd::Plus(self.number().ok_or_else(|| self.error("expected number"))?)
            } else if self.eat('~') {
                RangeEnd::Multiple(self.number().ok_or_else(|| self.error("expected number"))?)
            } else {
                match self.address()? {
                    Some(Addr::Zero) => return Err(self.error("invalid usage of line address 0")),
                    Some(a) => RangeEnd::Addr(a),
                    None => return Err(self.error("unexpected `,'")),
                }
            });
        }
        let zero_ok = matches!(&end, Some(RangeEnd::Addr(Addr::Regex(_))));
        if matches!(start, Some(Addr::Zero)) && !zero_ok {
            return Err(self.error("invalid usage of line address 0"));
        }
        self.skip_blanks();
        let mut negate = false;
        while self.eat('!') {
            negate = true;
            self.skip_blanks();
        }
        let Some(name) = self.peek() else {
            return Err(self.error("missing command"));
        };
        self.pos += 1;
        let index = self.script.cmds.len();
        let op = match name {
            '{' => {
                self.blocks.push(index);
                Op::Block(0)
            }
            '}' => {
                if start.is_some() || negate {
                    return Err(self.error("} doesn't want any addresses"));
                }
                let open = self
                    .blocks
                    .pop()
                    .ok_or_else(|| self.error("unexpected `}'"))?;
                if let Op::Block(past) = &mut self.script.cmds[open].op {
                    *past = index + 1;
                }
                Op::EndBlock
            }
            ':' => {
                if start.is_some() {
                    return Err(self.error(": doesn't want any addresses"));
                }
                let label = self.word(true);
                if label.is_empty() {
                    return Err(self.error("\":\" lacks a label"));
                }
                self.labels.push((label, index));
                Op::Label
            }
            'b' | 't' | 'T' => {
                let label = self.word(true);
                self.jumps.push((index, label));
                Op::Branch(name, 0)
            }
            's' => self.substitute()?,
            'y' => self.translit()?,
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '=' | 'z' | 'F' => {
                Op::Simple(name)
            }
            'l' => {
                self.skip_blanks();
                Op::List(self.number())
            }
            'q' | 'Q' => {
                if end.is_some() {
                    return Err(self.error("command only uses one address"));
                }
                self.skip_blanks();
                Op::Quit(name, self.number().unwrap_or(0) as i32)
            }
            'a' | 'i' | 'c' => Op::Text(name, self.text_argument()),
            'r' | 'R' | 'w' | 'W' => {
                let file = self.word(false);
                if file.is_empty() {
                    return Err(self.error("missing filename in r/R/w/W commands"));
                }
                Op::File(name, file)
            }
            'e' => return Err(refused("e (run a command)")),
            'v' => {
                self.word(true);
                Op::Label
            }
            other => return Err(self.error(&format!("unknown command: `{other}'"))),
        };
        self.script.cmds.push(Cmd {
            start,
            end,
            negate,
            op,
        });
        self.skip_blanks();
        match self.peek() {
            None | Some(';' | '\n' | '}' | '#') => Ok(()),
            Some(_) if matches!(name, '{' | '}') => Ok(()),
            Some(c) => Err(self.error(&format!("extra characters after command ({c})"))),
        }
    }
}

fn parse_replacement(text: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut chars = text.chars();
    let flush = |literal: &mut String, parts: &mut Vec<Part>| {
        if !literal.is_empty() {
            parts.push(Part::Text(std::mem::take(literal)));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '&' => {
                flush(&mut literal, &mut parts);
                parts.push(Part::Whole);
            }
            '\\' => match chars.next() {
                Some(d) if d.is_ascii_digit() => {
                    flush(&mut literal, &mut parts);
                    parts.push(Part::Group(d.to_digit(10).unwrap_or(0) as usize));
                }
                Some(case @ ('U' | 'L' | 'E' | 'u' | 'l')) => {
                    flush(&mut literal, &mut parts);
                    parts.push(Part::Case(case));
                }
                Some('n') => literal.push('\n'),
                Some('t') => literal.push('\t'),
                Some(other) => literal.push(other),
                None => literal.push('\\'),
            },
            _ => literal.push(c),
        }
    }
    flush(&mut literal, &mut parts);
    parts
}
