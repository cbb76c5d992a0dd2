//! C's `printf` conversions, as glibc prints them: one parsed [`Spec`] (flags, width,
//! precision, conversion) and a function per kind of argument. `awk`'s `printf`/`sprintf` and
//! its number-to-text conversions (`OFMT`, `CONVFMT`) use it; `%g` and `%e` follow C exactly
//! (exponent sign and two digits, trailing zeros removed unless `#`), which Rust's own `{:e}`
//! does not.

/// The widest field (and largest precision) a format may ask for: a bigger one would only
/// allocate memory.
pub const MAX_WIDTH: usize = 1_000_000;

/// One `%…` conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Spec {
    pub left: bool,
    pub plus: bool,
    pub space: bool,
    pub alt: bool,
    pub zero: bool,
    pub width: usize,
    pub precision: Option<usize>,
    pub conv: char,
}

/// Where a `*` stands in a spec: the width, the precision, or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stars {
    pub width: bool,
    pub precision: bool,
}

/// Parses the spec after a `%` at `chars[start..]`: its flags, width and precision (`*` is
/// recorded in [`Stars`] for the caller to fill from its arguments) and the conversion
/// character. Returns the spec and the index just past it, or `None` when the text ends first.
pub fn parse(chars: &[char], start: usize) -> Option<(Spec, Stars, usize)> {
    let mut spec = Spec::default();
    let mut stars = Stars::default();
    let mut i = start;
    while let Some(c) = chars.get(i) {
        match c {
            '-' => spec.left = true,
            '+' => spec.plus = true,
            ' ' => spec.space = true,
            '#' => spec.alt = true,
            '0' => spec.zero = true,
            _ => break,
        }
        i += 1;
    }
    if chars.get(i) == Some(&'*') {
        stars.width = true;
        i += 1;
    } else {
        spec.width = digits(chars, &mut i);
    }
    if chars.get(i) == Some(&'.') {
        i += 1;
        if chars.get(i) == Some(&'*') {
            stars.precision = true;
            i += 1;
        } else {
            spec.precision = Some(digits(chars, &mut i));
        }
    }
    // Length modifiers (`%ld`, `%lld`, `%hd`) change nothing here.
    while matches!(chars.get(i), Some('l' | 'h' | 'L' | 'q' | 'j' | 'z' | 't')) {
        i += 1;
    }
    spec.conv = *chars.get(i)?;
    Some((spec, stars, i + 1))
}

fn digits(chars: &[char], i: &mut usize) -> usize {
    let mut n: usize = 0;
    while let Some(d) = chars.get(*i).and_then(|c| c.to_digit(10)) {
        n = n.saturating_mul(10).saturating_add(d as usize);
        *i += 1;
    }
    n
}

impl Spec {
    /// Whether the width and precision are within [`MAX_WIDTH`].
    pub fn in_bounds(&self) -> bool {
        self.width <= MAX_WIDTH && self.precision.is_none_or(|p| p <= MAX_WIDTH)
    }

