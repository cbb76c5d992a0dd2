//! awk's records, fields and I/O: the main input (the `ARGV` operands in turn, assignments
//! among them, or stdin), records cut by `RS` (a character, blank-line paragraphs, or a
//! regular expression), fields split lazily by `FS` (blanks, a character, every character, or
//! a regular expression) only when one is read, `getline` in its six forms, and output to
//! stdout, stderr, files and commands. Files written are kept in memory and written to the
//! VFS when closed (`close()`, `system()`, or the end); a command `print` pipes to runs when it
//! is closed, its output joining awk's own.

use std::collections::HashMap;
use std::rc::Rc;

use regex::Regex;

use super::array::Key;
use super::ast::{ARGC, ARGV, Expr, FILENAME, FS, ORS, Output, OutputMode, RS, Source};
use super::error::AwkErrorKind;
use super::eval::{Cell, Machine, PIECE_WORK, Run, check_size};
use super::value::Value;

/// The highest field number a program may assign to (or `NF` may be set to).
pub const MAX_FIELDS: usize = 100_000;

/// Bytes one run may write to files, commands and stderr together.
const MAX_WRITTEN: usize = 64 * 1024 * 1024;

/// How `FS` splits a record.
#[derive(Debug)]
pub enum Splitter {
    /// The default `" "`: runs of blanks and newlines, leading and trailing ones ignored.
    Blank,
    Char(char),
    /// `""`: every character a field.
    Each,
    Regex(Rc<Regex>),
}

/// Text read record by record.
#[derive(Debug, Default)]
pub struct Reader {
    text: String,
    pos: usize,
}

/// How `RS` cuts records.
enum RecordSep {
    Char(char),
    Paragraph,
    Regex(Rc<Regex>),
}

impl Reader {
    pub fn new(data: Vec<u8>) -> Reader {
        let text = String::from_utf8(data)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Reader { text, pos: 0 }
    }

    /// The next record, as text.
    fn next(&mut self, separator: &RecordSep) -> Option<String> {
        self.next_range(separator)
            .map(|(a, b)| self.text[a..b].to_string())
    }

    /// Where the next record is in the text.
    fn next_range(&mut self, separator: &RecordSep) -> Option<(usize, usize)> {
        let rest = self.text.get(self.pos..).filter(|r| !r.is_empty())?;
        let (record, advance) = match separator {
            RecordSep::Char(c) => match rest.find(*c) {
                Some(at) => (&rest[..at], at + c.len_utf8()),
                None => (rest, rest.len()),
            },
            RecordSep::Paragraph => {
                let trimmed = rest.trim_start_matches('\n');
                if trimmed.is_empty() {
                    self.pos = self.text.len();
                    return None;
                }
                let skipped = rest.len() - trimmed.len();
                match trimmed.find("\n\n") {
                    Some(at) => {
                        let tail = &trimmed[at..];
                        let newlines = tail.len() - tail.trim_start_matches('\n').len();
                        (&trimmed[..at], skipped + at + newlines)
                    }
                    None => (trimmed.trim_end_matches('\n'), rest.len()),
                }
            }
            RecordSep::Regex(re) => match re.find(rest).filter(|m| !m.is_empty()) {
                Some(m) => (&rest[..m.start()], m.end()),
                None => (rest, rest.len()),
            },
        };
        let start = record.as_ptr() as usize - self.text.as_ptr() as usize;
        let range = (start, start + record.len());
        self.pos += advance;
        Some(range)
    }
}

/// A file or command being written.
struct Stream {
    name: String,
    mode: OutputMode,
    /// For `>`: whether the file still has to be truncated when first written.
    truncate: bool,
    data: Vec<u8>,
}

#[derive(Default)]
pub struct Io {
    pub record: String,
    /// The fields, as byte ranges into the record (kept so when a field is assigned: the
    /// record is rebuilt around the new text).
    fields: Vec<(usize, usize)>,
    split: bool,
    /// How the current record splits, fixed when it was read (a later `FS` applies to the next).
    splitter: Option<Rc<Splitter>>,
    /// The last `FS` seen, and its splitter.
    fs_cache: Option<(String, bool, Rc<Splitter>)>,
    pub nr: f64,
    pub fnr: f64,
    /// The next `ARGV` index to open, the file being read, whether any file was named.
    next_arg: usize,
    current: Option<Reader>,
    named_file: bool,
    main_done: bool,
    files: HashMap<String, Reader>,
    commands: HashMap<String, Reader>,
    outputs: Vec<Stream>,
    written: usize,
    pub regexes: HashMap<String, Result<Rc<Regex>, String>>,
    pub random: super::builtins::Random,
}

