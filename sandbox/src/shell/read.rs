//! `read` and `mapfile`/`readarray`: the builtins that take standard input into variables,
//! split by `IFS` as bash splits them (see [`super::ifs`]).

use super::Input;
use super::exec::{Shell, Streams, report, unsupported};
use super::ifs::Ifs;
use super::parse::is_name;
use super::variables::Mode;

/// The options of `read`.
#[derive(Debug, Default)]
struct ReadOptions {
    raw: bool,
    array: Option<String>,
    delimiter: Option<u8>,
    max_chars: Option<usize>,
    /// `-N`: exactly that many characters, the delimiter ignored.
    exact: bool,
}

/// Options with their values (empty for a flag), and the operands after them.
type Parsed = (Vec<(char, String)>, Vec<String>);

/// Splits `-abc VALUE`-style options: each flag in `with_value` takes the rest of its word or
/// the next word. Returns the flags with their values and the operands.
fn options(args: &[String], with_value: &str) -> Result<Parsed, String> {
    let mut flags = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            return Ok((flags, rest.cloned().collect()));
        }
        let Some(letters) = arg.strip_prefix('-').filter(|l| !l.is_empty()) else {
            let mut operands = vec![arg.clone()];
            operands.extend(rest.cloned());
            return Ok((flags, operands));
        };
        for (at, flag) in letters.char_indices() {
            if with_value.contains(flag) {
                let tail = &letters[at + flag.len_utf8()..];
                let value = if tail.is_empty() {
                    rest.next()
                        .cloned()
                        .ok_or_else(|| format!("-{flag}: option requires an argument"))?
                } else {
                    tail.to_string()
                };
                flags.push((flag, value));
                break;
            }
            flags.push((flag, String::new()));
        }
    }
    Ok((flags, Vec::new()))
}

