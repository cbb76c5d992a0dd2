//! Saying why a browser's connection failed, and where. A browser tells a page nothing about a
//! refused WebSocket upgrade — no status, no body, just "failed" and close code 1006 — although
//! the server answered (a 401 for a wrong key, a 426 with WebSocket mode off). So when a
//! WebSocket does not open, the browser backend asks the same server over HTTP, with the same
//! key, for `GET /v1/models` (a [`Probe`]), and the answer names the cause: nothing listening, a
//! wrong or missing key, another refusal.
//!
//! Plain Rust: the probe itself is the backend's; the words are here and tested natively.

use crate::endpoint::shown_url;
use crate::error::{Error, said};
use crate::secrets::SECRET_SECONDS;

/// What `GET /v1/models` on the same server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// No answer at all; the browser's reason.
    Unreachable(String),
    /// An HTTP status and the API's error message (empty for a success).
    Status { status: u16, message: String },
}

/// Why the WebSocket to `ws_url` did not open, from what `GET models_url` (with the same key;
/// `has_key` says whether there was one) answered; `used_secret`: the upgrade carried a client
/// secret minted with that key ([`crate::secrets`]). Nothing answering is [`Error::Connect`];
/// anything else is [`Error::UpgradeRefused`], whose `detail` says what the probe found.
pub fn refused_upgrade(
    ws_url: &str,
    models_url: &str,
    has_key: bool,
    used_secret: bool,
    probe: Probe,
) -> Error {
    let ws_url = shown_url(ws_url);
    let refused = |detail: String| Error::UpgradeRefused {
        url: ws_url.to_string(),
        status: None,
        error: None,
        detail,
    };
    match probe {
        Probe::Unreachable(detail) => Error::Connect {
            url: ws_url.to_string(),
            detail: format!(
                "the WebSocket did not open, and GET {models_url} got no answer either — is the \
                 server running? (the browser says: {detail})"
            ),
            io: None,
        },
        Probe::Status { status: 401, .. } if !has_key => refused(format!(
            "401: this server needs an API key — it refused the WebSocket upgrade to {ws_url} \
             (GET {models_url} without a key answers 401); set one in the settings"
        )),
        Probe::Status {
            status: 401,
            message,
        } => refused(format!(
            "401: wrong API key — the server refused the WebSocket upgrade to {ws_url} (GET \
             {models_url} with the same key answers 401{})",
            said(&message)
        )),
        Probe::Status { status, .. } if used_secret && (200..300).contains(&status) => {
            refused(format!(
                "the server refused the WebSocket upgrade to {ws_url} although the API key works \
                 over HTTP (GET {models_url}: {status}): the client secret minted for the upgrade \
                 was not accepted — expired (it lasts {SECRET_SECONDS} s), or minted by a replica \
                 with another --server-secret or other keys — or something between the page and \
                 the server does not pass WebSockets"
            ))
        }
        Probe::Status { status, .. } if (200..300).contains(&status) => refused(format!(
            "the WebSocket upgrade to {ws_url} failed although the server answers HTTP (GET \
             {models_url}: {status}); WebSocket mode may be off (426), or something between \
             the page and the server may not pass WebSockets"
        )),
        Probe::Status { status, message } => refused(format!(
            "{status}: the server refused the WebSocket upgrade to {ws_url} (GET {models_url} \
             answers {status}{})",
            said(&message)
        )),
    }
}

/// A request to `url` that got no answer (`fetch` rejected with `detail`).
pub fn unreachable(url: &str, detail: &str) -> Error {
    Error::Connect {
        url: shown_url(url).to_string(),
        detail: format!(
            "the request got no answer — is the server running, and does it allow this page's \
             origin? (the browser says: {detail})"
        ),
        io: None,
    }
}

/// A response body from `url` that broke off while it streamed.
pub fn broken_stream(url: &str, detail: &str) -> Error {
    Error::Closed(format!(
        "the response from {} broke off while it streamed (the browser says: {detail})",
        shown_url(url)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WS: &str = "ws://127.0.0.1:9/v1/responses?api_key=sk-secret&tether_timing=1";
    const MODELS: &str = "http://127.0.0.1:9/v1/models";

    fn detail(error: Error) -> String {
        match error {
            Error::UpgradeRefused { detail, .. } => detail,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_refused_upgrade_names_its_cause_and_the_url_without_its_query() {
        let status = |status, message: &str| Probe::Status {
            status,
            message: message.into(),
        };
        let wrong = detail(refused_upgrade(
            WS,
            MODELS,
            true,
            false,
            status(401, "Invalid API key."),
        ));
        assert!(wrong.starts_with("401: wrong API key — "), "{wrong}");
        assert!(wrong.contains("ws://127.0.0.1:9/v1/responses "), "{wrong}");
        assert!(wrong.contains("answers 401: Invalid API key."), "{wrong}");
        assert!(!wrong.contains("sk-secret"), "{wrong}");

        let missing = detail(refused_upgrade(WS, MODELS, false, false, status(401, "")));
        assert!(
            missing.starts_with("401: this server needs an API key"),
            "{missing}"
        );

        let nothing = refused_upgrade(
            WS,
            MODELS,
            true,
            true,
            Probe::Unreachable("TypeError: Failed to fetch".into()),
        );
        assert!(!nothing.is_disconnect());
        let nothing = nothing.to_string();
        assert!(
            nothing.starts_with("nothing answered at ws://127.0.0.1:9/v1/responses: "),
            "{nothing}"
        );
        assert!(nothing.contains("TypeError: Failed to fetch"), "{nothing}");

        let answers = detail(refused_upgrade(WS, MODELS, true, false, status(200, "")));
        assert!(
            answers.contains("although the server answers HTTP"),
            "{answers}"
        );
        let secret = detail(refused_upgrade(WS, MODELS, true, true, status(200, "")));
        assert!(
            secret.contains("although the API key works over HTTP")
                && secret
                    .contains("client secret minted for the upgrade was not accepted — expired"),
            "{secret}"
        );
        let secret_401 = detail(refused_upgrade(WS, MODELS, true, true, status(401, "")));
        assert!(secret_401.starts_with("401: wrong API key"), "{secret_401}");
        let other = detail(refused_upgrade(
            WS,
            MODELS,
            true,
            false,
            status(503, "overloaded"),
        ));
        assert!(other.starts_with("503: the server refused"), "{other}");
        assert!(other.ends_with("answers 503: overloaded)"), "{other}");
    }

    #[test]
    fn http_failures_say_what_failed_and_where() {
        let down = unreachable(
            "http://127.0.0.1:9/v1/responses",
            "TypeError: Failed to fetch",
        );
        assert_eq!(
            down.to_string(),
            "nothing answered at http://127.0.0.1:9/v1/responses: the request got no answer — \
             is the server running, and does it allow this page's origin? (the browser says: \
             TypeError: Failed to fetch)"
        );
        let broken = broken_stream("http://h/v1/responses", "TypeError: network error");
        assert!(broken.is_disconnect(), "a resend may help");
        assert!(
            broken
                .to_string()
                .contains("from http://h/v1/responses broke off")
        );
    }
}
