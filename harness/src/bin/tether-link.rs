//! `tether-link`: a TCP proxy that emulates a network link (RTT and bandwidth per direction)
//! with the `tether-link` crate's model, the one `tether-server` applies to the conditions a
//! client asks for; see `harness/README.md`.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;
use tether_link::{LinkConfig, proxy};

/// A user-space link emulator: a TCP proxy delaying every byte by RTT/2 each way, limited to a
/// bandwidth per direction and per connection (client→server: --up-mbit, server→client:
/// --down-mbit). Bytes pass unchanged, so HTTP, SSE and WebSocket upgrades work through it.
#[derive(Debug, Parser)]
#[command(name = "tether-link", version)]
struct Args {
    /// Address to listen on (port 0 picks a free port; the chosen address is printed).
    #[arg(long, default_value = "127.0.0.1:9090")]
    listen: SocketAddr,
    /// The server to relay to.
    #[arg(long, default_value = "127.0.0.1:8080")]
    upstream: String,
    /// Round-trip time added, in milliseconds (half each way).
    #[arg(long, default_value_t = 0.0)]
    rtt_ms: f64,
    /// Client→server bandwidth per connection, in Mbit/s (0: unlimited).
    #[arg(long, default_value_t = 0.0)]
    up_mbit: f64,
    /// Server→client bandwidth per connection, in Mbit/s (0: unlimited).
    #[arg(long, default_value_t = 0.0)]
    down_mbit: f64,
    /// Most KiB held per direction of a connection (queued for the link and in flight);
    /// default: 4 MiB or twice the bandwidth-delay product, whichever is more.
    #[arg(long)]
    buffer_kib: Option<usize>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    anyhow::ensure!(
        args.rtt_ms.is_finite() && args.rtt_ms >= 0.0,
        "--rtt-ms must be a non-negative number"
    );
    tether_harness::procfs::raise_nofile_limit();
    let upstream = tokio::net::lookup_host(&args.upstream)
        .await?
        .next()
        .ok_or_else(|| anyhow::anyhow!("{} resolves to no address", args.upstream))?;
    let config = LinkConfig::new(
        Duration::from_secs_f64(args.rtt_ms / 1000.0),
        Some(args.up_mbit),
        Some(args.down_mbit),
        args.buffer_kib.map(|k| k * 1024),
    );
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    let addr = listener.local_addr()?;
    let mbit = |m: f64| {
        if m > 0.0 {
            format!("{m} Mbit/s")
        } else {
            "unlimited".into()
        }
    };
    // The first line of stdout is the contract with scripts: the address to connect to.
    println!("tether-link listening on {addr}");
    println!(
        "upstream {upstream}; RTT {} ms; up {}, down {} per connection",
        args.rtt_ms,
        mbit(args.up_mbit),
        mbit(args.down_mbit)
    );
    tokio::select! {
        () = proxy::serve(listener, upstream, config) => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(())
}
