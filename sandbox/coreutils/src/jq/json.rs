//! jq's values: JSON with objects in insertion order (as jq keeps them), a parser for a
//! stream of whitespace-separated values, and the printer — jq 1.6's layout (two-space
//! indent, `"key": value`), its escapes, and its number format (shortest round-trip digits,
//! integers in full up to 17 digits, `1e+17` beyond).

use std::cmp::Ordering;
use std::rc::Rc;

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(Rc<str>),
    Arr(Rc<Vec<Json>>),
    Obj(Rc<Vec<(Rc<str>, Json)>>),
}

impl Json {
    pub fn str(s: &str) -> Json {
        Json::Str(Rc::from(s))
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Num(_) => "number",
            Json::Str(_) => "string",
            Json::Arr(_) => "array",
            Json::Obj(_) => "object",
        }
    }

    pub fn truthy(&self) -> bool {
        !matches!(self, Json::Null | Json::Bool(false))
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(fields) => fields.iter().find(|(k, _)| &**k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// An object with `key` set (replaced in place, or appended).
    pub fn with_field(fields: &[(Rc<str>, Json)], key: Rc<str>, value: Json) -> Json {
        let mut fields = fields.to_vec();
        match fields.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => fields.push((key, value)),
        }
        Json::Obj(Rc::new(fields))
    }

    fn rank(&self) -> u8 {
        match self {
            Json::Null => 0,
            Json::Bool(false) => 1,
            Json::Bool(true) => 2,
            Json::Num(_) => 3,
            Json::Str(_) => 4,
            Json::Arr(_) => 5,
            Json::Obj(_) => 6,
        }
    }
}

