//! The link emulator with real sockets: its delay through a real server (WebSocket and SSE),
//! and its bandwidth over loopback.

mod common;

use std::time::{Duration, Instant};

use common::{Server, assert_clean, load};
use tether_link::{LinkConfig, proxy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_through_a_40_ms_link_takes_40_ms_more_than_direct() {
    let server = Server::start(&[]).await;
    let config = LinkConfig::new(Duration::from_millis(40), Some(20.0), Some(100.0), None);
    let (proxy, proxy_task) = proxy::start("127.0.0.1:0".parse().unwrap(), server.addr, config)
        .await
        .unwrap();
    let direct_url = server.url();
    let linked_url = format!("http://{proxy}");
    let turns = |url: &str, transport: &'static str| {
        let url = url.to_string();
        async move {
            let report = load(&[
                "--url",
                &url,
                "--transport",
                transport,
                "--clients",
                "1",
                "--turns",
                "5",
                "--tool-output-tokens",
                "200",
            ])
            .await;
            assert_clean(&report, 5);
            report
        }
    };
    // WebSocket: the upgrade and every frame pass through the proxy. (A first run warms the
    // server up.)
    turns(&direct_url, "ws").await;
    let direct = turns(&direct_url, "ws").await;
    let linked = turns(&linked_url, "ws").await;
    let (d, l) = (direct.round_trip, linked.round_trip);
    // Every turn pays the RTT: the request frame up, the events down.
    assert!(l.min_ms >= 40.0, "linked {l:?}");
    assert!(l.p50_ms >= d.min_ms + 40.0, "direct {d:?}, linked {l:?}");
    assert!(
        l.p50_ms < d.p50_ms + 40.0 + 35.0,
        "direct {d:?}, linked {l:?}"
    );
    // The upgrade is one round trip over the link too.
    assert!(linked.connect.p50_ms >= 40.0, "{:?}", linked.connect);
    // SSE: streamed responses arrive intact through it.
    let linked_http = turns(&linked_url, "http").await;
    assert!(linked_http.round_trip.p50_ms >= 40.0);
    proxy_task.abort();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quarter_megabyte_at_8_mbit_over_loopback() {
    // A sink that reads everything, then answers with the byte count.
    let sink = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let sink_addr = sink.local_addr().unwrap();
    let sink_task = tokio::spawn(async move {
        let (mut socket, _) = sink.accept().await.unwrap();
        let mut received = Vec::new();
        socket.read_to_end(&mut received).await.unwrap();
        socket
            .write_all(&(received.len() as u64).to_le_bytes())
            .await
            .unwrap();
        received
    });
    let config = LinkConfig::new(Duration::from_millis(20), Some(8.0), None, None);
    let (proxy, proxy_task) = proxy::start("127.0.0.1:0".parse().unwrap(), sink_addr, config)
        .await
        .unwrap();
    let data: Vec<u8> = (0..250_000u32).map(|i| (i * 7 % 256) as u8).collect();
    let started = Instant::now();
    let mut client = tokio::net::TcpStream::connect(proxy).await.unwrap();
    client.write_all(&data).await.unwrap();
    client.shutdown().await.unwrap();
    let mut count = [0u8; 8];
    client.read_exact(&mut count).await.unwrap();
    let elapsed = started.elapsed();
    assert_eq!(u64::from_le_bytes(count), data.len() as u64);
    assert_eq!(sink_task.await.unwrap(), data, "intact and in order");
    // 250,000 bytes at 1,000,000 bytes/s = 0.25 s, plus one RTT (the FIN up, the count down).
    assert!(
        elapsed >= Duration::from_millis(270) && elapsed < Duration::from_millis(600),
        "{elapsed:?}"
    );
    proxy_task.abort();
}
