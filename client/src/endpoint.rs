//! Where a Tether server is, and what every request to it carries: its base URL, the API key,
//! the opt-ins (the server's stage timings, betas), any headers of the caller's own and any
//! query parameters every request's URL carries (e.g. the client-chosen conditions,
//! `tether_rtt_ms=40`, docs/server.md).
//!
//! One [`Endpoint`] serves both transports: clients derive the WebSocket URL from the HTTP base,
//! `http://host/v1` → `ws://host/v1/responses` (docs/protocol.md §1). A browser cannot set
//! headers on an upgrade, so there the opt-ins travel in the upgrade URL's query instead
//! ([`Endpoint::browser_websocket_url`]), which the server reads the same way.

use crate::error::Error;

/// A Tether (or any Responses API) server and how to talk to it.
///
/// ```
/// use tether_client::Endpoint;
///
/// let endpoint = Endpoint::new("http://127.0.0.1:8080/v1")?
///     .with_api_key("sk-test")
///     .with_timing(true);
/// assert_eq!(endpoint.responses_url(), "http://127.0.0.1:8080/v1/responses");
/// assert_eq!(endpoint.websocket_url(), "ws://127.0.0.1:8080/v1/responses");
/// # Ok::<(), tether_client::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `https` / `wss`.
    secure: bool,
    /// `host[:port]` as written in the URL (the `Host` header).
    authority: String,
    /// The path before `/v1`, without a trailing slash: `""` or e.g. `"/proxy"`.
    prefix: String,
    api_key: Option<String>,
    timing: bool,
    betas: Vec<String>,
    headers: Vec<(String, String)>,
    /// Parameters of every request URL's query (HTTP and the upgrade), encoded.
    query: Vec<String>,
    /// Parameters of the upgrade URL's query only, encoded.
    upgrade_query: Vec<String>,
    /// The socket address, once resolved (native only; see `Endpoint::resolve`).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) addr: Option<std::net::SocketAddr>,
}

/// The `OpenAI-Beta` value of v1 WebSocket mode: responses pause with `response.done` at
/// client tool calls and `response.append` resumes them (docs/protocol.md §9).
pub const APPEND_BETA: &str = "responses_websockets=2026-02-04";

/// The `OpenAI-Beta` value of the multi-agent beta: `response.inject` (docs/protocol.md §9).
pub const MULTI_AGENT_BETA: &str = "responses_multi_agent=v1";

