//! The two lean clients of the load generator: WebSocket mode over `tokio-tungstenite`, and
//! HTTP/1.1 + SSE over a dedicated hyper connection per client. Both send one request and read
//! events up to the terminal one, looking only at each event's `type` — the terminal event
//! (and an `error` event) is the only one decoded in full, with `tether-protocol`'s types.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use tether_protocol::{ErrorBody, Response, ServerEvent, StreamEvent};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};

/// Where the server is: its socket address and the `/v1` base path, from `--url`.
#[derive(Debug, Clone)]
pub struct Target {
    pub addr: SocketAddr,
    /// `host:port` as written in the URL, for the `Host` header.
    pub authority: String,
    /// The path of `responses`, e.g. `/v1/responses`.
    pub responses_path: String,
    pub api_key: Option<String>,
    /// Ask for the server's stage timings (`x-tether-timing: 1`).
    pub timing: bool,
}

impl Target {
    /// Parses `http://host[:port][/prefix][/v1]` (or `ws://…`); TLS is not supported.
    pub async fn resolve(
        url: &str,
        api_key: Option<String>,
        timing: bool,
    ) -> anyhow::Result<Target> {
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| anyhow::anyhow!("--url must start with http:// (got '{url}')"))?;
        match scheme {
            "http" | "ws" => {}
            "https" | "wss" => anyhow::bail!("TLS is not supported: use http:// (got '{url}')"),
            other => anyhow::bail!("unsupported URL scheme '{other}' in '{url}'"),
        }
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let authority = authority.to_string();
        let with_port = if authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
            && !authority.ends_with(']')
        {
            authority.clone()
        } else {
            format!("{authority}:80")
        };
        let addr = tokio::net::lookup_host(&with_port)
            .await
            .map_err(|e| anyhow::anyhow!("cannot resolve {with_port}: {e}"))?
            .next()
            .ok_or_else(|| anyhow::anyhow!("{with_port} resolves to no address"))?;
        let base = path.trim_end_matches('/');
        let base = base.strip_suffix("/v1/responses").unwrap_or(base);
        let base = base.strip_suffix("/v1").unwrap_or(base);
        Ok(Target {
            addr,
            authority,
            responses_path: format!("{base}/v1/responses"),
            api_key,
            timing,
        })
    }
}

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

fn io_kind(error: &std::io::Error) -> String {
    format!("{:?}", error.kind()).to_lowercase()
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

/// Whether an event of type `kind` carries generated tokens.
fn carries_tokens(kind: &str) -> bool {
    matches!(
        kind,
        "response.output_text.delta"
            | "response.function_call_arguments.delta"
            | "response.custom_tool_call_input.delta"
            | "response.reasoning_summary_text.delta"
    )
}

/// The `type` of an event, without decoding the rest: the server writes `type` first, so a
/// prefix match almost always answers; anything else falls back to a partial decode.
pub fn event_type(text: &str) -> Cow<'_, str> {
    if let Some(rest) = text.strip_prefix(r#"{"type":""#)
        && let Some(end) = rest.find('"')
        && !rest[..end].contains('\\')
    {
        return Cow::Borrowed(&rest[..end]);
    }
    #[derive(Deserialize)]
    struct TypeOnly<'a> {
        #[serde(borrow, rename = "type")]
        kind: Cow<'a, str>,
    }
    match serde_json::from_str::<TypeOnly>(text) {
        Ok(TypeOnly { kind }) => kind,
        Err(_) => Cow::Borrowed(""),
    }
}

fn is_terminal(kind: &str) -> bool {
    matches!(
        kind,
        "response.completed" | "response.failed" | "response.incomplete" | "response.done"
    )
}

/// What an event means for the turn reading it.
enum Step {
    Continue,
    Done(Box<Response>, Option<serde_json::Value>),
    Failed(TurnError),
}

