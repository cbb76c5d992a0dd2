//! `$(( … ))`: integer arithmetic with bash's operators and precedence (the subset scripts
//! use: `+ - * / %`, comparisons, `&& || !`, parentheses, variables).

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArithError {
    #[error("division by 0")]
    DivisionByZero,
    #[error("syntax error in expression (error token is \"{0}\")")]
    Syntax(String),
}

pub fn evaluate(expr: &str, vars: &BTreeMap<String, String>) -> Result<i64, ArithError> {
    let tokens = tokenize(expr)?;
    let mut parser = Arith {
        tokens,
        pos: 0,
        vars,
    };
    let value = parser.binary(0)?;
    match parser.tokens.get(parser.pos) {
        None => Ok(value),
        Some(t) => Err(ArithError::Syntax(t.clone())),
    }
}

fn tokenize(expr: &str) -> Result<Vec<String>, ArithError> {
    let chars: Vec<char> = expr.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(chars[start..i].iter().collect());
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            if ["<=", ">=", "==", "!=", "&&", "||"].contains(&two.as_str()) {
                tokens.push(two);
                i += 2;
            } else if "+-*/%()<>!".contains(c) {
                tokens.push(c.to_string());
                i += 1;
            } else {
                return Err(ArithError::Syntax(chars[i..].iter().collect()));
            }
        }
    }
    Ok(tokens)
}

struct Arith<'a> {
    tokens: Vec<String>,
    pos: usize,
    vars: &'a BTreeMap<String, String>,
}

const LEVELS: [&[&str]; 6] = [
    &["||"],
    &["&&"],
    &["==", "!="],
    &["<", ">", "<=", ">="],
    &["+", "-"],
    &["*", "/", "%"],
];

impl Arith<'_> {
    fn binary(&mut self, level: usize) -> Result<i64, ArithError> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        while let Some(op) = self
            .tokens
            .get(self.pos)
            .filter(|t| LEVELS[level].contains(&t.as_str()))
            .cloned()
        {
            self.pos += 1;
            let right = self.binary(level + 1)?;
            left = match op.as_str() {
                "||" => i64::from(left != 0 || right != 0),
                "&&" => i64::from(left != 0 && right != 0),
                "==" => i64::from(left == right),
                "!=" => i64::from(left != right),
                "<" => i64::from(left < right),
                ">" => i64::from(left > right),
                "<=" => i64::from(left <= right),
                ">=" => i64::from(left >= right),
                "+" => left.wrapping_add(right),
                "-" => left.wrapping_sub(right),
                "*" => left.wrapping_mul(right),
                _ if right == 0 => return Err(ArithError::DivisionByZero),
                "/" => left.wrapping_div(right),
                _ => left.wrapping_rem(right),
            };
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<i64, ArithError> {
        let token = self
            .tokens
            .get(self.pos)
            .cloned()
            .ok_or_else(|| ArithError::Syntax(String::new()))?;
        self.pos += 1;
        match token.as_str() {
            "-" => Ok(self.unary()?.wrapping_neg()),
            "+" => self.unary(),
            "!" => Ok(i64::from(self.unary()? == 0)),
            "(" => {
                let value = self.binary(0)?;
                if self.tokens.get(self.pos).map(String::as_str) != Some(")") {
                    return Err(ArithError::Syntax(token));
                }
                self.pos += 1;
                Ok(value)
            }
            t if t.starts_with(|c: char| c.is_ascii_digit()) => {
                t.parse().map_err(|_| ArithError::Syntax(t.to_string()))
            }
            t if t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$') => {
                let name = t.trim_start_matches('$');
                let value = self.vars.get(name).map_or("0", String::as_str).trim();
                Ok(value.parse().unwrap_or(0))
            }
            t => Err(ArithError::Syntax(t.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn precedence_and_variables() {
        let vars = [("i".to_string(), "4".to_string())].into_iter().collect();
        let cases = [
            ("1 + 2 * 3", Ok(7)),
            ("(1 + 2) * 3", Ok(9)),
            ("i + 1", Ok(5)),
            ("$i * -2", Ok(-8)),
            ("7 % 3 == 1 && !0", Ok(1)),
            ("1 / 0", Err(super::ArithError::DivisionByZero)),
        ];
        for (expr, want) in cases {
            assert_eq!(super::evaluate(expr, &vars), want, "{expr}");
        }
    }
}
