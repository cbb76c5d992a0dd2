//! An engine's stream acknowledged as it is read. An engine that writes without `TCP_NODELAY`
//! (axum's `serve` by default, so llmsim) sends its first small write at once and holds the
//! rest under Nagle's algorithm until that write is acknowledged; a receiver delaying its ACK
//! (Linux does, up to ~40 ms, once a connection's exchanges look interactive) then stalls every
//! streamed answer by that much. The connection Tether opens to an engine asks Linux, after each
//! read, to acknowledge what it has read now (`TCP_QUICKACK`, which Linux clears as it goes, so
//! it is set again each time): one system call a read, and the engine's stream flows whether it
//! set `TCP_NODELAY` or not.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// [`HttpConnector`]'s connections, acknowledging each read at once.
#[derive(Clone)]
pub struct QuickAckConnector(pub HttpConnector);

impl tower_service::Service<Uri> for QuickAckConnector {
    type Response = QuickAck;
    type Error = <HttpConnector as tower_service::Service<Uri>>::Error;
    type Future = Pin<Box<dyn Future<Output = Result<QuickAck, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.0.call(uri);
        Box::pin(async move { connecting.await.map(QuickAck) })
    }
}

/// A connection to an engine that acknowledges what it reads as soon as it has read it.
pub struct QuickAck(TokioIo<TcpStream>);

impl From<TcpStream> for QuickAck {
    /// A connection opened elsewhere (the rollout benchmark's direct client uses one, so that
    /// both of the paths it compares acknowledge alike).
    fn from(stream: TcpStream) -> Self {
        QuickAck(TokioIo::new(stream))
    }
}

impl QuickAck {
    /// Sends the ACK a read left pending now, and the next ones at once until Linux clears the
    /// flag again. Not a failure if it cannot: the stream only waits as it would have.
    fn acknowledge(&self) {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let _ = self.0.inner().set_quickack(true);
    }
}

impl Read for QuickAck {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let read = Pin::new(&mut this.0).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) {
            this.acknowledge();
        }
        read
    }
}

impl Write for QuickAck {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
    }
}

impl Connection for QuickAck {
    fn connected(&self) -> Connected {
        self.0.connected()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use http_body_util::BodyExt;
    use hyper::Request;
    use hyper_util::client::legacy::Client;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use crate::engine::body::Parts;
    use crate::engine::client::http_client;

    /// An engine as axum serves by default: no `TCP_NODELAY`, each event its own write — the
    /// head and the first event at once, then the rest as Nagle lets them go.
    async fn nagling_engine() -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            socket.set_nodelay(false).unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = socket.read(&mut buf).await.unwrap();
                if n == 0 {
                    return;
                }
                request.extend_from_slice(&buf[..n]);
                if !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    continue;
                }
                request.clear();
                let event = |text: &str| {
                    let data = format!("data: {text}\n\n");
                    format!("{:X}\r\n{data}\r\n", data.len())
                };
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                            transfer-encoding: chunked\r\n\r\n";
                socket.write_all(head.as_bytes()).await.unwrap();
                socket.write_all(event("first").as_bytes()).await.unwrap();
                for word in ["the", "rest", "of", "the", "answer"] {
                    socket.write_all(event(word).as_bytes()).await.unwrap();
                }
                socket.write_all(event("[DONE]").as_bytes()).await.unwrap();
                socket.write_all(b"0\r\n\r\n").await.unwrap();
            }
        });
        addr
    }

    /// Each of `turns` requests on one pooled connection of `client`, from the request to the
    /// stream's end.
    async fn turns<C>(client: &Client<C, Parts>, turns: usize) -> Vec<Duration>
    where
        C: hyper_util::client::legacy::connect::Connect + Clone + Send + Sync + 'static,
    {
        let addr = nagling_engine().await;
        let mut times = Vec::new();
        for _ in 0..turns {
            let started = Instant::now();
            let request = Request::get(format!("http://{addr}/"))
                .body(Parts::default())
                .unwrap();
            let body = client.request(request).await.unwrap().into_body();
            let text = body.collect().await.unwrap().to_bytes();
            assert!(text.ends_with(b"data: [DONE]\n\n"));
            times.push(started.elapsed());
        }
        times.sort();
        times
    }

    /// The premise checked, then the connector: over a plain connection (hyper's connector,
    /// `TCP_NODELAY` on our side) each exchange after the first waits for Linux's delayed ACK
    /// (at least 40 ms); over Tether's, none does. 20 ms is half the kernel's least delay, not a
    /// speed goal: an exchange that does not wait takes well under a millisecond here.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[tokio::test]
    async fn an_engine_that_holds_its_writes_for_an_ack_streams_without_waiting() {
        let median = |times: Vec<Duration>| times[times.len() / 2];
        let plain = Client::builder(hyper_util::rt::TokioExecutor::new()).build({
            let mut connector = hyper_util::client::legacy::connect::HttpConnector::new();
            connector.set_nodelay(true);
            connector
        });
        let waited = median(turns(&plain, 8).await);
        assert!(
            waited >= Duration::from_millis(30),
            "the engine's held writes waited for a delayed ACK: {waited:?}"
        );
        let ours = median(turns(&http_client(Duration::from_secs(5)), 8).await);
        assert!(
            ours < Duration::from_millis(20),
            "Tether's connection acknowledged at once: {ours:?}"
        );
    }
}
