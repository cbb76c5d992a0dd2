//! Where a prompt can hit the cache and where it writes to it, and the hash of the prompt up to
//! each of those places.
//!
//! The cache matches exact prefixes of the rendered token sequence, under a key made of what
//! the reference's diagnostics name as reasons for a miss (model, `prompt_cache_key`, tools,
//! text format, reasoning effort, verbosity, service tier). A prompt shorter than the minimum
//! (1,024 tokens) is not cached at all. Two granularities:
//!
//! - **classic** (a request without `prompt_cache_options`): a prompt hits at multiples of the
//!   block size (128 tokens) from the minimum on, and writes every whole block;
//! - **breakpoints** (`prompt_cache_options`): a hit happens only at a breakpoint — the end of
//!   an eligible input item (a message or a tool output) or of one carrying an explicit
//!   `prompt_cache_breakpoint` — considering the latest 80; a request writes at most four: in
//!   `implicit` mode one at the end of the newest eligible item plus the latest three explicit
//!   ones, in `explicit` mode the latest four explicit ones (none: no caching). A breakpoint is
//!   exact, not rounded to a block. An explicit marker on a content part marks the end of the
//!   item holding it (Tether renders a message as one block).

use std::time::Duration;

use serde_json::Value;
use tether_protocol::{ContentPart, Item, MessageContent, ResponseCreate, Role};

use crate::model::Context;

/// The most breakpoints a request writes, and how many of the latest it reads from.
pub const WRITTEN_BREAKPOINTS: usize = 4;
pub const CONSIDERED_BREAKPOINTS: usize = 80;

/// The lifetimes a breakpoint asks for.
pub const TTL_30M: Duration = Duration::from_secs(30 * 60);
pub const TTL_12H: Duration = Duration::from_secs(12 * 60 * 60);
/// `prompt_cache_retention: "24h"`.
pub const TTL_24H: Duration = Duration::from_secs(24 * 60 * 60);

/// What the cache key is made of; two requests whose parts differ never share a prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyParts {
    /// The caller's project: projects never share a cached prompt.
    pub project: String,
    pub model: String,
    pub prompt_cache_key: Option<String>,
    pub tools: String,
    pub text_format: String,
    pub reasoning_effort: String,
    pub verbosity: String,
    pub service_tier: String,
}

impl KeyParts {
    /// The parts of `request`'s key, for the profile named `profile`.
    pub fn of(request: &ResponseCreate, profile: &str, project: &str) -> Self {
        let field = |value: Option<&Value>| value.map(Value::to_string).unwrap_or_default();
        KeyParts {
            project: project.to_string(),
            model: profile.to_string(),
            prompt_cache_key: request.prompt_cache_key.clone(),
            tools: serde_json::to_string(&request.tools).unwrap_or_default(),
            text_format: field(request.text.as_ref().and_then(|t| t.get("format"))),
            reasoning_effort: field(request.reasoning.as_ref().and_then(|r| r.get("effort"))),
            verbosity: field(request.text.as_ref().and_then(|t| t.get("verbosity"))),
            service_tier: request.service_tier.clone().unwrap_or_default(),
        }
    }

    /// The first part that differs from `other`'s, as the reason a diagnostics miss names.
    pub fn first_difference(&self, other: &KeyParts) -> Option<&'static str> {
        // Another project's response is never a comparison (`comparison_response_not_found`).
        if self.model != other.model {
            Some("model_changed")
        } else if self.prompt_cache_key != other.prompt_cache_key {
            Some("prompt_cache_key_changed")
        } else if self.tools != other.tools {
            Some("tools_changed")
        } else if self.text_format != other.text_format {
            Some("text_format_changed")
        } else if self.reasoning_effort != other.reasoning_effort {
            Some("reasoning_effort_changed")
        } else if self.verbosity != other.verbosity {
            Some("verbosity_changed")
        } else if self.service_tier != other.service_tier {
            Some("service_tier_changed")
        } else {
            None
        }
    }

    fn seed(&self) -> u64 {
        let mut hash = Chain::new(0x7e74_6865_725f_7063);
        for part in [
            self.project.as_str(),
            self.model.as_str(),
            self.prompt_cache_key.as_deref().unwrap_or("\u{0}"),
            &self.tools,
            &self.text_format,
            &self.reasoning_effort,
            &self.verbosity,
            &self.service_tier,
        ] {
            for byte in part.bytes() {
                hash.push(u32::from(byte));
            }
            hash.push(u32::MAX);
        }
        hash.0
    }
}

/// A chained hash over tokens: the value after `n` tokens identifies the first `n`.
#[derive(Debug, Clone, Copy)]
struct Chain(u64);

impl Chain {
    fn new(seed: u64) -> Self {
        Chain(seed)
    }

    fn push(&mut self, token: u32) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(token)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// How a request meets the cache.
#[derive(Debug, Clone, PartialEq)]
pub enum Granularity {
    Classic,
    Breakpoints,
}

/// A place in the prompt where a prefix may be read or written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Place {
    /// Tokens from the start.
    pub at: usize,
    /// The prefix's hash under the request's key.
    pub hash: u64,
}

/// Where one request reads and writes, with the hashes of those prefixes.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub granularity: Granularity,
    /// Candidate hits, shortest first.
    pub reads: Vec<Place>,
    /// Prefixes to write, shortest first, each with the lifetime it asks for.
    pub writes: Vec<(Place, Duration)>,
    /// The hash at every block boundary (for diagnostics' comparisons), shortest first.
    pub blocks: Vec<Place>,
}

