//! A real server on 127.0.0.1 port 0 for integration tests, and a WebSocket client for it.
#![allow(dead_code)]

pub mod process;

use std::net::SocketAddr;
use std::path::Path;

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tether_server::{AppState, Config, app};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;

/// The configuration tests start from: every flag at its default, then a free port, no
/// playground, a fast default profile (100,000 tokens/s), a 1 MiB frame limit and seed 1.
pub fn config(data_dir: &str) -> Config {
    let mut config = Config::parse_from(["tether-server"]);
    config.addr = "127.0.0.1:0".parse().unwrap();
    config.static_dir = "does-not-exist".into();
    config.tokens_per_second = 100_000.0;
    config.data_dir = data_dir.into();
    config.max_frame_bytes = 1 << 20;
    config.seed = Some(1);
    config
}

/// A server running for one test; dropping it stops the server.
pub struct TestServer {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl TestServer {
    pub async fn start(data_dir: &str) -> Self {
        Self::start_with(config(data_dir)).await
    }

    pub async fn start_with(config: Config) -> Self {
        let router = app(AppState::new(&config).unwrap(), Path::new("does-not-exist"));
        let listener = tokio::net::TcpListener::bind(config.addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        // As `tether_server::serve` does: sockets that can carry a link, with TCP_NODELAY.
        let listener = tether_server::transport::link::Listener::new(listener);
        let task = tokio::spawn(async move {
            axum::serve(listener, tether_server::transport::link::service(router))
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        TestServer {
            addr,
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub async fn connect(&self) -> Client {
        connect(self.addr).await
    }

    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.take().unwrap().await.unwrap();
    }
}

/// A WebSocket client of the server at `addr`, with TCP_NODELAY like the server's side, and a
/// read buffer of 8 KiB: tungstenite zero-fills the buffer's free space before every read, and
/// at its default 128 KiB that memset costs more than the frames a test client reads.
pub async fn connect(addr: SocketAddr) -> Client {
    connect_to(addr, "/v1/responses").await
}

/// A WebSocket client of `/v1/responses` at `addr` whose upgrade request carries `headers`.
pub async fn connect_with_headers(addr: SocketAddr, headers: &[(&str, &str)]) -> Client {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = format!("ws://{addr}/v1/responses")
        .into_client_request()
        .unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(8 * 1024);
    let (socket, _) = tokio_tungstenite::connect_async_with_config(request, Some(config), true)
        .await
        .expect("upgrade");
    Client { socket }
}

/// A WebSocket client of `path_and_query` (e.g. `/v1/responses?tether_timing=1`) at `addr`.
pub async fn connect_to(addr: SocketAddr, path_and_query: &str) -> Client {
    let url = format!("ws://{addr}{path_and_query}");
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(8 * 1024);
    let (socket, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), true)
        .await
        .expect("upgrade");
    Client { socket }
}

pub type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

pub struct Client {
    pub socket: Socket,
}

impl Client {
    pub async fn send(&mut self, text: &str) {
        self.socket.send(Message::Text(text.into())).await.unwrap();
    }

    pub async fn next_json(&mut self) -> Value {
        let message = tokio::time::timeout(std::time::Duration::from_secs(10), self.socket.next())
            .await
            .unwrap_or_else(|_| panic!("an event within 10 s"))
            .expect("connection open")
            .expect("valid frame");
        match message {
            Message::Text(text) => serde_json::from_str(&text).expect("events are JSON"),
            other => panic!("unexpected frame {other:?}"),
        }
    }

    /// Reads events up to and including the terminal one.
    pub async fn response_events(&mut self) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let event = self.next_json().await;
            let terminal = matches!(
                event["type"].as_str(),
                Some("response.completed" | "response.failed" | "response.incomplete")
            );
            events.push(event);
            if terminal {
                return events;
            }
        }
    }
}

impl TestServer {
    /// The body of `GET path` over plain HTTP/1.1.
    pub async fn get_text(&self, path: &str) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = TcpStream::connect(self.addr).await.unwrap();
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    }

    /// `POST path` with a JSON body; the response body as JSON, whatever the status.
    pub async fn post_json(&self, path: &str, body: &Value) -> Value {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let body = body.to_string();
        let mut stream = TcpStream::connect(self.addr).await.unwrap();
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        let (_, payload) = response.split_once("\r\n\r\n").expect("an HTTP response");
        serde_json::from_str(payload).unwrap_or_else(|_| panic!("not JSON: {response}"))
    }

    /// The value of a Prometheus series in `/metrics`.
    pub async fn metric(&self, series: &str) -> u64 {
        let text = self.get_text("/metrics").await;
        text.lines()
            .find_map(|line| {
                line.strip_prefix(series)?
                    .strip_prefix(' ')?
                    .trim()
                    .parse()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no series {series} in {text}"))
    }
}

/// The raw reply (status line, headers, body) to `GET path` at `addr`, over HTTP/1.1.
pub async fn http_get(addr: SocketAddr, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
}

/// `method uri` with a JSON `body` through `router`, without a socket: the status and the
/// answer's text.
pub async fn oneshot(
    router: &axum::Router,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> (axum::http::StatusCode, String) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let request = axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(body.map_or_else(axum::body::Body::empty, |b| {
            axum::body::Body::from(b.to_string())
        }))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

/// [`oneshot`], its answer read as JSON.
pub async fn oneshot_json(
    router: &axum::Router,
    method: &str,
    uri: &str,
    body: Option<Value>,
) -> (axum::http::StatusCode, Value) {
    let (status, text) = oneshot(router, method, uri, body).await;
    let value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
    (status, value)
}

/// A router over a fresh in-memory server whose default profile decodes `tokens_per_second`.
pub fn router_at(tokens_per_second: f64) -> axum::Router {
    let mut config = config(":memory:");
    config.tokens_per_second = tokens_per_second;
    app(AppState::new(&config).unwrap(), Path::new("does-not-exist"))
}
