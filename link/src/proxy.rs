//! The link as a TCP proxy (the `tether-link` binary of `harness/`): each accepted client is a
//! [`Shaped`] socket with a fixed link — what the client sends reaches the upstream over the up
//! direction, what the upstream answers reaches the client over the down direction — relayed
//! byte for byte, so HTTP, SSE and WebSocket upgrades pass through unchanged. A half-close
//! (FIN) is delivered after the bytes before it, with the same delay. The TCP handshake is not
//! delayed (the client's `connect` returns at once; its first byte pays the one-way delay).
//!
//! Bandwidth is **per connection** (each connection has its own two directions). The proxy
//! sets no serialisation budget: its operator chose the link.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};

use crate::model::LinkConfig;
use crate::shaped::Shaped;

/// Relays between `client` and `upstream` through the link, until both directions have
/// ended; returns the bytes carried up and down.
pub async fn relay<C, U>(client: C, mut upstream: U, link: LinkConfig) -> io::Result<(u64, u64)>
where
    C: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    U: AsyncRead + AsyncWrite + Unpin,
{
    let (read, write) = tokio::io::split(client);
    let mut client = Shaped::with_link(read, write, link, Duration::MAX);
    tokio::io::copy_bidirectional_with_sizes(&mut client, &mut upstream, 64 * 1024, 64 * 1024).await
}

/// Accepts connections on `listener` forever, relaying each to `upstream` through its own
/// link. A connection the upstream refuses is closed.
pub async fn serve(listener: TcpListener, upstream: SocketAddr, link: LinkConfig) {
    loop {
        let (client, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of fds, typically: wait rather than spin.
                eprintln!("tether-link: accept failed: {error}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        tokio::spawn(async move {
            let _ = client.set_nodelay(true);
            let Ok(server) = TcpStream::connect(upstream).await else {
                return;
            };
            let _ = server.set_nodelay(true);
            let _ = relay(client, server, link).await;
        });
    }
}

/// Binds `listen` and serves in a task; returns the bound address (port 0 picks one) and the
/// task (abort it to stop; open connections end with it).
pub async fn start(
    listen: SocketAddr,
    upstream: SocketAddr,
    link: LinkConfig,
) -> io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    Ok((addr, tokio::spawn(serve(listener, upstream, link))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, duplex};
    use tokio::time::Instant;

    fn link(rtt_ms: u64, up_mbit: Option<f64>, down_mbit: Option<f64>) -> LinkConfig {
        LinkConfig::new(Duration::from_millis(rtt_ms), up_mbit, down_mbit, None)
    }

    /// A client and a server end joined through the link; the relay runs in a task.
    fn through(link: LinkConfig) -> (tokio::io::DuplexStream, tokio::io::DuplexStream) {
        let (client, proxy_client_side) = duplex(256 * 1024);
        let (proxy_server_side, server) = duplex(256 * 1024);
        tokio::spawn(async move {
            let _ = relay(proxy_client_side, proxy_server_side, link).await;
        });
        (client, server)
    }

    #[tokio::test(start_paused = true)]
    async fn a_megabyte_at_8_mbit_takes_a_second_plus_half_the_rtt() {
        let (mut client, mut server) = through(link(40, Some(8.0), Some(100.0)));
        let started = Instant::now();
        let data: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        let sent = data.clone();
        tokio::spawn(async move {
            client.write_all(&sent).await.unwrap();
            client.shutdown().await.unwrap();
            // Keep the client's read side open until the test ends.
            let mut sink = Vec::new();
            let _ = client.read_to_end(&mut sink).await;
        });
        let mut received = Vec::new();
        server.read_to_end(&mut received).await.unwrap();
        let elapsed = started.elapsed();
        assert_eq!(received, data, "bytes arrive intact and in order");
        // 1,000,000 bytes × 8 / 8 Mbit/s = 1 s, then 20 ms of propagation.
        let expected = Duration::from_millis(1020);
        assert!(
            elapsed >= expected && elapsed < expected + Duration::from_millis(5),
            "{elapsed:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_small_exchange_takes_one_rtt() {
        let (mut client, mut server) = through(link(40, Some(20.0), Some(100.0)));
        tokio::spawn(async move {
            let mut request = [0u8; 100];
            server.read_exact(&mut request).await.unwrap();
            server.write_all(&[7u8; 200]).await.unwrap();
            let mut rest = Vec::new();
            let _ = server.read_to_end(&mut rest).await;
        });
        let started = Instant::now();
        client.write_all(&[1u8; 100]).await.unwrap();
        let mut response = [0u8; 200];
        client.read_exact(&mut response).await.unwrap();
        let elapsed = started.elapsed();
        assert_eq!(response, [7u8; 200]);
        // 40 ms of propagation, 40 µs + 16 µs of serialisation, up to 1 ms of timer each way.
        assert!(
            elapsed >= Duration::from_millis(40) && elapsed <= Duration::from_millis(43),
            "{elapsed:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn many_writes_arrive_in_order_and_the_buffer_bounds_what_is_held() {
        // 64 KiB of buffer at 1 Mbit/s: the sender is held back instead of the proxy reading
        // everything at once.
        let config = LinkConfig::new(Duration::from_millis(10), Some(1.0), None, Some(64 * 1024));
        let (mut client, mut server) = through(config);
        let total = 512 * 1024;
        let writer = tokio::spawn(async move {
            let started = Instant::now();
            for i in 0..(total / 1024) {
                client.write_all(&[(i % 256) as u8; 1024]).await.unwrap();
            }
            let written = started.elapsed();
            client.shutdown().await.unwrap();
            written
        });
        let started = Instant::now();
        let mut received = Vec::new();
        server.read_to_end(&mut received).await.unwrap();
        let elapsed = started.elapsed();
        assert_eq!(received.len(), total);
        for (i, chunk) in received.chunks(1024).enumerate() {
            assert!(chunk.iter().all(|b| *b == (i % 256) as u8), "chunk {i}");
        }
        // 512 KiB at 125,000 bytes/s = 4.19 s, plus 5 ms of propagation.
        let expected = Duration::from_secs_f64(524_288.0 / 125_000.0 + 0.005);
        assert!(
            elapsed >= expected && elapsed < expected + Duration::from_millis(5),
            "{elapsed:?}"
        );
        // The writer finishes once what is left fits in the client's pipe (256 KiB), the
        // proxy's buffer (64 KiB) and its copy buffer: after ~190 KiB went over the link, ~1.5 s.
        let written = writer.await.unwrap();
        assert!(
            written > Duration::from_millis(1300) && written < Duration::from_millis(1700),
            "{written:?}"
        );
    }
}