impl Io {
    /// `nextfile`: the rest of the current file is skipped.
    pub fn skip_file(&mut self) {
        self.current = None;
    }
}

impl Machine<'_, '_, '_> {
    /// The separator `RS` names now.
    fn record_sep(&mut self) -> Run<RecordSep> {
        if self.global_str(RS) == Some("\n") {
            return Ok(RecordSep::Char('\n'));
        }
        let rs = self.text_of_global(RS);
        let mut chars = rs.chars();
        Ok(match (chars.next(), chars.next()) {
            (None, _) => RecordSep::Paragraph,
            (Some(c), None) => RecordSep::Char(c),
            _ => RecordSep::Regex(self.regex(&rs)?),
        })
    }

    /// Reads the next record of the main input (opening `ARGV`'s files in turn), counted in
    /// `NR` and `FNR`, into `$0`, or with `into_record` false returns it; `None` at the end of
    /// the last file.
    fn read_main(&mut self, into_record: bool) -> Run<Option<String>> {
        loop {
            if self.io.current.is_none() && !self.open_next_input()? {
                return Ok(None);
            }
            let separator = self.record_sep()?;
            let reader = self.io.current.as_mut().expect("opened above");
            if let Some((start, end)) = reader.next_range(&separator) {
                self.charge(end - start)?;
                check_size(end - start)?;
                self.io.nr += 1.0;
                self.io.fnr += 1.0;
                let reader = self.io.current.as_ref().expect("opened above");
                let text = &reader.text[start..end];
                if !into_record {
                    return Ok(Some(text.to_string()));
                }
                self.io.record.clear();
                self.io.record.push_str(text);
                self.io.split = false;
                self.io.splitter = Some(self.splitter()?);
                return Ok(Some(String::new()));
            }
            self.io.current = None;
        }
    }

    /// Opens the next input of `ARGV` (making its assignments on the way), or stdin when no
    /// file is named; false when there is none left.
    fn open_next_input(&mut self) -> Run<bool> {
        if self.io.main_done {
            return Ok(false);
        }
        if self.io.next_arg == 0 {
            self.io.next_arg = 1;
        }
        loop {
            // Each slot of `ARGV` looked at is a step: `ARGC = 1e15` with nothing in it ends
            // on the step limit (or the call's clock), not after a quadrillion empty slots.
            self.tick()?;
            let argc = self.global_number(ARGC);
            if self.io.next_arg as f64 >= argc {
                self.io.main_done = true;
                if self.io.named_file {
                    return Ok(false);
                }
                self.io.named_file = true;
                let data = self.ctx.stdin.take_all();
                self.io.current = Some(Reader::new(data));
                self.io.fnr = 0.0;
                return Ok(true);
            }
            let index = self.io.next_arg as i32;
            self.io.next_arg += 1;
            let arg = self.argv(index);
            if arg.is_empty() {
                continue;
            }
            if let Some((name, value)) = arg.split_once('=')
                && crate::is_name(name)
            {
                self.assign_by_name(name, crate::print::unescape(value));
                continue;
            }
            self.io.named_file = true;
            let data = if arg == "-" || arg == "/dev/stdin" {
                self.ctx.stdin.take_all()
            } else {
                match self.ctx.read_operand(&arg) {
                    Ok(data) => data,
                    Err(e) => {
                        return Err(AwkErrorKind::Io(format!("cannot open {arg} ({e})")).into());
                    }
                }
            };
            self.globals[FILENAME as usize] = Cell::Val(Value::Str(arg));
            self.io.current = Some(Reader::new(data));
            self.io.fnr = 0.0;
            return Ok(true);
        }
    }

    fn global_number(&self, slot: u32) -> f64 {
        match &self.globals[slot as usize] {
            Cell::Val(value) => value.number(),
            Cell::Arr(_) => 0.0,
        }
    }

    fn argv(&mut self, index: i32) -> String {
        let Cell::Arr(array) = &self.globals[ARGV as usize] else {
            return String::new();
        };
        let mut array = array.borrow_mut();
        if !array.contains(Key::Int(index)) {
            return String::new();
        }
        let value = array.entry(Key::Int(index)).clone();
        drop(array);
        self.take_text(value)
    }

    /// Reads the next main record into `$0`; false at the end of the input.
    pub(super) fn next_main_record(&mut self) -> Run<bool> {
        Ok(self.read_main(true)?.is_some())
    }

    /// Makes `text` the record, to be split by the current `FS` when a field is read.
    pub(super) fn set_record(&mut self, text: String) -> Run<()> {
        check_size(text.len())?;
        self.io.record = text;
        self.io.split = false;
        self.io.splitter = Some(self.splitter()?);
        Ok(())
    }

    /// The splitter for the current `FS` (cached while `FS` stays the same).
    fn splitter(&mut self) -> Run<Rc<Splitter>> {
        let paragraph = self.global_str(RS) == Some("");
        if let (Some((cached, cached_paragraph, splitter)), Some(fs)) =
            (&self.io.fs_cache, self.global_str(FS))
            && cached == fs
            && *cached_paragraph == paragraph
        {
            return Ok(splitter.clone());
        }
        let fs = self.text_of_global(FS);
        let splitter = Rc::new(self.splitter_for(&fs, paragraph)?);
        self.io.fs_cache = Some((fs, paragraph, splitter.clone()));
        Ok(splitter)
    }

    /// How the separator `fs` splits (for `FS` and `split()`); in paragraph mode a newline
    /// separates fields too.
    pub(super) fn splitter_for(&mut self, fs: &str, paragraph: bool) -> Run<Splitter> {
        let mut chars = fs.chars();
        Ok(match (chars.next(), chars.next()) {
            (Some(' '), None) => Splitter::Blank,
            (None, _) => Splitter::Each,
            (Some(c), None) if !paragraph => Splitter::Char(c),
            (Some(c), None) => {
                Splitter::Regex(self.regex(&format!("{}|\n", regex::escape(&c.to_string())))?)
            }
            _ if paragraph => Splitter::Regex(self.regex(&format!("({fs})|\n"))?),
            _ => Splitter::Regex(self.regex(fs)?),
        })
    }

    fn ensure_split(&mut self) -> Run<()> {
        if self.io.split {
            return Ok(());
        }
        let splitter = match &self.io.splitter {
            Some(splitter) => splitter.clone(),
            None => self.splitter()?,
        };
        self.charge(self.io.record.len())?;
        split_ranges(&self.io.record, &splitter, &mut self.io.fields);
        self.charge(self.io.fields.len().saturating_mul(PIECE_WORK))?;
        self.io.split = true;
        Ok(())
    }

    /// `$index`.
    pub(super) fn field(&mut self, index: usize) -> Run<Value> {
        if index == 0 {
            return Ok(Value::Data(self.io.record.clone()));
        }
        self.ensure_split()?;
        Ok(Value::Data(
            self.io
                .fields
                .get(index - 1)
                .map(|(a, b)| self.io.record[*a..*b].to_string())
                .unwrap_or_default(),
        ))
    }

    pub(super) fn nf(&mut self) -> Run<usize> {
        self.ensure_split()?;
        Ok(self.io.fields.len())
    }

    pub(super) fn set_field(&mut self, index: usize, text: String) -> Run<()> {
        if index == 0 {
            return self.set_record(text);
        }
        self.ensure_split()?;
        self.rebuild_record(self.io.fields.len().max(index), Some((index - 1, &text)))
    }

    pub(super) fn set_nf(&mut self, n: f64) -> Run<()> {
        if !(0.0..=MAX_FIELDS as f64).contains(&n) {
            return Err(AwkErrorKind::FieldIndex(n).into());
        }
        self.ensure_split()?;
        self.rebuild_record(n as usize, None)
    }

    /// `$0` rebuilt from its first `count` fields (empty ones added past `NF`), `replaced`
    /// standing in for one of them, joined by `OFS`; the field ranges follow.
    fn rebuild_record(&mut self, count: usize, replaced: Option<(usize, &str)>) -> Run<()> {
        let ofs = self.text_of_global(super::ast::OFS);
        let new_len = |io: &Io| {
            (0..count)
                .map(|i| match replaced {
                    Some((at, text)) if at == i => text.len(),
                    _ => io.fields.get(i).map_or(0, |(a, b)| b - a),
                })
                .sum::<usize>()
                + ofs.len() * count.saturating_sub(1)
        };
        let size = new_len(&self.io);
        check_size(size)?;
        self.charge(size)?;
        self.charge(count.saturating_mul(PIECE_WORK))?;
        let record = &self.io.record;
        let fields = &self.io.fields;
        let text_of = |i: usize| -> &str {
            match replaced {
                Some((at, text)) if at == i => text,
                _ => fields.get(i).map_or("", |(a, b)| &record[*a..*b]),
            }
        };
        let mut rebuilt = String::with_capacity(size);
        let mut ranges = Vec::with_capacity(count);
        for i in 0..count {
            if i > 0 {
                rebuilt.push_str(&ofs);
            }
            let start = rebuilt.len();
            rebuilt.push_str(text_of(i));
            ranges.push((start, rebuilt.len()));
        }
        self.io.record = rebuilt;
        self.io.fields = ranges;
        Ok(())
    }

    /// `getline` in all its forms; 1 when a record was read, 0 at the end, -1 when the source
    /// cannot be read.
    pub(super) fn getline(&mut self, source: &Source, target: Option<&Expr>) -> Run<Value> {
        let (record, counts) = match source {
            Source::Main => {
                if target.is_none() {
                    let read = self.read_main(true)?.is_some();
                    if read {
                        self.tick()?;
                    }
                    return Ok(Value::Num(f64::from(u8::from(read))));
                }
                (self.read_main(false)?, false)
            }
            Source::File(name) => {
                let value = self.eval(name)?;
                let name = self.take_text(value);
                if !self.io.files.contains_key(&name) {
                    let data = if name == "-" || name == "/dev/stdin" {
                        Ok(self.ctx.stdin.take_all())
                    } else {
                        self.flush_file(&name)?;
                        self.ctx.read_operand(&name)
                    };
                    match data {
                        Ok(data) => {
                            self.io.files.insert(name.clone(), Reader::new(data));
                        }
                        Err(_) => return Ok(Value::Num(-1.0)),
                    }
                }
                let separator = self.record_sep()?;
                let reader = self.io.files.get_mut(&name).expect("opened above");
                (reader.next(&separator), false)
            }
            Source::Command(command) => {
                let value = self.eval(command)?;
                let command = self.take_text(value);
                if !self.io.commands.contains_key(&command) {
                    self.flush_files()?;
                    let (_, out) = self.run_command(&command, Vec::new())?;
                    self.io.commands.insert(command.clone(), Reader::new(out));
                }
                let separator = self.record_sep()?;
                let reader = self.io.commands.get_mut(&command).expect("opened above");
                (reader.next(&separator), true)
            }
        };
        let Some(record) = record else {
            return Ok(Value::Num(0.0));
        };
        self.tick()?;
        self.charge(record.len())?;
        if counts {
            self.io.nr += 1.0;
        }
        match target {
            Some(target) => self.assign(target, Value::Data(record))?,
            None => self.set_record(record)?,
        }
        Ok(Value::Num(1.0))
    }

    /// `print expr, …`: the values joined by `OFS` (numbers through `OFMT`), then `ORS`.
    pub(super) fn print(&mut self, args: &[Expr], output: Option<&Output>) -> Run<()> {
        let mut line = String::new();
        if args.is_empty() {
            line.push_str(&self.io.record);
        }
        for (i, arg) in args.iter().enumerate() {
            if i > 0 {
                self.push_global(&mut line, super::ast::OFS);
            }
            match self.eval(arg)? {
                Value::Num(n) => line.push_str(&self.output_number(n)),
                other => line.push_str(other.as_str().unwrap_or_default()),
            }
            check_size(line.len())?;
        }
        self.push_global(&mut line, ORS);
        self.charge(line.len())?;
        self.emit(output, &line)
    }

    /// Appends a special global's text (`OFS`, `ORS`) without copying it first.
    fn push_global(&self, line: &mut String, slot: u32) {
        match self.global_str(slot) {
            Some(text) => line.push_str(text),
            None => line.push_str(&self.text_of_global(slot)),
        }
    }

    /// A global's text when it is a string (no conversion needed).
    pub(super) fn global_str(&self, slot: u32) -> Option<&str> {
        match &self.globals[slot as usize] {
            Cell::Val(Value::Str(s) | Value::Data(s)) => Some(s),
            _ => None,
        }
    }

    /// Writes `text` where `output` says: stdout, stderr, a file or a command.
    pub(super) fn emit(&mut self, output: Option<&Output>, text: &str) -> Run<()> {
        let Some(output) = output else {
            return self.write_stdout(text.as_bytes());
        };
        let value = self.eval(&output.target)?;
        let name = self.take_text(value);
        let stderr = match (output.mode, name.as_str()) {
            (OutputMode::Pipe, "cat 1>&2" | "cat >&2") => true,
            (OutputMode::Pipe, _) => false,
            (_, "/dev/stdout" | "-") => return self.write_stdout(text.as_bytes()),
            (_, "/dev/stderr") => true,
            _ => false,
        };
        self.io.written += text.len();
        if self.io.written > MAX_WRITTEN {
            return Err(AwkErrorKind::Output.into());
        }
        if stderr {
            self.ctx.err.extend_from_slice(text.as_bytes());
            return Ok(());
        }
        let stream = match self.io.outputs.iter_mut().position(|s| s.name == name) {
            Some(i) => &mut self.io.outputs[i],
            None => {
                if output.mode == OutputMode::Pipe {
                    super::command::check(&name)?;
                }
                self.io.outputs.push(Stream {
                    name,
                    mode: output.mode,
                    truncate: output.mode == OutputMode::Truncate,
                    data: Vec::new(),
                });
                self.io.outputs.last_mut().expect("just pushed")
            }
        };
        stream.data.extend_from_slice(text.as_bytes());
        Ok(())
    }

    fn write_stdout(&mut self, bytes: &[u8]) -> Run<()> {
        self.ctx.write(bytes);
        if self.ctx.overflowed {
            return Err(AwkErrorKind::Output.into());
        }
        Ok(())
    }

    /// Writes a file's pending output to the VFS, keeping it open (for appending).
    fn flush_stream(&mut self, index: usize) -> Run<i32> {
        let stream = &mut self.io.outputs[index];
        let data = std::mem::take(&mut stream.data);
        if stream.mode == OutputMode::Pipe {
            let name = stream.name.clone();
            let (status, out) = self.run_command(&name, data)?;
            self.write_stdout(&out)?;
            return Ok(status);
        }
        let path = self.ctx.resolve(&stream.name);
        let written = if stream.truncate {
            stream.truncate = false;
            self.ctx.vfs.write(&path, data)
        } else {
            self.ctx.vfs.append(&path, &data)
        };
        match written {
            Ok(()) => Ok(0),
            Err(e) => {
                let name = self.io.outputs[index].name.clone();
                Err(AwkErrorKind::Io(format!("cannot write {name} ({e})")).into())
            }
        }
    }

    fn flush_file(&mut self, name: &str) -> Run<()> {
        if let Some(i) = self
            .io
            .outputs
            .iter()
            .position(|s| s.name == name && s.mode != OutputMode::Pipe)
        {
            self.flush_stream(i)?;
        }
        Ok(())
    }

    /// Writes every file's pending output (before a command runs, which may read them).
    pub(super) fn flush_files(&mut self) -> Run<()> {
        for i in 0..self.io.outputs.len() {
            if self.io.outputs[i].mode != OutputMode::Pipe {
                self.flush_stream(i)?;
            }
        }
        Ok(())
    }

    /// `close(name)`: finishes an output file or command (running the command) or forgets an
    /// input; the command's exit status, 0, or -1 if nothing was open by that name.
    pub(super) fn close(&mut self, name: &str) -> Run<i32> {
        if let Some(i) = self.io.outputs.iter().position(|s| s.name == name) {
            if self.io.outputs[i].mode == OutputMode::Pipe {
                self.flush_files()?;
            }
            let status = self.flush_stream(i)?;
            self.io.outputs.remove(i);
            return Ok(status);
        }
        let input = self.io.files.remove(name).is_some() | self.io.commands.remove(name).is_some();
        Ok(if input { 0 } else { -1 })
    }

    /// At the end: every file written, then every command run, in the order first opened.
    pub fn finish_outputs(&mut self) -> Run<()> {
        self.flush_files()?;
        while !self.io.outputs.is_empty() {
            let status = self.flush_stream(0);
            self.io.outputs.remove(0);
            status?;
        }
        Ok(())
    }
}

/// The byte ranges of the fields of `record`, into `ranges` (emptied first).
pub fn split_ranges(record: &str, splitter: &Splitter, ranges: &mut Vec<(usize, usize)>) {
    ranges.clear();
    match splitter {
        Splitter::Blank => {
            let bytes = record.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n') {
                    i += 1;
                }
                let start = i;
                while i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b'\n') {
                    i += 1;
                }
                if i > start {
                    ranges.push((start, i));
                }
            }
        }
        _ if record.is_empty() => {}
        Splitter::Char(c) => {
            let mut start = 0;
            for (at, _) in record.match_indices(*c) {
                ranges.push((start, at));
                start = at + c.len_utf8();
            }
            ranges.push((start, record.len()));
        }
        Splitter::Each => {
            ranges.extend(record.char_indices().map(|(at, c)| (at, at + c.len_utf8())));
        }
        Splitter::Regex(re) => {
            let mut start = 0;
            for m in re.find_iter(record).filter(|m| !m.is_empty()) {
                ranges.push((start, m.start()));
                start = m.end();
            }
            ranges.push((start, record.len()));
        }
    }
}
