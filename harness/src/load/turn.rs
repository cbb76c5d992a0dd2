//! One turn of an agent, measured: a request over `tether-client` (WebSocket mode, or HTTP with
//! SSE), read to its terminal event, with the times the report needs (round trip, first event,
//! first token) and the outcome in the report's vocabulary ([`TurnError::key`]).
//!
//! The client decodes only a turn's terminal and `error` events; every other event is looked at
//! for its type alone, so the generator's own cost per event stays small.

use std::time::{Duration, Instant};

use tether_client::{Ending, Error, Finished, Frame, Http, WebSocket, wire};
use tether_protocol::{Response, ResponseCreate};

/// Why a turn (or a connection) failed; [`TurnError::key`] is how the report counts it.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnError {
    /// An `error` event or a failed response: the API error code.
    Api(String),
    /// A non-2xx HTTP answer (`code` from its JSON body, if any).
    Http {
        status: u16,
        code: Option<String>,
    },
    /// The WebSocket upgrade was answered with this status (401, 426, …).
    Upgrade(u16),
    /// The TCP connection or the handshake failed.
    Connect(String),
    /// The connection closed in the middle of a turn.
    Closed,
    Timeout,
    /// The response ended `incomplete`.
    Incomplete(String),
    /// Something the client cannot make sense of (bad JSON, no tool call to answer, …).
    Protocol(String),
}

impl TurnError {
    pub fn key(&self) -> String {
        match self {
            TurnError::Api(code) => format!("error:{code}"),
            TurnError::Http { status, code } => match code {
                Some(code) => format!("http_{status}:{code}"),
                None => format!("http_{status}"),
            },
            TurnError::Upgrade(status) => format!("upgrade_{status}"),
            TurnError::Connect(kind) => format!("connect:{kind}"),
            TurnError::Closed => "connection_closed".into(),
            TurnError::Timeout => "timeout".into(),
            TurnError::Incomplete(reason) => format!("incomplete:{reason}"),
            TurnError::Protocol(what) => format!("protocol:{what}"),
        }
    }

    /// Whether the connection cannot be used for another turn.
    pub fn breaks_connection(&self) -> bool {
        matches!(
            self,
            TurnError::Closed
                | TurnError::Timeout
                | TurnError::Connect(_)
                | TurnError::Upgrade(_)
                | TurnError::Protocol(_)
        ) || matches!(self, TurnError::Api(code) if code == "websocket_connection_limit_reached")
    }
}

impl From<Error> for TurnError {
    fn from(error: Error) -> TurnError {
        let code =
            |error: &tether_protocol::ApiError| error.code.clone().or_else(|| error.kind.clone());
        match error {
            Error::Api { error, .. } => {
                TurnError::Api(code(&error).unwrap_or_else(|| "unknown".into()))
            }
            Error::Failed { error, .. } => {
                TurnError::Api(code(&error).unwrap_or_else(|| "response_failed".into()))
            }
            Error::Http { status, error, .. } => TurnError::Http {
                status,
                code: error.as_deref().and_then(code),
            },
            Error::UpgradeRefused {
                status: Some(status),
                ..
            } => TurnError::Upgrade(status),
            Error::Connect { io: Some(kind), .. } => {
                TurnError::Connect(format!("{kind:?}").to_lowercase())
            }
            Error::Connect { detail, .. } => TurnError::Connect(detail),
            Error::Closed(_) => TurnError::Closed,
            error @ (Error::UpgradeRefused { .. }
            | Error::InvalidUrl { .. }
            | Error::Unsupported(_)
            | Error::Protocol(_)) => TurnError::Protocol(error.to_string()),
        }
    }
}

/// What a completed turn measured.
#[derive(Debug)]
pub struct TurnDone {
    pub response: Response,
    /// Request sent (just before the first byte is written) → terminal event received.
    pub round_trip: Duration,
    /// Request sent → first event received.
    pub first_event: Duration,
    /// Events received, the terminal one included.
    pub events: u64,
    /// The server's `generate` stage, if it reported its timings.
    pub generate: Option<Duration>,
    /// The server's other stages added up (load, resolve, render, validate, classify, persist,
    /// bill), if it reported its timings.
    pub other_stages: Option<Duration>,
    /// Request sent → the first event carrying a token (a text, arguments or reasoning delta).
    pub first_token: Option<Duration>,
    /// The server's whole timing summary (`tether_timing`), if it reported it.
    pub timing: Option<serde_json::Value>,
}

/// When a turn's first event and first token arrived.
#[derive(Debug, Default, Clone, Copy)]
struct Firsts {
    event: Option<Instant>,
    token: Option<Instant>,
}

impl Firsts {
    /// Notes `frame`'s arrival; reads the clock only while a first is still missing.
    fn saw(&mut self, frame: &Frame) {
        if self.token.is_some() {
            return;
        }
        let now = Instant::now();
        self.event.get_or_insert(now);
        if frame.carries_tokens() {
            self.token = Some(now);
        }
    }
}

/// Sends `request` on `ws` and reads to its terminal event (`response.done` when a v1 response
/// pauses), within `timeout`.
pub async fn ws_turn(
    ws: &mut WebSocket,
    request: &ResponseCreate,
    timeout: Duration,
) -> Result<TurnDone, TurnError> {
    ws_frame_turn(ws, wire::create_frame(request), timeout).await
}

/// Sends `frame` — a `response.create`, or a `response.append` resuming a paused response — on
/// `ws`'s default lane and reads to its terminal event, within `timeout`.
pub async fn ws_frame_turn(
    ws: &mut WebSocket,
    frame: String,
    timeout: Duration,
) -> Result<TurnDone, TurnError> {
    let started = Instant::now();
    let mut firsts = Firsts::default();
    let exchange = async {
        ws.send_text(frame).await?;
        ws.finish_with(None, |f| firsts.saw(f)).await
    };
    let finished = within(started, timeout, exchange).await?;
    finish(finished, started, firsts)
}

