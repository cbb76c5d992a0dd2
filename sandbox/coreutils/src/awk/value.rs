//! awk's values: numbers, strings, input data that is a number when it looks like one, and
//! the uninitialised value (both `""` and 0); how a string reads as a number, and how a number
//! becomes text (integers exactly, others through a `%.6g`-like format).

use crate::cformat;

#[derive(Debug, Clone, Default)]
pub enum Value {
    /// A variable or element never assigned: `""` as text, 0 as a number, and numeric in
    /// comparisons with numbers.
    #[default]
    Uninit,
    Num(f64),
    Str(String),
    /// Input data (fields, `getline` text, `split()` pieces, `-v` values, `ENVIRON`, `ARGV`):
    /// a "numeric string" — compared as a number — when it looks like one.
    Data(String),
}

impl Value {
    pub fn number(&self) -> f64 {
        match self {
            Value::Uninit => 0.0,
            Value::Num(n) => *n,
            Value::Str(s) | Value::Data(s) => to_number(s),
        }
    }

    /// Whether the value counts as true: a non-zero number, a non-empty string, a numeric
    /// string whose number is non-zero.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Uninit => false,
            Value::Num(n) => *n != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Data(s) => {
                if looks_numeric(s) {
                    to_number(s) != 0.0
                } else {
                    !s.is_empty()
                }
            }
        }
    }

    /// Whether comparisons treat the value as a number.
    pub fn is_numeric(&self) -> bool {
        match self {
            Value::Uninit | Value::Num(_) => true,
            Value::Str(_) => false,
            Value::Data(s) => looks_numeric(s),
        }
    }

    pub fn from_bool(b: bool) -> Value {
        Value::Num(f64::from(u8::from(b)))
    }

    /// The text of a string value, without copying; `None` for numbers.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Uninit => Some(""),
            Value::Num(_) => None,
            Value::Str(s) | Value::Data(s) => Some(s),
        }
    }
}

/// How numbers that are not integers become text: `CONVFMT` (or `OFMT` for `print`).
#[derive(Debug, Clone, Copy)]
pub enum NumFormat<'a> {
    /// `%.6g`, the default of both.
    G6,
    Custom(&'a str),
}

impl NumFormat<'_> {
    pub fn of(format: &str) -> NumFormat<'_> {
        if format == "%.6g" {
            NumFormat::G6
        } else {
            NumFormat::Custom(format)
        }
    }

    /// `n` as text — an integral value exactly, as `%d` would print it; anything else through
    /// the format — and about what writing it cost in bytes of text moved
    /// ([`cformat::Spec::float_work`]): far more than its length for a huge integral value
    /// written exactly, or a format asking for many digits.
    pub fn number_with_work(self, n: f64) -> (String, usize) {
        if n.fract() == 0.0 && n.abs() < 9.2e18 {
            return ((n as i64).to_string(), 0);
        }
        if n.is_finite() && n.fract() == 0.0 {
            let exact = cformat::Spec {
                conv: 'f',
                precision: Some(0),
                ..cformat::Spec::default()
            };
            return (exact.float(n), exact.float_work(n));
        }
        match self {
            NumFormat::G6 => {
                let g6 = cformat::Spec {
                    conv: 'g',
                    precision: Some(6),
                    ..cformat::Spec::default()
                };
                (g6.float(n), g6.float_work(n))
            }
            NumFormat::Custom(format) => custom(format, n),
        }
    }

    /// `value` as text, and the work of writing a number (see [`NumFormat::number_with_work`]).
    pub fn text(self, value: &Value) -> (String, usize) {
        match value {
            Value::Num(n) => self.number_with_work(*n),
            other => (other.as_str().unwrap_or_default().to_string(), 0),
        }
    }

    /// `value` as text, consuming it (no copy for strings), and the work of writing a number.
    pub fn take_text(self, value: Value) -> (String, usize) {
        match value {
            Value::Uninit => (String::new(), 0),
            Value::Num(n) => self.number_with_work(n),
            Value::Str(s) | Value::Data(s) => (s, 0),
        }
    }
}

