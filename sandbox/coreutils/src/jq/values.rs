//! Operations on jq values that the evaluator and the builtins share: indexing, slicing,
//! `tostring`/`tojson`, the `@` formats, `contains`, and iterating.

use std::rc::Rc;

use super::builtins::{Builtin, array, one};
use super::error::RunError;
use super::eval::{Env, all_paths, eval, short};
use super::json::{self, Json, compare};
use super::parse::Filter;

fn num(n: f64) -> Json {
    Json::Num(n)
}

pub fn iterate(value: &Json) -> Result<Vec<Json>, RunError> {
    match value {
        Json::Arr(items) => Ok(items.to_vec()),
        Json::Obj(fields) => Ok(fields.iter().map(|(_, v)| v.clone()).collect()),
        Json::Null => Ok(Vec::new()),
        other => Err(format!(
            "Cannot iterate over {} ({})",
            other.type_name(),
            short(other)
        )
        .into()),
    }
}

pub fn flatten(items: &[Json], depth: usize, out: &mut Vec<Json>) {
    for item in items {
        match item {
            Json::Arr(inner) if depth > 0 => flatten(inner, depth - 1, out),
            other => out.push(other.clone()),
        }
    }
}

pub fn contains(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Obj(_), Json::Obj(bf)) => bf
            .iter()
            .all(|(k, bv)| a.get(k).is_some_and(|av| contains(av, bv))),
        (Json::Arr(aa), Json::Arr(ba)) => ba.iter().all(|bv| aa.iter().any(|av| contains(av, bv))),
        (Json::Str(a), Json::Str(b)) => a.contains(&**b),
        _ => compare(a, b).is_eq(),
    }
}

pub fn tostring_error(value: &Json) -> String {
    match value {
        Json::Str(s) => s.to_string(),
        other => format!("{} (not a string)", tojson(other)),
    }
}

/// `.[key]`: a field, an element (negative from the end), or null of null.
pub fn index_value(value: &Json, key: &Json) -> Result<Json, RunError> {
    Ok(match (value, key) {
        (Json::Obj(_), Json::Str(k)) => value.get(k).cloned().unwrap_or(Json::Null),
        (Json::Arr(items), Json::Num(n)) => {
            let i = if *n < 0.0 {
                items.len() as f64 + n.floor()
            } else {
                n.floor()
            };
            if i < 0.0 {
                Json::Null
            } else {
                items.get(i as usize).cloned().unwrap_or(Json::Null)
            }
        }
        (Json::Null, Json::Str(_) | Json::Num(_) | Json::Null) => Json::Null,
        (Json::Arr(_), Json::Arr(_)) => call_indices(value, key),
        (v, Json::Str(k)) => {
            return Err(format!("Cannot index {} with \"{k}\"", v.type_name()).into());
        }
        (v, k) => {
            return Err(format!("Cannot index {} with {}", v.type_name(), k.type_name()).into());
        }
    })
}

fn call_indices(value: &Json, key: &Json) -> Json {
    match (value, key) {
        (Json::Arr(a), Json::Arr(n)) if !n.is_empty() => Json::Arr(Rc::new(
            (0..a.len())
                .filter(|&i| a[i..].starts_with(n))
                .map(|i| num(i as f64))
                .collect(),
        )),
        _ => Json::Null,
    }
}

pub fn slice(value: &Json, from: &Json, to: &Json) -> Result<Json, RunError> {
    let len = match value {
        Json::Arr(a) => a.len(),
        Json::Str(s) => s.chars().count(),
        Json::Null => return Ok(Json::Null),
        other => return Err(format!("Cannot index {} with object", other.type_name()).into()),
    } as f64;
    let bound = |b: &Json, default: f64| -> f64 {
        match b {
            Json::Num(n) => {
                let n = if *n < 0.0 { len + n } else { *n };
                n.clamp(0.0, len)
            }
            _ => default,
        }
    };
    let (start, end) = (
        bound(from, 0.0).floor() as usize,
        bound(to, len).ceil() as usize,
    );
    let end = end.max(start);
    Ok(match value {
        Json::Arr(a) => Json::Arr(Rc::new(a[start..end].to_vec())),
        Json::Str(s) => Json::str(&s.chars().skip(start).take(end - start).collect::<String>()),
        _ => Json::Null,
    })
}

pub fn split_str(s: &str, sep: &str) -> Json {
    let parts: Vec<Json> = if s.is_empty() {
        Vec::new()
    } else if sep.is_empty() {
        s.chars().map(|c| Json::str(&c.to_string())).collect()
    } else {
        s.split(sep).map(Json::str).collect()
    };
    Json::Arr(Rc::new(parts))
}

pub fn tojson(value: &Json) -> String {
    let mut out = String::new();
    json::write(
        &mut out,
        value,
        json::Style {
            indent: None,
            sort_keys: false,
        },
        0,
    );
    out
}

