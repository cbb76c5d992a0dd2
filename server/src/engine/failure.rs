//! What can go wrong between Tether and an upstream, and what the client is told: every failure
//! becomes a status and an API error whose message names the upstream (its URL, never its key),
//! so a `response.failed` says which engine failed and how.

use std::time::Duration;

use tether_protocol::ApiError;

use crate::model::rate_limit_exceeded;

/// One way an upstream request failed.
#[derive(Debug, Clone, PartialEq)]
pub enum UpstreamError {
    /// The TCP connection could not be opened (refused, unreachable, connect timeout).
    Connect(String),
    /// The upstream answered with an error status before streaming anything.
    Status {
        status: u16,
        /// Its error message, when its body had one (OpenAI's shape, or plain text).
        message: String,
        /// Its error code, when it gave one.
        code: Option<String>,
        /// `retry-after`, when it said.
        retry_after: Option<Duration>,
    },
    /// The upstream went silent longer than the idle timeout.
    Timeout { waited: Duration, streamed: bool },
    /// The stream ended (or the connection broke) before the response was finished.
    Cut { chunks: usize, reason: String },
    /// The stream carried an error event (`{"error": …}`, `response.failed`).
    InStream {
        message: String,
        code: Option<String>,
    },
    /// The stream carried something this dialect cannot read.
    Malformed(String),
    /// Tether's queue for this upstream is full.
    QueueFull { running: usize, waiting: usize },
}

impl UpstreamError {
    /// Whether another attempt may help (only ever made while nothing has streamed).
    pub fn retryable(&self) -> bool {
        match self {
            UpstreamError::Connect(_) => true,
            UpstreamError::Status { status, .. } => matches!(status, 429 | 502 | 503 | 504),
            UpstreamError::Timeout { streamed, .. } => !streamed,
            UpstreamError::Cut { chunks, .. } => *chunks == 0,
            _ => false,
        }
    }

    /// A short name for the metrics' `outcome` label.
    pub fn outcome(&self) -> &'static str {
        match self {
            UpstreamError::Connect(_) => "connect_error",
            UpstreamError::Status { status: 429, .. } => "rate_limited",
            UpstreamError::Status { status, .. } if *status >= 500 => "server_error",
            UpstreamError::Status { .. } => "client_error",
            UpstreamError::Timeout { .. } => "timeout",
            UpstreamError::Cut { .. } => "cut",
            UpstreamError::InStream { .. } => "stream_error",
            UpstreamError::Malformed(_) => "malformed",
            UpstreamError::QueueFull { .. } => "queue_full",
        }
    }

    /// The status and error the client gets; `upstream` names the engine (its URL), and
    /// `secret`, the key Tether sent it, is blanked out of anything the upstream said.
    pub fn to_api(&self, upstream: &str, secret: Option<&str>) -> (u16, ApiError) {
        let clean = |text: &str| redact(text, secret);
        match self {
            UpstreamError::Connect(reason) => (
                503,
                engine_error(
                    "engine_unavailable",
                    format!(
                        "The engine at {upstream} cannot be reached: {}.",
                        clean(reason)
                    ),
                ),
            ),
            UpstreamError::Status {
                status: 429,
                message,
                retry_after,
                ..
            } => {
                let wait = retry_after
                    .map(|d| format!(" Retry after {} s.", d.as_secs_f64().ceil() as u64))
                    .unwrap_or_default();
                (
                    429,
                    rate_limit_exceeded(&format!(
                        "The engine at {upstream} is rate limiting requests (429): {}.{wait}",
                        clean(message).trim_end_matches('.')
                    )),
                )
            }
            UpstreamError::Status {
                status: status @ (401 | 403),
                ..
            } => (
                502,
                engine_error(
                    "engine_unauthorized",
                    format!(
                        "The engine at {upstream} refused Tether's credentials ({status}): check \
                         the API key its environment variable holds."
                    ),
                ),
            ),
            UpstreamError::Status {
                status,
                message,
                code,
                ..
            } if *status < 500 => (
                *status,
                ApiError {
                    kind: Some("invalid_request_error".into()),
                    code: code.clone(),
                    message: format!(
                        "The engine at {upstream} refused the request ({status}): {}",
                        clean(message)
                    ),
                    param: None,
                },
            ),
            UpstreamError::Status {
                status, message, ..
            } => (
                502,
                engine_error(
                    "engine_error",
                    format!(
                        "The engine at {upstream} failed ({status}): {}",
                        clean(message)
                    ),
                ),
            ),
            UpstreamError::Timeout { waited, streamed } => (
                504,
                engine_error(
                    "engine_timeout",
                    format!(
                        "The engine at {upstream} sent nothing for {:.1} s {} (its idle \
                         timeout).",
                        waited.as_secs_f64(),
                        if *streamed {
                            "in the middle of its response"
                        } else {
                            "before its first chunk"
                        }
                    ),
                ),
            ),
            UpstreamError::Cut { chunks, reason } => (
                502,
                engine_error(
                    "engine_stream_cut",
                    format!(
                        "The engine at {upstream} ended its stream before the response was \
                         finished (after {chunks} chunks): {}.",
                        clean(reason)
                    ),
                ),
            ),
            UpstreamError::InStream { message, code } => (
                502,
                ApiError {
                    code: code.clone().or_else(|| Some("engine_error".into())),
                    ..ApiError::server(format!(
                        "The engine at {upstream} failed in its stream: {}",
                        clean(message)
                    ))
                },
            ),
            UpstreamError::Malformed(what) => (
                502,
                engine_error(
                    "engine_bad_stream",
                    format!(
                        "The engine at {upstream} sent a stream Tether cannot read: {}",
                        clean(what)
                    ),
                ),
            ),
            UpstreamError::QueueFull { running, waiting } => (
                429,
                rate_limit_exceeded(&format!(
                    "The engine at {upstream} is busy: {running} requests run and {waiting} wait \
                     for it, as many as Tether lets wait (max_queue). Retry shortly."
                )),
            ),
        }
    }
}

