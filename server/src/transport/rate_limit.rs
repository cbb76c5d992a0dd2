//! The per-project rate limits (`crate::tenancy::limits`) on the wire, as the reference
//! answers them. Every `/v1` response of a limited server carries where the request's project
//! stands — `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` for each limit that is on,
//! the resets as Go durations (`1s`, `6m0s`, `20ms`) — and a refused request gets 429 with the
//! API's error body (`type` `requests` or `tokens`, code `rate_limit_exceeded`), `retry-after`
//! (whole seconds, rounded up) and `retry-after-ms`, which openai-python reads first.
//!
//! Over HTTP, `POST /v1/responses` is counted here, before its body is read; in WebSocket mode
//! each `response.create` is counted as its lane takes it, and a refused one gets an error
//! frame on its lane ([`failure`]) while the connection goes on.

use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tether_protocol::ApiError;

use crate::AppState;
use crate::error::ApiFailure;
use crate::tenancy::Project;
use crate::tenancy::limits::{Limited, Quota, Resource, Snapshot};

/// Counts `POST /v1/responses` against its project's limits (429 when refused) and adds the
/// rate-limit headers to every response of a limited server. Runs after authentication, which
/// put the request's [`Project`] in its extensions.
pub async fn enforce(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let limits = state.rate_limits.clone();
    let Some(project) = request.extensions().get::<Project>().cloned() else {
        return next.run(request).await;
    };
    if !limits.is_on() {
        return next.run(request).await;
    }
    let counted = request.method() == Method::POST && request.uri().path() == "/v1/responses";
    let snapshot = if counted {
        match limits.admit(&project) {
            Ok(snapshot) => Some(snapshot),
            Err(limited) => return too_many_requests(&project, &limited),
        }
    } else {
        None
    };
    let mut response = next.run(request).await;
    let snapshot = snapshot.unwrap_or_else(|| limits.snapshot(&project));
    add_headers(response.headers_mut(), &snapshot);
    response
}

/// The error a request of `project` refused by a limit gets (over HTTP with
/// [`too_many_requests`]'s headers, in WebSocket mode as an error frame).
pub fn failure(project: &Project, limited: &Limited) -> ApiFailure {
    let quota = limited.quota();
    let per_minute = match limited.resource {
        Resource::Requests => "requests per min (RPM)",
        Resource::Tokens => "tokens per min (TPM)",
    };
    let message = format!(
        "Rate limit reached in project {} on {per_minute}: Limit {}, Remaining {}. Please try \
         again in {}.",
        project.as_str(),
        quota.limit,
        quota.remaining,
        go_duration(limited.retry_after),
    );
    ApiFailure::new(
        429,
        ApiError {
            kind: Some(limited.resource.name().to_string()),
            code: Some("rate_limit_exceeded".to_string()),
            message,
            param: None,
        },
    )
}

/// 429 with the error body, the rate-limit headers and when to retry.
fn too_many_requests(project: &Project, limited: &Limited) -> Response {
    let mut response = failure(project, limited).into_response();
    let headers = response.headers_mut();
    add_headers(headers, &limited.snapshot);
    let wait = limited.retry_after;
    let seconds = wait.as_nanos().div_ceil(1_000_000_000).max(1);
    let millis = wait.as_nanos().div_ceil(1_000_000).max(1);
    headers.insert("retry-after", HeaderValue::from(seconds as u64));
    headers.insert("retry-after-ms", HeaderValue::from(millis as u64));
    response
}

/// The rate-limit headers that expose where a project stands, for CORS
/// (`Access-Control-Expose-Headers`): a page on another origin may read them.
pub const HEADERS: [&str; 8] = [
    "x-ratelimit-limit-requests",
    "x-ratelimit-remaining-requests",
    "x-ratelimit-reset-requests",
    "x-ratelimit-limit-tokens",
    "x-ratelimit-remaining-tokens",
    "x-ratelimit-reset-tokens",
    "retry-after",
    "retry-after-ms",
];

fn add_headers(headers: &mut HeaderMap, snapshot: &Snapshot) {
    let mut add = |suffix: &str, quota: Option<Quota>| {
        let Some(quota) = quota else {
            return;
        };
        let name = |what: &str| {
            HeaderName::try_from(format!("x-ratelimit-{what}-{suffix}")).expect("a valid name")
        };
        headers.insert(name("limit"), HeaderValue::from(quota.limit));
        headers.insert(name("remaining"), HeaderValue::from(quota.remaining));
        let reset = HeaderValue::try_from(go_duration(quota.reset)).expect("ASCII");
        headers.insert(name("reset"), reset);
    };
    add("requests", snapshot.requests);
    add("tokens", snapshot.tokens);
}

/// `d` as Go prints a duration, as the reference's reset headers are written: `0s`, `17ms`,
/// `1.5s`, `6m0s`, `1h2m3s` (rounded up to the millisecond).
pub fn go_duration(d: Duration) -> String {
    let millis = d.as_nanos().div_ceil(1_000_000);
    if millis == 0 {
        return "0s".to_string();
    }
    if millis < 1000 {
        return format!("{millis}ms");
    }
    let (hours, rest) = (millis / 3_600_000, millis % 3_600_000);
    let (minutes, rest) = (rest / 60_000, rest % 60_000);
    let (seconds, fraction) = (rest / 1000, rest % 1000);
    let seconds = if fraction == 0 {
        format!("{seconds}s")
    } else {
        let fraction = format!("{fraction:03}");
        format!("{seconds}.{}s", fraction.trim_end_matches('0'))
    };
    match (hours, minutes) {
        (0, 0) => seconds,
        (0, minutes) => format!("{minutes}m{seconds}"),
        (hours, minutes) => format!("{hours}h{minutes}m{seconds}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_written_as_go_writes_them() {
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_nanos(1), "1ms"),
            (Duration::from_millis(17), "17ms"),
            (Duration::from_millis(999), "999ms"),
            (Duration::from_secs(1), "1s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_millis(20_100), "20.1s"),
            (Duration::from_millis(20_125), "20.125s"),
            (Duration::from_secs(60), "1m0s"),
            (Duration::from_secs(360), "6m0s"),
            (Duration::from_millis(61_500), "1m1.5s"),
            (Duration::from_secs(3600), "1h0m0s"),
            (Duration::from_secs(3723), "1h2m3s"),
        ];
        for (duration, written) in cases {
            assert_eq!(go_duration(duration), written, "{duration:?}");
        }
    }
}
