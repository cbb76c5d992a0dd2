//! jq's evaluator: a filter applied to a value gives a list of values (jq's generators,
//! computed eagerly), within a budget of values produced so that `range(1e9)` or a runaway
//! `recurse` ends with an error rather than hangs. Paths (`path(f)`, `del`, `|=`, `=`, `+=`)
//! are computed from the same filters for the path expressions jq allows.

use std::rc::Rc;

use super::error::RunError;
use super::json::{Json, compare};
use super::parse::{Filter, Op, StrPart};
use super::values::index_value;

/// Values one run may produce in total.
pub const MAX_VALUES: usize = 5_000_000;

/// Evaluation nested inside itself at most this deep (`recurse`, nested filters).
const MAX_NESTING: usize = 400;

pub type Out = Result<Vec<Json>, RunError>;

pub struct Env {
    pub vars: Vec<(String, Json)>,
    pub produced: usize,
    nesting: usize,
    pub named_args: Json,
}

impl Env {
    pub fn new(vars: Vec<(String, Json)>, named_args: Json) -> Env {
        Env {
            vars,
            produced: 0,
            nesting: 0,
            named_args,
        }
    }

    fn var(&self, name: &str) -> Result<Json, RunError> {
        if name == "ENV" {
            return Ok(self.lookup_env());
        }
        if name == "__named" {
            return Ok(self.named_args.clone());
        }
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("${name} is not defined").into())
    }

    fn lookup_env(&self) -> Json {
        self.vars
            .iter()
            .find(|(n, _)| n == "\u{0}ENV")
            .map_or(Json::Obj(Rc::default()), |(_, v)| v.clone())
    }

    pub fn count(&mut self, n: usize) -> Result<(), RunError> {
        self.produced += n;
        if self.produced > MAX_VALUES {
            return Err(RunError::Limit(format!(
                "more than {MAX_VALUES} values produced (sandbox limit)"
            )));
        }
        Ok(())
    }

    /// Binds `name` to `value` for `f`.
    pub fn with<T>(&mut self, name: &str, value: Json, f: impl FnOnce(&mut Env) -> T) -> T {
        self.vars.push((name.to_string(), value));
        let result = f(self);
        self.vars.pop();
        result
    }
}

/// Runs `f` on `input`, handing each output to `sink` as soon as the filter's top-level `,`
/// and `|` let it be known — so that, as in jq, what came before an error is still written.
pub fn stream(
    f: &Filter,
    input: &Json,
    env: &mut Env,
    sink: &mut dyn FnMut(Json),
) -> Result<(), RunError> {
    match f {
        Filter::Comma(a, b) => {
            stream(a, input, env, sink)?;
            stream(b, input, env, sink)
        }
        Filter::Pipe(a, b) => {
            for value in eval(a, input, env)? {
                stream(b, &value, env, sink)?;
            }
            Ok(())
        }
        _ => {
            for value in eval(f, input, env)? {
                sink(value);
            }
            Ok(())
        }
    }
}

/// The only output of `f`, or its first (for arguments that must be one value).
pub fn first(f: &Filter, input: &Json, env: &mut Env) -> Result<Option<Json>, RunError> {
    Ok(eval(f, input, env)?.into_iter().next())
}

pub fn eval(f: &Filter, input: &Json, env: &mut Env) -> Out {
    env.nesting += 1;
    if env.nesting > MAX_NESTING {
        env.nesting -= 1;
        return Err(RunError::Limit(
            "filter nested too deeply (sandbox limit)".into(),
        ));
    }
    let result = eval_inner(f, input, env);
    env.nesting -= 1;
    let out = result?;
    env.count(out.len())?;
    Ok(out)
}

fn cartesian(
    a: &Filter,
    b: &Filter,
    input: &Json,
    env: &mut Env,
    mut combine: impl FnMut(&Json, &Json) -> Result<Json, RunError>,
) -> Out {
    let rights = eval(b, input, env)?;
    let lefts = eval(a, input, env)?;
    let mut out = Vec::new();
    for r in &rights {
        for l in &lefts {
            out.push(combine(l, r)?);
        }
    }
    Ok(out)
}