/// jq's total order: null < false < true < numbers < strings < arrays < objects; objects by
/// their sorted keys, then values.
pub fn compare(a: &Json, b: &Json) -> Ordering {
    match (a, b) {
        (Json::Num(x), Json::Num(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (Json::Str(x), Json::Str(y)) => x.cmp(y),
        (Json::Arr(x), Json::Arr(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let order = compare(p, q);
                if order.is_ne() {
                    return order;
                }
            }
            x.len().cmp(&y.len())
        }
        (Json::Obj(x), Json::Obj(y)) => {
            let mut kx: Vec<&Rc<str>> = x.iter().map(|(k, _)| k).collect();
            let mut ky: Vec<&Rc<str>> = y.iter().map(|(k, _)| k).collect();
            kx.sort();
            ky.sort();
            let order = kx.cmp(&ky);
            if order.is_ne() {
                return order;
            }
            for key in kx {
                let order = compare(
                    a.get(key).unwrap_or(&Json::Null),
                    b.get(key).unwrap_or(&Json::Null),
                );
                if order.is_ne() {
                    return order;
                }
            }
            Ordering::Equal
        }
        _ => a.rank().cmp(&b.rank()),
    }
}

/// Where and why input text is not JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

/// Every JSON value in `text`, separated by whitespace.
pub fn parse_stream(text: &str) -> Result<Vec<Json>, ParseError> {
    match parse_values(text) {
        (values, None) => Ok(values),
        (_, Some(error)) => Err(error),
    }
}

/// The JSON values at the start of `text`, and the error that stopped the reading, if any.
pub fn parse_values(text: &str) -> (Vec<Json>, Option<ParseError>) {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        text,
        pos: 0,
        depth: 0,
    };
    let mut values = Vec::new();
    loop {
        parser.skip_ws();
        if parser.pos >= parser.bytes.len() {
            return (values, None);
        }
        match parser.value() {
            Ok(value) => values.push(value),
            Err(error) => return (values, Some(error)),
        }
    }
}

/// How deeply arrays and objects may nest (the parser recurses).
const MAX_DEPTH: usize = 256;

struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
    }

    fn error(&self, message: &str) -> ParseError {
        // After an escape the position may stand inside a multi-byte character.
        let mut end = self.pos.min(self.text.len());
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let before = &self.text[..end];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        ParseError {
            message: message.into(),
            line,
            column,
        }
    }

    fn value(&mut self) -> Result<Json, ParseError> {
        self.skip_ws();
        let Some(&b) = self.bytes.get(self.pos) else {
            return Err(self.error("Unfinished JSON term at EOF"));
        };
        match b {
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(self.error("Exceeds depth limit for parsing"));
                }
                let value = if b == b'{' {
                    self.object()
                } else {
                    self.array()
                };
                self.depth -= 1;
                value
            }
            b'"' => Ok(Json::Str(Rc::from(self.string()?.as_str()))),
            b'-' | b'0'..=b'9' => self.number(),
            _ => {
                let start = self.pos;
                while self
                    .bytes
                    .get(self.pos)
                    .is_some_and(u8::is_ascii_alphanumeric)
                {
                    self.pos += 1;
                }
                match &self.text[start..self.pos] {
                    "null" => Ok(Json::Null),
                    "true" => Ok(Json::Bool(true)),
                    "false" => Ok(Json::Bool(false)),
                    "nan" => Ok(Json::Num(f64::NAN)),
                    _ => {
                        self.pos = self.pos.max(start + 1);
                        while self
                            .bytes
                            .get(self.pos)
                            .is_some_and(|b| !b.is_ascii_whitespace())
                        {
                            self.pos += 1;
                        }
                        Err(self.error("Invalid literal"))
                    }
                }
            }
        }
    }

    fn number(&mut self) -> Result<Json, ParseError> {
        let start = self.pos;
        while self
            .bytes
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            self.pos += 1;
        }
        self.text[start..self.pos]
            .parse()
            .map(Json::Num)
            .map_err(|_| self.error("Invalid numeric literal"))
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.pos..];
            let Some(at) = rest.find(['"', '\\']) else {
                self.pos = self.bytes.len();
                return Err(self.error("Unfinished string at EOF"));
            };
            out.push_str(&rest[..at]);
            self.pos += at;
            if self.bytes[self.pos] == b'"' {
                self.pos += 1;
                return Ok(out);
            }
            self.pos += 1;
            let escaped = self.bytes.get(self.pos).copied();
            self.pos += 1;
            match escaped {
                Some(b'n') => out.push('\n'),
                Some(b't') => out.push('\t'),
                Some(b'r') => out.push('\r'),
                Some(b'b') => out.push('\x08'),
                Some(b'f') => out.push('\x0c'),
                Some(b'/') => out.push('/'),
                Some(b'\\') => out.push('\\'),
                Some(b'"') => out.push('"'),
                Some(b'u') => {
                    let unit = self.hex4()?;
                    let c = if (0xD800..0xDC00).contains(&unit)
                        && self.text[self.pos..].starts_with("\\u")
                    {
                        self.pos += 2;
                        let low = self.hex4()?;
                        char::from_u32(
                            0x10000 + ((unit - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF),
                        )
                    } else {
                        char::from_u32(unit)
                    };
                    out.push(c.unwrap_or('\u{FFFD}'));
                }
                _ => return Err(self.error("Invalid escape")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .ok_or_else(|| self.error("Invalid escape"))?;
        self.pos += 4;
        u32::from_str_radix(digits, 16).map_err(|_| self.error("Invalid escape"))
    }

    fn array(&mut self) -> Result<Json, ParseError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Json::Arr(Rc::new(items)));
        }
        loop {
            items.push(self.value()?);
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Arr(Rc::new(items)));
                }
                None => return Err(self.error("Unfinished JSON term at EOF")),
                _ => return Err(self.error("Expected separator between values")),
            }
        }
    }

    fn object(&mut self) -> Result<Json, ParseError> {
        self.pos += 1;
        let mut fields: Vec<(Rc<str>, Json)> = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Json::Obj(Rc::new(fields)));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(self.error("Object keys must be strings"));
            }
            let key: Rc<str> = Rc::from(self.string()?.as_str());
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b':') {
                return Err(self.error("Objects must consist of key:value pairs"));
            }
            self.pos += 1;
            let value = self.value()?;
            match fields.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = value,
                None => fields.push((key, value)),
            }
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Obj(Rc::new(fields)));
                }
                None => return Err(self.error("Unfinished JSON term at EOF")),
                _ => return Err(self.error("Expected separator between values")),
            }
        }
    }
}

