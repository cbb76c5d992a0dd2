//! The `random` generator (`metadata.generator = "random"`): text of a log-normal length and
//! tool calls with arguments drawn from each tool's JSON Schema, honouring `tool_choice`
//! (`none`, `auto`, `required`, a forced function) and `parallel_tool_calls`, after a reasoning
//! summary when the request asks for reasoning (`reasoning.effort` other than `none`). Every draw comes
//! from the request's seeded RNG, so a conversation replays exactly.

use rand::RngExt;
use rand::rngs::StdRng;
use serde_json::{Map, Value, json};

use tether_protocol::{Callable, ToolChoice, callable_tools};

use super::output::{self, Output, ToolCallPlan};
use super::request::SimRequest;
use crate::model::{Context, ModelEvent};
use crate::tokenizer;

/// Median answer length in tokens, and the spread of its logarithm.
const MEDIAN_TOKENS: f64 = 60.0;
const LENGTH_SIGMA: f64 = 0.8;
const MAX_TOKENS: usize = 2_000;
/// How deep generated arguments nest before optional parts are left out.
const MAX_DEPTH: usize = 6;

const WORDS: &[&str] = &[
    "the", "model", "server", "token", "stream", "reply", "request", "response", "cache", "socket",
    "agent", "tool", "call", "patch", "file", "test", "build", "result", "simple", "fast", "quiet",
    "because", "while", "after", "before", "every", "small", "large", "first", "next", "output",
    "input", "queue", "slot", "time", "rate", "error", "value", "schema",
];

/// What the random generator answers in `context`.
pub fn plan(context: &Context, rng: &mut StdRng) -> Vec<Output> {
    let mut outputs = Vec::new();
    if let Some(median) = reasoning_median(context) {
        let count = ((median * (0.5 + rng.random::<f64>())) as usize).max(1);
        outputs.push(Output::Reasoning(text(count, rng)));
    }
    let calls = tool_calls(context, rng);
    if !calls.is_empty() {
        outputs.extend(calls.into_iter().map(Output::Call));
        return outputs;
    }
    let count = context
        .sim_output_tokens()
        .unwrap_or_else(|| answer_length(rng));
    outputs.push(Output::Message(text(count, rng)));
    outputs
}

/// The typical reasoning summary length for the request's `reasoning.effort`, if it reasons.
fn reasoning_median(context: &Context) -> Option<f64> {
    let effort = context
        .request
        .reasoning
        .as_ref()?
        .get("effort")?
        .as_str()?;
    match effort {
        "minimal" => Some(8.0),
        "low" => Some(20.0),
        "medium" => Some(60.0),
        "high" | "xhigh" => Some(150.0),
        _ => None,
    }
}

/// A log-normal length around [`MEDIAN_TOKENS`], at least 1 and at most [`MAX_TOKENS`].
fn answer_length(rng: &mut StdRng) -> usize {
    let normal = super::latency::standard_normal(rng);
    let length = (MEDIAN_TOKENS.ln() + LENGTH_SIGMA * normal).exp();
    (length.round() as usize).clamp(1, MAX_TOKENS)
}

/// `count` tokens of random prose (each word one o200k token, with or without a capital, a
/// full stop now and then).
pub fn text(count: usize, rng: &mut StdRng) -> String {
    let mut out = String::new();
    let mut capital = true;
    for index in 0..count {
        if !capital && index + 1 < count && rng.random_range(0..12) == 0 {
            out.push('.');
            capital = true;
            continue;
        }
        let word = WORDS[rng.random_range(0..WORDS.len())];
        if !out.is_empty() {
            out.push(' ');
        }
        if capital {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
            capital = false;
        } else {
            out.push_str(word);
        }
    }
    debug_assert_eq!(tokenizer::count(&out), count);
    out
}