/// `POST /v1/responses` of `request`, streamed, on `http`, read as SSE to its terminal event,
/// within `timeout`.
pub async fn http_turn(
    http: &mut Http,
    request: &ResponseCreate,
    timeout: Duration,
) -> Result<TurnDone, TurnError> {
    http_body_turn(http, wire::http_body(request, true).into_bytes(), timeout).await
}

/// [`http_turn`] of a body the caller serialized (with `"stream": true`).
pub async fn http_body_turn(
    http: &mut Http,
    body: Vec<u8>,
    timeout: Duration,
) -> Result<TurnDone, TurnError> {
    let started = Instant::now();
    let mut firsts = Firsts::default();
    let exchange = async {
        let stream = http.stream_body(body).await?;
        stream.finish_with(|f| firsts.saw(f)).await
    };
    let finished = within(started, timeout, exchange).await?;
    finish(finished, started, firsts)
}

/// `work` with a deadline `timeout` after `started`.
async fn within<T>(
    started: Instant,
    timeout: Duration,
    work: impl Future<Output = Result<T, Error>>,
) -> Result<T, TurnError> {
    let deadline = tokio::time::Instant::from_std(started + timeout);
    match tokio::time::timeout_at(deadline, work).await {
        Ok(outcome) => outcome.map_err(TurnError::from),
        Err(_) => Err(TurnError::Timeout),
    }
}

fn finish(finished: Finished, started: Instant, firsts: Firsts) -> Result<TurnDone, TurnError> {
    if let Some(reason) = finished.incomplete_reason() {
        return Err(TurnError::Incomplete(reason.to_string()));
    }
    debug_assert!(matches!(
        finished.ending,
        Ending::Completed | Ending::Paused
    ));
    let now = Instant::now();
    let (generate, other_stages) = stage_times(finished.timing.as_ref());
    Ok(TurnDone {
        response: finished.response,
        round_trip: now - started,
        first_event: firsts.event.unwrap_or(now) - started,
        events: finished.events,
        generate,
        other_stages,
        first_token: firsts.token.map(|at| at - started),
        timing: finished.timing,
    })
}

/// `generate_us` and the other stages' sum from a `tether_timing` summary.
fn stage_times(timing: Option<&serde_json::Value>) -> (Option<Duration>, Option<Duration>) {
    let Some(stages) = timing
        .and_then(|t| t.get("stages"))
        .and_then(|s| s.as_object())
    else {
        return (None, None);
    };
    let mut generate = None;
    let mut other = 0u64;
    for (name, value) in stages {
        let us = value.as_u64().unwrap_or(0);
        if name == "generate_us" {
            generate = Some(Duration::from_micros(us));
        } else {
            other += us;
        }
    }
    (generate, Some(Duration::from_micros(other)))
}

/// Holds an idle connection until the server closes it (true) or `stop` fires (false; then
/// the client closes it). Pings are answered while it waits.
pub async fn hold(mut ws: WebSocket, mut stop: tokio::sync::watch::Receiver<bool>) -> bool {
    loop {
        tokio::select! {
            frame = ws.next() => if frame.is_err() {
                return true;
            },
            _ = stop.changed() => {
                ws.close().await;
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::ApiError;

    #[test]
    fn client_errors_keep_the_reports_vocabulary() {
        let refusal = Error::Api {
            status: Some(400),
            error: ApiError::invalid_request(Some("previous_response_not_found"), "m", None),
        };
        assert_eq!(
            TurnError::from(refusal).key(),
            "error:previous_response_not_found"
        );
        let http = Error::http(
            "http://h/v1/responses",
            429,
            br#"{"error":{"message":"m","type":"rate_limit_error","code":null}}"#,
        );
        assert_eq!(TurnError::from(http).key(), "http_429:rate_limit_error");
        let refused = Error::UpgradeRefused {
            url: "ws://h".into(),
            status: Some(426),
            error: None,
            detail: String::new(),
        };
        assert_eq!(TurnError::from(refused).key(), "upgrade_426");
        let connect = Error::Connect {
            url: "ws://h".into(),
            detail: "refused".into(),
            io: Some(std::io::ErrorKind::ConnectionRefused),
        };
        assert_eq!(TurnError::from(connect).key(), "connect:connectionrefused");
        assert_eq!(
            TurnError::from(Error::Closed("x".into())),
            TurnError::Closed
        );
        let limit = TurnError::Api("websocket_connection_limit_reached".into());
        assert!(limit.breaks_connection());
        assert!(!TurnError::Api("server_error".into()).breaks_connection());
    }

    #[test]
    fn splits_stage_timings() {
        let timing = serde_json::json!({"path": "ws_hit", "stages": {"render_us": 10, "generate_us": 500, "bill_us": 5}});
        assert_eq!(
            stage_times(Some(&timing)),
            (
                Some(Duration::from_micros(500)),
                Some(Duration::from_micros(15))
            )
        );
    }

    #[test]
    fn the_first_token_is_the_first_delta_that_carries_one() {
        let mut firsts = Firsts::default();
        firsts.saw(&Frame::new(r#"{"type":"response.created"}"#));
        assert!(firsts.event.is_some() && firsts.token.is_none());
        firsts.saw(&Frame::new(r#"{"type":"response.output_text.delta"}"#));
        let token = firsts.token.expect("a token");
        firsts.saw(&Frame::new(r#"{"type":"response.output_text.delta"}"#));
        assert_eq!(firsts.token, Some(token), "the first one stays");
        assert!(firsts.event.unwrap() <= token);
    }
}