impl Endpoint {
    /// Parses `http[s]://host[:port][/prefix][/v1[/responses]]` (`ws://` and `wss://` are read
    /// as `http://` and `https://`). A query or a fragment is refused: the URL names a server,
    /// and what a request carries is set on the endpoint.
    pub fn new(url: &str) -> Result<Endpoint, Error> {
        let invalid = |reason: &str| Error::InvalidUrl {
            url: url.to_string(),
            reason: reason.to_string(),
        };
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| invalid("it must start with http://, https://, ws:// or wss://"))?;
        let secure = match scheme.to_ascii_lowercase().as_str() {
            "http" | "ws" => false,
            "https" | "wss" => true,
            _ => return Err(invalid("the scheme must be http, https, ws or wss")),
        };
        if rest.contains(['?', '#']) {
            return Err(invalid(
                "a query or fragment is not part of a server's address; set the key, timing, \
                 betas and query parameters on the Endpoint (with_query)",
            ));
        }
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if authority.is_empty() {
            return Err(invalid("it names no host"));
        }
        if authority.contains('@') {
            return Err(invalid(
                "credentials in the URL are not supported; use with_api_key",
            ));
        }
        if let Some((_, port)) = authority.rsplit_once(':')
            && !authority.ends_with(']')
            && port.parse::<u16>().is_err()
        {
            return Err(invalid("the port must be a number from 0 to 65535"));
        }
        let base = path.trim_end_matches('/');
        let base = base.strip_suffix("/v1/responses").unwrap_or(base);
        let base = base.strip_suffix("/v1").unwrap_or(base);
        Ok(Endpoint {
            secure,
            authority: authority.to_string(),
            prefix: base.to_string(),
            api_key: None,
            timing: false,
            betas: Vec::new(),
            headers: Vec::new(),
            query: Vec::new(),
            upgrade_query: Vec::new(),
            #[cfg(not(target_arch = "wasm32"))]
            addr: None,
        })
    }

    /// Authenticates every request with `key` (`Authorization: Bearer`); a blank key is none.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Endpoint {
        let key = key.into();
        let key = key.trim();
        self.api_key = (!key.is_empty()).then(|| key.to_string());
        self
    }

    /// Asks for the server's per-stage timing summary (`x-tether-timing: 1`): the terminal
    /// event's `tether_timing` (docs/protocol.md §8), read by [`crate::Finished::timing`].
    pub fn with_timing(mut self, timing: bool) -> Endpoint {
        self.timing = timing;
        self
    }

    /// Asks for a beta feature on WebSocket upgrades (`OpenAI-Beta`), e.g. [`APPEND_BETA`].
    pub fn with_beta(mut self, beta: impl Into<String>) -> Endpoint {
        self.betas.push(beta.into());
        self
    }

    /// Sends `name: value` with every request and upgrade (natively; a browser sets only the
    /// headers fetch allows, and none on an upgrade).
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Endpoint {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Adds `name=value` to the query of every request's URL — each HTTP request and the
    /// WebSocket upgrade, on both backends — e.g. the conditions a Tether server started with
    /// `--allow-client-conditions` emulates (`tether_rtt_ms`, `tether_up_mbit`,
    /// `tether_down_mbit`, `tether_api_costs`; docs/server.md). Unlike a header, a browser can
    /// send it on an upgrade too.
    ///
    /// ```
    /// use tether_client::Endpoint;
    ///
    /// let endpoint = Endpoint::new("http://127.0.0.1:8080")?.with_query("tether_rtt_ms", "40");
    /// assert_eq!(
    ///     endpoint.request_url("/v1/responses"),
    ///     "http://127.0.0.1:8080/v1/responses?tether_rtt_ms=40"
    /// );
    /// assert_eq!(endpoint.upgrade_url(), "ws://127.0.0.1:8080/v1/responses?tether_rtt_ms=40");
    /// # Ok::<(), tether_client::Error>(())
    /// ```
    pub fn with_query(mut self, name: &str, value: &str) -> Endpoint {
        self.query
            .push(format!("{}={}", query_escape(name), query_escape(value)));
        self
    }

    /// Adds `name=value` to the WebSocket upgrade URL's query only, e.g. `model` (a gateway routes
    /// upgrades on `?model=`; Tether takes it as the connection's default model).
    pub fn with_upgrade_query(mut self, name: &str, value: &str) -> Endpoint {
        self.upgrade_query
            .push(format!("{}={}", query_escape(name), query_escape(value)));
        self
    }

    pub fn api_key(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    pub fn timing(&self) -> bool {
        self.timing
    }

    pub fn betas(&self) -> &[String] {
        &self.betas
    }

    /// `host[:port]` as written in the URL.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    pub fn is_secure(&self) -> bool {
        self.secure
    }

    /// The request target of `path` on this server: the URL's prefix, then `path`
    /// (`/v1/models` → `/proxy/v1/models`).
    pub fn path(&self, path: &str) -> String {
        format!("{}{path}", self.prefix)
    }

    /// The full HTTP URL of `path` (`/readyz` → `http://host:port/readyz`), without the
    /// endpoint's query parameters: the server's address, as errors name it.
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.secure { "https" } else { "http" };
        format!("{scheme}://{}{}", self.authority, self.path(path))
    }

    /// What an HTTP request for `path` asks for: [`Endpoint::path`] with the
    /// [`Endpoint::with_query`] parameters after any query `path` has of its own.
    pub fn request_target(&self, path: &str) -> String {
        with_query(self.path(path), self.query.iter().cloned())
    }

    /// The full URL an HTTP request for `path` goes to: [`Endpoint::url`] with the
    /// [`Endpoint::with_query`] parameters.
    pub fn request_url(&self, path: &str) -> String {
        with_query(self.url(path), self.query.iter().cloned())
    }

    /// `http://host/v1/responses`.
    pub fn responses_url(&self) -> String {
        self.url("/v1/responses")
    }

    /// `ws://host/v1/responses` (`wss` for a secure endpoint).
    pub fn websocket_url(&self) -> String {
        let scheme = if self.secure { "wss" } else { "ws" };
        format!(
            "{scheme}://{}{}",
            self.authority,
            self.path("/v1/responses")
        )
    }

    /// The URL a native upgrade requests: [`Endpoint::websocket_url`] with the
    /// [`Endpoint::with_query`] and [`Endpoint::with_upgrade_query`] parameters.
    pub fn upgrade_url(&self) -> String {
        with_query(
            self.websocket_url(),
            self.query.iter().chain(&self.upgrade_query).cloned(),
        )
    }

    /// The upgrade URL a browser opens: [`Endpoint::websocket_url`] with the opt-ins a page
    /// cannot send as headers — `tether_timing=1`, and each beta as `openai_beta=` — in its
    /// query, after the parameters of [`Endpoint::upgrade_url`]. The API key is never put there
    /// (it travels as a minted client secret).
    pub fn browser_websocket_url(&self) -> String {
        let mut params: Vec<String> = self
            .query
            .iter()
            .chain(&self.upgrade_query)
            .cloned()
            .collect();
        if self.timing {
            params.push("tether_timing=1".to_string());
        }
        for beta in &self.betas {
            params.push(format!("openai_beta={}", query_escape(beta)));
        }
        with_query(self.websocket_url(), params)
    }

    /// The headers every HTTP request carries: the key, the timing opt-in, the caller's own.
    pub(crate) fn request_headers(&self) -> Vec<(&str, String)> {
        let mut headers = Vec::with_capacity(2 + self.headers.len());
        if let Some(key) = &self.api_key {
            headers.push(("authorization", format!("Bearer {key}")));
        }
        if self.timing {
            headers.push(("x-tether-timing", "1".to_string()));
        }
        for (name, value) in &self.headers {
            headers.push((name.as_str(), value.clone()));
        }
        headers
    }

    /// The headers of a WebSocket upgrade: those of every request, and each beta.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn upgrade_headers(&self) -> Vec<(&str, String)> {
        let mut headers = self.request_headers();
        for beta in &self.betas {
            headers.push(("openai-beta", beta.clone()));
        }
        headers
    }
}