/// The calls to make: per `tool_choice` — `none`: none; a forced tool: that one; `allowed_tools`:
/// only those; `required` (or `allowed_tools` in `required` mode): at least one; `auto`
/// (default): none after a tool output, else usually some — several (up to 3) unless
/// `parallel_tool_calls` is `false` or a tool is forced; at most `metadata.sim_tool_calls`.
pub fn tool_calls(context: &Context, rng: &mut StdRng) -> Vec<ToolCallPlan> {
    let mut candidates = output::callable(&context.request.tools);
    let choice = context.tool_choice();
    candidates.retain(|plan| plan.name().is_some_and(|name| choice.allows(name)));
    let limit = context.sim_tool_calls().unwrap_or(usize::MAX);
    if candidates.is_empty() || limit == 0 {
        return Vec::new();
    }
    if !choice.must_call() {
        let after_tool = context.trailing_tool_output().is_some();
        let probability = if after_tool { 0.0 } else { 0.7 };
        if rng.random::<f64>() >= probability {
            return Vec::new();
        }
    }
    let forced = matches!(choice, ToolChoice::Forced(_));
    let parallel = context.request.parallel_tool_calls != Some(false);
    let count = if parallel && !forced {
        rng.random_range(1..=3)
    } else {
        1
    }
    .min(limit);
    (0..count)
        .map(|_| {
            let plan = &candidates[rng.random_range(0..candidates.len())];
            with_random_input(plan, &context.request.tools, rng)
        })
        .collect()
}

/// `plan` with random arguments from its tool's schema (or random text for a custom tool).
fn with_random_input(
    plan: &ToolCallPlan,
    tools: &[tether_protocol::Tool],
    rng: &mut StdRng,
) -> ToolCallPlan {
    let input = match &plan.begin {
        ModelEvent::BeginFunctionCall {
            name, namespace, ..
        } => {
            let schema = find_schema(tools, name, namespace.as_deref()).unwrap_or(Value::Null);
            arguments(&schema, rng).to_string()
        }
        _ => text(rng.random_range(3..20), rng),
    };
    ToolCallPlan {
        begin: plan.begin.clone(),
        input,
    }
}

fn find_schema(
    tools: &[tether_protocol::Tool],
    name: &str,
    namespace: Option<&str>,
) -> Option<Value> {
    callable_tools(tools)
        .into_iter()
        .find_map(|callable| match callable.tool {
            Callable::Function(f) if f.name == name && callable.namespace == namespace => {
                Some(f.parameters.clone().unwrap_or(Value::Null))
            }
            _ => None,
        })
}

/// Random arguments valid against `schema` (the subset tools use: `type` (or a list of
/// types), `enum`, `const`, `anyOf`/`oneOf`, `properties` with `required`, `items` with
/// `minItems`/`maxItems`, `minimum`/`maximum`, `minLength`/`maxLength`).
pub fn arguments(schema: &Value, rng: &mut StdRng) -> Value {
    value(schema, 0, rng)
}