fn eval_inner(f: &Filter, input: &Json, env: &mut Env) -> Out {
    Ok(match f {
        Filter::Identity => vec![input.clone()],
        Filter::RecurseAll => {
            let mut out = Vec::new();
            recurse_all(input, &mut out, env)?;
            out
        }
        Filter::Lit(v) => vec![v.clone()],
        Filter::Str(format, parts) => {
            let mut texts = vec![String::new()];
            for part in parts {
                match part {
                    StrPart::Lit(s) => texts.iter_mut().for_each(|t| t.push_str(s)),
                    StrPart::Interp(inner) => {
                        let values = eval(inner, input, env)?;
                        let mut next = Vec::new();
                        for t in &texts {
                            for v in &values {
                                let piece = match format {
                                    Some(name) => super::values::format(name, v)?,
                                    None => super::values::tostring(v),
                                };
                                next.push(format!("{t}{piece}"));
                            }
                        }
                        texts = next;
                    }
                }
            }
            texts.into_iter().map(|t| Json::str(&t)).collect()
        }
        Filter::Format(name) => vec![Json::str(&super::values::format(name, input)?)],
        Filter::Var(name) => vec![env.var(name)?],
        Filter::Index(target, index) => {
            let targets = eval(target, input, env)?;
            let indexes = eval(index, input, env)?;
            let mut out = Vec::new();
            for t in &targets {
                for i in &indexes {
                    out.push(index_value(t, i)?);
                }
            }
            out
        }
        Filter::Slice(target, from, to) => {
            let mut out = Vec::new();
            for t in eval(target, input, env)? {
                let from = match from {
                    Some(f) => first(f, input, env)?.unwrap_or(Json::Null),
                    None => Json::Null,
                };
                let to = match to {
                    Some(f) => first(f, input, env)?.unwrap_or(Json::Null),
                    None => Json::Null,
                };
                out.push(super::values::slice(&t, &from, &to)?);
            }
            out
        }
        Filter::Iterate(target) => {
            let mut out = Vec::new();
            for t in eval(target, input, env)? {
                match t {
                    Json::Arr(items) => out.extend(items.iter().cloned()),
                    Json::Obj(fields) => out.extend(fields.iter().map(|(_, v)| v.clone())),
                    other => {
                        return Err(format!(
                            "Cannot iterate over {}{}",
                            other.type_name(),
                            value_note(&other)
                        )
                        .into());
                    }
                }
            }
            out
        }
        Filter::Optional(inner) => RunError::caught(eval(inner, input, env))?.unwrap_or_default(),
        Filter::Array(None) => vec![Json::Arr(Rc::default())],
        Filter::Array(Some(inner)) => vec![Json::Arr(Rc::new(eval(inner, input, env)?))],
        Filter::Object(entries) => {
            let mut objects: Vec<Vec<(Rc<str>, Json)>> = vec![Vec::new()];
            for (key, value) in entries {
                let keys = eval(key, input, env)?;
                let values = match value {
                    Some(v) => eval(v, input, env)?,
                    None => {
                        let mut values = Vec::new();
                        for k in &keys {
                            values.push(index_value(input, k)?);
                        }
                        values
                    }
                };
                let mut next = Vec::new();
                for object in &objects {
                    for k in &keys {
                        let Json::Str(k) = k else {
                            return Err(format!(
                                "Object keys must be strings, not {}",
                                k.type_name()
                            )
                            .into());
                        };
                        for v in &values {
                            let mut o = object.clone();
                            match o.iter_mut().find(|(name, _)| name == k) {
                                Some(slot) => slot.1 = v.clone(),
                                None => o.push((k.clone(), v.clone())),
                            }
                            next.push(o);
                        }
                    }
                }
                objects = next;
            }
            objects.into_iter().map(|o| Json::Obj(Rc::new(o))).collect()
        }
        Filter::Pipe(a, b) => {
            let mut out = Vec::new();
            for v in eval(a, input, env)? {
                out.extend(eval(b, &v, env)?);
            }
            out
        }
        Filter::Comma(a, b) => {
            let mut out = eval(a, input, env)?;
            out.extend(eval(b, input, env)?);
            out
        }
        Filter::Neg(inner) => {
            let mut out = Vec::new();
            for v in eval(inner, input, env)? {
                match v {
                    Json::Num(n) => out.push(Json::Num(-n)),
                    other => {
                        return Err(format!(
                            "{} ({}) cannot be negated",
                            other.type_name(),
                            short(&other)
                        )
                        .into());
                    }
                }
            }
            out
        }
        Filter::Binary(op, a, b) => cartesian(a, b, input, env, |l, r| binary(*op, l, r))?,
        Filter::And(a, b) => {
            let mut out = Vec::new();
            for l in eval(a, input, env)? {
                if !l.truthy() {
                    out.push(Json::Bool(false));
                    continue;
                }
                for r in eval(b, input, env)? {
                    out.push(Json::Bool(r.truthy()));
                }
            }
            out
        }
        Filter::Or(a, b) => {
            let mut out = Vec::new();
            for l in eval(a, input, env)? {
                if l.truthy() {
                    out.push(Json::Bool(true));
                    continue;
                }
                for r in eval(b, input, env)? {
                    out.push(Json::Bool(r.truthy()));
                }
            }
            out
        }
        Filter::Alt(a, b) => {
            let left: Vec<Json> = RunError::caught(eval(a, input, env))?
                .unwrap_or_default()
                .into_iter()
                .filter(Json::truthy)
                .collect();
            if left.is_empty() {
                eval(b, input, env)?
            } else {
                left
            }
        }
        Filter::If(condition, then, otherwise) => {
            let mut out = Vec::new();
            for c in eval(condition, input, env)? {
                out.extend(eval(if c.truthy() { then } else { otherwise }, input, env)?);
            }
            out
        }
        Filter::Try(body, handler) => match eval(body, input, env) {
            Ok(out) => out,
            // A sandbox limit is not jq's error: `try` does not catch it.
            Err(RunError::Jq(message)) => match handler {
                Some(handler) => eval(handler, &Json::str(&message), env)?,
                None => Vec::new(),
            },
            Err(limit @ RunError::Limit(_)) => return Err(limit),
        },
        Filter::Reduce(source, name, init, update) => {
            let mut accs = eval(init, input, env)?;
            for item in eval(source, input, env)? {
                let mut next = Vec::new();
                for acc in &accs {
                    next.extend(env.with(name, item.clone(), |env| eval(update, acc, env))?);
                }
                accs = next.pop().into_iter().collect();
            }
            accs
        }
        Filter::Foreach(source, name, init, update, extract) => {
            let mut out = Vec::new();
            let mut acc = first(init, input, env)?.unwrap_or(Json::Null);
            for item in eval(source, input, env)? {
                let states = env.with(name, item.clone(), |env| eval(update, &acc, env))?;
                for state in states {
                    match extract {
                        Some(extract) => {
                            out.extend(
                                env.with(name, item.clone(), |env| eval(extract, &state, env))?,
                            );
                        }
                        None => out.push(state.clone()),
                    }
                    acc = state;
                }
            }
            out
        }
        Filter::As(source, name, body) => {
            let mut out = Vec::new();
            for value in eval(source, input, env)? {
                out.extend(env.with(name, value, |env| eval(body, input, env))?);
            }
            out
        }
        Filter::Call(builtin, args) => super::builtins::call(*builtin, args, input, env)?,
        Filter::Assign(lhs, op, rhs) => {
            let paths = paths(lhs, input, env)?;
            match op {
                // `lhs |= f`: each path's value through `f` (its first output).
                Some(None) => {
                    let mut root = input.clone();
                    for path in paths {
                        let old = getpath(&root, &path);
                        let new = first(rhs, &old, env)?.unwrap_or(Json::Null);
                        root = setpath(&root, &path, new)?;
                    }
                    vec![root]
                }
                // `lhs = v` and `lhs op= v`: `v` from the original input.
                _ => {
                    let mut out = Vec::new();
                    for value in eval(rhs, input, env)? {
                        let mut root = input.clone();
                        for path in &paths {
                            let new = match op {
                                Some(Some(op)) => binary(*op, &getpath(&root, path), &value)?,
                                _ => value.clone(),
                            };
                            root = setpath(&root, path, new)?;
                        }
                        out.push(root);
                    }
                    out
                }
            }
        }
        Filter::AltAssign(lhs, rhs) => {
            let paths = paths(lhs, input, env)?;
            let mut out = Vec::new();
            for value in eval(rhs, input, env)? {
                let mut root = input.clone();
                for path in &paths {
                    let old = getpath(&root, path);
                    let new = if old.truthy() { old } else { value.clone() };
                    root = setpath(&root, path, new)?;
                }
                out.push(root);
            }
            out
        }
    })
}

