//! awk's builtin functions and `printf`: strings (`length`, `substr`, `index`, `split`,
//! `sub`, `gsub`, `match`, `sprintf`, `tolower`, `toupper`), arithmetic (`int`, `sqrt`, `exp`,
//! `log`, `sin`, `cos`, `atan2`, `rand`, `srand`), I/O (`system`, `close`, `fflush`) and time
//! (`systime`, `strftime`, on the sandbox's fixed clock). Regular expressions computed at run
//! time are compiled once and cached.

use std::rc::Rc;

use regex::Regex;

use super::ast::{Builtin, Expr, Output, RLENGTH, RSTART, compile};
use super::error::AwkErrorKind;
use super::eval::{
    Cell, MAX_STRING_BYTES, Machine, PIECE_WORK, REGEX_COMPILE_WORK, Run, check_size,
};
use super::io::split_ranges;
use super::value::Value;
use crate::{cformat, clock};

/// How many compiled run-time regular expressions are kept for reuse.
const REGEX_CACHE: usize = 64;

impl Machine<'_, '_, '_> {
    /// `source` compiled as a regular expression, once per distinct source while it stays
    /// among the last [`REGEX_CACHE`]: compiling takes far longer than a step.
    pub(super) fn regex(&mut self, source: &str) -> Run<Rc<Regex>> {
        if let Some(compiled) = self.io.regexes.get(source) {
            return compiled
                .clone()
                .map_err(|message| AwkErrorKind::Regex(message).into());
        }
        self.charge(REGEX_COMPILE_WORK + source.len())?;
        let compiled = compile(source).map(Rc::new);
        if self.io.regexes.len() >= REGEX_CACHE {
            self.io.regexes.clear();
        }
        self.io.regexes.insert(source.to_string(), compiled.clone());
        compiled.map_err(|message| AwkErrorKind::Regex(message).into())
    }

    /// The regular expression an argument stands for: a literal as written, anything else
    /// as the text of its value.
    pub(super) fn pattern(&mut self, expr: &Expr) -> Run<Rc<Regex>> {
        if let Expr::Regex(re) = expr {
            return Ok(re.clone());
        }
        let value = self.eval(expr)?;
        let source = self.take_text(value);
        self.regex(&source)
    }

    fn string_arg(&mut self, args: &[Expr], i: usize) -> Run<String> {
        match args.get(i) {
            Some(arg) => {
                let value = self.eval(arg)?;
                Ok(self.take_text(value))
            }
            None => Ok(String::new()),
        }
    }

    fn number_arg(&mut self, args: &[Expr], i: usize) -> Run<f64> {
        match args.get(i) {
            Some(arg) => Ok(self.eval(arg)?.number()),
            None => Ok(0.0),
        }
    }

    pub(super) fn call(&mut self, builtin: Builtin, args: &[Expr]) -> Run<Value> {
        Ok(match builtin {
            Builtin::Length => Value::Num(match args.first() {
                Some(Expr::Var(slot)) => self.length_of(*slot)?,
                Some(_) => self.string_arg(args, 0)?.chars().count() as f64,
                None => {
                    self.charge(self.io.record.len())?;
                    self.io.record.chars().count() as f64
                }
            }),
            Builtin::Substr => {
                let text = self.string_arg(args, 0)?;
                let start = self.number_arg(args, 1)?;
                let length = match args.get(2) {
                    Some(_) => self.number_arg(args, 2)?,
                    None => f64::INFINITY,
                };
                Value::Str(substr(&text, start, length))
            }
            Builtin::Index => {
                let text = self.string_arg(args, 0)?;
                let wanted = self.string_arg(args, 1)?;
                let at = match text.find(&wanted) {
                    Some(byte) if !wanted.is_empty() => text[..byte].chars().count() + 1,
                    _ => 0,
                };
                Value::Num(at as f64)
            }
            Builtin::Split => self.split(args)?,
            Builtin::Sub => self.substitute(false, args)?,
            Builtin::Gsub => self.substitute(true, args)?,
            Builtin::Match => {
                let text = self.string_arg(args, 0)?;
                let pattern = self.pattern(&args[1])?;
                let (start, length) = match pattern.find(&text) {
                    Some(m) => (
                        text[..m.start()].chars().count() as f64 + 1.0,
                        m.as_str().chars().count() as f64,
                    ),
                    None => (0.0, -1.0),
                };
                self.globals[RSTART as usize] = Cell::Val(Value::Num(start));
                self.globals[RLENGTH as usize] = Cell::Val(Value::Num(length));
                Value::Num(start)
            }
            Builtin::Sprintf => {
                let mut values = Vec::with_capacity(args.len());
                for arg in args {
                    values.push(self.eval(arg)?);
                }
                let (text, problem) = self.format(&values);
                match problem {
                    Some(kind) => return Err(kind.into()),
                    None => Value::Str(text),
                }
            }
            Builtin::ToLower => Value::Str(self.string_arg(args, 0)?.to_ascii_lowercase()),
            Builtin::ToUpper => Value::Str(self.string_arg(args, 0)?.to_ascii_uppercase()),
            Builtin::Int => Value::Num(self.number_arg(args, 0)?.trunc()),
            Builtin::Sqrt => Value::Num(self.number_arg(args, 0)?.sqrt()),
            Builtin::Exp => Value::Num(self.number_arg(args, 0)?.exp()),
            Builtin::Log => Value::Num(self.number_arg(args, 0)?.ln()),
            Builtin::Sin => Value::Num(self.number_arg(args, 0)?.sin()),
            Builtin::Cos => Value::Num(self.number_arg(args, 0)?.cos()),
            Builtin::Atan2 => {
                let y = self.number_arg(args, 0)?;
                Value::Num(y.atan2(self.number_arg(args, 1)?))
            }
            Builtin::Rand => Value::Num(self.io.random.next()),
            Builtin::Srand => {
                let seed = match args.first() {
                    Some(_) => self.number_arg(args, 0)?,
                    None => clock::NOW as f64,
                };
                Value::Num(self.io.random.reseed(seed))
            }
            Builtin::System => {
                let command = self.string_arg(args, 0)?;
                self.flush_files()?;
                let (status, out) = self.run_command(&command, Vec::new())?;
                self.ctx.write(&out);
                if self.ctx.overflowed {
                    return Err(AwkErrorKind::Output.into());
                }
                Value::Num(f64::from(status))
            }
            Builtin::Close => {
                let name = self.string_arg(args, 0)?;
                Value::Num(f64::from(self.close(&name)?))
            }
            Builtin::Fflush => {
                self.flush_files()?;
                Value::Num(0.0)
            }
            Builtin::Systime => Value::Num(clock::NOW as f64),
            Builtin::Strftime => {
                let format = match args.first() {
                    Some(_) => self.string_arg(args, 0)?,
                    None => "%a %b %e %H:%M:%S %Z %Y".to_string(),
                };
                let time = match args.get(1) {
                    Some(_) => self.number_arg(args, 1)? as i64,
                    None => clock::NOW,
                };
                Value::Str(clock::strftime(&format, time))
            }
        })
    }

    /// `split(s, a [, sep])`: `a` emptied and filled with the pieces of `s` (numeric
    /// strings where they look like numbers); their count.
    fn split(&mut self, args: &[Expr]) -> Run<Value> {
        let text = self.string_arg(args, 0)?;
        let Some(Expr::Index(array, _)) = args.get(1) else {
            return Err(AwkErrorKind::NotSupported("split without an array".into()).into());
        };
        let splitter = match args.get(2) {
            None => {
                let fs = self.text_of_global(super::ast::FS);
                self.splitter_for(&fs, false)?
            }
            Some(Expr::Regex(re)) => super::io::Splitter::Regex(re.clone()),
            Some(_) => {
                let sep = self.string_arg(args, 2)?;
                self.splitter_for(&sep, false)?
            }
        };
        self.charge(text.len())?;
        let mut ranges = Vec::new();
        split_ranges(&text, &splitter, &mut ranges);
        self.charge(ranges.len().saturating_mul(PIECE_WORK))?;
        let pieces: Vec<Value> = ranges
            .into_iter()
            .map(|(a, b)| Value::Data(text[a..b].to_string()))
            .collect();
        let count = pieces.len();
        let array = self.array(*array)?;
        let before = array.borrow().len();
        array.borrow_mut().load(pieces);
        self.count_elements(before, count)?;
        Ok(Value::Num(count as f64))
    }

    /// `sub(re, replacement [, target])` and `gsub`: replaces the first (or every) match in
    /// the target (`$0` by default); `&` stands for the match, `\&` for itself, `\\&` for a
    /// backslash and the match.
    fn substitute(&mut self, global: bool, args: &[Expr]) -> Run<Value> {
        let pattern = self.pattern(&args[0])?;
        let replacement = self.string_arg(args, 1)?;
        let target = args
            .get(2)
            .cloned()
            .unwrap_or(Expr::Field(Box::new(Expr::Num(0.0))));
        let value = self.eval(&target)?;
        let current = self.take_text(value);
        let plain = !replacement.contains(['&', '\\']);
        let mut count = 0;
        let mut result = String::new();
        let mut last = 0;
        for found in pattern.find_iter(&current) {
            result.push_str(&current[last..found.start()]);
            if plain {
                result.push_str(&replacement);
            } else {
                expand_replacement(&replacement, found.as_str(), &mut result);
            }
            check_size(result.len() + current.len() - found.end())?;
            self.charge(PIECE_WORK)?;
            last = found.end();
            count += 1;
            if !global {
                break;
            }
        }
        if count > 0 {
            result.push_str(&current[last..]);
            self.charge(result.len())?;
            self.assign(&target, Value::Str(result))?;
        }
        Ok(Value::Num(f64::from(count)))
    }

    /// `printf`: the formatted text, written even when a conversion failed (as awk writes
    /// what it formatted before the error), then the error.
    pub(super) fn printf(&mut self, args: &[Expr], output: Option<&Output>) -> Run<()> {
        let mut values = Vec::with_capacity(args.len());
        for arg in args {
            values.push(self.eval(arg)?);
        }
        let (text, problem) = self.format(&values);
        self.charge(text.len())?;
        self.emit(output, &text)?;
        match problem {
            Some(kind) => Err(kind.into()),
            None => Ok(()),
        }
    }

    /// `sprintf(format, values…)`: the text up to the first failing conversion, and the
    /// failure.
    pub(super) fn format(&self, values: &[Value]) -> (String, Option<AwkErrorKind>) {
        let format = values.first().map(|v| self.text(v)).unwrap_or_default();
        let chars: Vec<char> = format.chars().collect();
        let mut out = String::new();
        let mut next = 1;
        let mut i = 0;
        let arg = |next: &mut usize| -> Option<&Value> {
            let value = values.get(*next);
            *next += 1;
            value
        };
        while i < chars.len() {
            if chars[i] != '%' {
                out.push(chars[i]);
                i += 1;
                continue;
            }
            if chars.get(i + 1) == Some(&'%') {
                out.push('%');
                i += 2;
                continue;
            }
            let Some((mut spec, stars, end)) = cformat::parse(&chars, i + 1) else {
                out.extend(&chars[i..]);
                break;
            };
            let not_enough = || {
                Some(AwkErrorKind::Format(format!(
                    "not enough arguments passed to printf(\"{format}\")"
                )))
            };
            if stars.width {
                let Some(width) = arg(&mut next) else {
                    return (out, not_enough());
                };
                spec.set_star_width(width.number() as i64);
            }
            if stars.precision {
                let Some(precision) = arg(&mut next) else {
                    return (out, not_enough());
                };
                spec.set_star_precision(precision.number() as i64);
            }
            if !spec.in_bounds() {
                let problem = AwkErrorKind::Format(format!(
                    "printf: a field wider than {} is refused in the sandbox",
                    cformat::MAX_WIDTH
                ));
                return (out, Some(problem));
            }
            if !"cdiouxXeEfFgGs".contains(spec.conv) {
                let problem = AwkErrorKind::Format(format!(
                    "bad conversion `%{}' in printf(\"{format}\")",
                    spec.conv
                ));
                return (out, Some(problem));
            }
            let Some(value) = arg(&mut next) else {
                return (out, not_enough());
            };
            let text = match spec.conv {
                'd' | 'i' => {
                    let n = value.number();
                    if n.abs() < 9.2e18 {
                        spec.signed(n as i64)
                    } else {
                        let exact = cformat::Spec {
                            conv: 'f',
                            precision: Some(0),
                            ..spec
                        };
                        self.add_work(exact.float_work(n));
                        exact.float(n.trunc())
                    }
                }
                'o' | 'u' | 'x' | 'X' => spec.unsigned(value.number() as i64 as u64),
                'c' => {
                    let text = match value {
                        Value::Num(n) => char::from_u32(*n as u32)
                            .map(String::from)
                            .unwrap_or_default(),
                        other => self
                            .text(other)
                            .chars()
                            .next()
                            .map(String::from)
                            .unwrap_or_default(),
                    };
                    spec.text(&text)
                }
                's' => spec.text(&self.text(value)),
                _ => {
                    let n = value.number();
                    self.add_work(spec.float_work(n));
                    spec.float(n)
                }
            };
            if out.len() + text.len() > MAX_STRING_BYTES {
                return (out, Some(AwkErrorKind::StringSize(MAX_STRING_BYTES >> 20)));
            }
            out.push_str(&text);
            i = end;
        }
        (out, None)
    }
}