/// The cache settings a plan needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizes {
    pub min_tokens: usize,
    pub block_tokens: usize,
    /// A classic prefix's idle lifetime (`prompt_cache_retention: "in_memory"`, the default).
    pub in_memory_ttl: Duration,
}

/// Whether an input item ends a breakpoint-eligible stretch: a message from the user, the
/// developer or the system, or a tool's output.
fn eligible(item: &Item) -> bool {
    match item {
        Item::Message(message) => message.role != Role::Assistant,
        Item::FunctionCallOutput(_) | Item::CustomToolCallOutput(_) => true,
        _ => false,
    }
}

/// The lifetime an explicit marker on `item` asks for, if it carries one.
fn explicit_marker(item: &Item) -> Option<Duration> {
    let Item::Message(message) = item else {
        return None;
    };
    let MessageContent::Parts(parts) = &message.content else {
        return None;
    };
    parts.iter().rev().find_map(|part| match part {
        ContentPart::InputText {
            prompt_cache_breakpoint: Some(marker),
            ..
        } => Some(ttl_of(marker.get("ttl"))),
        ContentPart::Other(value) => value
            .get("prompt_cache_breakpoint")
            .map(|marker| ttl_of(marker.get("ttl"))),
        _ => None,
    })
}

fn ttl_of(value: Option<&Value>) -> Duration {
    match value.and_then(Value::as_str) {
        Some("12h") => TTL_12H,
        _ => TTL_30M,
    }
}

/// The plan of `context`'s prompt under `sizes`; `None` when it is not cached at all (too
/// short, or explicit mode without an explicit breakpoint).
pub fn plan(context: &Context, key: &KeyParts, sizes: Sizes) -> Option<Plan> {
    let len = context.prompt.len();
    if len < sizes.min_tokens.max(1) {
        return None;
    }
    let options = context.request.prompt_cache_options.as_ref();
    let block = sizes.block_tokens.max(1);
    let (granularity, reads, writes): (Granularity, Vec<usize>, Vec<(usize, Duration)>) =
        match options {
            None => {
                let ttl = match context.request.prompt_cache_retention.as_deref() {
                    Some("24h") => TTL_24H,
                    _ => sizes.in_memory_ttl,
                };
                let boundaries: Vec<usize> = (1..=len / block)
                    .map(|n| n * block)
                    .filter(|at| *at >= sizes.min_tokens)
                    .collect();
                let writes = boundaries.iter().map(|at| (*at, ttl)).collect();
                (Granularity::Classic, boundaries, writes)
            }
            Some(options) => {
                let implicit = options.get("mode").and_then(Value::as_str) != Some("explicit");
                let implicit_ttl = ttl_of(options.get("ttl"));
                let mut points: Vec<(usize, Option<Duration>)> = Vec::new();
                for (index, item) in context.items.iter().enumerate() {
                    let Some(at) = context.prompt.item_end(index) else {
                        continue;
                    };
                    if let Some(ttl) = explicit_marker(item) {
                        points.push((at, Some(ttl)));
                    } else if implicit && eligible(item) {
                        points.push((at, None));
                    }
                }
                points.retain(|(at, _)| *at >= sizes.min_tokens);
                if points.is_empty() {
                    return None;
                }
                let considered = points.len().saturating_sub(CONSIDERED_BREAKPOINTS);
                let reads = points[considered..].iter().map(|(at, _)| *at).collect();
                let explicit: Vec<(usize, Duration)> = points
                    .iter()
                    .filter_map(|(at, ttl)| ttl.map(|ttl| (*at, ttl)))
                    .collect();
                let mut writes: Vec<(usize, Duration)> = if implicit {
                    let newest = points
                        .iter()
                        .rev()
                        .find(|(_, ttl)| ttl.is_none())
                        .map(|(at, _)| (*at, implicit_ttl));
                    let latest: Vec<_> = explicit
                        .iter()
                        .rev()
                        .take(WRITTEN_BREAKPOINTS - 1)
                        .copied()
                        .collect();
                    newest.into_iter().chain(latest).collect()
                } else {
                    explicit
                        .iter()
                        .rev()
                        .take(WRITTEN_BREAKPOINTS)
                        .copied()
                        .collect()
                };
                if writes.is_empty() && !implicit {
                    return None;
                }
                writes.sort_by_key(|(at, _)| *at);
                writes.dedup_by_key(|(at, _)| *at);
                (Granularity::Breakpoints, reads, writes)
            }
        };
    // One pass over the tokens, noting the hash at every place asked for.
    let mut wanted: Vec<usize> = reads
        .iter()
        .copied()
        .chain(writes.iter().map(|(at, _)| *at))
        .chain((1..=len / block).map(|n| n * block))
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    let mut hashes = Vec::with_capacity(wanted.len());
    let mut chain = Chain::new(key.seed());
    let mut next = wanted.iter().peekable();
    for (index, token) in context.prompt.tokens().enumerate() {
        chain.push(token);
        while next.next_if(|at| **at == index + 1).is_some() {
            hashes.push(Place {
                at: index + 1,
                hash: chain.0,
            });
        }
    }
    let place = |at: usize| {
        hashes
            .binary_search_by_key(&at, |place| place.at)
            .map(|found| hashes[found])
            .ok()
    };
    Some(Plan {
        granularity,
        reads: reads.iter().filter_map(|at| place(*at)).collect(),
        writes: writes
            .iter()
            .filter_map(|(at, ttl)| place(*at).map(|p| (p, *ttl)))
            .collect(),
        blocks: (1..=len / block).filter_map(|n| place(n * block)).collect(),
    })
}
