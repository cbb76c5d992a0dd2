//! The failures an engine reports, by kind: a request can be made to fail with one (the
//! `x-tether-fail` header, `metadata.sim_fail`, a scenario step, the simulator's failure rates),
//! and each kind has the status and API error a real model server sends for it.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
