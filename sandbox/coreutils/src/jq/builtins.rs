//! jq's builtins that agents use, each a [`Builtin`] resolved by name and arity when the
//! filter is parsed, and the value operations they share: indexing, slicing, `tostring`,
//! `tojson`, the `@` formats.

use std::rc::Rc;

use super::error::RunError;
use super::eval::{Env, Out, all_paths, delpaths, eval, first, getpath, paths, setpath, short};
use super::json::{self, Json, compare};
use super::parse::Filter;
use super::values::{
    contains, env_object, flatten, index_value, iterate, split_str, tojson, tostring,
    tostring_error, walk,
};

macro_rules! builtins {
    ($($variant:ident $name:literal $arity:literal,)*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Builtin { $($variant,)* }
        impl Builtin {
            pub fn resolve(name: &str, arity: usize) -> Option<Builtin> {
                match (name, arity) {
                    $(($name, $arity) => Some(Builtin::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

builtins! {
    Empty "empty" 0, Error0 "error" 0, Error1 "error" 1, Not "not" 0, Length "length" 0,
    Utf8ByteLength "utf8bytelength" 0, Keys "keys" 0, KeysUnsorted "keys_unsorted" 0,
    Values "values" 0, Has "has" 1, In "in" 1, Contains "contains" 1, Inside "inside" 1,
    Map "map" 1, MapValues "map_values" 1, Select "select" 1, Recurse0 "recurse" 0,
    Recurse1 "recurse" 1, Add "add" 0, Any0 "any" 0, Any1 "any" 1, All0 "all" 0, All1 "all" 1,
    Flatten0 "flatten" 0, Flatten1 "flatten" 1, Range1 "range" 1, Range2 "range" 2,
    Range3 "range" 3, Floor "floor" 0, Ceil "ceil" 0, Round "round" 0, Sqrt "sqrt" 0,
    Fabs "fabs" 0, Pow "pow" 2, Log "log" 0, ToString "tostring" 0, ToNumber "tonumber" 0,
    Type "type" 0, Infinite "infinite" 0, Nan "nan" 0, IsNan "isnan" 0, Sort "sort" 0,
    SortBy "sort_by" 1, GroupBy "group_by" 1, Unique "unique" 0, UniqueBy "unique_by" 1,
    Min "min" 0, Max "max" 0, MinBy "min_by" 1, MaxBy "max_by" 1, Reverse "reverse" 0,
    StartsWith "startswith" 1, EndsWith "endswith" 1, LtrimStr "ltrimstr" 1,
    RtrimStr "rtrimstr" 1, Split1 "split" 1, Join "join" 1, AsciiDowncase "ascii_downcase" 0,
    AsciiUpcase "ascii_upcase" 0, Explode "explode" 0, Implode "implode" 0, ToJson "tojson" 0,
    FromJson "fromjson" 0, ToEntries "to_entries" 0, FromEntries "from_entries" 0,
    WithEntries "with_entries" 1, Paths0 "paths" 0, Paths1 "paths" 1, LeafPaths "leaf_paths" 0,
    Path "path" 1, GetPath "getpath" 1, SetPath "setpath" 2, DelPaths "delpaths" 1,
    Del "del" 1, First0 "first" 0, First1 "first" 1, Last0 "last" 0, Last1 "last" 1,
    Nth1 "nth" 1, Nth2 "nth" 2, Limit "limit" 2, Until "until" 2, While "while" 2,
    Indices "indices" 1, Index "index" 1, Rindex "rindex" 1, Test1 "test" 1, Test2 "test" 2,
    Match1 "match" 1, Capture1 "capture" 1, Sub2 "sub" 2, Sub3 "sub" 3, Gsub2 "gsub" 2,
    Gsub3 "gsub" 3, Splits1 "splits" 1, Ascii "ascii" 0, Env "env" 0, Objects "objects" 0,
    Arrays "arrays" 0, Strings "strings" 0, Numbers "numbers" 0, Booleans "booleans" 0,
    Nulls "nulls" 0, Iterables "iterables" 0, Scalars "scalars" 0, Walk "walk" 1,
    Transpose "transpose" 0, ToArray "toarray" 0, IsValid "isvalid" 1, Debug "debug" 0,
    Trim "trim" 0, Ltrim "ltrim" 0, Rtrim "rtrim" 0, Abs "abs" 0, Splits2 "splits" 2,
    Split2 "split" 2,
}

pub(super) fn one(f: &Filter, input: &Json, env: &mut Env) -> Result<Json, RunError> {
    Ok(first(f, input, env)?.unwrap_or(Json::Null))
}

pub(super) fn array(value: &Json, what: &str) -> Result<Rc<Vec<Json>>, RunError> {
    match value {
        Json::Arr(items) => Ok(items.clone()),
        other => Err(format!("{} ({}) {what}", other.type_name(), short(other)).into()),
    }
}

fn string(value: &Json, what: &str) -> Result<Rc<str>, RunError> {
    match value {
        Json::Str(s) => Ok(s.clone()),
        other => Err(format!("{} ({}) {what}", other.type_name(), short(other)).into()),
    }
}

fn num(n: f64) -> Json {
    Json::Num(n)
}

fn regex(pattern: &Json, flags: Option<&Json>) -> Result<regex::Regex, RunError> {
    let pattern = string(pattern, "cannot be matched, as it is not a string")?;
    let flags = match flags {
        Some(Json::Str(f)) => f.to_string(),
        _ => String::new(),
    };
    let mut builder = regex::RegexBuilder::new(&pattern);
    builder
        .case_insensitive(flags.contains('i'))
        .ignore_whitespace(flags.contains('x'));
    builder
        .build()
        .map_err(|e| format!("{pattern} (at offset 0) is not a valid regex: {e}").into())
}

pub fn call(builtin: Builtin, args: &[Filter], input: &Json, env: &mut Env) -> Out {
    use Builtin as B;
    let arg = |i: usize| &args[i];
    Ok(match builtin {
        B::Empty => Vec::new(),
        B::Error0 => return Err(tostring_error(input).into()),
        B::Error1 => return Err(tostring_error(&one(arg(0), input, env)?).into()),
        B::Not => vec![Json::Bool(!input.truthy())],
        B::Length => vec![match input {
            Json::Null => num(0.0),
            Json::Bool(_) => return Err(format!("boolean ({}) has no length", short(input)).into()),
            Json::Num(n) => num(n.abs()),
            Json::Str(s) => num(s.chars().count() as f64),
            Json::Arr(a) => num(a.len() as f64),
            Json::Obj(o) => num(o.len() as f64),
        }],
        B::Utf8ByteLength => vec![num(
            string(input, "only strings have UTF-8 byte length")?.len() as f64,
        )],
        B::Keys | B::KeysUnsorted => vec![match input {
            Json::Obj(fields) => {
                let mut keys: Vec<Json> =
                    fields.iter().map(|(k, _)| Json::Str(k.clone())).collect();
                if builtin == B::Keys {
                    keys.sort_by(compare);
                }
                Json::Arr(Rc::new(keys))
            }
            Json::Arr(items) => {
                Json::Arr(Rc::new((0..items.len()).map(|i| num(i as f64)).collect()))
            }
            other => {
                return Err(format!("{} ({}) has no keys", other.type_name(), short(other)).into());
            }
        }],
        B::Values => {
            if input.is_null() {
                Vec::new()
            } else {
                vec![input.clone()]
            }
        }
        B::Has => {
            let key = one(arg(0), input, env)?;
            vec![Json::Bool(match (input, &key) {
                (Json::Obj(_), Json::Str(k)) => input.get(k).is_some(),
                (Json::Arr(a), Json::Num(n)) => *n >= 0.0 && (*n as usize) < a.len(),
                _ => {
                    return Err(format!(
                        "Cannot check whether {} has a {} key",
                        input.type_name(),
                        key.type_name()
                    )
                    .into());
                }
            })]
        }
        B::In => {
            let object = one(arg(0), input, env)?;
            return call(B::Has, &[Filter::Lit(input.clone())], &object, env);
        }
        B::Contains => vec![Json::Bool(contains(input, &one(arg(0), input, env)?))],
        B::Inside => vec![Json::Bool(contains(&one(arg(0), input, env)?, input))],
        B::Map => {
            let mut out = Vec::new();
            for item in iterate(input)? {
                out.extend(eval(arg(0), &item, env)?);
            }
            vec![Json::Arr(Rc::new(out))]
        }
        B::MapValues => {
            let all = super::eval::paths(&Filter::Iterate(Box::new(Filter::Identity)), input, env)?;
            let mut root = input.clone();
            let mut dropped = Vec::new();
            for path in all {
                match first(arg(0), &getpath(input, &path), env)? {
                    Some(v) => root = setpath(&root, &path, v)?,
                    None => dropped.push(path),
                }
            }
            vec![delpaths(&root, dropped)?]
        }
        B::Select => {
            let mut out = Vec::new();
            for c in eval(arg(0), input, env)? {
                if c.truthy() {
                    out.push(input.clone());
                }
            }
            out
        }
        B::Recurse0 => eval(&Filter::RecurseAll, input, env)?,
        B::Recurse1 => {
            let mut out = vec![input.clone()];
            let mut i = 0;
            while i < out.len() {
                let next = eval(arg(0), &out[i].clone(), env)?;
                env.count(next.len())?;
                out.extend(next);
                i += 1;
            }
            out
        }
        B::Add => {
            let mut acc = Json::Null;
            for item in iterate(input)? {
                acc = super::eval::binary(super::parse::Op::Add, &acc, &item)?;
            }
            vec![acc]
        }
        B::Any0 => vec![Json::Bool(iterate(input)?.iter().any(Json::truthy))],
        B::All0 => vec![Json::Bool(iterate(input)?.iter().all(Json::truthy))],
        B::Any1 | B::All1 => {
            let mut result = builtin == B::All1;
            for item in iterate(input)? {
                let t = eval(arg(0), &item, env)?.iter().any(Json::truthy);
                if builtin == B::Any1 && t {
                    result = true;
                    break;
                }
                if builtin == B::All1 && !t {
                    result = false;
                    break;
                }
            }
            vec![Json::Bool(result)]
        }
        B::Flatten0 | B::Flatten1 => {
            let depth = if builtin == B::Flatten1 {
                match one(arg(0), input, env)? {
                    Json::Num(d) if d >= 0.0 => d as usize,
                    _ => return Err("flatten depth must not be negative".into()),
                }
            } else {
                usize::MAX
            };
            let mut out = Vec::new();
            flatten(&array(input, "cannot be flattened")?, depth, &mut out);
            vec![Json::Arr(Rc::new(out))]
        }
        B::Range1 | B::Range2 | B::Range3 => {
            let numbers: Result<Vec<f64>, RunError> = args
                .iter()
                .map(|a| match one(a, input, env)? {
                    Json::Num(n) => Ok(n),
                    other => Err(format!(
                        "Range bounds must be numeric, not {}",
                        other.type_name()
                    )
                    .into()),
                })
                .collect();
            let numbers = numbers?;
            let (from, to, by) = match numbers.as_slice() {
                [to] => (0.0, *to, 1.0),
                [from, to] => (*from, *to, 1.0),
                [from, to, by] => (*from, *to, *by),
                _ => unreachable!("arity resolved"),
            };
            let mut out = Vec::new();
            let mut x = from;
            while (by > 0.0 && x < to) || (by < 0.0 && x > to) {
                out.push(num(x));
                env.count(1)?;
                x += by;
            }
            out
        }
        B::Floor | B::Ceil | B::Round | B::Sqrt | B::Fabs | B::Log | B::Abs => {
            let Json::Num(n) = input else {
                return Err(
                    format!("{} ({}) number required", input.type_name(), short(input)).into(),
                );
            };
            vec![num(match builtin {
                B::Floor => n.floor(),
                B::Ceil => n.ceil(),
                B::Round => n.round(),
                B::Sqrt => n.sqrt(),
                B::Log => n.ln(),
                _ => n.abs(),
            })]
        }
        B::Pow => {
            let (Json::Num(a), Json::Num(b)) = (one(arg(0), input, env)?, one(arg(1), input, env)?)
            else {
                return Err("pow requires numbers".into());
            };
            vec![num(a.powf(b))]
        }
        B::ToString => vec![Json::str(&tostring(input))],
        B::ToNumber => vec![match input {
            Json::Num(_) => input.clone(),
            Json::Str(s) => num(s
                .trim()
                .parse()
                .map_err(|_| format!("Cannot parse '{s}' as JSON"))?),
            other => {
                return Err(format!(
                    "{} ({}) cannot be parsed as a number",
                    other.type_name(),
                    short(other)
                )
                .into());
            }
        }],
        B::Type => vec![Json::str(input.type_name())],
        B::Infinite => vec![num(f64::INFINITY)],
        B::Nan => vec![num(f64::NAN)],
        B::IsNan => vec![Json::Bool(matches!(input, Json::Num(n) if n.is_nan()))],
        B::Sort => {
            let mut items = array(input, "cannot be sorted, as it is not an array")?.to_vec();
            items.sort_by(compare);
            vec![Json::Arr(Rc::new(items))]
        }
        B::SortBy | B::GroupBy | B::UniqueBy | B::MinBy | B::MaxBy => {
            let items = array(input, "cannot be sorted, as it is not an array")?;
            let mut keyed = Vec::new();
            for item in items.iter() {
                keyed.push((Json::Arr(Rc::new(eval(arg(0), item, env)?)), item.clone()));
            }
            keyed.sort_by(|a, b| compare(&a.0, &b.0));
            match builtin {
                B::SortBy => vec![Json::Arr(Rc::new(
                    keyed.into_iter().map(|(_, v)| v).collect(),
                ))],
                B::MinBy => vec![keyed.first().map_or(Json::Null, |(_, v)| v.clone())],
                B::MaxBy => vec![keyed.last().map_or(Json::Null, |(_, v)| v.clone())],
                _ => {
                    let mut groups: Vec<(Json, Vec<Json>)> = Vec::new();
                    for (key, value) in keyed {
                        match groups.last_mut() {
                            Some((k, group)) if compare(k, &key).is_eq() => group.push(value),
                            _ => groups.push((key, vec![value])),
                        }
                    }
                    let out = groups.into_iter().map(|(_, g)| {
                        if builtin == B::GroupBy {
                            Json::Arr(Rc::new(g))
                        } else {
                            g[0].clone()
                        }
                    });
                    vec![Json::Arr(Rc::new(out.collect()))]
                }
            }
        }
        B::Unique => {
            let mut items = array(input, "cannot be sorted, as it is not an array")?.to_vec();
            items.sort_by(compare);
            items.dedup_by(|a, b| compare(a, b).is_eq());
            vec![Json::Arr(Rc::new(items))]
        }
        B::Min | B::Max => {
            let items = array(input, "cannot be sorted")?;
            let pick = if builtin == B::Min {
                items.iter().min_by(|a, b| compare(a, b))
            } else {
                items.iter().max_by(|a, b| compare(a, b))
            };
            vec![pick.cloned().unwrap_or(Json::Null)]
        }
        B::Reverse => vec![match input {
            Json::Arr(items) => Json::Arr(Rc::new(items.iter().rev().cloned().collect())),
            Json::Str(s) => Json::str(&s.chars().rev().collect::<String>()),
            Json::Null => Json::Arr(Rc::default()),
            other => return Err(format!("Cannot reverse {}", other.type_name()).into()),
        }],
        B::StartsWith | B::EndsWith | B::LtrimStr | B::RtrimStr => {
            let affix = one(arg(0), input, env)?;
            match (input, &affix) {
                (Json::Str(s), Json::Str(a)) => vec![match builtin {
                    B::StartsWith => Json::Bool(s.starts_with(&**a)),
                    B::EndsWith => Json::Bool(s.ends_with(&**a)),
                    B::LtrimStr => s.strip_prefix(&**a).map_or(input.clone(), Json::str),
                    _ => s.strip_suffix(&**a).map_or(input.clone(), Json::str),
                }],
                _ if matches!(builtin, B::LtrimStr | B::RtrimStr) => vec![input.clone()],
                _ => {
                    return Err(format!(
                        "{} requires string inputs",
                        if builtin == B::StartsWith {
                            "startswith() "
                        } else {
                            "endswith() "
                        }
                        .trim_end()
                    )
                    .into());
                }
            }
        }
        B::Split1 => {
            let sep = one(arg(0), input, env)?;
            let s = string(input, "cannot be split, as it is not a string")?;
            let sep = string(&sep, "split input and separator must be strings")?;
            vec![split_str(&s, &sep)]
        }
        B::Split2 | B::Splits1 | B::Splits2 => {
            let s = string(input, "cannot be matched, as it is not a string")?;
            let flags = if args.len() > 1 {
                Some(one(arg(1), input, env)?)
            } else {
                None
            };
            let re = regex(&one(arg(0), input, env)?, flags.as_ref())?;
            let parts: Vec<Json> = re.split(&s).map(Json::str).collect();
            if builtin == B::Split2 {
                vec![Json::Arr(Rc::new(parts))]
            } else {
                parts
            }
        }
        B::Join => {
            let sep = one(arg(0), input, env)?;
            let sep = string(&sep, "join separator must be a string")?;
            let mut out = String::new();
            for (i, item) in iterate(input)?.iter().enumerate() {
                if i > 0 {
                    out.push_str(&sep);
                }
                match item {
                    Json::Null => {}
                    Json::Str(s) => out.push_str(s),
                    Json::Num(_) | Json::Bool(_) => out.push_str(&tostring(item)),
                    other => return Err(format!("Cannot join with {}", other.type_name()).into()),
                }
            }
            vec![Json::str(&out)]
        }
        B::AsciiDowncase => vec![Json::str(
            &string(input, "cannot be lowercased")?.to_ascii_lowercase(),
        )],
        B::AsciiUpcase => vec![Json::str(
            &string(input, "cannot be uppercased")?.to_ascii_uppercase(),
        )],
        B::Explode => vec![Json::Arr(Rc::new(
            string(input, "cannot be exploded")?
                .chars()
                .map(|c| num(f64::from(c as u32)))
                .collect(),
        ))],
        B::Implode => {
            let mut out = String::new();
            for item in array(input, "cannot be imploded")?.iter() {
                let Json::Num(n) = item else {
                    return Err("Unicode codepoints must be numeric".into());
                };
                out.push(char::from_u32(*n as u32).unwrap_or('\u{FFFD}'));
            }
            vec![Json::str(&out)]
        }
        B::ToJson => vec![Json::str(&tojson(input))],
        B::FromJson => {
            let s = string(input, "cannot be parsed as JSON")?;
            let mut values = json::parse_stream(&s)
                .map_err(|e| format!("{} (while parsing '{s}')", e.message))?;
            vec![values.pop().unwrap_or(Json::Null)]
        }
        B::ToEntries => {
            let Json::Obj(fields) = input else {
                return Err(format!("{} ({}) has no keys", input.type_name(), short(input)).into());
            };
            let entries = fields.iter().map(|(k, v)| {
                Json::Obj(Rc::new(vec![
                    (Rc::from("key"), Json::Str(k.clone())),
                    (Rc::from("value"), v.clone()),
                ]))
            });
            vec![Json::Arr(Rc::new(entries.collect()))]
        }
        B::FromEntries => {
            let mut fields: Vec<(Rc<str>, Json)> = Vec::new();
            for entry in iterate(input)? {
                let key = ["key", "k", "name", "Name", "Key", "K"]
                    .iter()
                    .find_map(|k| entry.get(k).filter(|v| v.truthy()).cloned())
                    .unwrap_or(Json::Null);
                let key: Rc<str> = match key {
                    Json::Str(s) => s,
                    Json::Num(_) | Json::Bool(_) => Rc::from(tostring(&key).as_str()),
                    other => {
                        return Err(format!(
                            "Cannot use {} ({}) as object key",
                            other.type_name(),
                            short(&other)
                        )
                        .into());
                    }
                };
                let value = ["value", "v", "Value", "V"]
                    .iter()
                    .find_map(|k| entry.get(k).cloned())
                    .unwrap_or(Json::Null);
                match fields.iter_mut().find(|(k, _)| *k == key) {
                    Some(slot) => slot.1 = value,
                    None => fields.push((key, value)),
                }
            }
            vec![Json::Obj(Rc::new(fields))]
        }
        B::WithEntries => {
            let entries = call(B::ToEntries, &[], input, env)?;
            let mapped = call(B::Map, args, &entries[0], env)?;
            call(B::FromEntries, &[], &mapped[0], env)?
        }
        B::Paths0 | B::LeafPaths | B::Paths1 => {
            let mut all = Vec::new();
            all_paths(input, &[], &mut all);
            all.remove(0);
            let mut out = Vec::new();
            for path in all {
                let value = getpath(input, &path);
                let keep = match builtin {
                    B::Paths0 => true,
                    B::LeafPaths => !matches!(value, Json::Arr(_) | Json::Obj(_)),
                    _ => eval(arg(0), &value, env)?.iter().any(Json::truthy),
                };
                if keep {
                    out.push(Json::Arr(Rc::new(path)));
                }
            }
            out
        }
        B::Path => paths(arg(0), input, env)?
            .into_iter()
            .map(|p| Json::Arr(Rc::new(p)))
            .collect(),
        B::GetPath => {
            let path = one(arg(0), input, env)?;
            vec![getpath(
                input,
                &array(&path, "Path must be specified as an array")?,
            )]
        }
        B::SetPath => {
            let path = one(arg(0), input, env)?;
            let value = one(arg(1), input, env)?;
            vec![setpath(
                input,
                &array(&path, "Path must be specified as an array")?,
                value,
            )?]
        }
        B::DelPaths => {
            let list = one(arg(0), input, env)?;
            let mut all = Vec::new();
            for p in array(&list, "Paths must be specified as an array")?.iter() {
                all.push(array(p, "Path must be specified as an array")?.to_vec());
            }
            vec![delpaths(input, all)?]
        }
        B::Del => vec![delpaths(input, paths(arg(0), input, env)?)?],
        B::First0 => vec![index_value(input, &num(0.0))?],
        B::Last0 => vec![index_value(input, &num(-1.0))?],
        B::First1 => eval(arg(0), input, env)?.into_iter().take(1).collect(),
        B::Last1 => eval(arg(0), input, env)?
            .into_iter()
            .last()
            .into_iter()
            .collect(),
        B::Nth1 => vec![index_value(input, &one(arg(0), input, env)?)?],
        B::Nth2 => {
            let n = one(arg(0), input, env)?;
            let Json::Num(n) = n else {
                return Err("nth requires a number".into());
            };
            eval(arg(1), input, env)?
                .into_iter()
                .skip(n.max(0.0) as usize)
                .take(1)
                .collect()
        }
        B::Limit => {
            let n = one(arg(0), input, env)?;
            let Json::Num(n) = n else {
                return Err("Invalid limit".into());
            };
            eval(arg(1), input, env)?
                .into_iter()
                .take(n.max(0.0) as usize)
                .collect()
        }
        B::Until | B::While => {
            let mut out = Vec::new();
            let mut current = input.clone();
            loop {
                env.count(1)?;
                let c = one(arg(0), &current, env)?.truthy();
                if builtin == B::Until && c {
                    out.push(current);
                    break;
                }
                if builtin == B::While {
                    if !c {
                        break;
                    }
                    out.push(current.clone());
                }
                current = one(arg(1), &current, env)?;
            }
            out
        }
        B::Indices | B::Index | B::Rindex => {
            let needle = one(arg(0), input, env)?;
            let found: Vec<f64> = match (input, &needle) {
                (Json::Str(s), Json::Str(n)) if !n.is_empty() => s
                    .match_indices(&**n)
                    .map(|(i, _)| s[..i].chars().count() as f64)
                    .collect(),
                (Json::Arr(a), Json::Arr(n)) if !n.is_empty() => (0..a.len())
                    .filter(|&i| a[i..].starts_with(n))
                    .map(|i| i as f64)
                    .collect(),
                (Json::Arr(a), n) => (0..a.len())
                    .filter(|&i| compare(&a[i], n).is_eq())
                    .map(|i| i as f64)
                    .collect(),
                (Json::Null, _) => return Ok(vec![Json::Null]),
                _ => Vec::new(),
            };
            vec![match builtin {
                B::Indices => Json::Arr(Rc::new(found.into_iter().map(num).collect())),
                B::Index => found.first().map_or(Json::Null, |i| num(*i)),
                _ => found.last().map_or(Json::Null, |i| num(*i)),
            }]
        }
        B::Test1 | B::Test2 | B::Match1 | B::Capture1 => {
            let s = string(input, "cannot be matched, as it is not a string")?;
            let flags = if builtin == B::Test2 {
                Some(one(arg(1), input, env)?)
            } else {
                None
            };
            let re = regex(&one(arg(0), input, env)?, flags.as_ref())?;
            match builtin {
                B::Test1 | B::Test2 => vec![Json::Bool(re.is_match(&s))],
                _ => match re.captures(&s) {
                    None => Vec::new(),
                    Some(caps) => {
                        let whole = caps.get(0).expect("a match");
                        if builtin == B::Capture1 {
                            let fields = re.capture_names().enumerate().filter_map(|(i, name)| {
                                let name = name?;
                                Some((
                                    Rc::from(name),
                                    caps.get(i).map_or(Json::Null, |m| Json::str(m.as_str())),
                                ))
                            });
                            vec![Json::Obj(Rc::new(fields.collect()))]
                        } else {
                            let offset = s[..whole.start()].chars().count() as f64;
                            let captures = (1..caps.len()).map(|i| {
                                let m = caps.get(i);
                                Json::Obj(Rc::new(vec![
                                    (
                                        Rc::from("offset"),
                                        m.map_or(num(-1.0), |m| {
                                            num(s[..m.start()].chars().count() as f64)
                                        }),
                                    ),
                                    (
                                        Rc::from("length"),
                                        m.map_or(num(0.0), |m| {
                                            num(m.as_str().chars().count() as f64)
                                        }),
                                    ),
                                    (
                                        Rc::from("string"),
                                        m.map_or(Json::Null, |m| Json::str(m.as_str())),
                                    ),
                                    (
                                        Rc::from("name"),
                                        re.capture_names()
                                            .nth(i)
                                            .flatten()
                                            .map_or(Json::Null, Json::str),
                                    ),
                                ]))
                            });
                            vec![Json::Obj(Rc::new(vec![
                                (Rc::from("offset"), num(offset)),
                                (
                                    Rc::from("length"),
                                    num(whole.as_str().chars().count() as f64),
                                ),
                                (Rc::from("string"), Json::str(whole.as_str())),
                                (Rc::from("captures"), Json::Arr(Rc::new(captures.collect()))),
                            ]))]
                        }
                    }
                },
            }
        }
        B::Sub2 | B::Sub3 | B::Gsub2 | B::Gsub3 => {
            let s = string(input, "cannot be matched, as it is not a string")?;
            let flags = if args.len() > 2 {
                Some(one(arg(2), input, env)?)
            } else {
                None
            };
            let global = matches!(builtin, B::Gsub2 | B::Gsub3)
                || matches!(&flags, Some(Json::Str(f)) if f.contains('g'));
            let re = regex(&one(arg(0), input, env)?, flags.as_ref())?;
            let mut out = String::new();
            let mut last = 0;
            for caps in re.captures_iter(&s) {
                let whole = caps.get(0).expect("a match");
                out.push_str(&s[last..whole.start()]);
                let named = re.capture_names().enumerate().filter_map(|(i, name)| {
                    Some((
                        Rc::from(name?),
                        caps.get(i).map_or(Json::Null, |m| Json::str(m.as_str())),
                    ))
                });
                let context = Json::Obj(Rc::new(named.collect()));
                let replacement = one(arg(1), &context, env)?;
                out.push_str(&string(&replacement, "cannot be added to a string")?);
                last = whole.end();
                if !global {
                    break;
                }
            }
            out.push_str(&s[last..]);
            vec![Json::str(&out)]
        }
        B::Ascii => vec![Json::str(
            &char::from_u32(match input {
                Json::Num(n) => *n as u32,
                _ => 0,
            })
            .unwrap_or('?')
            .to_string(),
        )],
        B::Env => vec![env_object(env)],
        B::Objects
        | B::Arrays
        | B::Strings
        | B::Numbers
        | B::Booleans
        | B::Nulls
        | B::Iterables
        | B::Scalars => {
            let keep = match builtin {
                B::Objects => matches!(input, Json::Obj(_)),
                B::Arrays => matches!(input, Json::Arr(_)),
                B::Strings => matches!(input, Json::Str(_)),
                B::Numbers => matches!(input, Json::Num(_)),
                B::Booleans => matches!(input, Json::Bool(_)),
                B::Nulls => matches!(input, Json::Null),
                B::Iterables => matches!(input, Json::Arr(_) | Json::Obj(_)),
                _ => !matches!(input, Json::Arr(_) | Json::Obj(_)),
            };
            if keep {
                vec![input.clone()]
            } else {
                Vec::new()
            }
        }
        B::Walk => vec![walk(arg(0), input, env)?],
        B::Transpose => {
            let rows = array(input, "cannot be transposed")?;
            let width = rows
                .iter()
                .map(|r| if let Json::Arr(a) = r { a.len() } else { 0 })
                .max()
                .unwrap_or(0);
            let out = (0..width).map(|i| {
                Json::Arr(Rc::new(
                    rows.iter()
                        .map(|r| index_value(r, &num(i as f64)).unwrap_or(Json::Null))
                        .collect(),
                ))
            });
            vec![Json::Arr(Rc::new(out.collect()))]
        }
        B::ToArray => vec![match input {
            Json::Arr(_) => input.clone(),
            other => Json::Arr(Rc::new(vec![other.clone()])),
        }],
        B::IsValid => vec![Json::Bool(
            RunError::caught(eval(arg(0), input, env))?.is_some(),
        )],
        B::Trim | B::Ltrim | B::Rtrim => {
            let s = string(input, "trim input must be a string")?;
            vec![Json::str(match builtin {
                B::Trim => s.trim(),
                B::Ltrim => s.trim_start(),
                _ => s.trim_end(),
            })]
        }
        B::Debug => vec![input.clone()],
    })
}