    /// A `*` width from an argument: negative means left-justified.
    pub fn set_star_width(&mut self, n: i64) {
        if n < 0 {
            self.left = true;
        }
        self.width = usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX);
    }

    /// A `*` precision from an argument: negative means none.
    pub fn set_star_precision(&mut self, n: i64) {
        self.precision = usize::try_from(n).ok();
    }

    /// Pads `body` (after its `sign`) to the width: spaces on the left or right, or zeros
    /// between sign and digits for numbers with `0`.
    fn pad(&self, sign: &str, body: &str, zeros_allowed: bool) -> String {
        let len = sign.len() + body.chars().count();
        let fill = self.width.saturating_sub(len);
        let mut out = String::with_capacity(len + fill);
        if fill == 0 {
            out.push_str(sign);
            out.push_str(body);
        } else if self.left {
            out.push_str(sign);
            out.push_str(body);
            out.extend(std::iter::repeat_n(' ', fill));
        } else if self.zero && zeros_allowed {
            out.push_str(sign);
            out.extend(std::iter::repeat_n('0', fill));
            out.push_str(body);
        } else {
            out.extend(std::iter::repeat_n(' ', fill));
            out.push_str(sign);
            out.push_str(body);
        }
        out
    }

    fn sign(&self, negative: bool) -> &'static str {
        if negative {
            "-"
        } else if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        }
    }

    /// `%d`/`%i`.
    pub fn signed(&self, n: i64) -> String {
        let digits = n.unsigned_abs().to_string();
        let body = self.min_digits(digits);
        self.pad(self.sign(n < 0), &body, self.precision.is_none())
    }

    /// `%u`, `%o`, `%x`, `%X` of the bits of `n`.
    pub fn unsigned(&self, n: u64) -> String {
        let digits = match self.conv {
            'o' => format!("{n:o}"),
            'x' => format!("{n:x}"),
            'X' => format!("{n:X}"),
            _ => n.to_string(),
        };
        let mut body = self.min_digits(digits);
        let mut prefix = "";
        if self.alt && n != 0 {
            match self.conv {
                'x' => prefix = "0x",
                'X' => prefix = "0X",
                'o' if !body.starts_with('0') => body.insert(0, '0'),
                _ => {}
            }
        }
        self.pad(prefix, &body, self.precision.is_none())
    }

    /// Digits padded with zeros to the precision; precision 0 prints 0 as nothing.
    fn min_digits(&self, digits: String) -> String {
        match self.precision {
            Some(0) if digits == "0" => String::new(),
            Some(p) if p > digits.len() => format!("{}{digits}", "0".repeat(p - digits.len())),
            _ => digits,
        }
    }

    /// `%e`, `%E`, `%f`, `%F`, `%g`, `%G`.
    pub fn float(&self, value: f64) -> String {
        let negative = value.is_sign_negative() && !value.is_nan();
        let sign = self.sign(negative);
        if !value.is_finite() {
            let word = if value.is_nan() { "nan" } else { "inf" };
            let word = if self.conv.is_ascii_uppercase() {
                word.to_ascii_uppercase()
            } else {
                word.to_string()
            };
            return self.pad(sign, &word, false);
        }
        let magnitude = value.abs();
        let precision = self.precision.unwrap_or(6);
        let body = match self.conv {
            'e' | 'E' => exponential(magnitude, precision, self.alt),
            'g' | 'G' => general(magnitude, precision, self.alt),
            _ => {
                let mut text = format!("{magnitude:.precision$}");
                if self.alt && precision == 0 {
                    text.push('.');
                }
                text
            }
        };
        let body = if self.conv.is_ascii_uppercase() {
            body.to_ascii_uppercase()
        } else {
            body
        };
        self.pad(sign, &body, true)
    }

    /// About what writing `value` with this spec costs, in bytes of text moved, for callers
    /// that bound their work (awk's text budget). Past about 17 significant digits, or far
    /// from 1, an exact decimal conversion is big-number arithmetic whose time grows with the
    /// decimal exponent times the digits written: 1e300 to all 301 digits took ~15 µs here,
    /// 1.2e-300 to 1,000 decimals ~40 µs, 0.13–0.2 ns a unit of (exponent + 1) × (digits +
    /// 1), about what moving a byte costs.
    pub fn float_work(&self, value: f64) -> usize {
        if !value.is_finite() {
            return 0;
        }
        let exponent = decimal_exponent(value.abs());
        let precision = self.precision.unwrap_or(6);
        let digits = match self.conv {
            'f' | 'F' => exponent.max(0).unsigned_abs() as usize + 1 + precision,
            // `%g` converts twice: once to find the exponent, once to write.
            'g' | 'G' => 2 * precision.max(1),
            _ => precision + 1,
        };
        (exponent.unsigned_abs() as usize + 1).saturating_mul(digits.saturating_add(1))
    }

    /// `%s` (cut to the precision, in characters) and `%c` (the text already one character).
    pub fn text(&self, text: &str) -> String {
        match self.precision {
            Some(p) if self.conv == 's' => {
                let cut: String = text.chars().take(p).collect();
                self.pad("", &cut, false)
            }
            _ => self.pad("", text, false),
        }
    }
}

