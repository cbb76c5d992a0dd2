//! awk's values: numbers, strings, and input data that is a number when it looks like one;
//! how a number prints (`%.6g`, as `OFMT`), how a string reads as a number, and `sprintf`.

use crate::text::format_one;

#[derive(Debug, Clone)]
pub enum Value {
    Num(f64),
    Str(String),
    /// Input data (fields, `-v` values): a number when it looks like one.
    Data(String),
}

impl Value {
    pub fn text(&self) -> String {
        match self {
            Value::Num(n) => format_number(*n),
            Value::Str(s) | Value::Data(s) => s.clone(),
        }
    }

    pub fn number(&self) -> f64 {
        match self {
            Value::Num(n) => *n,
            Value::Str(s) | Value::Data(s) => to_number(s),
        }
    }

    pub fn truthy(&self) -> bool {
        match self {
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

    pub fn is_numeric(&self) -> bool {
        match self {
            Value::Num(_) => true,
            Value::Str(_) => false,
            Value::Data(s) => looks_numeric(s),
        }
    }

    pub fn from_bool(b: bool) -> Value {
        Value::Num(f64::from(u8::from(b)))
    }
}

/// `%.6g`, as awk prints non-integral numbers.
pub fn format_number(n: f64) -> String {
    if n.is_finite() && n == n.trunc() && n.abs() < 1e16 {
        return format!("{}", n as i64);
    }
    if !n.is_finite() {
        return if n.is_nan() {
            "nan".into()
        } else if n > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    let exponent = n.abs().log10().floor() as i32;
    if !(-4..6).contains(&exponent) {
        let text = format!("{:.5e}", n);
        let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let mantissa = trim_zeros(mantissa);
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mantissa}e{sign}{:02}", exp.abs());
    }
    let decimals = (5 - exponent).max(0) as usize;
    trim_zeros(&format!("{n:.decimals$}"))
}

fn trim_zeros(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text.to_string()
    }
}

/// The leading number of a string, as awk converts strings (no number means 0).
pub fn to_number(text: &str) -> f64 {
    let t = text.trim_start();
    let mut end = 0;
    let bytes = t.as_bytes();
    if end < bytes.len() && (bytes[end] == b'-' || bytes[end] == b'+') {
        end += 1;
    }
    while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b'.') {
        end += 1;
    }
    if end < bytes.len() && (bytes[end] == b'e' || bytes[end] == b'E') {
        let mut e = end + 1;
        if e < bytes.len() && (bytes[e] == b'-' || bytes[e] == b'+') {
            e += 1;
        }
        if e < bytes.len() && bytes[e].is_ascii_digit() {
            end = e;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
        }
    }
    t[..end].parse().unwrap_or(0.0)
}

fn looks_numeric(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty() && t.parse::<f64>().is_ok() && !t.ends_with('.') || t.parse::<i64>().is_ok()
}

/// awk's `printf`/`sprintf`: the shell `printf`'s conversions, one pass over the format.
pub fn sprintf(values: &[Value]) -> Result<String, String> {
    let format = values.first().map(Value::text).unwrap_or_default();
    let chars: Vec<char> = format.chars().collect();
    let mut out = String::new();
    let mut next = 1;
    let mut i = 0;
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
        let start = i + 1;
        i += 1;
        while i < chars.len() && "-+ #0123456789.".contains(chars[i]) {
            i += 1;
        }
        let Some(conv) = chars.get(i).copied() else {
            out.extend(&chars[start - 1..]);
            break;
        };
        i += 1;
        let spec: String = chars[start..i - 1].iter().collect();
        let value = values.get(next);
        next += 1;
        let argument = match (conv, value) {
            ('d' | 'i' | 'x' | 'X' | 'o' | 'u' | 'c', Some(v))
                if v.is_numeric() || matches!(v, Value::Num(_)) =>
            {
                if conv == 'c' {
                    char::from_u32(v.number() as u32)
                        .map(String::from)
                        .unwrap_or_default()
                } else {
                    (v.number().trunc() as i64).to_string()
                }
            }
            ('d' | 'i' | 'x' | 'X' | 'o' | 'u', Some(v)) => {
                (to_number(&v.text()).trunc() as i64).to_string()
            }
            ('e' | 'f' | 'g' | 'E' | 'F' | 'G', Some(v)) => v.number().to_string(),
            (_, Some(v)) => v.text(),
            (_, None) => String::new(),
        };
        let conv = if conv == 'c' {
            's'
        } else {
            conv.to_ascii_lowercase()
        };
        let (text, problem) = format_one(&spec, conv, Some(&argument));
        if let Some(problem) = problem {
            return Err(problem);
        }
        out.push_str(&text);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::format_number;

    #[test]
    fn numbers_print_like_ofmt() {
        let cases = [
            (3.0, "3"),
            (0.5, "0.5"),
            (1.0 / 3.0, "0.333333"),
            (123456.7, "123457"),
            (1e20, "1e+20"),
            (-2.5, "-2.5"),
            (0.0001234, "0.0001234"),
        ];
        for (n, want) in cases {
            assert_eq!(format_number(n), want, "{n}");
        }
    }
}