fn value(schema: &Value, depth: usize, rng: &mut StdRng) -> Value {
    if let Some(constant) = schema.get("const") {
        return constant.clone();
    }
    if let Some(choices) = schema.get("enum").and_then(Value::as_array)
        && !choices.is_empty()
    {
        return choices[rng.random_range(0..choices.len())].clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array)
            && !options.is_empty()
        {
            return value(&options[rng.random_range(0..options.len())], depth, rng);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::Array(kinds)) => {
            let kinds: Vec<&str> = kinds.iter().filter_map(Value::as_str).collect();
            if kinds.is_empty() {
                "object"
            } else {
                kinds[rng.random_range(0..kinds.len())]
            }
        }
        Some(Value::String(kind)) => kind.as_str(),
        _ if schema.get("items").is_some() => "array",
        _ => "object",
    };
    match kind {
        "string" => {
            let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(1) as usize;
            let max = schema
                .get("maxLength")
                .and_then(Value::as_u64)
                .map_or(min.max(24), |m| m as usize)
                .max(min);
            let mut s = text(rng.random_range(1..4), rng).to_lowercase();
            while s.chars().count() < min {
                s.push('x');
            }
            Value::String(s.chars().take(max).collect())
        }
        "integer" => {
            let min = schema.get("minimum").and_then(Value::as_i64).unwrap_or(0);
            let max = schema
                .get("maximum")
                .and_then(Value::as_i64)
                .unwrap_or(min + 100)
                .max(min);
            json!(rng.random_range(min..=max))
        }
        "number" => {
            let min = schema.get("minimum").and_then(Value::as_f64).unwrap_or(0.0);
            let max = schema
                .get("maximum")
                .and_then(Value::as_f64)
                .unwrap_or(min + 100.0)
                .max(min);
            json!(min + (max - min) * rng.random::<f64>())
        }
        "boolean" => json!(rng.random::<bool>()),
        "null" => Value::Null,
        "array" => {
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            let max = schema
                .get("maxItems")
                .and_then(Value::as_u64)
                .map_or(min + 3, |m| m as usize)
                .max(min);
            let max = if depth >= MAX_DEPTH { min } else { max };
            let items = schema.get("items").unwrap_or(&Value::Null);
            let count = rng.random_range(min..=max);
            Value::Array((0..count).map(|_| value(items, depth + 1, rng)).collect())
        }
        _ => {
            let mut object = Map::new();
            let properties = schema.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for (name, property) in properties.into_iter().flatten() {
                let include = required.contains(&name.as_str())
                    || (depth < MAX_DEPTH && rng.random::<bool>());
                if include {
                    object.insert(name.clone(), value(property, depth + 1, rng));
                }
            }
            for name in required {
                if !object.contains_key(name) {
                    object.insert(name.to_string(), value(&Value::Null, depth + 1, rng));
                }
            }
            Value::Object(object)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use tether_protocol::{ResponseCreate, Tool};

    /// Checks `value` against `schema` with the `jsonschema` crate, every object schema closed
    /// (`additionalProperties: false`), so a property the schema does not name fails too.
    fn conforms(value: &Value, schema: &Value) -> Result<(), String> {
        let validator =
            jsonschema::validator_for(&closed(schema.clone())).map_err(|e| e.to_string())?;
        validator
            .validate(value)
            .map_err(|e| format!("{value} does not conform: {e}"))
    }

    /// `schema` with `additionalProperties: false` wherever it lists `properties`.
    fn closed(mut schema: Value) -> Value {
        match &mut schema {
            Value::Object(map) => {
                if map.contains_key("properties") {
                    map.entry("additionalProperties").or_insert(json!(false));
                }
                for value in map.values_mut() {
                    *value = closed(value.take());
                }
            }
            Value::Array(values) => {
                for value in values {
                    *value = closed(value.take());
                }
            }
            _ => {}
        }
        schema
    }

    fn nested_schema() -> Value {
        json!({
            "type": "object",
            "required": ["path", "mode", "limits", "edits"],
            "properties": {
                "path": {"type": "string", "minLength": 3, "maxLength": 40},
                "mode": {"type": "string", "enum": ["read", "write", "append"]},
                "version": {"const": 2},
                "dry_run": {"type": "boolean"},
                "note": {"type": ["string", "null"]},
                "limits": {
                    "type": "object",
                    "required": ["max_lines"],
                    "properties": {
                        "max_lines": {"type": "integer", "minimum": 1, "maximum": 500},
                        "ratio": {"type": "number", "minimum": 0.0, "maximum": 1.0},
                        "deep": {"type": "object", "required": ["level"], "properties": {
                            "level": {"type": "object", "required": ["tags"], "properties": {
                                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 4}
                            }}
                        }}
                    }
                },
                "edits": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 5,
                    "items": {
                        "type": "object",
                        "required": ["line", "text"],
                        "properties": {
                            "line": {"type": "integer", "minimum": 1},
                            "text": {"type": "string"},
                            "kind": {"anyOf": [{"type": "string", "enum": ["insert", "delete"]}, {"type": "integer", "minimum": 0, "maximum": 3}]}
                        }
                    }
                }
            }
        })
    }

    #[test]
    fn arguments_conform_to_nested_schemas_and_vary() {
        let schema = nested_schema();
        let mut rng = StdRng::seed_from_u64(11);
        let mut seen_optional = false;
        let mut seen_without_optional = false;
        let mut modes = std::collections::BTreeSet::new();
        for _ in 0..500 {
            let args = arguments(&schema, &mut rng);
            conforms(&args, &schema).unwrap();
            seen_optional |= args.get("dry_run").is_some();
            seen_without_optional |= args.get("dry_run").is_none();
            modes.insert(args["mode"].as_str().unwrap().to_string());
        }
        assert!(
            seen_optional && seen_without_optional,
            "optional properties come and go"
        );
        assert_eq!(modes.len(), 3, "every enum value shows up");
        assert_eq!(arguments(&json!({"const": "x"}), &mut rng), json!("x"));
    }

    #[test]
    fn the_same_seed_draws_the_same_arguments() {
        let draw = || arguments(&nested_schema(), &mut StdRng::seed_from_u64(5));
        assert_eq!(draw(), draw());
    }

    #[test]
    fn every_word_is_one_token_in_every_position() {
        for word in WORDS {
            let capital = format!("{}{}", word[..1].to_uppercase(), &word[1..]);
            for form in [
                word.to_string(),
                format!(" {word}"),
                capital.clone(),
                format!(" {capital}"),
            ] {
                assert_eq!(tokenizer::count(&form), 1, "{form:?}");
            }
        }
    }

    #[test]
    fn random_text_has_the_requested_length() {
        let mut rng = StdRng::seed_from_u64(2);
        for count in [1, 2, 50, 999] {
            assert_eq!(tokenizer::count(&text(count, &mut rng)), count);
        }
        let lengths: Vec<usize> = (0..2000).map(|_| answer_length(&mut rng)).collect();
        let mut sorted = lengths.clone();
        sorted.sort();
        let median = sorted[sorted.len() / 2];
        assert!((45..=80).contains(&median), "median {median}");
        assert!(lengths.iter().all(|n| (1..=MAX_TOKENS).contains(n)));
    }

    fn tools() -> Vec<Tool> {
        serde_json::from_value(json!([
            {"type": "function", "name": "edit", "parameters": nested_schema()},
            {"type": "function", "name": "ping", "parameters": {"type": "object", "properties": {}}},
        ]))
        .unwrap()
    }

    fn names(calls: &[ToolCallPlan]) -> Vec<&str> {
        calls.iter().filter_map(ToolCallPlan::name).collect()
    }

    fn context(choice: Option<Value>, parallel: Option<bool>) -> Context {
        let mut request = ResponseCreate::new("m", "go");
        request.tools = tools();
        request.tool_choice = choice;
        request.parallel_tool_calls = parallel;
        crate::sim::testing::context(request)
    }

    #[test]
    fn tool_choice_and_parallel_calls_are_honoured() {
        let mut rng = StdRng::seed_from_u64(9);
        for _ in 0..200 {
            assert!(tool_calls(&context(Some(json!("none")), None), &mut rng).is_empty());
            let required = tool_calls(&context(Some(json!("required")), None), &mut rng);
            assert!((1..=3).contains(&required.len()));
            let forced = tool_calls(
                &context(Some(json!({"type": "function", "name": "edit"})), None),
                &mut rng,
            );
            assert_eq!(names(&forced), ["edit"]);
            let args: Value = serde_json::from_str(&forced[0].input).unwrap();
            conforms(&args, &nested_schema()).unwrap();
            let single = tool_calls(&context(Some(json!("required")), Some(false)), &mut rng);
            assert_eq!(single.len(), 1);
            let allowed = json!({"type": "allowed_tools", "mode": "required",
                "tools": [{"type": "function", "name": "ping"}]});
            let only_ping = tool_calls(&context(Some(allowed), None), &mut rng);
            assert!(!only_ping.is_empty() && names(&only_ping).iter().all(|n| *n == "ping"));
        }
        let auto: Vec<usize> = (0..200)
            .map(|_| tool_calls(&context(None, None), &mut rng).len())
            .collect();
        assert!(
            auto.contains(&0) && auto.iter().any(|n| *n > 1),
            "auto sometimes calls, sometimes several"
        );
    }
}
