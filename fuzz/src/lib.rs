//! Helpers the fuzz targets share: a byte-driven generator of JSON values that speak the
//! protocol's vocabulary (the structure-aware half of the `request` and `client_frame` targets),
//! and a small deterministic random source for the targets that cut their input into pieces.

use serde_json::{Map, Value};

/// Field names the protocol's decoders look at (requests, items, content parts, tools).
pub const KEYS: &[&str] = &[
    "type",
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "previous_response_id",
    "store",
    "stream",
    "max_output_tokens",
    "max_tool_calls",
    "temperature",
    "top_p",
    "top_logprobs",
    "metadata",
    "text",
    "reasoning",
    "truncation",
    "include",
    "prompt_cache_key",
    "client_metadata",
    "background",
    "generate",
    "stream_id",
    "response",
    "body",
    "role",
    "content",
    "status",
    "id",
    "call_id",
    "name",
    "namespace",
    "arguments",
    "output",
    "annotations",
    "logprobs",
    "refusal",
    "summary",
    "encrypted_content",
    "description",
    "parameters",
    "strict",
    "format",
    "mode",
    "allowed_tools",
];

/// Values of `type`, `role` and `status` fields, and other strings the decoders compare with.
pub const STRINGS: &[&str] = &[
    "response.create",
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "reasoning",
    "item_reference",
    "web_search_call",
    "input_text",
    "output_text",
    "input_image",
    "refusal",
    "summary_text",
    "function",
    "custom",
    "namespace",
    "web_search",
    "allowed_tools",
    "user",
    "assistant",
    "system",
    "developer",
    "in_progress",
    "completed",
    "incomplete",
    "auto",
    "none",
    "required",
    "m",
    "",
    "\u{0}",
    "é😀",
];

/// Reads its input one byte at a time, then zeros forever: every input is a valid recipe.
pub struct Recipe<'a>(&'a [u8]);

impl<'a> Recipe<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Recipe(bytes)
    }

    pub fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((first, rest)) => {
                self.0 = rest;
                *first
            }
            None => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn pick<'v>(&mut self, values: &[&'v str]) -> &'v str {
        values[usize::from(self.byte()) % values.len()]
    }

    fn string(&mut self) -> String {
        match self.byte() % 4 {
            // A few raw bytes of the recipe itself, for text the vocabulary does not have.
            0 => {
                let len = usize::from(self.byte() % 8);
                let bytes: Vec<u8> = (0..len).map(|_| self.byte()).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            }
            1 => self.pick(KEYS).to_string(),
            _ => self.pick(STRINGS).to_string(),
        }
    }

    fn number(&mut self) -> Value {
        const NUMBERS: &[f64] = &[0.0, 1.0, -1.0, 0.5, 2.0, 1e300, -1e-300, 4294967296.0];
        match self.byte() % 4 {
            0 => Value::from(u64::MAX - u64::from(self.byte())),
            1 => Value::from(i64::from(self.byte() as i8)),
            2 => Value::from(NUMBERS[usize::from(self.byte()) % NUMBERS.len()]),
            _ => Value::from(self.byte()),
        }
    }

    /// Any JSON value, at most `depth` containers deep.
    pub fn value(&mut self, depth: u8) -> Value {
        let choice = self.byte() % if depth == 0 { 4 } else { 7 };
        match choice {
            0 => Value::Null,
            1 => Value::Bool(self.byte() % 2 == 1),
            2 => self.number(),
            3 => Value::String(self.string()),
            4 => {
                let len = self.byte() % 4;
                Value::Array((0..len).map(|_| self.value(depth - 1)).collect())
            }
            _ => Value::Object(self.object(depth - 1)),
        }
    }

    /// An object with protocol field names; `type`, `role` and `status` mostly get one of the
    /// values the decoders know.
    pub fn object(&mut self, depth: u8) -> Map<String, Value> {
        let len = self.byte() % 6;
        let mut map = Map::new();
        for _ in 0..len {
            if self.is_empty() {
                break;
            }
            let key = self.pick(KEYS);
            let value =
                if matches!(key, "type" | "role" | "status") && !self.byte().is_multiple_of(4) {
                    Value::String(self.pick(STRINGS).to_string())
                } else {
                    self.value(depth)
                };
            map.insert(key.to_string(), value);
        }
        map
    }
}

/// A request body or frame from fuzz bytes: the bytes themselves when they are JSON (the seeds
/// and the mutations that stay valid), else a value built from them as a [`Recipe`] — so most
/// mutations still reach the decoders' inner layers instead of failing at the JSON syntax.
pub fn json_or_recipe(data: &[u8]) -> Value {
    match serde_json::from_slice(data) {
        Ok(value) => value,
        Err(_) => {
            let mut recipe = Recipe::new(data);
            let mut body = recipe.object(4);
            // Without a model nothing gets past the first field.
            if !recipe.byte().is_multiple_of(8) {
                body.entry("model").or_insert_with(|| "m".into());
            }
            if recipe.byte().is_multiple_of(2) {
                let input: Vec<Value> = (0..recipe.byte() % 4)
                    .map(|_| Value::Object(recipe.object(3)))
                    .collect();
                body.insert("input".into(), input.into());
            }
            Value::Object(body)
        }
    }
}

/// A xorshift generator seeded from the input, so cutting points are a function of the input
/// (a crash reproduces from its artifact alone).
pub struct Rng(u64);

impl Rng {
    pub fn seeded_by(data: &[u8]) -> Self {
        // FNV-1a; never zero, which xorshift cannot leave.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in data {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
        Rng(hash | 1)
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}