/// Reads one event's text: only the terminal and `error` events are decoded.
fn step(kind: &str, text: &str, pending_error: &mut Option<TurnError>) -> Step {
    if kind == "error" {
        let event: ServerEvent = match serde_json::from_str(text) {
            Ok(event) => event,
            Err(e) => return Step::Failed(TurnError::Protocol(format!("bad error event: {e}"))),
        };
        let StreamEvent::Error(frame) = &event.event else {
            return Step::Failed(TurnError::Protocol("bad error event".into()));
        };
        let error = frame.api_error();
        let code = error
            .code
            .or(error.kind)
            .unwrap_or_else(|| "unknown".into());
        // An error inside a running response (it has a sequence number) is followed by
        // `response.failed`; a refusal before the response started is all there is.
        if event.sequence_number.is_some() {
            *pending_error = Some(TurnError::Api(code));
            return Step::Continue;
        }
        return Step::Failed(TurnError::Api(code));
    }
    if !is_terminal(kind) {
        return Step::Continue;
    }
    let event: ServerEvent = match serde_json::from_str(text) {
        Ok(event) => event,
        Err(e) => return Step::Failed(TurnError::Protocol(format!("bad terminal event: {e}"))),
    };
    match event.event {
        StreamEvent::Completed { response } => Step::Done(Box::new(response), event.tether_timing),
        // v1's pause at client tool calls (`response.append` resumes it): the turn is done.
        StreamEvent::Done { response } => Step::Done(Box::new(response), event.tether_timing),
        StreamEvent::Incomplete { response } => Step::Failed(TurnError::Incomplete(
            response
                .incomplete_details
                .map_or_else(|| "unknown".into(), |d| d.reason),
        )),
        StreamEvent::Failed { response } => {
            Step::Failed(pending_error.take().unwrap_or_else(|| {
                TurnError::Api(
                    response
                        .error
                        .and_then(|e| e.code.or(e.kind))
                        .unwrap_or_else(|| "response_failed".into()),
                )
            }))
        }
        _ => Step::Failed(TurnError::Protocol(format!("unexpected {kind}"))),
    }
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

/// When a turn's first event and first token arrived.
#[derive(Debug, Default, Clone, Copy)]
struct Firsts {
    event: Option<Instant>,
    token: Option<Instant>,
}

impl Firsts {
    fn saw(&mut self, kind: &str) {
        let now = Instant::now();
        self.event.get_or_insert(now);
        if carries_tokens(kind) {
            self.token.get_or_insert(now);
        }
    }
}

fn finish(
    response: Response,
    timing: Option<serde_json::Value>,
    started: Instant,
    firsts: Firsts,
    events: u64,
) -> TurnDone {
    let now = Instant::now();
    let (generate, other_stages) = stage_times(timing.as_ref());
    TurnDone {
        response,
        round_trip: now - started,
        first_event: firsts.event.unwrap_or(now) - started,
        events,
        generate,
        other_stages,
        first_token: firsts.token.map(|at| at - started),
        timing,
    }
}

/// The read buffer of a WebSocket client: tungstenite zero-fills the buffer's free space
/// before every read, and at its default 128 KiB that costs more than the frames themselves.
const WS_READ_BUFFER: usize = 8 * 1024;

/// A WebSocket-mode connection.
pub struct WsConn {
    socket: WebSocketStream<TcpStream>,
}

impl WsConn {
    /// Connects (TCP_NODELAY) and completes the upgrade.
    pub async fn connect(target: &Target) -> Result<WsConn, TurnError> {
        WsConn::connect_with(target, None).await
    }

    /// Connects with `OpenAI-Beta: <beta>` on the upgrade (e.g. v1's
    /// `responses_websockets=2026-02-04`, whose responses pause at client tool calls).
    pub async fn connect_with(target: &Target, beta: Option<&str>) -> Result<WsConn, TurnError> {
        let stream = TcpStream::connect(target.addr)
            .await
            .map_err(|e| TurnError::Connect(io_kind(&e)))?;
        let _ = stream.set_nodelay(true);
        let url = format!("ws://{}{}", target.authority, target.responses_path);
        let mut request = url
            .into_client_request()
            .map_err(|e| TurnError::Connect(format!("bad url: {e}")))?;
        let headers = request.headers_mut();
        if let Some(key) = &target.api_key
            && let Ok(value) = format!("Bearer {key}").parse()
        {
            headers.insert("authorization", value);
        }
        if target.timing {
            headers.insert("x-tether-timing", "1".parse().expect("a valid header"));
        }
        if let Some(value) = beta.and_then(|beta| beta.parse().ok()) {
            headers.insert("openai-beta", value);
        }
        let config = WebSocketConfig::default().read_buffer_size(WS_READ_BUFFER);
        match tokio_tungstenite::client_async_with_config(request, stream, Some(config)).await {
            Ok((socket, _)) => Ok(WsConn { socket }),
            Err(tungstenite::Error::Http(response)) => {
                Err(TurnError::Upgrade(response.status().as_u16()))
            }
            Err(tungstenite::Error::Io(e)) => Err(TurnError::Connect(io_kind(&e))),
            Err(e) => Err(TurnError::Connect(format!("handshake: {e}"))),
        }
    }

    /// Sends one frame — a `response.create`, or a `response.append` resuming a paused
    /// response — and reads up to the terminal event (`response.done` when it pauses).
    pub async fn turn(&mut self, frame: String, timeout: Duration) -> Result<TurnDone, TurnError> {
        let started = Instant::now();
        let deadline = tokio::time::Instant::from_std(started + timeout);
        let mut firsts = Firsts::default();
        let mut events = 0u64;
        let mut pending_error = None;
        tokio::time::timeout_at(deadline, self.socket.send(Message::Text(frame.into())))
            .await
            .map_err(|_| TurnError::Timeout)?
            .map_err(|_| TurnError::Closed)?;
        loop {
            let message = tokio::time::timeout_at(deadline, self.socket.next())
                .await
                .map_err(|_| TurnError::Timeout)?;
            let text = match message {
                Some(Ok(Message::Text(text))) => text,
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return Err(TurnError::Closed),
                Some(Ok(_)) => continue, // pings are answered by tungstenite
            };
            events += 1;
            let kind = event_type(&text);
            firsts.saw(&kind);
            match step(&kind, &text, &mut pending_error) {
                Step::Continue => {}
                Step::Done(response, timing) => {
                    return Ok(finish(*response, timing, started, firsts, events));
                }
                Step::Failed(error) => return Err(error),
            }
        }
    }

    /// Waits for the connection to close (answering pings meanwhile); true if the server
    /// closed it, false if `stop` fired first (then the client closes it).
    pub async fn hold(mut self, mut stop: tokio::sync::watch::Receiver<bool>) -> bool {
        loop {
            tokio::select! {
                message = self.socket.next() => match message {
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => return true,
                    Some(Ok(_)) => {}
                },
                _ = stop.changed() => {
                    self.close().await;
                    return false;
                }
            }
        }
    }

    /// Sends a close frame (without waiting for the answer).
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(1), self.socket.close(None)).await;
    }
}