fn recurse_all(value: &Json, out: &mut Vec<Json>, env: &mut Env) -> Result<(), RunError> {
    env.count(1)?;
    out.push(value.clone());
    match value {
        Json::Arr(items) => {
            for item in items.iter() {
                recurse_all(item, out, env)?;
            }
        }
        Json::Obj(fields) => {
            for (_, item) in fields.iter() {
                recurse_all(item, out, env)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A value as jq quotes it in an error: JSON, cut to 11 bytes.
pub fn short(value: &Json) -> String {
    let text = super::values::tojson(value);
    if text.len() > 11 {
        let mut cut = 10;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", &text[..cut])
    } else {
        text
    }
}

fn value_note(value: &Json) -> String {
    format!(" ({})", short(value))
}

pub fn binary(op: Op, l: &Json, r: &Json) -> Result<Json, RunError> {
    use Json::*;
    let mismatch = |verb: &str| {
        format!(
            "{} ({}) and {} ({}) cannot be {verb}",
            l.type_name(),
            short(l),
            r.type_name(),
            short(r)
        )
    };
    Ok(match op {
        Op::Eq => Bool(compare(l, r).is_eq()),
        Op::Ne => Bool(compare(l, r).is_ne()),
        Op::Lt => Bool(compare(l, r).is_lt()),
        Op::Le => Bool(compare(l, r).is_le()),
        Op::Gt => Bool(compare(l, r).is_gt()),
        Op::Ge => Bool(compare(l, r).is_ge()),
        Op::Add => match (l, r) {
            (Null, x) | (x, Null) => x.clone(),
            (Num(a), Num(b)) => Num(a + b),
            (Str(a), Str(b)) => Json::str(&format!("{a}{b}")),
            (Arr(a), Arr(b)) => Arr(Rc::new(a.iter().chain(b.iter()).cloned().collect())),
            (Obj(a), Obj(b)) => {
                let mut fields = a.to_vec();
                for (k, v) in b.iter() {
                    match fields.iter_mut().find(|(name, _)| name == k) {
                        Some(slot) => slot.1 = v.clone(),
                        None => fields.push((k.clone(), v.clone())),
                    }
                }
                Obj(Rc::new(fields))
            }
            _ => return Err(mismatch("added").into()),
        },
        Op::Sub => match (l, r) {
            (Num(a), Num(b)) => Num(a - b),
            (Arr(a), Arr(b)) => Arr(Rc::new(
                a.iter()
                    .filter(|x| !b.iter().any(|y| compare(x, y).is_eq()))
                    .cloned()
                    .collect(),
            )),
            _ => return Err(mismatch("subtracted").into()),
        },
        Op::Mul => match (l, r) {
            (Num(a), Num(b)) => Num(a * b),
            (Str(s), Num(n)) | (Num(n), Str(s)) => {
                if *n <= 0.0 {
                    Null
                } else {
                    let times = (*n as usize).max(1);
                    if s.len().saturating_mul(times) > 1 << 24 {
                        return Err(RunError::Limit("string too long (sandbox limit)".into()));
                    }
                    Json::str(&s.repeat(times))
                }
            }
            (Obj(_), Obj(_)) => deep_merge(l, r),
            _ => return Err(mismatch("multiplied").into()),
        },
        Op::Div => match (l, r) {
            (Num(_), Num(b)) if *b == 0.0 => {
                return Err(mismatch("divided because the divisor is zero").into());
            }
            (Num(a), Num(b)) => Num(a / b),
            (Str(a), Str(b)) => super::values::split_str(a, b),
            _ => return Err(mismatch("divided").into()),
        },
        Op::Mod => match (l, r) {
            (Num(_), Num(b)) if (*b as i64) == 0 => {
                return Err(mismatch("divided because the divisor is zero").into());
            }
            (Num(a), Num(b)) => Num(((*a as i64) % (*b as i64).abs()) as f64),
            _ => return Err(mismatch("divided").into()),
        },
    })
}

fn deep_merge(l: &Json, r: &Json) -> Json {
    match (l, r) {
        (Json::Obj(a), Json::Obj(b)) => {
            let mut fields = a.to_vec();
            for (k, v) in b.iter() {
                match fields.iter_mut().find(|(name, _)| name == k) {
                    Some(slot) => slot.1 = deep_merge(&slot.1, v),
                    None => fields.push((k.clone(), v.clone())),
                }
            }
            Json::Obj(Rc::new(fields))
        }
        (_, r) => r.clone(),
    }
}

/// The paths a path expression selects in `input`.
pub fn paths(f: &Filter, input: &Json, env: &mut Env) -> Result<Vec<Vec<Json>>, RunError> {
    let mut out = Vec::new();
    collect_paths(f, input, &[], env, &mut out)?;
    env.count(out.len())?;
    Ok(out)
}

fn collect_paths(
    f: &Filter,
    input: &Json,
    prefix: &[Json],
    env: &mut Env,
    out: &mut Vec<Vec<Json>>,
) -> Result<(), RunError> {
    let with = |prefix: &[Json], key: Json| {
        let mut path = prefix.to_vec();
        path.push(key);
        path
    };
    match f {
        Filter::Identity => out.push(prefix.to_vec()),
        Filter::Index(target, index) => {
            let mut targets = Vec::new();
            collect_paths(target, input, prefix, env, &mut targets)?;
            let keys = eval(index, input, env)?;
            for path in targets {
                for key in &keys {
                    out.push(with(&path, key.clone()));
                }
            }
        }
        Filter::Iterate(target) => {
            let mut targets = Vec::new();
            collect_paths(target, input, prefix, env, &mut targets)?;
            for path in targets {
                let value = getpath(input, &path[prefix.len()..]);
                match value {
                    Json::Arr(items) => {
                        for i in 0..items.len() {
                            out.push(with(&path, Json::Num(i as f64)));
                        }
                    }
                    Json::Obj(fields) => {
                        for (k, _) in fields.iter() {
                            out.push(with(&path, Json::Str(k.clone())));
                        }
                    }
                    Json::Null => {}
                    other => {
                        return Err(format!("Cannot iterate over {}", other.type_name()).into());
                    }
                }
            }
        }
        Filter::Pipe(a, b) => {
            let mut firsts = Vec::new();
            collect_paths(a, input, prefix, env, &mut firsts)?;
            for path in firsts {
                let value = getpath(input, &path[prefix.len()..]);
                collect_paths(b, &value, &path, env, out)?;
            }
        }
        Filter::Comma(a, b) => {
            collect_paths(a, input, prefix, env, out)?;
            collect_paths(b, input, prefix, env, out)?;
        }
        Filter::Optional(inner) => {
            let mut found = Vec::new();
            if RunError::caught(collect_paths(inner, input, prefix, env, &mut found))?.is_some() {
                out.extend(found);
            }
        }
        Filter::If(condition, then, otherwise) => {
            for c in eval(condition, input, env)? {
                collect_paths(
                    if c.truthy() { then } else { otherwise },
                    input,
                    prefix,
                    env,
                    out,
                )?;
            }
        }
        Filter::RecurseAll => {
            let mut all = Vec::new();
            all_paths(input, prefix, &mut all);
            out.extend(all);
        }
        Filter::Call(builtin, args) => {
            super::values::call_paths(*builtin, args, input, prefix, env, out)?;
        }
        _ => return Err("Invalid path expression".into()),
    }
    Ok(())
}

/// Every path under `value` (itself first), depth first.
pub fn all_paths(value: &Json, prefix: &[Json], out: &mut Vec<Vec<Json>>) {
    out.push(prefix.to_vec());
    let mut child = |key: Json, v: &Json| {
        let mut path = prefix.to_vec();
        path.push(key);
        all_paths(v, &path, out);
    };
    match value {
        Json::Arr(items) => {
            for (i, v) in items.iter().enumerate() {
                child(Json::Num(i as f64), v);
            }
        }
        Json::Obj(fields) => {
            for (k, v) in fields.iter() {
                child(Json::Str(k.clone()), v);
            }
        }
        _ => {}
    }
}

pub fn getpath(value: &Json, path: &[Json]) -> Json {
    let mut current = value.clone();
    for key in path {
        current = match index_value(&current, key) {
            Ok(v) => v,
            Err(_) => return Json::Null,
        };
    }
    current
}

pub fn setpath(value: &Json, path: &[Json], new: Json) -> Result<Json, RunError> {
    let Some((key, rest)) = path.split_first() else {
        return Ok(new);
    };
    match (value, key) {
        (Json::Obj(fields), Json::Str(k)) => {
            let child = value.get(k).cloned().unwrap_or(Json::Null);
            Ok(Json::with_field(
                fields,
                k.clone(),
                setpath(&child, rest, new)?,
            ))
        }
        (Json::Null, Json::Str(k)) => Ok(Json::with_field(
            &[],
            k.clone(),
            setpath(&Json::Null, rest, new)?,
        )),
        (Json::Arr(_) | Json::Null, Json::Num(n)) => {
            let mut items = match value {
                Json::Arr(items) => items.to_vec(),
                _ => Vec::new(),
            };
            let i = if *n < 0.0 { items.len() as f64 + n } else { *n };
            if i < 0.0 {
                return Err("Out of bounds negative array index".into());
            }
            let i = i as usize;
            if i > 1 << 24 {
                return Err(RunError::Limit(
                    "array index too large (sandbox limit)".into(),
                ));
            }
            if items.len() <= i {
                items.resize(i + 1, Json::Null);
            }
            items[i] = setpath(&items[i], rest, new)?;
            Ok(Json::Arr(Rc::new(items)))
        }
        (v, k) => Err(format!("Cannot index {} with {}", v.type_name(), k.type_name()).into()),
    }
}

pub fn delpaths(value: &Json, mut paths: Vec<Vec<Json>>) -> Result<Json, RunError> {
    paths.sort_by(|a, b| {
        compare(
            &Json::Arr(Rc::new(b.clone())),
            &Json::Arr(Rc::new(a.clone())),
        )
    });
    let mut root = value.clone();
    for path in paths {
        root = delpath(&root, &path)?;
    }
    Ok(root)
}

fn delpath(value: &Json, path: &[Json]) -> Result<Json, RunError> {
    let Some((key, rest)) = path.split_first() else {
        return Ok(Json::Null);
    };
    Ok(match (value, key) {
        (Json::Obj(fields), Json::Str(k)) => {
            if rest.is_empty() {
                Json::Obj(Rc::new(
                    fields.iter().filter(|(n, _)| n != k).cloned().collect(),
                ))
            } else {
                match value.get(k) {
                    Some(child) => Json::with_field(fields, k.clone(), delpath(child, rest)?),
                    None => value.clone(),
                }
            }
        }
        (Json::Arr(items), Json::Num(n)) => {
            let i = if *n < 0.0 { items.len() as f64 + n } else { *n };
            if i < 0.0 || i as usize >= items.len() {
                return Ok(value.clone());
            }
            let mut items = items.to_vec();
            if rest.is_empty() {
                items.remove(i as usize);
            } else {
                items[i as usize] = delpath(&items[i as usize], rest)?;
            }
            Json::Arr(Rc::new(items))
        }
        (Json::Null, _) => Json::Null,
        (v, k) => {
            return Err(format!(
                "Cannot delete field at {} index of {}",
                k.type_name(),
                v.type_name()
            )
            .into());
        }
    })
}