fn engine_error(code: &str, message: String) -> ApiError {
    ApiError {
        code: Some(code.into()),
        ..ApiError::server(message)
    }
}

/// `text` without any occurrence of `secret` (an upstream may echo the key it was sent).
pub fn redact(text: &str, secret: Option<&str>) -> String {
    match secret.filter(|s| !s.is_empty()) {
        Some(secret) => text.replace(secret, "[redacted]"),
        None => text.to_string(),
    }
}

/// The message and code of an upstream's error body: OpenAI's `{"error": {"message", "code"}}`,
/// `{"error": "text"}` (llama.cpp, Ollama), `{"detail": …}` (FastAPI), `{"message": …}`, or the
/// body's text itself, cut to 500 characters.
pub fn error_body(body: &[u8]) -> (String, Option<String>) {
    let text = String::from_utf8_lossy(body);
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) {
        let error = value.get("error").unwrap_or(&value);
        let message = error
            .get("message")
            .or_else(|| value.get("detail"))
            .and_then(|m| {
                m.as_str()
                    .map(str::to_string)
                    .or_else(|| Some(m.to_string()))
            })
            .or_else(|| error.as_str().map(str::to_string));
        if let Some(message) = message {
            let code = error.get("code").and_then(|c| match c {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            });
            return (cut(&message), code);
        }
    }
    let text = text.trim();
    if text.is_empty() {
        ("(no body)".into(), None)
    } else {
        (cut(text), None)
    }
}

fn cut(text: &str) -> String {
    const MAX: usize = 500;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(MAX).collect::<String>())
    }
}

/// A `retry-after` header's wait: seconds (`"2"`, `"1.5"`); an HTTP date is not read.
pub fn retry_after(value: Option<&str>) -> Option<Duration> {
    let seconds: f64 = value?.trim().parse().ok()?;
    Duration::try_from_secs_f64(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_upstream_and_never_the_key() {
        let upstream = "http://127.0.0.1:9/v1";
        let (status, error) = UpstreamError::Status {
            status: 401,
            message: "Incorrect API key provided: sk-live-123".into(),
            code: None,
            retry_after: None,
        }
        .to_api(upstream, Some("sk-live-123"));
        assert_eq!(status, 502);
        assert!(error.message.contains(upstream), "{}", error.message);
        assert!(!error.message.contains("sk-live-123"));
        let (status, error) = UpstreamError::Status {
            status: 400,
            message: "bad key sk-live-123 in body".into(),
            code: Some("invalid_value".into()),
            retry_after: None,
        }
        .to_api(upstream, Some("sk-live-123"));
        assert_eq!(
            (status, error.code.as_deref()),
            (400, Some("invalid_value"))
        );
        assert!(error.message.contains("[redacted]") && !error.message.contains("sk-live"));
        let (status, error) = UpstreamError::Status {
            status: 429,
            message: "slow down".into(),
            code: None,
            retry_after: Some(Duration::from_millis(1500)),
        }
        .to_api(upstream, None);
        assert_eq!(status, 429);
        assert_eq!(error.code.as_deref(), Some("rate_limit_exceeded"));
        assert!(
            error.message.ends_with("Retry after 2 s."),
            "{}",
            error.message
        );
        let (status, error) = UpstreamError::Cut {
            chunks: 3,
            reason: "connection reset".into(),
        }
        .to_api(upstream, None);
        assert_eq!(
            (status, error.code.as_deref()),
            (502, Some("engine_stream_cut"))
        );
    }

    #[test]
    fn error_bodies_of_every_engine_are_read() {
        let openai = br#"{"error": {"message": "The model `x` does not exist.", "type": "NotFoundError", "code": 404}}"#;
        assert_eq!(
            error_body(openai),
            ("The model `x` does not exist.".into(), Some("404".into()))
        );
        assert_eq!(
            error_body(br#"{"error": "model not found"}"#).0,
            "model not found"
        );
        assert_eq!(error_body(br#"{"detail": "Not Found"}"#).0, "Not Found");
        assert_eq!(error_body(b"upstream exploded").0, "upstream exploded");
        assert_eq!(error_body(b"").0, "(no body)");
        assert_eq!(retry_after(Some("2")), Some(Duration::from_secs(2)));
        assert_eq!(retry_after(Some("Wed, 21 Oct 2015 07:28:00 GMT")), None);
    }

    #[test]
    fn only_failures_before_any_output_are_retried() {
        assert!(UpstreamError::Connect("refused".into()).retryable());
        assert!(
            UpstreamError::Cut {
                chunks: 0,
                reason: String::new()
            }
            .retryable()
        );
        assert!(
            !UpstreamError::Cut {
                chunks: 1,
                reason: String::new()
            }
            .retryable()
        );
        let status = |status| UpstreamError::Status {
            status,
            message: String::new(),
            code: None,
            retry_after: None,
        };
        assert!(status(503).retryable() && status(429).retryable());
        assert!(!status(400).retryable() && !status(500).retryable());
    }
}