/// How long the end of an SSE body may lag behind its terminal event.
const BODY_END_WAIT: Duration = Duration::from_secs(5);

/// A dedicated HTTP/1.1 keep-alive connection (hyper's client connection, one per agent).
pub struct HttpConn {
    sender: SendRequest<Full<Bytes>>,
    /// The last response's body did not end after its terminal event: do not reuse.
    broken: bool,
}

impl HttpConn {
    pub async fn connect(target: &Target) -> Result<HttpConn, TurnError> {
        let stream = TcpStream::connect(target.addr)
            .await
            .map_err(|e| TurnError::Connect(io_kind(&e)))?;
        let _ = stream.set_nodelay(true);
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| TurnError::Connect(format!("handshake: {e}")))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(HttpConn {
            sender,
            broken: false,
        })
    }

    /// Whether the connection can take another request.
    pub fn is_closed(&self) -> bool {
        self.broken || self.sender.is_closed()
    }

    /// `POST /v1/responses` with `stream:true` in `body`; reads the SSE stream up to the
    /// terminal event.
    pub async fn turn(
        &mut self,
        target: &Target,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<TurnDone, TurnError> {
        let started = Instant::now();
        let deadline = tokio::time::Instant::from_std(started + timeout);
        tokio::time::timeout_at(deadline, self.exchange(target, body, started))
            .await
            .map_err(|_| TurnError::Timeout)?
    }

    async fn exchange(
        &mut self,
        target: &Target,
        body: Vec<u8>,
        started: Instant,
    ) -> Result<TurnDone, TurnError> {
        self.sender.ready().await.map_err(|_| TurnError::Closed)?;
        let mut request = hyper::Request::post(target.responses_path.as_str())
            .header("host", target.authority.as_str())
            .header("content-type", "application/json")
            .header("accept", "text/event-stream");
        if let Some(key) = &target.api_key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        if target.timing {
            request = request.header("x-tether-timing", "1");
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| TurnError::Protocol(format!("request: {e}")))?;
        let response = self
            .sender
            .send_request(request)
            .await
            .map_err(|_| TurnError::Closed)?;
        let status = response.status().as_u16();
        let mut body = response.into_body();
        if status != 200 {
            let bytes = body
                .collect()
                .await
                .map_err(|_| TurnError::Closed)?
                .to_bytes();
            let code = serde_json::from_slice::<ErrorBody>(&bytes)
                .ok()
                .and_then(|b| b.error.code.or(b.error.kind));
            return Err(TurnError::Http { status, code });
        }
        let mut sse = SseBuffer::default();
        let mut firsts = Firsts::default();
        let mut events = 0u64;
        let mut pending_error = None;
        loop {
            let frame = match body.frame().await {
                Some(Ok(frame)) => frame,
                Some(Err(_)) | None => return Err(TurnError::Closed),
            };
            let Ok(data) = frame.into_data() else {
                continue; // trailers
            };
            sse.push(&data);
            let mut outcome = None;
            sse.drain(|kind, data| {
                events += 1;
                firsts.saw(kind);
                match step(kind, data, &mut pending_error) {
                    Step::Continue => true,
                    Step::Done(response, timing) => {
                        outcome = Some(Ok((response, timing)));
                        false
                    }
                    Step::Failed(error) => {
                        outcome = Some(Err(error));
                        false
                    }
                }
            });
            match outcome {
                None => {}
                Some(result) => {
                    let result = result.map(|(response, timing)| {
                        finish(*response, timing, started, firsts, events)
                    });
                    // Read the rest of the body (its end), so the connection is reusable.
                    let rest = async { while let Some(Ok(_)) = body.frame().await {} };
                    if tokio::time::timeout(BODY_END_WAIT, rest).await.is_err() {
                        self.broken = true;
                    }
                    return result;
                }
            }
        }
    }
}

