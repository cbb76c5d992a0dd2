//! A user-space link emulator: a TCP proxy that makes a loopback connection behave like a
//! network link with a round-trip time and a bandwidth in each direction (`tc netem` is not
//! available everywhere; this needs nothing from the kernel).
//!
//! Each direction of each connection is modelled as a link: bytes read from one side are cut
//! into segments of at most [`SEGMENT_BYTES`]; a segment starts serialising when it has arrived
//! and the link is free (a "link free at" clock), takes `bytes / bandwidth` to serialise, and
//! is delivered `RTT / 2` after its last byte was serialised. The writer delivers every segment
//! that is due in one write, so the proxy adds no batching beyond what the link itself causes.
//! Order is preserved (one queue per direction), bytes are never changed — WebSocket upgrades
//! and SSE pass through as they are — and a half-close (FIN) is delivered after the bytes before
//! it, with the same delay.
//!
//! Bandwidth is **per connection** (each connection has its own two links), and counts payload
//! bytes (TCP/IP headers are not modelled). Backpressure: each direction holds at most
//! `buffer_bytes` (queued for the link and in flight); beyond that the proxy stops reading, so
//! the sender's TCP window closes as it would behind a slow link. Timers are tokio's, which
//! have millisecond resolution: each delivery can be up to ~1 ms late. The TCP handshake is not
//! delayed (the client's `connect` returns at once; its first byte pays the one-way delay).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio::time::Instant;

/// The largest piece of data the link serialises as one unit (a TCP segment on Ethernet).
pub const SEGMENT_BYTES: usize = 1448;
/// The most read from a socket at once.
const READ_BYTES: usize = 64 * 1024;

/// One direction of a link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Direction {
    /// Propagation delay (RTT / 2).
    pub delay: Duration,
    /// Bandwidth in bytes per second; `None` is unlimited.
    pub bytes_per_second: Option<f64>,
    /// The most bytes held in this direction (queued plus in flight).
    pub buffer_bytes: usize,
}

/// Both directions of a link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkConfig {
    /// Client → server.
    pub up: Direction,
    /// Server → client.
    pub down: Direction,
}

impl LinkConfig {
    /// A link with round-trip time `rtt` (half each way) and bandwidths in Mbit/s (0 or
    /// `None`: unlimited); each direction holds at most `buffer_bytes`, by default
    /// [`default_buffer`] (enough for the link to stay busy).
    pub fn new(
        rtt: Duration,
        up_mbit: Option<f64>,
        down_mbit: Option<f64>,
        buffer_bytes: Option<usize>,
    ) -> Self {
        let direction = |mbit: Option<f64>| {
            let delay = rtt / 2;
            let bytes_per_second = mbit.filter(|m| *m > 0.0).map(|m| m * 1_000_000.0 / 8.0);
            Direction {
                delay,
                bytes_per_second,
                buffer_bytes: buffer_bytes
                    .unwrap_or_else(|| default_buffer(delay, bytes_per_second))
                    .max(4 * SEGMENT_BYTES),
            }
        };
        LinkConfig {
            up: direction(up_mbit),
            down: direction(down_mbit),
        }
    }
}

/// The default buffer of a direction: 4 MiB, or twice the bytes in flight over the delay
/// (the bandwidth-delay product) plus four reads, if that is more — so the proxy never stops
/// reading while the link could still be sending.
pub fn default_buffer(delay: Duration, bytes_per_second: Option<f64>) -> usize {
    let in_flight = bytes_per_second.map_or(0.0, |rate| rate * delay.as_secs_f64());
    (4 << 20).max(2 * in_flight as usize + 4 * READ_BYTES)
}

/// How much one read takes from the socket: at most a quarter of the buffer, so reading goes
/// on while earlier bytes are still in flight.
fn read_size(buffer_bytes: usize) -> usize {
    READ_BYTES.min(buffer_bytes / 4).max(1)
}

/// A segment on its way: its bytes and when they reach the other side.
struct Segment {
    due: Instant,
    data: Bytes,
}

/// Carries bytes from `from` to `to` through one direction of the link; at the end of `from`,
/// shuts `to` down (after the last bytes are delivered). Returns the bytes carried.
pub async fn carry<R, W>(mut from: R, mut to: W, link: Direction) -> io::Result<u64>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let read_size = read_size(link.buffer_bytes);
    let budget = Arc::new(Semaphore::new(link.buffer_bytes.max(read_size)));
    let (queue, mut arrivals) = mpsc::unbounded_channel::<Segment>();
    let reading = {
        let budget = budget.clone();
        async move {
            let mut buffer = vec![0u8; read_size];
            let mut free_at = Instant::now();
            let mut total = 0u64;
            loop {
                // Room for a whole read first: the proxy never holds more than the buffer.
                let permit = budget
                    .acquire_many(read_size as u32)
                    .await
                    .expect("the budget is never closed");
                let n = from.read(&mut buffer).await?;
                if n == 0 {
                    break;
                }
                permit.forget();
                budget.add_permits(read_size - n);
                total += n as u64;
                let arrived = Instant::now();
                for piece in buffer[..n].chunks(SEGMENT_BYTES) {
                    let start = free_at.max(arrived);
                    free_at = match link.bytes_per_second {
                        Some(rate) => start + Duration::from_secs_f64(piece.len() as f64 / rate),
                        None => start,
                    };
                    let segment = Segment {
                        due: free_at + link.delay,
                        data: Bytes::copy_from_slice(piece),
                    };
                    if queue.send(segment).is_err() {
                        return Ok(total); // the writer has failed; it reports why
                    }
                }
            }
            Ok::<u64, io::Error>(total)
        }
    };
    let writing = async move {
        let mut out = Vec::with_capacity(READ_BYTES);
        let mut carried: Option<Segment> = None;
        loop {
            let segment = match carried.take() {
                Some(segment) => segment,
                None => match arrivals.recv().await {
                    Some(segment) => segment,
                    None => break,
                },
            };
            tokio::time::sleep_until(segment.due).await;
            out.clear();
            out.extend_from_slice(&segment.data);
            let now = Instant::now();
            while let Ok(next) = arrivals.try_recv() {
                if next.due <= now {
                    out.extend_from_slice(&next.data);
                } else {
                    carried = Some(next);
                    break;
                }
            }
            to.write_all(&out).await?;
            budget.add_permits(out.len());
        }
        to.shutdown().await?;
        Ok::<(), io::Error>(())
    };
    let (total, ()) = tokio::try_join!(reading, writing)?;
    Ok(total)
}

/// Relays between `client` and `upstream` through the link, until both directions have
/// ended; returns the bytes carried up and down.
pub async fn relay<C, U>(client: C, upstream: U, link: LinkConfig) -> io::Result<(u64, u64)>
where
    C: AsyncRead + AsyncWrite + Unpin,
    U: AsyncRead + AsyncWrite + Unpin,
{
    let (client_read, client_write) = tokio::io::split(client);
    let (upstream_read, upstream_write) = tokio::io::split(upstream);
    tokio::try_join!(
        carry(client_read, upstream_write, link.up),
        carry(upstream_read, client_write, link.down)
    )
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
    use tokio::io::duplex;

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
        // The writer finishes once what is left fits in the client's pipe (256 KiB) and the
        // proxy's buffer (64 KiB): after 192 KiB went over the link, ~1.57 s.
        let written = writer.await.unwrap();
        assert!(
            written > Duration::from_millis(1400) && written < Duration::from_millis(1700),
            "{written:?}"
        );
    }
}
