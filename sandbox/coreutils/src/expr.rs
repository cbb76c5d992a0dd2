//! `expr`: GNU's expression evaluator over its arguments — `|`, `&`, the comparisons, `+ - * /
//! %` on integers, `STRING : REGEX` (a basic regular expression anchored at the start: the
//! length matched, or the first `\(…\)` group), `match`, `substr`, `index`, `length`, `+ TOKEN`
//! and parentheses. Prints the value; exits 1 when it is empty or 0, 2 on a bad expression.
//! GNU's arbitrary-precision results (past 64 bits) are refused by name.

use super::search::translate_posix;
use super::{Ctx, usage_error};

/// An evaluation error: GNU's message.
type Failed = String;

struct Eval<'a> {
    args: &'a [String],
    at: usize,
}

fn integer(value: &str) -> Option<i64> {
    let digits = value.strip_prefix('-').unwrap_or(value);
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| value.parse().ok())
        .flatten()
}

fn is_null(value: &str) -> bool {
    value.is_empty() || integer(value) == Some(0)
}

impl Eval<'_> {
    fn peek(&self) -> Option<&str> {
        self.args.get(self.at).map(String::as_str)
    }

    fn take(&mut self, after: &str) -> Result<String, Failed> {
        let token = self
            .args
            .get(self.at)
            .cloned()
            .ok_or_else(|| format!("expr: syntax error: missing argument after '{after}'"))?;
        self.at += 1;
        Ok(token)
    }

    fn binary(
        &mut self,
        ops: &[&str],
        next: fn(&mut Self) -> Result<String, Failed>,
        apply: fn(&str, String, String) -> Result<String, Failed>,
    ) -> Result<String, Failed> {
        let mut left = next(self)?;
        while let Some(op) = self.peek().filter(|t| ops.contains(t)).map(str::to_string) {
            self.at += 1;
            if self.peek().is_none() {
                return Err(format!("expr: syntax error: missing argument after '{op}'"));
            }
            let right = next(self)?;
            left = apply(&op, left, right)?;
        }
        Ok(left)
    }

    fn or(&mut self) -> Result<String, Failed> {
        self.binary(&["|"], Self::and, |_, l, r| {
            Ok(if !is_null(&l) {
                l
            } else if !is_null(&r) {
                r
            } else {
                "0".into()
            })
        })
    }

    fn and(&mut self) -> Result<String, Failed> {
        self.binary(&["&"], Self::compare, |_, l, r| {
            Ok(if is_null(&l) || is_null(&r) {
                "0".into()
            } else {
                l
            })
        })
    }

    fn compare(&mut self) -> Result<String, Failed> {
        self.binary(
            &["<", "<=", "=", "==", "!=", ">=", ">"],
            Self::sum,
            |op, l, r| {
                let order = match (integer(&l), integer(&r)) {
                    (Some(a), Some(b)) => a.cmp(&b),
                    _ => l.as_bytes().cmp(r.as_bytes()),
                };
                let holds = match op {
                    "<" => order.is_lt(),
                    "<=" => order.is_le(),
                    "=" | "==" => order.is_eq(),
                    "!=" => order.is_ne(),
                    ">=" => order.is_ge(),
                    _ => order.is_gt(),
                };
                Ok(u8::from(holds).to_string())
            },
        )
    }

    fn sum(&mut self) -> Result<String, Failed> {
        self.binary(&["+", "-"], Self::product, arithmetic)
    }

    fn product(&mut self) -> Result<String, Failed> {
        self.binary(&["*", "/", "%"], Self::matching, arithmetic)
    }

    fn matching(&mut self) -> Result<String, Failed> {
        self.binary(&[":"], Self::primary, |_, l, r| regex_match(&l, &r))
    }

    fn primary(&mut self) -> Result<String, Failed> {
        let token = self.take("expr")?;
        match token.as_str() {
            "(" => {
                let value = self.or()?;
                match self.peek() {
                    Some(")") => {
                        self.at += 1;
                        Ok(value)
                    }
                    Some(other) => Err(format!(
                        "expr: syntax error: expecting ')' instead of '{other}'"
                    )),
                    None => Err("expr: syntax error: expecting ')' after '('".into()),
                }
            }
            "+" => self.take("+"),
            "length" => Ok(self.primary()?.chars().count().to_string()),
            "match" => {
                let text = self.primary()?;
                let pattern = self.primary()?;
                regex_match(&text, &pattern)
            }
            "index" => {
                let text = self.primary()?;
                let set = self.primary()?;
                let at = text.chars().position(|c| set.contains(c));
                Ok(at.map_or(0, |i| i + 1).to_string())
            }
            "substr" => {
                let text = self.primary()?;
                let (from, len) = (self.primary()?, self.primary()?);
                let (Some(from), Some(len)) = (integer(&from), integer(&len)) else {
                    return Ok(String::new());
                };
                if from < 1 || len < 1 {
                    return Ok(String::new());
                }
                let skip = usize::try_from(from - 1).unwrap_or(usize::MAX);
                let take = usize::try_from(len).unwrap_or(usize::MAX);
                Ok(text.chars().skip(skip).take(take).collect())
            }
            _ => Ok(token),
        }
    }
}

fn arithmetic(op: &str, l: String, r: String) -> Result<String, Failed> {
    let (Some(a), Some(b)) = (integer(&l), integer(&r)) else {
        return Err("expr: non-integer argument".into());
    };
    if (op == "/" || op == "%") && b == 0 {
        return Err("expr: division by zero".into());
    }
    let value = match op {
        "+" => a.checked_add(b),
        "-" => a.checked_sub(b),
        "*" => a.checked_mul(b),
        "/" => a.checked_div(b),
        _ => a.checked_rem(b),
    };
    value
        .map(|v| v.to_string())
        .ok_or_else(|| format!("expr: integers beyond 64 bits{}", super::REFUSAL))
}

/// `STRING : REGEX`: anchored at the start; the first group's text when there is a group, else
/// the number of characters matched.
fn regex_match(text: &str, pattern: &str) -> Result<String, Failed> {
    let translated = translate_posix(pattern, false).map_err(|e| format!("expr: {e}"))?;
    let regex = regex::Regex::new(&format!("^(?:{translated})"))
        .map_err(|_| format!("expr: invalid regular expression: {pattern}"))?;
    let captures = regex.captures(text);
    Ok(if regex.captures_len() > 1 {
        captures
            .and_then(|c| c.get(1))
            .map_or(String::new(), |m| m.as_str().to_string())
    } else {
        captures
            .and_then(|c| c.get(0))
            .map_or(0, |m| m.as_str().chars().count())
            .to_string()
    })
}

pub fn expr(ctx: &mut Ctx, args: &[String]) -> i32 {
    let args = match args.first().map(String::as_str) {
        Some("--") => &args[1..],
        _ => args,
    };
    if args.is_empty() {
        return usage_error(ctx, "expr: missing operand", 2);
    }
    let mut eval = Eval { args, at: 0 };
    let value = match eval.or() {
        Ok(_) if eval.at < args.len() => {
            let extra = &args[eval.at];
            return usage_error(
                ctx,
                &format!("expr: syntax error: unexpected argument '{extra}'"),
                2,
            );
        }
        Ok(value) => value,
        Err(message) => return usage_error(ctx, &message, 2),
    };
    ctx.print(&format!("{value}\n"));
    i32::from(is_null(&value))
}