/// Appends `replacement` with `&` as `matched` (`\&` a literal `&`, `\\&` a backslash then the
/// match, any other backslash as written).
fn expand_replacement(replacement: &str, matched: &str, out: &mut String) {
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'&') => {
                out.push('&');
                chars.next();
            }
            '\\' if chars.peek() == Some(&'\\') => {
                let mut ahead = chars.clone();
                ahead.next();
                if ahead.peek() == Some(&'&') {
                    out.push('\\');
                    chars.next();
                } else {
                    out.push('\\');
                }
            }
            '&' => out.push_str(matched),
            _ => out.push(c),
        }
    }
}

/// `substr(s, m, n)`: `n` characters from position `m` (1-based), both truncated to integers
/// and a position below 1 taken as 1 — as mawk and the original awk count; gawk would also
/// shorten `n` by the positions before 1 (`substr(s, 0, 3)` is two characters there, three
/// here).
fn substr(text: &str, start: f64, length: f64) -> String {
    if start.is_nan() || length.is_nan() || length < 1.0 {
        return String::new();
    }
    let first = start.trunc().max(1.0);
    let count = if length.is_infinite() {
        usize::MAX
    } else {
        length.trunc().min(usize::MAX as f64) as usize
    };
    if first > text.len() as f64 {
        return String::new();
    }
    text.chars().skip(first as usize - 1).take(count).collect()
}

