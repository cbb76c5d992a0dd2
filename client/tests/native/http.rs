//! HTTP: a JSON response with its timing header, a streamed one read as SSE, errors with their
//! codes, and one kept-alive connection for all of it.

use tether_client::{Ending, Error, Http};

use crate::common::Server;
use crate::text_request;

#[tokio::test]
async fn json_and_sse_responses_over_one_connection() {
    let server = Server::start(&[]).await;
    let mut http = Http::new(&server.endpoint().with_timing(true));
    let (response, reply) = http.create_reply(&text_request("hi", 10)).await.unwrap();
    assert_eq!(reply.status, 200);
    assert!(!response.output_text().is_empty());
    let timing: serde_json::Value =
        serde_json::from_str(reply.header("x-tether-timing").expect("asked for")).unwrap();
    assert!(timing["stages"].is_object(), "{timing}");

    let mut deltas = 0u64;
    let streamed = http
        .stream(&text_request("hi again", 10))
        .await
        .unwrap()
        .finish_with(|frame| deltas += frame.carries_tokens() as u64)
        .await
        .unwrap();
    assert_eq!(streamed.ending, Ending::Completed);
    assert!(deltas > 0);
    assert!(streamed.timing.is_some());
    assert!(http.is_connected(), "the body was read to its end");
    assert_eq!(http.get("/readyz").await.unwrap().status, 200);
    server.stop().await;
}

#[tokio::test]
async fn error_answers_carry_the_api_error() {
    let server = Server::start(&[]).await;
    let mut http = Http::new(&server.endpoint());
    let mut request = text_request("hi", 5);
    request.previous_response_id = Some("resp_nowhere".into());
    for error in [
        http.create(&request).await.unwrap_err(),
        http.turn(&request).await.unwrap_err(),
    ] {
        match &error {
            Error::Http { status, url, .. } => {
                assert_eq!(*status, 400);
                assert!(url.ends_with("/v1/responses"), "{url}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(error.code(), Some("previous_response_not_found"));
    }
    let missing = http.get("/v1/responses/resp_nowhere").await.unwrap();
    assert_eq!(missing.status, 404);
    server.stop().await;
}

#[tokio::test]
async fn nothing_listening_is_a_connect_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = tether_client::Endpoint::new(&format!("http://127.0.0.1:{port}")).unwrap();
    let error = Http::new(&endpoint).get("/readyz").await.unwrap_err();
    assert!(matches!(error, Error::Connect { .. }), "{error:?}");
    let error = tether_client::WebSocket::connect(&endpoint)
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Connect { .. }), "{error:?}");
}

/// The endpoint's query parameters reach the server on every request and on the upgrade: here
/// the conditions a server started with `--allow-client-conditions` emulates, which its timing
/// summary reports back (and a bare server refuses, by name).
#[tokio::test]
async fn query_parameters_carry_client_chosen_conditions_on_both_transports() {
    let server = Server::start(&["--allow-client-conditions"]).await;
    let endpoint = server
        .endpoint()
        .with_timing(true)
        .with_query("tether_rtt_ms", "2")
        .with_query("tether_api_costs", "local");
    let check = |timing: &serde_json::Value, transport: &str| {
        let conditions = &timing["conditions"];
        assert_eq!(conditions["chosen_by"], "client", "{transport}: {timing}");
        assert_eq!(conditions["rtt_ms"], 2.0, "{transport}: {timing}");
        assert_eq!(conditions["api_costs"], "local", "{transport}: {timing}");
        assert!(
            timing["link"]["up_bytes"].as_u64().unwrap() > 0,
            "{transport}: {timing}"
        );
    };
    let mut http = Http::new(&endpoint);
    let (_, reply) = http.create_reply(&text_request("hi", 5)).await.unwrap();
    check(
        &serde_json::from_str(reply.header("x-tether-timing").unwrap()).unwrap(),
        "JSON",
    );
    let streamed = http.turn(&text_request("hi", 5)).await.unwrap();
    check(&streamed.timing.unwrap(), "SSE");
    let mut socket = tether_client::WebSocket::connect(&endpoint).await.unwrap();
    let finished = socket.turn(&text_request("hi", 5)).await.unwrap();
    check(&finished.timing.unwrap(), "WebSocket");
    server.stop().await;

    let bare = Server::start(&[]).await;
    let endpoint = bare.endpoint().with_query("tether_rtt_ms", "2");
    let refused = Http::new(&endpoint).get("/v1/models").await.unwrap();
    assert_eq!(refused.status, 400, "{}", refused.text());
    assert!(
        refused.text().contains("conditions_not_allowed"),
        "{}",
        refused.text()
    );
    match tether_client::WebSocket::connect(&endpoint)
        .await
        .unwrap_err()
    {
        error @ Error::UpgradeRefused { .. } => {
            assert_eq!(error.code(), Some("conditions_not_allowed"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    bare.stop().await;
}