/// `url` with `params` (already encoded) added to its query (after any it has).
fn with_query(mut url: String, params: impl IntoIterator<Item = String>) -> String {
    for param in params {
        url.push(if url.contains('?') { '&' } else { '?' });
        url.push_str(&param);
    }
    url
}

/// `text` percent-encoded for a query value (everything but unreserved characters).
fn query_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `url` as it may be shown: without its query.
pub fn shown_url(url: &str) -> &str {
    url.split_once('?').map_or(url, |(base, _)| base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_name_the_server_whatever_their_suffix() {
        for url in [
            "http://127.0.0.1:8080",
            "http://127.0.0.1:8080/",
            "http://127.0.0.1:8080/v1",
            "http://127.0.0.1:8080/v1/",
            "http://127.0.0.1:8080/v1/responses",
            "ws://127.0.0.1:8080/v1/responses",
        ] {
            let endpoint = Endpoint::new(url).unwrap();
            assert_eq!(
                endpoint.responses_url(),
                "http://127.0.0.1:8080/v1/responses",
                "{url}"
            );
            assert_eq!(endpoint.websocket_url(), "ws://127.0.0.1:8080/v1/responses");
            assert_eq!(endpoint.authority(), "127.0.0.1:8080");
        }
        let proxied = Endpoint::new("https://t.example/proxy/v1").unwrap();
        assert!(proxied.is_secure());
        assert_eq!(proxied.path("/v1/models"), "/proxy/v1/models");
        assert_eq!(proxied.url("/readyz"), "https://t.example/proxy/readyz");
        assert_eq!(
            proxied.websocket_url(),
            "wss://t.example/proxy/v1/responses"
        );
        let ipv6 = Endpoint::new("http://[::1]:9/v1").unwrap();
        assert_eq!(ipv6.responses_url(), "http://[::1]:9/v1/responses");
    }

    #[test]
    fn bad_urls_say_what_is_wrong() {
        let reason = |url: &str| match Endpoint::new(url) {
            Err(Error::InvalidUrl { reason, .. }) => reason,
            other => panic!("{url}: {other:?}"),
        };
        assert!(reason("127.0.0.1:8080").contains("must start with"));
        assert!(reason("ftp://h").contains("scheme"));
        assert!(reason("http://").contains("no host"));
        assert!(reason("http://h:port").contains("port"));
        assert!(reason("http://h:70000").contains("port"));
        assert!(reason("http://h/v1?api_key=x").contains("query"));
        assert!(reason("http://user:pw@h").contains("credentials"));
    }

    #[test]
    fn requests_carry_the_key_the_opt_ins_and_the_callers_headers() {
        let endpoint = Endpoint::new("http://h:1")
            .unwrap()
            .with_api_key("  sk-1 ")
            .with_timing(true)
            .with_beta(APPEND_BETA)
            .with_header("x-tether-fail", "server_error");
        assert_eq!(endpoint.api_key(), Some("sk-1"));
        assert_eq!(
            endpoint.request_headers(),
            [
                ("authorization", "Bearer sk-1".to_string()),
                ("x-tether-timing", "1".to_string()),
                ("x-tether-fail", "server_error".to_string()),
            ]
        );
        #[cfg(not(target_arch = "wasm32"))]
        assert_eq!(
            endpoint.upgrade_headers().last(),
            Some(&("openai-beta", APPEND_BETA.to_string()))
        );
        assert_eq!(
            Endpoint::new("http://h")
                .unwrap()
                .with_api_key(" ")
                .api_key(),
            None
        );
    }

    #[test]
    fn a_browser_upgrade_carries_the_opt_ins_in_its_query_and_never_the_key() {
        let endpoint = Endpoint::new("http://h:1/v1")
            .unwrap()
            .with_api_key("sk-secret")
            .with_timing(true)
            .with_beta(APPEND_BETA);
        let url = endpoint.browser_websocket_url();
        assert_eq!(
            url,
            "ws://h:1/v1/responses?tether_timing=1&openai_beta=responses_websockets%3D2026-02-04"
        );
        assert!(!url.contains("sk-secret"));
        assert_eq!(
            Endpoint::new("http://h").unwrap().browser_websocket_url(),
            "ws://h/v1/responses"
        );
    }

    #[test]
    fn upgrade_query_parameters_are_encoded_on_both_backends() {
        let endpoint = Endpoint::new("http://h")
            .unwrap()
            .with_upgrade_query("model", "gpt-5.6+mini")
            .with_timing(true);
        assert_eq!(
            endpoint.upgrade_url(),
            "ws://h/v1/responses?model=gpt-5.6%2Bmini"
        );
        assert_eq!(
            endpoint.browser_websocket_url(),
            "ws://h/v1/responses?model=gpt-5.6%2Bmini&tether_timing=1"
        );
    }

    #[test]
    fn query_parameters_go_on_every_request_and_the_upgrade() {
        let endpoint = Endpoint::new("http://h/proxy/v1")
            .unwrap()
            .with_query("tether_rtt_ms", "40")
            .with_query("tether_api_costs", "hosted")
            .with_upgrade_query("model", "spark")
            .with_timing(true);
        let conditions = "tether_rtt_ms=40&tether_api_costs=hosted";
        assert_eq!(
            endpoint.request_target("/v1/responses"),
            format!("/proxy/v1/responses?{conditions}")
        );
        assert_eq!(
            endpoint.request_target("/v1/responses/resp_1?stream=true"),
            format!("/proxy/v1/responses/resp_1?stream=true&{conditions}")
        );
        assert_eq!(
            endpoint.request_url("/v1/models"),
            format!("http://h/proxy/v1/models?{conditions}")
        );
        // Errors name the server, not the request's parameters.
        assert_eq!(endpoint.url("/v1/models"), "http://h/proxy/v1/models");
        assert_eq!(
            endpoint.upgrade_url(),
            format!("ws://h/proxy/v1/responses?{conditions}&model=spark")
        );
        assert_eq!(
            endpoint.browser_websocket_url(),
            format!("ws://h/proxy/v1/responses?{conditions}&model=spark&tether_timing=1")
        );
        assert_eq!(
            Endpoint::new("http://h")
                .unwrap()
                .with_query("a b", "c&d=é")
                .request_target("/v1/models"),
            "/v1/models?a%20b=c%26d%3D%C3%A9"
        );
    }
}