/// How values print.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// `None` for compact output, else the indent of one level.
    pub indent: Option<&'static str>,
    pub sort_keys: bool,
}

pub fn write(out: &mut String, value: &Json, style: Style, level: usize) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Num(n) => out.push_str(&number(*n)),
        Json::Str(s) => quote(out, s),
        Json::Arr(items) if items.is_empty() => out.push_str("[]"),
        Json::Obj(fields) if fields.is_empty() => out.push_str("{}"),
        Json::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, style, level + 1);
                write(out, item, style, level + 1);
            }
            newline(out, style, level);
            out.push(']');
        }
        Json::Obj(fields) => {
            let mut order: Vec<&(Rc<str>, Json)> = fields.iter().collect();
            if style.sort_keys {
                order.sort_by(|a, b| a.0.cmp(&b.0));
            }
            out.push('{');
            for (i, (key, item)) in order.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, style, level + 1);
                quote(out, key);
                out.push(':');
                if style.indent.is_some() {
                    out.push(' ');
                }
                write(out, item, style, level + 1);
            }
            newline(out, style, level);
            out.push('}');
        }
    }
}

fn newline(out: &mut String, style: Style, level: usize) {
    if let Some(indent) = style.indent {
        out.push('\n');
        for _ in 0..level {
            out.push_str(indent);
        }
    }
}

/// A string as a JSON literal, escaped as jq escapes.
pub fn quote(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c == '\x7f' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number as jq 1.6 prints it: the shortest digits that read back the same, in plain
/// notation unless the exponent is below -4 or more than 15 past the digits.
pub fn number(n: f64) -> String {
    if n.is_nan() {
        return "null".into();
    }
    let n = if n.is_infinite() {
        f64::MAX.copysign(n)
    } else {
        n
    };
    if n == 0.0 {
        return if n.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let sci = format!("{:e}", n.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let decpt = exponent + 1;
    let count = digits.len() as i64;
    let sign = if n < 0.0 { "-" } else { "" };
    let body = if decpt <= -4 || decpt > count + 15 {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let e = decpt - 1;
        format!(
            "{first}{fraction}e{}{:02}",
            if e < 0 { '-' } else { '+' },
            e.abs()
        )
    } else if decpt <= 0 {
        format!("0.{}{digits}", "0".repeat((-decpt) as usize))
    } else if decpt >= count {
        format!("{digits}{}", "0".repeat((decpt - count) as usize))
    } else {
        let (int, frac) = digits.split_at(decpt as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_jq_1_6_prints_them() {
        let cases = [
            (1e17, "1e+17"),
            (1e16, "1e+16"),
            (12345678901234567890.0, "12345678901234567000"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (1e-5, "1e-05"),
            (1234560000000.0, "1234560000000"),
            (1.5e300, "1.5e+300"),
            (3.0, "3"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
        ];
        for (n, want) in cases {
            assert_eq!(number(n), want, "{n}");
        }
    }

    #[test]
    fn values_round_trip_in_jqs_layout() {
        let values = parse_stream("{\"a\":1,\"b\":[],\"c\":[1,{\"x\":null}]} 2").unwrap();
        let mut out = String::new();
        let pretty = Style {
            indent: Some("  "),
            sort_keys: false,
        };
        write(&mut out, &values[0], pretty, 0);
        assert_eq!(
            out,
            "{\n  \"a\": 1,\n  \"b\": [],\n  \"c\": [\n    1,\n    {\n      \"x\": null\n    }\n  ]\n}"
        );
        assert_eq!(values[1], Json::Num(2.0));
        let error = parse_stream("not json").unwrap_err();
        assert_eq!(
            (error.message.as_str(), error.line, error.column),
            ("Invalid literal", 1, 4)
        );
    }
}
