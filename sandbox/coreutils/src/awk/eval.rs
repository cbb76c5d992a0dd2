//! awk's evaluator: a [`Machine`] runs parsed [`Rule`]s over the input records. A program is
//! stopped after [`MAX_STEPS`] statements, or once it has moved [`MAX_TEXT_WORK`] bytes of
//! text (compiling a run-time regular expression counts as [`REGEX_COMPILE_WORK`] of them), so
//! neither an endless loop nor one that copies ever longer strings or compiles a regex every
//! step can hang the sandbox; no string may grow past [`MAX_STRING_BYTES`]. `x = x …` appends
//! to `x` in place, so building a string piece by piece stays linear, and run-time regexes
//! are compiled once.

use std::collections::BTreeMap;
use std::rc::Rc;

use regex::Regex;

use super::ast::{Arith, Builtin, Cmp, Expr, Pattern, Redirect, Rule, Stmt, Var, compile};
use super::value::{Value, format_number, sprintf};

/// Statements one `awk` run may execute.
const MAX_STEPS: u64 = 2_000_000;

/// The longest string a value or the record may hold.
const MAX_STRING_BYTES: usize = 16 * 1024 * 1024;

/// Bytes of text one run may move in total — every string value read or built, every record
/// split or rebuilt — so that a few steps on long strings cannot take as long as billions.
const MAX_TEXT_WORK: u64 = 1 << 30;

/// What compiling a regular expression computed at run time (`$0 ~ s`, `gsub(s, …)`, a regex
/// `FS`) counts against [`MAX_TEXT_WORK`], beyond its length: a compile costs about as much as
/// moving this many bytes, so a program may compile some 16000 different ones.
const REGEX_COMPILE_WORK: usize = 64 * 1024;

/// How many compiled run-time regular expressions are kept for reuse.
const REGEX_CACHE: usize = 64;

/// The most output (stdout, stderr and files together) one run may write.
const MAX_OUTPUT_BYTES: usize = 64 * 1024 * 1024;

/// The highest field number a program may assign to (or `NF` may be set to).
const MAX_FIELDS: usize = 100_000;

/// What a statement asks of the rule loop.
pub enum Flow {
    Normal,
    Next,
    Exit,
}

pub struct Machine {
    vars: BTreeMap<String, Value>,
    record: String,
    fields: Vec<String>,
    nr: usize,
    steps: u64,
    /// Bytes of text moved so far (see [`MAX_TEXT_WORK`]).
    work: u64,
    /// Regular expressions computed at run time, compiled (or refused), by source text.
    regexes: BTreeMap<String, Result<Rc<Regex>, String>>,
    pub exit_code: i32,
    pub out: Vec<u8>,
    pub err: Vec<u8>,
    /// Output for `print > FILE`, per file name: whether the first redirect appended, and the
    /// text. Written to the VFS when the program ends.
    pub files: BTreeMap<String, (bool, String)>,
}

impl Machine {
    /// A machine with the `-v` and operand assignments in `vars`, ending with `exit_code`
    /// unless the program says otherwise.
    pub fn new(vars: BTreeMap<String, Value>, exit_code: i32) -> Self {
        Machine {
            vars,
            record: String::new(),
            fields: Vec::new(),
            nr: 0,
            steps: 0,
            work: 0,
            regexes: BTreeMap::new(),
            exit_code,
            out: Vec::new(),
            err: Vec::new(),
            files: BTreeMap::new(),
        }
    }

    /// Runs the BEGIN rules, then every other rule on each record of `inputs`, then the END
    /// rules. `exit` skips the remaining input but END rules still run, as in awk.
    pub fn execute(&mut self, rules: &[Rule], inputs: &[(String, Vec<u8>)]) -> Result<(), String> {
        let mut exited = false;
        for rule in rules.iter().filter(|r| matches!(r.pattern, Pattern::Begin)) {
            if let Some(action) = &rule.action
                && let Flow::Exit = self.run(action)?
            {
                exited = true;
                break;
            }
        }
        let has_main = rules.iter().any(|r| !matches!(r.pattern, Pattern::Begin));
        if !exited && has_main {
            self.records(rules, inputs)?;
        }
        for rule in rules.iter().filter(|r| matches!(r.pattern, Pattern::End)) {
            if let Some(action) = &rule.action
                && let Flow::Exit = self.run(action)?
            {
                break;
            }
        }
        Ok(())
    }

