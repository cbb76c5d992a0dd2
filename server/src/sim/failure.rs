//! Failure injection: the errors a real model server returns, at configurable rates, forced per
//! request (`x-tether-fail: TYPE` on HTTP, a scenario step) or drawn from the per-server seed.
//!
//! Refusals a server decides before decoding (rate limit, context length, invalid request) come
//! before the first token; a server error strikes mid-stream, after some output, so clients see
//! `error` then `response.failed` with a partial response.

use rand::RngExt;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};
use tether_protocol::ApiError;

/// A kind of injected failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    RateLimit,
    ServerError,
    ContextLengthExceeded,
    InvalidRequest,
}

impl FailureKind {
    pub const ALL: [FailureKind; 4] = [
        FailureKind::RateLimit,
        FailureKind::ServerError,
        FailureKind::ContextLengthExceeded,
        FailureKind::InvalidRequest,
    ];

    /// The kind named `name` (`rate_limit`, `server_error`, `context_length_exceeded`,
    /// `invalid_request`).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.name() == name.trim())
    }

    pub fn name(self) -> &'static str {
        match self {
            FailureKind::RateLimit => "rate_limit",
            FailureKind::ServerError => "server_error",
            FailureKind::ContextLengthExceeded => "context_length_exceeded",
            FailureKind::InvalidRequest => "invalid_request",
        }
    }

    /// Whether the failure strikes after some output rather than before the first token.
    pub fn is_mid_stream(self) -> bool {
        self == FailureKind::ServerError
    }

    /// The status and API error a real server sends for this failure.
    pub fn error(self) -> (u16, ApiError) {
        match self {
            FailureKind::RateLimit => (429, rate_limit_exceeded("Rate limit reached (simulated).")),
            FailureKind::ServerError => (
                500,
                ApiError::server(
                    "The server had an error while processing your request (simulated).",
                ),
            ),
            FailureKind::ContextLengthExceeded => (
                400,
                ApiError::invalid_request(
                    Some("context_length_exceeded"),
                    "Your input exceeds the context window of this model (simulated).",
                    Some("input"),
                ),
            ),
            FailureKind::InvalidRequest => (
                400,
                ApiError::invalid_request(None, "Invalid request (simulated).", None),
            ),
        }
    }
}

/// A 429 `rate_limit_exceeded` error.
pub fn rate_limit_exceeded(message: &str) -> ApiError {
    ApiError {
        kind: Some("rate_limit_error".into()),
        code: Some("rate_limit_exceeded".into()),
        message: message.into(),
        param: None,
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn names_round_trip() {
        for kind in FailureKind::ALL {
            assert_eq!(FailureKind::parse(kind.name()), Some(kind));
        }
        assert_eq!(FailureKind::parse("nope"), None);
        assert_eq!(FailureKind::RateLimit.error().0, 429);
        assert_eq!(
            FailureKind::RateLimit.error().1.code.as_deref(),
            Some("rate_limit_exceeded")
        );
    }

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
