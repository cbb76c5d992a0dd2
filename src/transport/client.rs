//! The playground on `tether-client`: where a run's requests go, as the client crate's
//! [`Endpoint`], and the client's errors in the words of the agent loop ([`TransportError`]).
//!
//! The connections themselves — the WebSocket, its client secret, the diagnosis of a refused
//! upgrade, `fetch` and the SSE decoding — are the client crate's browser backend; this crate
//! only drives them ([`super::ws`], [`super::http`]).

use tether_client::{APPEND_BETA, Endpoint, Error, Frame};
use tether_protocol::ServerEvent;

use crate::conditions::Conditions;
use crate::transport::{Received, TransportError};

/// The endpoint of the server at `base` (`http://host:port`): every request authenticated by
/// `api_key` (none when blank), asking for the server's stage timings and for `conditions` on
/// every URL (the upgrade's, every HTTP request's, the model list's).
pub fn endpoint(
    base: &str,
    api_key: &str,
    conditions: &Conditions,
) -> Result<Endpoint, TransportError> {
    let mut endpoint = Endpoint::new(base)
        .map_err(TransportError::from)?
        .with_api_key(api_key.trim())
        .with_timing(true);
    for (name, value) in conditions.pairs() {
        endpoint = endpoint.with_query(name, &value);
    }
    Ok(endpoint)
}

/// `endpoint` asking for the v1 beta (`response.append`, docs/protocol.md §9): the long-running
/// design's connection.
pub fn with_append_beta(endpoint: Endpoint) -> Endpoint {
    endpoint.with_beta(APPEND_BETA)
}

/// A frame as the agent loop receives it: decoded (by the protocol's decoder, a delta straight
/// from its text), with its text.
pub fn received(frame: Frame) -> Result<Received, TransportError> {
    match ServerEvent::from_json(frame.text()) {
        Ok(event) => Ok(Received {
            event,
            text: frame.into_text(),
        }),
        Err(error) => Err(TransportError::Undecodable(format!(
            "{error} in {:?}",
            frame.text()
        ))),
    }
}

impl From<Error> for TransportError {
    fn from(error: Error) -> Self {
        match error {
            Error::Closed(reason) => TransportError::Closed(reason),
            Error::Connect { url, detail, .. } => TransportError::Unreachable { url, detail },
            Error::InvalidUrl { url, reason } => TransportError::Unreachable {
                url,
                detail: reason,
            },
            Error::UpgradeRefused { detail, .. } => TransportError::Refused(detail),
            Error::Http {
                status,
                error,
                body,
                ..
            } => TransportError::Status {
                status,
                message: match error {
                    Some(error) => error.message,
                    None if body.trim().is_empty() => "no details".to_string(),
                    None => body.trim().to_string(),
                },
            },
            Error::Protocol(reason) => TransportError::Undecodable(reason),
            // Neither is seen by a transport, which reads events rather than turns; named for
            // completeness.
            error @ (Error::Api { .. } | Error::Failed { .. } | Error::Unsupported(_)) => {
                TransportError::Undecodable(error.to_string())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::{ApiCosts, Link};

    #[test]
    fn the_endpoint_asks_for_timings_and_the_conditions_on_every_url() {
        let conditions = Conditions {
            link: Link {
                rtt_ms: 40.0,
                up_mbit: Some(20.0),
                down_mbit: None,
            },
            api_costs: ApiCosts::Hosted,
        };
        let endpoint = endpoint("http://127.0.0.1:8080", " sk-1 ", &conditions).unwrap();
        let query = "tether_rtt_ms=40&tether_up_mbit=20&tether_down_mbit=0&tether_api_costs=hosted";
        assert_eq!(
            endpoint.request_url("/v1/models"),
            format!("http://127.0.0.1:8080/v1/models?{query}")
        );
        let upgrade = with_append_beta(endpoint).browser_websocket_url();
        assert_eq!(
            upgrade,
            format!(
                "ws://127.0.0.1:8080/v1/responses?{query}&tether_timing=1\
                 &openai_beta=responses_websockets%3D2026-02-04"
            )
        );
        assert!(!upgrade.contains("sk-1"), "the key never goes in a URL");
    }

    #[test]
    fn loopback_and_the_servers_costs_ask_for_nothing() {
        let endpoint = endpoint("https://t.example/v1", "", &Conditions::default()).unwrap();
        assert_eq!(
            endpoint.browser_websocket_url(),
            "wss://t.example/v1/responses?tether_timing=1"
        );
        assert_eq!(endpoint.api_key(), None);
    }

    #[test]
    fn client_errors_keep_their_cause_and_place() {
        let refused = Error::UpgradeRefused {
            url: "ws://h/v1/responses".into(),
            status: None,
            error: None,
            detail: "401: wrong API key".into(),
        };
        assert_eq!(
            TransportError::from(refused),
            TransportError::Refused("401: wrong API key".into())
        );
        let unreachable = Error::Connect {
            url: "http://h:9/v1/models".into(),
            detail: "Failed to fetch".into(),
            io: None,
        };
        assert_eq!(
            TransportError::from(unreachable).to_string(),
            "nothing listens at http://h:9/v1/models: Failed to fetch"
        );
        let status = Error::http(
            "http://h/v1/responses",
            400,
            br#"{"error":{"message":"Previous response with id 'resp_x' not found.","type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}}"#,
        );
        assert_eq!(
            TransportError::from(status),
            TransportError::Status {
                status: 400,
                message: "Previous response with id 'resp_x' not found.".into()
            }
        );
        let gateway = Error::http("http://h/v1/responses", 502, b"gateway down\n");
        assert_eq!(
            TransportError::from(gateway).to_string(),
            "HTTP 502: gateway down"
        );
        assert!(TransportError::from(Error::Closed("reset".into())).is_disconnect());
        assert!(Endpoint::new("ftp://h").is_err());
    }

    #[test]
    fn frames_become_events_with_their_text_or_say_why_not() {
        let text = r#"{"type":"response.output_text.delta","sequence_number":3,"item_id":"m","output_index":0,"content_index":0,"delta":"hi","logprobs":[]}"#;
        let got = received(Frame::new(text)).unwrap();
        assert_eq!(got.event.sequence_number, Some(3));
        assert_eq!(got.text, text);
        assert!(matches!(
            received(Frame::new("nope")),
            Err(TransportError::Undecodable(why)) if why.contains("nope")
        ));
    }
}