/// `%.{precision}e` of a non-negative finite number, as C writes it: `1.500000e+03`.
fn exponential(magnitude: f64, precision: usize, alt: bool) -> String {
    let text = format!("{magnitude:.precision$e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let mut mantissa = mantissa.to_string();
    if alt && precision == 0 {
        mantissa.push('.');
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

/// `%.{precision}g` of a non-negative finite number: `%e` when the exponent is below -4 or
/// at least the precision, else `%f`; trailing zeros (and a trailing point) dropped unless
/// `alt`.
fn general(magnitude: f64, precision: usize, alt: bool) -> String {
    let precision = precision.max(1);
    // The exponent after rounding to `precision` significant digits.
    let rounded = format!("{magnitude:.*e}", precision - 1);
    let exponent: i64 = rounded
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let text = if exponent < -4 || exponent >= precision as i64 {
        exponential(magnitude, precision - 1, alt)
    } else {
        let decimals = (precision as i64 - 1 - exponent).max(0) as usize;
        let mut text = format!("{magnitude:.decimals$}");
        if alt && decimals == 0 {
            text.push('.');
        }
        text
    };
    if alt {
        return text;
    }
    match text.split_once('e') {
        Some((mantissa, exponent)) => format!("{}e{exponent}", trim_fraction(mantissa)),
        None => trim_fraction(&text).to_string(),
    }
}

/// About the decimal exponent of a finite, non-negative `magnitude` (within one), from its
/// binary exponent: no `log10`, as it is asked for every number written.
fn decimal_exponent(magnitude: f64) -> i64 {
    if magnitude == 0.0 {
        return 0;
    }
    let binary = ((magnitude.to_bits() >> 52) & 0x7ff) as i64 - 1023;
    (binary as f64 * std::f64::consts::LOG10_2) as i64
}

fn trim_fraction(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// `%.6g`, the default `OFMT` and `CONVFMT`.
pub fn g6(value: f64) -> String {
    Spec {
        conv: 'g',
        precision: Some(6),
        ..Spec::default()
    }
    .float(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(spec: &str, value: f64) -> String {
        let chars: Vec<char> = spec.chars().collect();
        let (spec, _, _) = parse(&chars, 0).unwrap();
        match spec.conv {
            'd' | 'i' => spec.signed(value as i64),
            'x' | 'X' | 'o' | 'u' => spec.unsigned(value as i64 as u64),
            _ => spec.float(value),
        }
    }

    #[test]
    fn floats_print_as_c_prints_them() {
        let cases = [
            ("g", 1234.5, "1234.5"),
            ("g", 0.0001234, "0.0001234"),
            ("g", 1e20, "1e+20"),
            ("g", 123456.7, "123457"),
            ("g", 1234567.0, "1.23457e+06"),
            ("g", 0.00001, "1e-05"),
            ("g", 100.0, "100"),
            ("g", 0.0, "0"),
            ("#g", 1.0, "1.00000"),
            (".3g", 1.23456, "1.23"),
            (".0g", 25.0, "2e+01"),
            ("e", 1234.5, "1.234500e+03"),
            ("E", 0.000123, "1.230000E-04"),
            (".2e", 9.999, "1.00e+01"),
            ("f", 1.23456, "1.234560"),
            ("5.2f", 1.23456, " 1.23"),
            ("-8.2f", -1.23456, "-1.23   "),
            ("08.2f", -1.23456, "-0001.23"),
            ("+.1f", 2.0, "+2.0"),
            ("f", f64::INFINITY, "inf"),
            ("5f", f64::NEG_INFINITY, " -inf"),
        ];
        for (spec, value, want) in cases {
            assert_eq!(format(spec, value), want, "%{spec} of {value}");
        }
    }

    #[test]
    fn integers_pad_and_prefix_as_c_does() {
        let cases = [
            ("d", 42.0, "42"),
            ("5d", -42.0, "  -42"),
            ("-5d|", 42.0, "42   "),
            ("05d", -42.0, "-0042"),
            (".3d", 7.0, "007"),
            ("+d", 7.0, "+7"),
            ("x", 255.0, "ff"),
            ("#x", 255.0, "0xff"),
            ("#o", 8.0, "010"),
            ("X", 255.0, "FF"),
            ("x", -1.0, "ffffffffffffffff"),
        ];
        for (spec, value, want) in cases {
            assert_eq!(format(spec, value), want, "%{spec} of {value}");
        }
    }

    #[test]
    fn float_work_grows_with_exponent_times_digits() {
        let spec = |text: &str| parse(&text.chars().collect::<Vec<_>>(), 0).unwrap().0;
        // Everyday numbers cost next to nothing.
        assert!(spec("g").float_work(3.25) <= 20);
        assert!(spec(".2f").float_work(1234.5) <= 40);
        // 1e300 to all its digits, or a thousand decimals of a tiny number, is big-number work.
        assert!(spec(".0f").float_work(1e300) >= 300 * 300);
        assert!(spec(".1000f").float_work(1.2e-300) >= 300 * 1000);
        assert!(spec(".30e").float_work(1e300) >= 300 * 30);
        assert_eq!(spec("f").float_work(f64::INFINITY), 0);
    }

    #[test]
    fn a_spec_reads_flags_width_stars_and_length_modifiers() {
        let chars: Vec<char> = "-*.*ld rest".chars().collect();
        let (spec, stars, end) = parse(&chars, 0).unwrap();
        assert!(spec.left);
        assert!(stars.width && stars.precision);
        assert_eq!(spec.conv, 'd');
        assert_eq!(end, 6);
        assert!(parse(&['5'], 0).is_none());
    }
}