pub fn tostring(value: &Json) -> String {
    match value {
        Json::Str(s) => s.to_string(),
        other => tojson(other),
    }
}

/// `@name`: `text`, `json`, `csv`, `tsv`, `html`, `uri`, `sh`, `base64`, `base64d`.
pub fn format(name: &str, value: &Json) -> Result<String, RunError> {
    let items = |what: &str| -> Result<Vec<Json>, RunError> {
        match value {
            Json::Arr(items) => Ok(items.to_vec()),
            other => Err(format!(
                "{} ({}) cannot be {what}-formatted, only an array can be",
                other.type_name(),
                short(other)
            )
            .into()),
        }
    };
    Ok(match name {
        "text" => tostring(value),
        "json" => tojson(value),
        "csv" | "tsv" => {
            let mut fields = Vec::new();
            for item in items(name)? {
                fields.push(match (&item, name) {
                    (Json::Str(s), "csv") => format!("\"{}\"", s.replace('"', "\"\"")),
                    (Json::Str(s), _) => s
                        .replace('\\', "\\\\")
                        .replace('\t', "\\t")
                        .replace('\n', "\\n")
                        .replace('\r', "\\r"),
                    (Json::Num(_) | Json::Bool(_), _) => tostring(&item),
                    (Json::Null, _) => String::new(),
                    (other, _) => {
                        return Err(format!(
                            "{} ({}) is not valid in a csv row",
                            other.type_name(),
                            short(other)
                        )
                        .into());
                    }
                });
            }
            fields.join(if name == "csv" { "," } else { "\t" })
        }
        "html" => tostring(value)
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('\'', "&#39;")
            .replace('"', "&quot;"),
        "uri" => tostring(value)
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect(),
        "sh" => {
            let quote = |v: &Json| -> Result<String, RunError> {
                match v {
                    Json::Str(s) => Ok(format!("'{}'", s.replace('\'', "'\\''"))),
                    Json::Arr(_) | Json::Obj(_) => Err(format!(
                        "{} ({}) can not be escaped for shell",
                        v.type_name(),
                        short(v)
                    )
                    .into()),
                    other => Ok(tostring(other)),
                }
            };
            match value {
                Json::Arr(items) => items
                    .iter()
                    .map(quote)
                    .collect::<Result<Vec<_>, _>>()?
                    .join(" "),
                other => quote(other)?,
            }
        }
        "base64" => crate::encoding::base64_encode(tostring(value).as_bytes()),
        "base64d" => {
            let decoded = crate::encoding::base64_decode(tostring(value).as_bytes())
                .map_err(|_| format!("{} is not valid base64 data", short(value)))?;
            String::from_utf8_lossy(&decoded).into_owned()
        }
        other => return Err(format!("{other} is not a valid format").into()),
    })
}

impl Json {
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }
}

/// The paths of the builtins that are path expressions (`select`, `recurse`, `empty`,
/// `getpath`, `first`, `last`).
pub fn call_paths(
    builtin: Builtin,
    args: &[Filter],
    input: &Json,
    prefix: &[Json],
    env: &mut Env,
    out: &mut Vec<Vec<Json>>,
) -> Result<(), RunError> {
    match builtin {
        Builtin::Empty => {}
        Builtin::Select => {
            if eval(&args[0], input, env)?.iter().any(Json::truthy) {
                out.push(prefix.to_vec());
            }
        }
        Builtin::Recurse0 => all_paths(input, prefix, out),
        Builtin::GetPath => {
            let path = one(&args[0], input, env)?;
            let mut full = prefix.to_vec();
            full.extend(
                array(&path, "Path must be specified as an array")?
                    .iter()
                    .cloned(),
            );
            out.push(full);
        }
        Builtin::First0 | Builtin::Last0 => {
            let mut full = prefix.to_vec();
            full.push(num(if builtin == Builtin::First0 {
                0.0
            } else {
                -1.0
            }));
            out.push(full);
        }
        _ => return Err("Invalid path expression".into()),
    }
    Ok(())
}

pub fn env_object(env: &Env) -> Json {
    env.vars
        .iter()
        .find(|(n, _)| n == "\u{0}ENV")
        .map_or(Json::Obj(Rc::default()), |(_, v)| v.clone())
}

pub fn walk(f: &Filter, value: &Json, env: &mut Env) -> Result<Json, RunError> {
    let inner = match value {
        Json::Arr(items) => {
            let mut out = Vec::new();
            for item in items.iter() {
                out.push(walk(f, item, env)?);
            }
            Json::Arr(Rc::new(out))
        }
        Json::Obj(fields) => {
            let mut out = Vec::new();
            for (k, v) in fields.iter() {
                out.push((k.clone(), walk(f, v, env)?));
            }
            Json::Obj(Rc::new(out))
        }
        other => other.clone(),
    };
    one(f, &inner, env)
}
