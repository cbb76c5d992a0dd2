//! The native backend: tokio sockets, hyper's HTTP/1.1 client connection (one per [`Http`],
//! kept alive) and tokio-tungstenite for WebSocket mode. Plain TCP only — put a TLS-terminating
//! proxy in front of a remote `https://` server, or use the browser backend.
//!
//! Every socket sets `TCP_NODELAY`, as the server does: small event frames must not wait
//! behind Nagle's algorithm.

mod http;
mod ws;

pub use http::{Http, SseStream};
pub(crate) use ws::WsConnection;

use std::net::SocketAddr;

use tokio::net::TcpStream;

use crate::endpoint::Endpoint;
use crate::error::Error;

impl Endpoint {
    /// Resolves the host once, so that every connection made from this endpoint goes to the
    /// same address without another lookup (the load generator opens thousands).
    pub async fn resolve(mut self) -> Result<Endpoint, Error> {
        self.addr = Some(lookup(&self).await?);
        Ok(self)
    }

    /// The socket address, when [`Endpoint::resolve`] found it.
    pub fn addr(&self) -> Option<SocketAddr> {
        self.addr
    }
}

/// The authority with its default port when it names none.
fn with_port(endpoint: &Endpoint) -> String {
    let authority = endpoint.authority();
    let has_port = !authority.ends_with(']')
        && authority
            .rsplit_once(':')
            .is_some_and(|(_, port)| port.parse::<u16>().is_ok());
    if has_port {
        authority.to_string()
    } else {
        format!(
            "{authority}:{}",
            if endpoint.is_secure() { 443 } else { 80 }
        )
    }
}

async fn lookup(endpoint: &Endpoint) -> Result<SocketAddr, Error> {
    let target = with_port(endpoint);
    let url = endpoint.url("");
    tokio::net::lookup_host(&target)
        .await
        .map_err(|error| Error::Connect {
            url: url.clone(),
            detail: format!("cannot resolve {target}: {error}"),
            io: Some(error.kind()),
        })?
        .next()
        .ok_or_else(|| Error::Connect {
            url,
            detail: format!("{target} resolves to no address"),
            io: None,
        })
}

/// A TCP connection to the endpoint's server, `TCP_NODELAY` set.
async fn connect_tcp(endpoint: &Endpoint, url: &str) -> Result<TcpStream, Error> {
    if endpoint.is_secure() {
        return Err(Error::Unsupported(format!(
            "{url}: the native client speaks plain HTTP and ws:// only; reach a TLS server \
             through a local TLS-terminating proxy"
        )));
    }
    let addr = match endpoint.addr {
        Some(addr) => addr,
        None => lookup(endpoint).await?,
    };
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|error| Error::Connect {
            url: url.to_string(),
            detail: error.to_string(),
            io: Some(error.kind()),
        })?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authority_without_a_port_gets_the_schemes() {
        let port = |url: &str| with_port(&Endpoint::new(url).unwrap());
        assert_eq!(port("http://h"), "h:80");
        assert_eq!(port("https://h/v1"), "h:443");
        assert_eq!(port("http://h:8080"), "h:8080");
        assert_eq!(port("http://[::1]"), "[::1]:80");
        assert_eq!(port("http://[::1]:9"), "[::1]:9");
    }

    #[tokio::test]
    async fn resolving_finds_the_address_and_tls_is_refused_clearly() {
        let endpoint = Endpoint::new("http://127.0.0.1:9")
            .unwrap()
            .resolve()
            .await
            .unwrap();
        assert_eq!(endpoint.addr(), Some("127.0.0.1:9".parse().unwrap()));
        let tls = Endpoint::new("https://127.0.0.1:9").unwrap();
        let error = connect_tcp(&tls, "https://127.0.0.1:9").await.unwrap_err();
        assert!(
            matches!(&error, Error::Unsupported(why) if why.contains("TLS")),
            "{error}"
        );
    }

    #[tokio::test]
    async fn nothing_listening_is_a_connect_error_naming_the_url() {
        // Bind a port, then free it: nothing listens there now.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let endpoint = Endpoint::new(&format!("http://127.0.0.1:{port}")).unwrap();
        let url = endpoint.responses_url();
        match connect_tcp(&endpoint, &url).await.unwrap_err() {
            Error::Connect { url: at, io, .. } => {
                assert_eq!(at, url);
                assert_eq!(io, Some(std::io::ErrorKind::ConnectionRefused));
            }
            other => panic!("{other:?}"),
        }
    }
}
