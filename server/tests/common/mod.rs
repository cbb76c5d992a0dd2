//! A real server on 127.0.0.1 port 0 for integration tests, and the project's own client
//! (`tether-client`) talking to it: its WebSocket for the frames a test sends and reads, its
//! HTTP for everything else. A test of the socket layer itself (pings, close codes, binary
//! frames) opens a raw tungstenite connection with [`connect_raw`].
#![allow(dead_code)]

pub mod llmsim;
pub mod process;
pub mod upstream;

use std::net::SocketAddr;
use std::path::Path;

use clap::Parser;
use serde_json::Value;
use tether_client::{Endpoint, Http, Reply, WebSocket};
use tether_server::{AppState, Config, app};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

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
        let state = AppState::new(&config).unwrap();
        let records = state.records.clone();
        let router = app(state, Path::new("does-not-exist"));
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
            // As `tether_server::serve` does: what was answered and is still queued for the
            // store and the ledger is written before the server is gone.
            records.drain().await;
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

    /// The server's base URL, as a client endpoint.
    pub fn endpoint(&self) -> Endpoint {
        endpoint(self.addr)
    }

    pub async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.take().unwrap().await.unwrap();
    }
}

/// The client's endpoint for the server at `addr`.
pub fn endpoint(addr: SocketAddr) -> Endpoint {
    Endpoint::new(&format!("http://{addr}")).unwrap()
}

/// A WebSocket client of the server at `addr`.
pub async fn connect(addr: SocketAddr) -> Client {
    connect_endpoint(endpoint(addr)).await
}

/// A WebSocket client of `/v1/responses` at `addr` whose upgrade request carries `headers`.
pub async fn connect_with_headers(addr: SocketAddr, headers: &[(&str, &str)]) -> Client {
    let endpoint = headers
        .iter()
        .fold(endpoint(addr), |endpoint, (name, value)| {
            endpoint.with_header(*name, *value)
        });
    connect_endpoint(endpoint).await
}

/// A WebSocket client whose upgrade URL's query is `query` (`tether_timing=1`, `model=…`:
/// names and values as the server reads them, encoded here).
pub async fn connect_with_query(addr: SocketAddr, query: &[(&str, &str)]) -> Client {
    let endpoint = query
        .iter()
        .fold(endpoint(addr), |endpoint, (name, value)| {
            endpoint.with_upgrade_query(name, value)
        });
    connect_endpoint(endpoint).await
}

pub async fn connect_endpoint(endpoint: Endpoint) -> Client {
    let ws = WebSocket::connect(&endpoint).await.expect("upgrade");
    Client { ws }
}

/// A raw tungstenite connection to `/v1/responses` at `addr`, for tests of what the client
/// handles for its callers: pings, close frames, binary frames.
pub async fn connect_raw(addr: SocketAddr) -> Socket {
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(8 * 1024);
    let url = format!("ws://{addr}/v1/responses");
    let (socket, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), true)
        .await
        .expect("upgrade");
    socket
}

pub type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

pub struct Client {
    pub ws: WebSocket,
}

impl Client {
    pub async fn send(&mut self, text: &str) {
        self.ws.send_text(text).await.unwrap();
    }

    /// The next event as JSON, within 10 s.
    pub async fn next_json(&mut self) -> Value {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(10), self.ws.next())
            .await
            .unwrap_or_else(|_| panic!("an event within 10 s"))
            .expect("connection open");
        serde_json::from_str(frame.text()).expect("events are JSON")
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

    /// Reads until the connection ends: the events before, and the code of the server's close
    /// frame (`None` when it ended without one), within 30 s.
    pub async fn until_close(&mut self) -> (Vec<Value>, Option<u16>) {
        let mut events = Vec::new();
        loop {
            let next = tokio::time::timeout(std::time::Duration::from_secs(30), self.ws.next())
                .await
                .expect("the server closes within 30 s");
            match next {
                Ok(frame) => events.push(serde_json::from_str(frame.text()).unwrap()),
                Err(_) => return (events, self.ws.close_code()),
            }
        }
    }
}

impl TestServer {
    /// `GET path`: the whole reply, whatever its status.
    pub async fn get(&self, path: &str) -> Reply {
        Http::new(&self.endpoint()).get(path).await.unwrap()
    }

    /// `POST path` with a JSON body; the response body as JSON, whatever the status.
    pub async fn post_json(&self, path: &str, body: &Value) -> Value {
        let reply = Http::new(&self.endpoint())
            .post_json(path, body.to_string())
            .await
            .unwrap();
        reply
            .json()
            .unwrap_or_else(|_| panic!("not JSON: {}", reply.text()))
    }

    /// The value of a Prometheus series in `/metrics`.
    pub async fn metric(&self, series: &str) -> u64 {
        let text = self.get("/metrics").await.text();
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

/// `method path` on `endpoint` with the JSON `body`, over a fresh connection: the whole reply,
/// whatever its status.
pub async fn request(endpoint: &Endpoint, method: &str, path: &str, body: Option<&Value>) -> Reply {
    Http::new(endpoint)
        .request(method, path, body.map(|body| body.to_string().into_bytes()))
        .await
        .unwrap()
}

/// `GET path` of the server at `addr` (a [`process::ServerProcess`]): the whole reply.
pub async fn http_get(addr: SocketAddr, path: &str) -> Reply {
    Http::new(&endpoint(addr)).get(path).await.unwrap()
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