/// A number through a user's `OFMT`/`CONVFMT`: its first conversion, the rest of the text kept;
/// and the work of the conversion.
fn custom(format: &str, n: f64) -> (String, usize) {
    let chars: Vec<char> = format.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    let mut used = false;
    let mut work = 0;
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
        match cformat::parse(&chars, i + 1) {
            Some((spec, _, end)) if !used && spec.in_bounds() => {
                used = true;
                out.push_str(&match spec.conv {
                    'd' | 'i' => spec.signed(n as i64),
                    'o' | 'x' | 'X' | 'u' | 'c' => spec.unsigned(n as i64 as u64),
                    's' => spec.text(&cformat::g6(n)),
                    _ => {
                        work = spec.float_work(n);
                        spec.float(n)
                    }
                });
                i = end;
            }
            _ => {
                out.push('%');
                i += 1;
            }
        }
    }
    (out, work)
}

/// The leading number of a string, as awk converts strings: optional blanks, a sign,
/// digits with an optional point, an optional exponent; no number means 0.
pub fn to_number(text: &str) -> f64 {
    let bytes = text.as_bytes();
    let mut start = 0;
    while start < bytes.len() && matches!(bytes[start], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
    {
        start += 1;
    }
    let end = start + numeric_prefix(&bytes[start..]);
    if end == start {
        return 0.0;
    }
    text[start..end].parse().unwrap_or(0.0)
}

/// The length of the number at the start of `bytes` (0 if none).
fn numeric_prefix(bytes: &[u8]) -> usize {
    let mut end = 0;
    if matches!(bytes.first(), Some(b'-' | b'+')) {
        end = 1;
    }
    let digits_start = end;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
    }
    let mut digits = end - digits_start;
    if bytes.get(end) == Some(&b'.') {
        let mut fraction = end + 1;
        while fraction < bytes.len() && bytes[fraction].is_ascii_digit() {
            fraction += 1;
        }
        digits += fraction - end - 1;
        if digits > 0 {
            end = fraction;
        }
    }
    if digits == 0 {
        return 0;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut e = end + 1;
        if matches!(bytes.get(e), Some(b'-' | b'+')) {
            e += 1;
        }
        if bytes.get(e).is_some_and(u8::is_ascii_digit) {
            while e < bytes.len() && bytes[e].is_ascii_digit() {
                e += 1;
            }
            end = e;
        }
    }
    end
}

/// Whether input text is a numeric string: blanks, a number, blanks — nothing else.
pub fn looks_numeric(text: &str) -> bool {
    let trimmed = text.trim_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    !trimmed.is_empty() && numeric_prefix(trimmed.as_bytes()) == trimmed.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_become_text_like_awk() {
        let cases = [
            (3.0, "3"),
            (0.5, "0.5"),
            (1.0 / 3.0, "0.333333"),
            (123456.7, "123457"),
            (1e20, "100000000000000000000"),
            (3e9, "3000000000"),
            (-2.5, "-2.5"),
            (0.0001234, "0.0001234"),
            (1e-5, "1e-05"),
            (f64::INFINITY, "inf"),
            (-0.0, "0"),
        ];
        for (n, want) in cases {
            assert_eq!(NumFormat::G6.number_with_work(n).0, want, "{n}");
        }
        assert_eq!(NumFormat::of("%.2f").number_with_work(1.23456).0, "1.23");
        assert_eq!(NumFormat::of("x=%d!").number_with_work(2.5).0, "x=2!");
    }

    #[test]
    fn strings_read_as_their_leading_number() {
        let cases = [
            ("42", 42.0),
            ("  -3.5abc", -3.5),
            ("1e3", 1000.0),
            ("1e", 1.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("abc", 0.0),
            ("+", 0.0),
            (".", 0.0),
            ("0x1A", 0.0),
        ];
        for (text, want) in cases {
            assert_eq!(to_number(text), want, "{text}");
        }
    }

    #[test]
    fn numeric_strings_are_whole_numbers_with_blanks() {
        for yes in ["1", " 2 ", "-3.5", "1e3", ".5", "5.", "+7"] {
            assert!(looks_numeric(yes), "{yes}");
        }
        for no in ["", " ", "1a", "abc", "1 2", ".", "e5", "0x10"] {
            assert!(!looks_numeric(no), "{no}");
        }
    }
}