/// Accumulates an SSE body and cuts it into events (blocks ended by a blank line). Only the
/// `event:` name and the `data:` text are kept; comments (keep-alives) are skipped.
#[derive(Default)]
pub struct SseBuffer {
    buffer: Vec<u8>,
    /// Bytes already searched for a blank line.
    scanned: usize,
}

impl SseBuffer {
    pub fn push(&mut self, chunk: &[u8]) {
        self.buffer.extend_from_slice(chunk);
    }

    /// Calls `on_event(type, data)` for every complete event, while it returns true. The type
    /// is the `event:` field, else the JSON `type` of the data.
    pub fn drain(&mut self, mut on_event: impl FnMut(&str, &str) -> bool) {
        let mut start = 0;
        let mut from = self.scanned.saturating_sub(1).max(start);
        let mut go_on = true;
        while go_on {
            let Some(at) = find_blank_line(&self.buffer[from..]).map(|i| from + i) else {
                break;
            };
            let block = &self.buffer[start..at];
            let end = at + 2;
            if let Ok(block) = std::str::from_utf8(block) {
                let mut name = None;
                let mut data: Cow<str> = Cow::Borrowed("");
                for line in block.split('\n') {
                    let line = line.strip_suffix('\r').unwrap_or(line);
                    if let Some(value) = line.strip_prefix("event:") {
                        name = Some(value.strip_prefix(' ').unwrap_or(value));
                    } else if let Some(value) = line.strip_prefix("data:") {
                        let value = value.strip_prefix(' ').unwrap_or(value);
                        data = if data.is_empty() {
                            Cow::Borrowed(value)
                        } else {
                            Cow::Owned(format!("{data}\n{value}"))
                        };
                    }
                }
                if !data.is_empty() {
                    let kind = match name {
                        Some(name) => Cow::Borrowed(name),
                        None => event_type(&data),
                    };
                    go_on = on_event(&kind, &data);
                }
            }
            start = end;
            from = end;
        }
        self.buffer.drain(..start);
        // Stopped early: what is left has not all been handed out, so search it again.
        self.scanned = if go_on { self.buffer.len() } else { 0 };
    }
}