/// `rand()`'s generator: deterministic from its seed (0 until `srand`), so runs repeat.
#[derive(Debug)]
pub struct Random {
    seed: f64,
    state: u64,
}

impl Default for Random {
    fn default() -> Self {
        Random {
            seed: 0.0,
            state: mix(0),
        }
    }
}

impl Random {
    /// A number in [0, 1).
    pub fn next(&mut self) -> f64 {
        // xorshift64*.
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let out = self.state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (out >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Sets the seed; returns the previous one.
    pub fn reseed(&mut self, seed: f64) -> f64 {
        let previous = self.seed;
        self.seed = seed;
        self.state = mix(seed.to_bits());
        previous
    }
}

/// A non-zero state from a seed (splitmix64's finaliser).
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substr_truncates_and_clips_as_mawk_does() {
        assert_eq!(substr("hello", 2.0, 3.0), "ell");
        assert_eq!(substr("hello", 0.0, 3.0), "hel");
        assert_eq!(substr("hello", -1.0, f64::INFINITY), "hello");
        assert_eq!(substr("hello", 4.0, 10.0), "lo");
        assert_eq!(substr("hello", 1.5, 2.5), "he");
        assert_eq!(substr("héllo", 2.0, 2.0), "él");
        assert_eq!(substr("hello", 9.0, 1.0), "");
        assert_eq!(substr("hello", 2.0, 0.0), "");
    }

    #[test]
    fn replacements_expand_ampersands_and_backslashes() {
        let expand = |r: &str| {
            let mut out = String::new();
            expand_replacement(r, "l", &mut out);
            out
        };
        assert_eq!(expand("[&]"), "[l]");
        assert_eq!(expand("\\&"), "&");
        assert_eq!(expand("\\\\&"), "\\l");
        assert_eq!(expand("\\\\"), "\\\\");
        assert_eq!(expand("a\\tb"), "a\\tb");
    }

    #[test]
    fn rand_repeats_from_its_seed() {
        let mut a = Random::default();
        let first: Vec<f64> = (0..3).map(|_| a.next()).collect();
        assert!(first.iter().all(|x| (0.0..1.0).contains(x)));
        let mut b = Random::default();
        assert_eq!(first, (0..3).map(|_| b.next()).collect::<Vec<_>>());
        assert_eq!(b.reseed(7.0), 0.0);
        assert_eq!(b.reseed(1.0), 7.0);
    }
}
