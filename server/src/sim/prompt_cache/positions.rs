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
//!   item holding it (Tether renders a message as one block). Writes, like reads, are chosen
//!   among the latest 80 breakpoints.
//!
//! A plan is proportional to the request's new tokens, not to its prompt: the prefix hashes are
//! the prompt's own ([`crate::model::prefix`], extended as a continuation renders), candidate
//! hits are hashed lazily from the longest down (a continuation finds its previous request's
//! prefix after the few blocks it added), and only the prefixes past the hit are written.

use std::time::Duration;

use serde_json::Value;
use tether_protocol::ResponseCreate;

use crate::model::Context;
use crate::model::breakpoints::ttl_of;
use crate::model::prefix::{Chain, keyed};

pub use crate::model::breakpoints::{TTL_12H, TTL_30M};

/// The most breakpoints a request writes, and how many of the latest it reads from.
pub const WRITTEN_BREAKPOINTS: usize = 4;
pub const CONSIDERED_BREAKPOINTS: usize = 80;

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

    /// The key as a number, mixed into every prefix hash ([`keyed`]).
    pub fn seed(&self) -> u64 {
        let mut hash = Chain(0x7e74_6865_725f_7064);
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

/// The cache settings a plan needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizes {
    pub min_tokens: usize,
    pub block_tokens: usize,
    /// A classic prefix's idle lifetime (`prompt_cache_retention: "in_memory"`, the default).
    pub in_memory_ttl: Duration,
}

/// Where one request reads and writes, hashed as asked.
#[derive(Debug)]
pub struct Plan<'a> {
    pub granularity: Granularity,
    context: &'a Context,
    seed: u64,
    places: Places,
}

#[derive(Debug)]
enum Places {
    /// Every whole block from the minimum on, each written with `ttl`.
    Classic {
        block: usize,
        min: usize,
        ttl: Duration,
    },
    /// The breakpoints considered (shortest first) and those written, each with its lifetime.
    Breakpoints {
        reads: Vec<usize>,
        writes: Vec<(usize, Duration)>,
    },
}

impl Plan<'_> {
    fn place(&self, at: usize) -> Place {
        Place {
            at,
            hash: keyed(self.seed, self.context.prompt.prefix_hash(at)),
        }
    }

    /// Candidate hits, longest first, each hashed when it is asked for.
    pub fn reads_longest_first(&self) -> Box<dyn Iterator<Item = Place> + '_> {
        match &self.places {
            Places::Classic { block, min, .. } => {
                let (block, min) = (*block, *min);
                let len = self.context.prompt.len();
                Box::new(
                    (1..=len / block)
                        .rev()
                        .map(move |n| n * block)
                        .take_while(move |at| *at >= min)
                        .map(|at| self.place(at)),
                )
            }
            Places::Breakpoints { reads, .. } => {
                Box::new(reads.iter().rev().map(|at| self.place(*at)))
            }
        }
    }

    /// The prefixes to write past the first `cached` tokens, shortest first, each with the
    /// lifetime it asks for.
    pub fn writes_after(&self, cached: usize) -> Vec<(Place, Duration)> {
        match &self.places {
            Places::Classic { block, min, ttl } => {
                let len = self.context.prompt.len();
                (cached / block + 1..=len / block)
                    .map(|n| n * block)
                    .filter(|at| *at >= *min)
                    .map(|at| (self.place(at), *ttl))
                    .collect()
            }
            Places::Breakpoints { writes, .. } => writes
                .iter()
                .filter(|(at, _)| *at > cached)
                .map(|(at, ttl)| (self.place(*at), *ttl))
                .collect(),
        }
    }

    /// The lifetime the prefix of `at` tokens is written with by this request, if it is.
    pub fn ttl_at(&self, at: usize) -> Option<Duration> {
        match &self.places {
            Places::Classic { block, min, ttl } => {
                (at >= *min && at.is_multiple_of(*block) && at <= self.context.prompt.len())
                    .then_some(*ttl)
            }
            Places::Breakpoints { writes, .. } => writes
                .iter()
                .find(|(place, _)| *place == at)
                .map(|(_, ttl)| *ttl),
        }
    }
}

/// The plan of `context`'s prompt under `sizes`; `None` when it is not cached at all (too
/// short, or explicit mode without an explicit breakpoint).
pub fn plan<'a>(context: &'a Context, key: &KeyParts, sizes: Sizes) -> Option<Plan<'a>> {
    let prompt = &context.prompt;
    let len = prompt.len();
    if len < sizes.min_tokens.max(1) {
        return None;
    }
    let (granularity, places) = match context.request.prompt_cache_options.as_ref() {
        None => {
            let ttl = match context.request.prompt_cache_retention.as_deref() {
                Some("24h") => TTL_24H,
                _ => sizes.in_memory_ttl,
            };
            let places = Places::Classic {
                block: sizes.block_tokens.max(1),
                min: sizes.min_tokens,
                ttl,
            };
            (Granularity::Classic, places)
        }
        Some(options) => {
            let implicit = options.get("mode").and_then(Value::as_str) != Some("explicit");
            let implicit_ttl = ttl_of(options.get("ttl"));
            let breakpoints = &prompt.breakpoints;
            let at = |end: u32| prompt.preamble.len() + end as usize;
            // The latest breakpoints, newest first, from the marks the render kept.
            let considered: Vec<(usize, Option<Duration>)> = if implicit {
                breakpoints
                    .marks
                    .iter()
                    .rev()
                    .map(|mark| (at(mark.end), mark.explicit))
                    .take_while(|(at, _)| *at >= sizes.min_tokens)
                    .take(CONSIDERED_BREAKPOINTS)
                    .collect()
            } else {
                breakpoints
                    .explicit
                    .iter()
                    .rev()
                    .map(|index| breakpoints.marks[*index as usize])
                    .map(|mark| (at(mark.end), mark.explicit))
                    .take_while(|(at, _)| *at >= sizes.min_tokens)
                    .take(CONSIDERED_BREAKPOINTS)
                    .collect()
            };
            if considered.is_empty() {
                return None;
            }
            let explicit = considered
                .iter()
                .filter_map(|(at, ttl)| ttl.map(|ttl| (*at, ttl)));
            let mut writes: Vec<(usize, Duration)> = if implicit {
                let newest = considered
                    .iter()
                    .find(|(_, ttl)| ttl.is_none())
                    .map(|(at, _)| (*at, implicit_ttl));
                newest
                    .into_iter()
                    .chain(explicit.take(WRITTEN_BREAKPOINTS - 1))
                    .collect()
            } else {
                explicit.take(WRITTEN_BREAKPOINTS).collect()
            };
            writes.sort_by_key(|(at, _)| *at);
            writes.dedup_by_key(|(at, _)| *at);
            let mut reads: Vec<usize> = considered.iter().map(|(at, _)| *at).collect();
            reads.reverse();
            (
                Granularity::Breakpoints,
                Places::Breakpoints { reads, writes },
            )
        }
    };
    Some(Plan {
        granularity,
        context,
        seed: key.seed(),
        places,
    })
}