/// The offset of the first `\n\n` in `bytes`.
fn find_blank_line(bytes: &[u8]) -> Option<usize> {
    bytes.windows(2).position(|w| w == b"\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_type_from_the_prefix_or_the_json() {
        assert_eq!(
            event_type(r#"{"type":"response.output_text.delta","delta":"x"}"#),
            "response.output_text.delta"
        );
        assert_eq!(
            event_type(r#"{"sequence_number":1, "type":"response.created"}"#),
            "response.created"
        );
        assert_eq!(event_type("not json"), "");
    }

    #[test]
    fn cuts_sse_into_events_across_chunks() {
        let mut sse = SseBuffer::default();
        let mut seen = Vec::new();
        let stream = ": keep-alive\n\nevent: response.created\ndata: {\"type\":\"response.created\"}\n\ndata: {\"type\":\"x.y\"}\n\n";
        for chunk in stream.as_bytes().chunks(7) {
            sse.push(chunk);
            sse.drain(|kind, data| {
                seen.push((kind.to_string(), data.to_string()));
                true
            });
        }
        assert_eq!(
            seen,
            [
                (
                    "response.created".to_string(),
                    "{\"type\":\"response.created\"}".to_string()
                ),
                ("x.y".to_string(), "{\"type\":\"x.y\"}".to_string()),
            ]
        );
        assert!(sse.buffer.is_empty());
    }

    #[test]
    fn refusals_end_the_turn_and_running_errors_wait_for_failed() {
        let mut pending = None;
        let refusal = r#"{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"previous_response_not_found","message":"m","param":null}}"#;
        assert!(matches!(
            step("error", refusal, &mut pending),
            Step::Failed(TurnError::Api(code)) if code == "previous_response_not_found"
        ));
        let running = r#"{"type":"error","sequence_number":3,"status":500,"error":{"type":"server_error","code":"server_error","message":"m"}}"#;
        assert!(matches!(
            step("error", running, &mut pending),
            Step::Continue
        ));
        assert_eq!(pending, Some(TurnError::Api("server_error".into())));
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

    #[tokio::test]
    async fn parses_urls() {
        let t = Target::resolve("http://127.0.0.1:8080", None, true)
            .await
            .unwrap();
        assert_eq!(t.addr, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(t.responses_path, "/v1/responses");
        let t = Target::resolve("http://127.0.0.1:9/proxy/v1/", None, true)
            .await
            .unwrap();
        assert_eq!(t.responses_path, "/proxy/v1/responses");
        assert!(Target::resolve("https://x", None, true).await.is_err());
    }
}
