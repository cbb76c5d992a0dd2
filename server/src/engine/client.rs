//! The HTTP client Tether talks to upstreams with: hyper's pooled client over plain TCP
//! (`TCP_NODELAY`, a connect timeout, each read acknowledged at once: [`super::quick_ack`]),
//! keep-alive connections reused across requests, one request a connection at a time
//! (HTTP/1.1). Dropping a response's body closes its connection,
//! which is how an engine learns that a request was abandoned: vLLM, llama.cpp's server and
//! Ollama stop generating when the client's connection closes.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, USER_AGENT};
use hyper::{Request, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::body::Parts;
use super::failure::{UpstreamError, error_body, retry_after};
use super::quick_ack::QuickAckConnector;

/// The client: cheap to clone (one pool).
pub type HttpClient = Client<QuickAckConnector, Parts>;

/// A client whose connections open within `connect_timeout`.
pub fn http_client(connect_timeout: Duration) -> HttpClient {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.set_connect_timeout(Some(connect_timeout));
    connector.enforce_http(true);
    Client::builder(TokioExecutor::new())
        .pool_idle_timeout(Duration::from_secs(60))
        .build(QuickAckConnector(connector))
}

/// An API key, kept out of `Debug` and logs.
#[derive(Clone)]
pub struct Secret(std::sync::Arc<str>);

impl Secret {
    pub fn new(key: &str) -> Self {
        Secret(key.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// Bytes of an error response's body read at most.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

fn user_agent() -> String {
    format!("tether/{}", env!("CARGO_PKG_VERSION"))
}

/// What a failed connection attempt says, with its causes (`connection refused`, …).
fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

/// Sends `request` and waits for the response's head (at most `idle`); an error status is read
/// into [`UpstreamError::Status`].
async fn send(
    client: &HttpClient,
    request: Request<Parts>,
    idle: Duration,
) -> Result<Response<Incoming>, UpstreamError> {
    let response = match tokio::time::timeout(idle, client.request(request)).await {
        Err(_) => {
            return Err(UpstreamError::Timeout {
                waited: idle,
                streamed: false,
            });
        }
        Ok(Err(error)) if error.is_connect() => {
            return Err(UpstreamError::Connect(describe(&error)));
        }
        Ok(Err(error)) => {
            return Err(UpstreamError::Cut {
                chunks: 0,
                reason: describe(&error),
            });
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let wait = retry_after(
        response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
    );
    let body = tokio::time::timeout(
        idle,
        http_body_util::Limited::new(response.into_body(), ERROR_BODY_LIMIT).collect(),
    )
    .await
    .ok()
    .and_then(Result::ok)
    .map(|collected| collected.to_bytes())
    .unwrap_or_default();
    let (message, code) = error_body(&body);
    Err(UpstreamError::Status {
        status: status.as_u16(),
        message,
        code,
        retry_after: wait,
    })
}

/// `POST url` with a JSON `body`, asking for an event stream.
pub async fn post(
    client: &HttpClient,
    url: &str,
    body: Parts,
    key: Option<&Secret>,
    idle: Duration,
) -> Result<Response<Incoming>, UpstreamError> {
    let mut request = Request::post(url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "text/event-stream")
        .header(USER_AGENT, user_agent());
    if let Some(key) = key {
        request = request.header(AUTHORIZATION, format!("Bearer {}", key.expose()));
    }
    let request = request
        .body(body)
        .map_err(|e| UpstreamError::Connect(format!("invalid URL {url}: {e}")))?;
    send(client, request, idle).await
}

/// `GET url`, its body read whole (at most `idle`): the health probe's `/models`.
pub async fn get(
    client: &HttpClient,
    url: &str,
    key: Option<&Secret>,
    idle: Duration,
) -> Result<Bytes, UpstreamError> {
    let mut request = Request::get(url)
        .header(ACCEPT, "application/json")
        .header(USER_AGENT, user_agent());
    if let Some(key) = key {
        request = request.header(AUTHORIZATION, format!("Bearer {}", key.expose()));
    }
    let request = request
        .body(Parts::default())
        .map_err(|e| UpstreamError::Connect(format!("invalid URL {url}: {e}")))?;
    let response = send(client, request, idle).await?;
    let body = tokio::time::timeout(
        idle,
        http_body_util::Limited::new(response.into_body(), 4 << 20).collect(),
    )
    .await
    .map_err(|_| UpstreamError::Timeout {
        waited: idle,
        streamed: true,
    })?
    .map_err(|e| UpstreamError::Cut {
        chunks: 0,
        reason: e.to_string(),
    })?;
    Ok(body.to_bytes())
}