impl Shell<'_> {
    /// `read [-r] [-a ARRAY] [-d DELIM] [-n N] [-N N] [-p PROMPT] [-s] [-t T] [NAME…]`.
    pub(super) fn read(&mut self, args: &[String], io: &mut Streams) -> i32 {
        let (flags, names) = match options(args, "adnNptiu") {
            Ok(parsed) => parsed,
            Err(message) => {
                report(&mut io.err, format!("read: {message}"));
                return 2;
            }
        };
        let mut opts = ReadOptions {
            delimiter: Some(b'\n'),
            ..ReadOptions::default()
        };
        for (flag, value) in flags {
            match flag {
                'r' => opts.raw = true,
                'a' => opts.array = Some(value),
                'd' => opts.delimiter = Some(value.bytes().next().unwrap_or(0)),
                'n' | 'N' => match value.parse() {
                    Ok(n) => {
                        opts.max_chars = Some(n);
                        opts.exact = flag == 'N';
                    }
                    Err(_) => {
                        report(&mut io.err, format!("read: {value}: invalid number"));
                        return 1;
                    }
                },
                'u' if value == "0" => {}
                'u' => {
                    return unsupported(self, &mut io.err, "read: -u");
                }
                // The prompt shows only on a terminal, silence and timeouts change nothing on
                // buffered input, and -e/-i need readline.
                'p' | 's' | 't' | 'e' | 'i' => {}
                other => {
                    report(&mut io.err, format!("read: -{other}: invalid option"));
                    return 2;
                }
            }
        }
        if opts.exact {
            opts.delimiter = None;
        }
        for name in opts.array.iter().chain(&names) {
            if !is_name(name) {
                report(
                    &mut io.err,
                    format!("read: `{name}': not a valid identifier"),
                );
                return 1;
            }
        }
        let (chars, terminated) = read_record(&mut io.stdin, &opts).unwrap_or_default();
        let ifs = Ifs::new(self.var("IFS").as_deref());
        let result = if let Some(array) = &opts.array {
            let items = ifs
                .all_fields(&chars)
                .into_iter()
                .map(|f| (None, f))
                .collect();
            self.assign_array(array, items, Mode::Set)
        } else if names.is_empty() {
            let line = chars.iter().map(|c| c.0).collect();
            self.assign("REPLY", line, Mode::Set)
        } else {
            let fields = if opts.exact {
                let mut fields = vec![chars.iter().map(|c| c.0).collect()];
                fields.resize(names.len(), String::new());
                fields
            } else {
                ifs.read_fields(&chars, names.len())
            };
            names
                .iter()
                .zip(fields)
                .try_for_each(|(name, value)| self.assign(name, value, Mode::Set))
        };
        if let Err(e) = result {
            report(&mut io.err, format!("read: {e}"));
            return 1;
        }
        i32::from(!terminated)
    }

    /// `mapfile`/`readarray [-t] [-d DELIM] [-n COUNT] [-s SKIP] [-O ORIGIN] [ARRAY]`.
    pub(super) fn mapfile(&mut self, command: &str, args: &[String], io: &mut Streams) -> i32 {
        let (flags, names) = match options(args, "dnsOuCc") {
            Ok(parsed) => parsed,
            Err(message) => {
                report(&mut io.err, format!("{command}: {message}"));
                return 2;
            }
        };
        let mut strip = false;
        let mut delimiter = b'\n';
        let mut count = usize::MAX;
        let mut skip = 0usize;
        let mut origin: Option<usize> = None;
        for (flag, value) in flags {
            let number = || value.parse::<usize>().ok();
            match flag {
                't' => strip = true,
                'd' => delimiter = value.bytes().next().unwrap_or(0),
                'n' | 's' | 'O' => {
                    let Some(n) = number() else {
                        report(&mut io.err, format!("{command}: {value}: invalid number"));
                        return 1;
                    };
                    match flag {
                        'n' if n > 0 => count = n,
                        'n' => {}
                        's' => skip = n,
                        _ => origin = Some(n),
                    }
                }
                'u' if value == "0" => {}
                'u' | 'C' | 'c' => {
                    return unsupported(self, &mut io.err, format!("{command}: -{flag}"));
                }
                other => {
                    report(&mut io.err, format!("{command}: -{other}: invalid option"));
                    return 2;
                }
            }
        }
        let name = names.first().cloned().unwrap_or_else(|| "MAPFILE".into());
        if !is_name(&name) {
            report(
                &mut io.err,
                format!("{command}: `{name}': not a valid identifier"),
            );
            return 1;
        }
        let mut items = Vec::new();
        let mut index = origin.unwrap_or(0);
        let mut seen = 0usize;
        while items.len() < count {
            let Some((mut line, terminated)) = io.stdin.read_record(Some(delimiter), None) else {
                break;
            };
            seen += 1;
            if seen <= skip {
                continue;
            }
            if terminated && !strip {
                line.push(char::from(delimiter));
            }
            if self.value_too_large(line.len()) {
                return 1;
            }
            items.push((Some(index.to_string()), line));
            index += 1;
        }
        let mode = if origin.is_some() {
            Mode::Append
        } else {
            Mode::Set
        };
        match self.assign_array(&name, items, mode) {
            Ok(()) => 0,
            Err(e) => {
                report(&mut io.err, format!("{command}: {e}"));
                1
            }
        }
    }
}

/// Reads one record for `read`: characters marked `true` were escaped by a backslash (without
/// `-r`), which also joins a line ending in one to the next. `None` at end of input.
fn read_record(stdin: &mut Input, opts: &ReadOptions) -> Option<(Vec<(char, bool)>, bool)> {
    let mut chars = Vec::new();
    let mut first = true;
    loop {
        let remaining = opts.max_chars.map(|max| max.saturating_sub(chars.len()));
        let Some((text, terminated)) = stdin.read_record(opts.delimiter, remaining) else {
            return if first { None } else { Some((chars, false)) };
        };
        first = false;
        let mut iter = text.chars().peekable();
        let mut continued = false;
        while let Some(c) = iter.next() {
            if c == '\\' && !opts.raw {
                match iter.next() {
                    Some(next) => chars.push((next, true)),
                    None => continued = terminated && opts.delimiter == Some(b'\n'),
                }
            } else {
                chars.push((c, false));
            }
        }
        if !continued || remaining == Some(0) {
            return Some((chars, terminated));
        }
    }
}