    /// The main rules over every record, until the input ends or `exit`.
    fn records(&mut self, rules: &[Rule], inputs: &[(String, Vec<u8>)]) -> Result<(), String> {
        let mut in_range = vec![false; rules.len()];
        for (_, data) in inputs {
            let text = String::from_utf8_lossy(data);
            for line in text.lines() {
                self.tick()?;
                self.nr += 1;
                self.record = line.to_string();
                self.split_record()?;
                for (index, rule) in rules.iter().enumerate() {
                    if !self.selects(&rule.pattern, &mut in_range[index])? {
                        continue;
                    }
                    let flow = match &rule.action {
                        Some(action) => self.run(action)?,
                        None => {
                            let line = format!("{}\n", self.record);
                            self.write_to(None, &line)?;
                            Flow::Normal
                        }
                    };
                    match flow {
                        Flow::Normal => {}
                        Flow::Next => break,
                        Flow::Exit => return Ok(()),
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether `pattern` selects the current record; `in_range` is a range pattern's state.
    fn selects(&mut self, pattern: &Pattern, in_range: &mut bool) -> Result<bool, String> {
        Ok(match pattern {
            Pattern::Begin | Pattern::End => false,
            Pattern::All => true,
            Pattern::When(expr) => self.eval(expr)?.truthy(),
            Pattern::Range(start, end) => {
                if *in_range || self.eval(start)?.truthy() {
                    *in_range = !self.eval(end)?.truthy();
                    true
                } else {
                    false
                }
            }
        })
    }

    fn var(&self, var: &Var) -> Value {
        match var {
            Var::RecordNumber => Value::Num(self.nr as f64),
            Var::FieldCount => Value::Num(self.fields.len() as f64),
            Var::Named(name) => self
                .vars
                .get(name)
                .cloned()
                .unwrap_or(Value::Str(String::new())),
        }
    }

    /// A variable of the table that the machine itself reads, with awk's default.
    fn setting(&self, name: &str, default: &str) -> String {
        self.vars.get(name).map_or(default.into(), Value::text)
    }

    fn split_record(&mut self) -> Result<(), String> {
        let fs = self.setting("FS", " ");
        self.charge(self.record.len() + fs.len())?;
        self.fields = if fs == " " {
            self.record.split_whitespace().map(str::to_string).collect()
        } else if self.record.is_empty() {
            Vec::new()
        } else if fs.chars().count() == 1 && fs != "\\" {
            self.record.split(fs.as_str()).map(str::to_string).collect()
        } else {
            match self.regex(&fs)? {
                Ok(re) => re.split(&self.record).map(str::to_string).collect(),
                Err(_) => vec![self.record.clone()],
            }
        };
        Ok(())
    }

    fn rebuild_record(&mut self) -> Result<(), String> {
        let ofs = self.setting("OFS", " ");
        let size = self.fields.iter().map(String::len).sum::<usize>()
            + ofs.len() * self.fields.len().saturating_sub(1);
        check_size(size)?;
        self.charge(size)?;
        self.record = self.fields.join(&ofs);
        Ok(())
    }

    /// `source` compiled as a regular expression (the outer error: the work budget is used
    /// up; the inner one: `source` does not compile). Compiled once per distinct source while
    /// it stays among the last [`REGEX_CACHE`] ones: compiling takes far longer than a step.
    fn regex(&mut self, source: &str) -> Result<Result<Rc<Regex>, String>, String> {
        if let Some(compiled) = self.regexes.get(source) {
            return Ok(compiled.clone());
        }
        self.charge(REGEX_COMPILE_WORK + source.len())?;
        let compiled = compile(source).map(Rc::new);
        if self.regexes.len() >= REGEX_CACHE {
            self.regexes.clear();
        }
        self.regexes.insert(source.to_string(), compiled.clone());
        Ok(compiled)
    }

    /// Counts `bytes` of text moved against [`MAX_TEXT_WORK`].
    fn charge(&mut self, bytes: usize) -> Result<(), String> {
        self.work = self.work.saturating_add(bytes as u64);
        if self.work > MAX_TEXT_WORK {
            return Err(format!(
                "program stopped after moving {} MiB of text (sandbox limit)",
                MAX_TEXT_WORK >> 20
            ));
        }
        Ok(())
    }

    fn field(&self, index: usize) -> Value {
        if index == 0 {
            Value::Data(self.record.clone())
        } else {
            Value::Data(self.fields.get(index - 1).cloned().unwrap_or_default())
        }
    }

    fn set_field(&mut self, index: usize, value: String) -> Result<(), String> {
        if index == 0 {
            check_size(value.len())?;
            self.record = value;
            self.split_record()?;
        } else {
            if index > MAX_FIELDS {
                return Err(format!("field index {index} too large"));
            }
            if self.fields.len() < index {
                self.fields.resize(index, String::new());
            }
            self.fields[index - 1] = value;
            self.rebuild_record()?;
        }
        Ok(())
    }

    fn assign(&mut self, target: &Expr, value: Value) -> Result<(), String> {
        match target {
            Expr::Var(Var::FieldCount) => {
                let n = value.number().max(0.0) as usize;
                self.fields.resize(n.min(MAX_FIELDS), String::new());
                self.rebuild_record()
            }
            Expr::Var(Var::RecordNumber) => {
                self.nr = value.number().max(0.0) as usize;
                Ok(())
            }
            Expr::Var(Var::Named(name)) => {
                self.vars.insert(name.clone(), value);
                Ok(())
            }
            Expr::Field(index) => {
                let index = self.eval(index)?.number().max(0.0) as usize;
                self.set_field(index, value.text())
            }
            _ => Err("assignment to a non-variable".into()),
        }
    }

    /// Evaluates `expr` for its effects only: `x = x …` then appends to `x` in place rather
    /// than copying it (its value, a copy, is not needed).
    fn eval_for_effect(&mut self, expr: &Expr) -> Result<(), String> {
        let Expr::Assign {
            target,
            op: None,
            value,
        } = expr
        else {
            return self.eval(expr).map(drop);
        };
        let (Expr::Var(Var::Named(name)), Some(operands)) =
            (target.as_ref(), appended_to(target, value))
        else {
            return self.eval(expr).map(drop);
        };
        // The operands cannot change `name`, so evaluating them first is what awk does.
        let mut tail = String::new();
        for operand in operands {
            tail.push_str(&self.eval(operand)?.text());
            check_size(tail.len())?;
        }
        let mut text = match self.vars.remove(name) {
            Some(Value::Str(text) | Value::Data(text)) => text,
            Some(Value::Num(n)) => format_number(n),
            None => String::new(),
        };
        let size = text.len() + tail.len();
        let fits = check_size(size).and_then(|()| self.charge(tail.len()));
        if fits.is_ok() {
            text.push_str(&tail);
        }
        self.vars.insert(name.clone(), Value::Str(text));
        fits
    }

    /// Evaluates `expr`; every string it reads or builds counts against [`MAX_TEXT_WORK`].
    fn eval(&mut self, expr: &Expr) -> Result<Value, String> {
        let value = self.eval_uncounted(expr)?;
        if let Value::Str(text) | Value::Data(text) = &value {
            self.charge(text.len())?;
        }
        Ok(value)
    }

    fn eval_uncounted(&mut self, expr: &Expr) -> Result<Value, String> {
        Ok(match expr {
            Expr::Num(n) => Value::Num(*n),
            Expr::Str(s) => Value::Str(s.clone()),
            Expr::Regex(re) => {
                self.charge(self.record.len())?;
                Value::from_bool(re.is_match(&self.record))
            }
            Expr::Field(index) => {
                let index = self.eval(index)?.number();
                if index < 0.0 {
                    return Err(format!("trying to access out of range field {index}"));
                }
                self.field(index as usize)
            }
            Expr::Var(var) => self.var(var),
            Expr::Assign { target, op, value } => {
                let value = self.eval(value)?;
                let value = match op {
                    None => value,
                    Some(op) => {
                        let current = self.eval(target)?.number();
                        Value::Num(arithmetic(*op, current, value.number())?)
                    }
                };
                self.assign(target, value.clone())?;
                value
            }
            Expr::Step {
                target,
                delta,
                prefix,
            } => {
                let old = self.eval(target)?.number();
                self.assign(target, Value::Num(old + delta))?;
                Value::Num(if *prefix { old + delta } else { old })
            }
            Expr::Neg(inner) => Value::Num(-self.eval(inner)?.number()),
            Expr::Not(inner) => Value::from_bool(!self.eval(inner)?.truthy()),
            Expr::And(left, right) => {
                Value::from_bool(self.eval(left)?.truthy() && self.eval(right)?.truthy())
            }
            Expr::Or(left, right) => {
                Value::from_bool(self.eval(left)?.truthy() || self.eval(right)?.truthy())
            }
            Expr::Compare(cmp, left, right) => {
                let (a, b) = (self.eval(left)?, self.eval(right)?);
                let order = if a.is_numeric() && b.is_numeric() {
                    a.number().total_cmp(&b.number())
                } else {
                    a.text().cmp(&b.text())
                };
                Value::from_bool(match cmp {
                    Cmp::Eq => order.is_eq(),
                    Cmp::Ne => order.is_ne(),
                    Cmp::Lt => order.is_lt(),
                    Cmp::Le => order.is_le(),
                    Cmp::Gt => order.is_gt(),
                    Cmp::Ge => order.is_ge(),
                })
            }
            Expr::Arith(op, left, right) => {
                let (a, b) = (self.eval(left)?.number(), self.eval(right)?.number());
                Value::Num(arithmetic(*op, a, b)?)
            }
            Expr::Concat(left, right) => {
                let left = self.eval(left)?.text();
                let right = self.eval(right)?.text();
                check_size(left.len() + right.len())?;
                Value::Str(left + &right)
            }
            Expr::Match {
                text,
                pattern,
                negate,
            } => {
                let text = self.eval(text)?.text();
                let matched = match pattern.as_ref() {
                    Expr::Regex(re) => re.is_match(&text),
                    other => {
                        let source = self.eval(other)?.text();
                        self.regex(&source)??.is_match(&text)
                    }
                };
                Value::from_bool(matched != *negate)
            }
            Expr::Cond(condition, yes, no) => {
                if self.eval(condition)?.truthy() {
                    self.eval(yes)?
                } else {
                    self.eval(no)?
                }
            }
            Expr::Call(builtin, args) => self.call(*builtin, args)?,
        })
    }

    fn call(&mut self, builtin: Builtin, args: &[Expr]) -> Result<Value, String> {
        // `sub` and `gsub` evaluate their arguments themselves: the third is assigned to.
        let mut values = Vec::new();
        if !matches!(builtin, Builtin::Sub | Builtin::Gsub) {
            for arg in args {
                values.push(self.eval(arg)?);
            }
        }
        let text = |i: usize| values.get(i).map(Value::text).unwrap_or_default();
        Ok(match builtin {
            Builtin::Length => Value::Num(match values.first() {
                Some(v) => v.text().chars().count(),
                None => {
                    self.charge(self.record.len())?;
                    self.record.chars().count()
                }
            } as f64),
            Builtin::Substr => {
                let chars: Vec<char> = text(0).chars().collect();
                let start = values.get(1).map_or(1.0, Value::number).round();
                let length = values.get(2).map_or(f64::INFINITY, Value::number).round();
                let first = start.max(1.0);
                let last = (start + length).min(chars.len() as f64 + 1.0);
                if last <= first {
                    Value::Str(String::new())
                } else {
                    Value::Str(
                        chars[first as usize - 1..last as usize - 1]
                            .iter()
                            .collect(),
                    )
                }
            }
            Builtin::Index => Value::Num(
                text(0)
                    .find(&text(1))
                    .map_or(0, |byte| text(0)[..byte].chars().count() + 1) as f64,
            ),
            Builtin::ToLower => Value::Str(text(0).to_lowercase()),
            Builtin::ToUpper => Value::Str(text(0).to_uppercase()),
            Builtin::Int => Value::Num(values.first().map_or(0.0, Value::number).trunc()),
            Builtin::Sprintf => Value::Str(sprintf(&values)?),
            Builtin::Sub => self.substitute(false, args)?,
            Builtin::Gsub => self.substitute(true, args)?,
        })
    }

    /// `sub(re, replacement [, target])` and `gsub`: replaces the first (or every) match in
    /// the target (`$0` by default), `&` standing for the match, `\&` for itself.
    fn substitute(&mut self, global: bool, args: &[Expr]) -> Result<Value, String> {
        let mut values = Vec::new();
        for arg in args.iter().take(2) {
            values.push(self.eval(arg)?);
        }
        let text = |i: usize| values.get(i).map(Value::text).unwrap_or_default();
        let pattern = match args.first() {
            Some(Expr::Regex(re)) => re.clone(),
            _ => self.regex(&text(0))??,
        };
        let target = args
            .get(2)
            .cloned()
            .unwrap_or(Expr::Field(Box::new(Expr::Num(0.0))));
        let current = self.eval(&target)?.text();
        let replacement = text(1);
        let mut count = 0;
        let mut result = String::new();
        let mut last = 0;
        let literal = !replacement.contains(['&', '\\']);
        for found in pattern.find_iter(&current) {
            result.push_str(&current[last..found.start()]);
            if literal {
                result.push_str(&replacement);
            } else {
                let mut chars = replacement.chars().peekable();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' if chars.peek() == Some(&'&') => {
                            result.push('&');
                            chars.next();
                        }
                        '&' => result.push_str(found.as_str()),
                        _ => result.push(c),
                    }
                    check_size(result.len())?;
                }
            }
            check_size(result.len() + current.len() - found.end())?;
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
        Ok(Value::Num(count as f64))
    }

    fn run(&mut self, statements: &[Stmt]) -> Result<Flow, String> {
        for statement in statements {
            match self.exec(statement)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn tick(&mut self) -> Result<(), String> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(format!(
                "program stopped after {MAX_STEPS} steps (sandbox limit)"
            ));
        }
        Ok(())
    }

    fn write_to(&mut self, redirect: Option<&Redirect>, text: &str) -> Result<(), String> {
        let total =
            self.out.len() + self.err.len() + self.files.values().map(|f| f.1.len()).sum::<usize>();
        if total + text.len() > MAX_OUTPUT_BYTES {
            return Err("output grew past 64 MiB".into());
        }
        let Some(redirect) = redirect else {
            self.out.extend_from_slice(text.as_bytes());
            return Ok(());
        };
        let target = self.eval(&redirect.target)?.text();
        match target.as_str() {
            "/dev/stdout" | "-" => self.out.extend_from_slice(text.as_bytes()),
            "/dev/stderr" => self.err.extend_from_slice(text.as_bytes()),
            _ => self
                .files
                .entry(target)
                .or_insert_with(|| (redirect.append, String::new()))
                .1
                .push_str(text),
        }
        Ok(())
    }

    fn exec(&mut self, statement: &Stmt) -> Result<Flow, String> {
        self.tick()?;
        match statement {
            Stmt::Print(args, redirect) => {
                let line = if args.is_empty() {
                    self.record.clone()
                } else {
                    let ofs = self.setting("OFS", " ");
                    let mut parts = Vec::new();
                    for arg in args {
                        parts.push(self.eval(arg)?.text());
                        self.charge(ofs.len())?;
                    }
                    parts.join(&ofs)
                };
                let ors = self.setting("ORS", "\n");
                self.charge(line.len() + ors.len())?;
                self.write_to(redirect.as_ref(), &format!("{line}{ors}"))?;
            }
            Stmt::Printf(args, redirect) => {
                let mut values = Vec::new();
                for arg in args {
                    values.push(self.eval(arg)?);
                }
                let text = sprintf(&values)?;
                self.write_to(redirect.as_ref(), &text)?;
            }
            Stmt::Eval(expr) => self.eval_for_effect(expr)?,
            Stmt::If(condition, then, otherwise) => {
                if self.eval(condition)?.truthy() {
                    return self.exec(then);
                } else if let Some(otherwise) = otherwise {
                    return self.exec(otherwise);
                }
            }
            Stmt::While(condition, body) => {
                while self.eval(condition)?.truthy() {
                    self.tick()?;
                    match self.exec(body)? {
                        Flow::Normal => {}
                        other => return Ok(other),
                    }
                }
            }
            Stmt::For(init, condition, step, body) => {
                if let Some(init) = init {
                    self.eval_for_effect(init)?;
                }
                loop {
                    self.tick()?;
                    if let Some(condition) = condition
                        && !self.eval(condition)?.truthy()
                    {
                        break;
                    }
                    match self.exec(body)? {
                        Flow::Normal => {}
                        other => return Ok(other),
                    }
                    if let Some(step) = step {
                        self.eval_for_effect(step)?;
                    }
                }
            }
            Stmt::Block(statements) => return self.run(statements),
            Stmt::Next => return Ok(Flow::Next),
            Stmt::Exit(code) => {
                if let Some(code) = code {
                    self.exit_code = self.eval(code)?.number() as i32;
                }
                return Ok(Flow::Exit);
            }
        }
        Ok(Flow::Normal)
    }
}

/// Refuses a string longer than [`MAX_STRING_BYTES`] before it is built.
fn check_size(bytes: usize) -> Result<(), String> {
    if bytes > MAX_STRING_BYTES {
        return Err(format!("string grew past {} MiB", MAX_STRING_BYTES >> 20));
    }
    Ok(())
}

/// For `name = name a b …` (a variable assigned itself with more appended), the appended
/// operands — when evaluating them cannot change the variable (no assignment, `++`, `sub` or
/// `gsub` among them), so appending them in place gives what copying would.
fn appended_to<'e>(target: &Expr, value: &'e Expr) -> Option<Vec<&'e Expr>> {
    let Expr::Var(Var::Named(name)) = target else {
        return None;
    };
    let mut operands = Vec::new();
    let mut left = value;
    while let Expr::Concat(inner, right) = left {
        operands.push(right.as_ref());
        left = inner;
    }
    let appends = matches!(left, Expr::Var(Var::Named(first)) if first == name);
    if !appends || operands.is_empty() || !operands.iter().all(|e| pure(e)) {
        return None;
    }
    operands.reverse();
    Some(operands)
}

/// Whether evaluating `expr` changes no variable, field or record.
fn pure(expr: &Expr) -> bool {
    match expr {
        Expr::Num(_) | Expr::Str(_) | Expr::Regex(_) | Expr::Var(_) => true,
        Expr::Field(inner) | Expr::Neg(inner) | Expr::Not(inner) => pure(inner),
        Expr::Arith(_, a, b)
        | Expr::Compare(_, a, b)
        | Expr::And(a, b)
        | Expr::Or(a, b)
        | Expr::Concat(a, b) => pure(a) && pure(b),
        Expr::Match { text, pattern, .. } => pure(text) && pure(pattern),
        Expr::Cond(a, b, c) => pure(a) && pure(b) && pure(c),
        Expr::Call(builtin, args) => {
            !matches!(builtin, Builtin::Sub | Builtin::Gsub) && args.iter().all(pure)
        }
        Expr::Assign { .. } | Expr::Step { .. } => false,
    }
}

fn arithmetic(op: Arith, a: f64, b: f64) -> Result<f64, String> {
    Ok(match op {
        Arith::Add => a + b,
        Arith::Sub => a - b,
        Arith::Mul => a * b,
        Arith::Pow => a.powf(b),
        Arith::Div | Arith::Mod if b == 0.0 => return Err("division by zero".into()),
        Arith::Div => a / b,
        Arith::Mod => a % b,
    })
}
