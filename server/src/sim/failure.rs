//! Failure injection: the errors a real model server returns ([`FailureKind`]), at configurable
//! rates drawn from the per-server seed, or forced per request (`x-tether-fail: TYPE`,
//! `metadata.sim_fail`, a scenario step).
//!
//! Refusals a server decides before decoding (rate limit, context length, invalid request) come
//! before the first token; a server error strikes mid-stream, after some output, so clients see
//! `error` then `response.failed` with a partial response.

use rand::RngExt;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};

use super::output::Output;
use crate::model::FailureKind;
use crate::tokenizer;

/// The probability of each failure per request; all zero by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FailureRates {
    pub rate_limit: f64,
    pub server_error: f64,
    pub context_length_exceeded: f64,
    pub invalid_request: f64,
}

impl FailureRates {
    fn rate(&self, kind: FailureKind) -> f64 {
        match kind {
            FailureKind::RateLimit => self.rate_limit,
            FailureKind::ServerError => self.server_error,
            FailureKind::ContextLengthExceeded => self.context_length_exceeded,
            FailureKind::InvalidRequest => self.invalid_request,
        }
    }

    /// Why the rates cannot be used, if they cannot: each in [0, 1], summing to at most 1.
    pub fn validate(&self) -> Result<(), String> {
        let mut total = 0.0;
        for kind in FailureKind::ALL {
            let rate = self.rate(kind);
            if !(0.0..=1.0).contains(&rate) {
                return Err(format!(
                    "{} must be between 0 and 1, got {rate}",
                    kind.name()
                ));
            }
            total += rate;
        }
        if total > 1.0 + 1e-9 {
            return Err(format!("failure rates sum to {total}, more than 1"));
        }
        Ok(())
    }

    /// The failure this request suffers, if any (one uniform draw).
    pub fn draw(&self, rng: &mut StdRng) -> Option<FailureKind> {
        let mut x: f64 = rng.random();
        for kind in FailureKind::ALL {
            let rate = self.rate(kind);
            if x < rate {
                return Some(kind);
            }
            x -= rate;
        }
        None
    }
}

/// Puts failure `kind` into the outputs: before anything for refusals, somewhere inside the
/// first output for a mid-stream failure (part of its text streams before the error).
pub fn inject(mut outputs: Vec<Output>, kind: FailureKind, rng: &mut StdRng) -> Vec<Output> {
    if !kind.is_mid_stream() {
        return vec![Output::Fail(kind)];
    }
    let Some(first) = outputs.first_mut() else {
        return vec![Output::Fail(kind)];
    };
    let text = match first {
        Output::Message(text) | Output::Reasoning(text) => text,
        Output::Call(call) => &mut call.input,
        Output::Fail(_) => return outputs,
    };
    let pieces: Vec<&str> = tokenizer::split(text).collect();
    let keep = if pieces.len() > 1 {
        rng.random_range(1..pieces.len())
    } else {
        pieces.len()
    };
    *text = pieces[..keep].concat();
    outputs.truncate(1);
    outputs.push(Output::Fail(kind));
    outputs
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn draws_follow_the_rates() {
        let rates = FailureRates {
            server_error: 0.25,
            ..FailureRates::default()
        };
        let mut rng = StdRng::seed_from_u64(3);
        let hits = (0..10_000)
            .filter(|_| rates.draw(&mut rng).is_some())
            .count();
        assert!((2300..2700).contains(&hits), "{hits}");
        assert_eq!(FailureRates::default().draw(&mut rng), None);
    }

    #[test]
    fn invalid_rates_are_refused() {
        let too_high = FailureRates {
            rate_limit: 1.5,
            ..FailureRates::default()
        };
        assert!(too_high.validate().is_err());
        let sum = FailureRates {
            rate_limit: 0.6,
            server_error: 0.6,
            ..FailureRates::default()
        };
        assert!(sum.validate().is_err());
        assert_eq!(FailureRates::default().validate(), Ok(()));
    }
}
