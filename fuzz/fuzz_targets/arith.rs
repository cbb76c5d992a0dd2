//! The shell's expression parsers on their own, faster than through a whole command line:
//! bash arithmetic (`tether_sandbox::shell::arith`, as in `$(( ))`, `(( ))`, `let`, array
//! subscripts) and the inside of `${…}` (`tether_sandbox::shell::param`). The input is
//! split at the first NUL: the expression, then `NAME=VALUE` lines for the variables it
//! reads (values are themselves expressions, so recursion is reached too).
//!
//! Checks: neither parser panics; evaluation ends (the depth bounds of the parser and of
//! variable recursion), and gives the same result twice over the same variables; an
//! expression that evaluates also parses, and one that does not parse does not evaluate.

#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use tether_sandbox::shell::arith::{self, ArithError, Variables};
use tether_sandbox::shell::param;

/// Variables in a map; subscripts evaluated as indexes, as an indexed array's are.
#[derive(Clone, Default)]
struct Vars(BTreeMap<String, String>);

impl Vars {
    fn key(&mut self, name: &str, subscript: Option<&str>) -> Result<String, ArithError> {
        Ok(match subscript {
            Some(s) => format!("{name}[{}]", arith::evaluate(s, self)?),
            None => name.to_string(),
        })
    }
}

impl Variables for Vars {
    fn get(&mut self, name: &str, subscript: Option<&str>) -> Result<Option<String>, ArithError> {
        let key = self.key(name, subscript)?;
        Ok(self.0.get(&key).cloned())
    }

    fn set(&mut self, name: &str, subscript: Option<&str>, value: i64) -> Result<(), ArithError> {
        let key = self.key(name, subscript)?;
        if self.0.len() < 1000 {
            self.0.insert(key, value.to_string());
        }
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (expr, rest) = text.split_once('\0').unwrap_or((&text, ""));
    let vars: BTreeMap<String, String> = rest
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let _ = param::parse(expr);
    let parsed = arith::parse(expr);
    let mut first = Vars(vars.clone());
    let mut second = Vars(vars);
    let a = arith::evaluate(expr, &mut first);
    let b = arith::evaluate(expr, &mut second);
    assert_eq!(a, b, "evaluation is deterministic");
    assert_eq!(first.0, second.0, "and so are its assignments");
    if a.is_ok() {
        assert!(parsed.is_ok(), "an expression that evaluates parses");
    }
    if parsed.is_err() {
        assert!(
            a.is_err(),
            "an expression that does not parse does not evaluate"
        );
    }
    if let Err(e) = a {
        let _ = e.to_string();
    }
});
