//! The recovery rules of `Session`, each against a server set up to need it: WebSocket mode
//! off (426), a refused upgrade of another kind, a previous response the server no longer has,
//! and a connection that reached its lifetime.

use tether_client::{Error, Recovered, Recovery, Session, Transport};
use tether_protocol::ResponseCreate;

use crate::common::Server;
use crate::text_request;

fn stored(request: ResponseCreate) -> ResponseCreate {
    ResponseCreate {
        store: Some(true),
        ..request
    }
}

#[tokio::test]
async fn a_426_moves_the_session_to_http_and_the_conversation_goes_on() {
    let server = Server::start(&["--no-websocket"]).await;
    let mut session = Session::new(server.endpoint());
    let first = session.turn(stored(text_request("hi", 5))).await.unwrap();
    assert_eq!(session.transport(), Transport::Http);
    assert_eq!(
        session.recoveries(),
        [Recovered::FellBackToHttp { status: Some(426) }]
    );
    // Stored, so the next turn chains through the store.
    let second = session.turn(stored(text_request("more", 5))).await.unwrap();
    assert_eq!(
        second.response.previous_response_id.as_deref(),
        Some(first.response.id.as_str())
    );
    assert_eq!(server.metric("tether_ws_connections_total").await, 0);
    assert_eq!(
        server
            .metric("tether_responses_total{transport=\"sse\"}")
            .await,
        2
    );

    let mut strict = Session::new(server.endpoint()).with_recovery(Recovery::none());
    let error = strict.turn(text_request("hi", 5)).await.unwrap_err();
    assert!(
        matches!(
            &error,
            Error::UpgradeRefused {
                status: Some(426),
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(error.code(), Some("websocket_disabled"));
    server.stop().await;
}

#[tokio::test]
async fn any_refused_upgrade_falls_back_and_http_says_what_is_wrong() {
    let server = Server::start(&["--api-key", "sk-right"]).await;
    let mut session = Session::new(server.endpoint().with_api_key("sk-wrong"));
    let error = session.turn(text_request("hi", 5)).await.unwrap_err();
    assert_eq!(
        session.recoveries(),
        [Recovered::FellBackToHttp { status: Some(401) }]
    );
    assert!(
        matches!(&error, Error::Http { status: 401, .. }),
        "{error:?}"
    );
    assert_eq!(error.code(), Some("invalid_api_key"));
    let mut right = Session::new(server.endpoint().with_api_key("sk-right"));
    right.turn(text_request("hi", 5)).await.unwrap();
    assert_eq!(right.transport(), Transport::WebSocket);
    right.close().await;
    server.stop().await;
}

#[tokio::test]
async fn a_lost_previous_response_is_answered_with_the_full_context_once() {
    let server = Server::start(&[]).await;
    let mut session = Session::over_http(server.endpoint());
    let first = session.turn(stored(text_request("hi", 5))).await.unwrap();
    let deleted = tether_client::Http::new(&server.endpoint())
        .delete(&format!("/v1/responses/{}", first.response.id))
        .await
        .unwrap();
    assert_eq!(deleted.status, 200);
    let second = session.turn(stored(text_request("more", 5))).await.unwrap();
    assert_eq!(
        session.recoveries(),
        [Recovered::ResentFullContext {
            previous_response_id: first.response.id.clone()
        }]
    );
    assert_eq!(second.response.previous_response_id, None);
    // The whole conversation went: the first turn's input and output, then the new input.
    let input_tokens = second.response.usage.as_ref().unwrap().input_tokens;
    assert!(
        input_tokens > first.response.usage.as_ref().unwrap().input_tokens,
        "{input_tokens}"
    );
    assert_eq!(session.context().len(), 4, "{:?}", session.context());

    let mut strict = Session::over_http(server.endpoint()).with_recovery(Recovery::none());
    let lost = strict.turn(stored(text_request("hi", 5))).await.unwrap();
    tether_client::Http::new(&server.endpoint())
        .delete(&format!("/v1/responses/{}", lost.response.id))
        .await
        .unwrap();
    let error = strict
        .turn(stored(text_request("more", 5)))
        .await
        .unwrap_err();
    assert_eq!(error.code(), Some("previous_response_not_found"));
    server.stop().await;
}

/// The lifetime is 1.5 s and a long answer takes at least 2 s (200 tokens at 100
/// tokens/s; the model's time is a floor), so the server ends the connection right after it,
/// whatever the machine's load; a short turn on a fresh connection has the 1.5 s to arrive.
const SHORT_LIFETIME: [&str; 4] = ["--ws-lifetime-seconds", "1.5", "--tokens-per-second", "100"];

#[tokio::test]
async fn a_connection_past_its_lifetime_is_replaced_and_the_turn_resent() {
    let server = Server::start(&SHORT_LIFETIME).await;
    let mut session = Session::new(server.endpoint());
    session.turn(text_request("hi", 200)).await.unwrap();
    // store:false: the new connection's cache is empty, so the full context goes.
    let second = session.turn(text_request("more", 5)).await.unwrap();
    assert_eq!(second.response.previous_response_id, None);
    match session.recoveries() {
        [Recovered::Reconnected { reason }] => {
            assert!(
                reason.contains("websocket_connection_limit_reached"),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(session.transport(), Transport::WebSocket);
    session.close().await;
    assert_eq!(server.metric("tether_ws_connections_total").await, 2);
    server.stop().await;
}

#[tokio::test]
async fn after_a_reconnect_a_stored_conversation_hydrates_or_is_resent() {
    let server = Server::start(&SHORT_LIFETIME).await;
    let mut session = Session::new(server.endpoint());
    let first = session.turn(stored(text_request("hi", 200))).await.unwrap();
    // Stored: the new connection continues from the store.
    let second = session
        .turn(stored(text_request("more", 200)))
        .await
        .unwrap();
    assert_eq!(
        second.response.previous_response_id.as_deref(),
        Some(first.response.id.as_str())
    );
    assert_eq!(
        server
            .metric("tether_cache_lookups_total{result=\"store\"}")
            .await,
        1
    );
    // Deleted meanwhile: after the next reconnect it is found nowhere, and the full context goes.
    tether_client::Http::new(&server.endpoint())
        .delete(&format!("/v1/responses/{}", second.response.id))
        .await
        .unwrap();
    let third = session
        .turn(stored(text_request("again", 5)))
        .await
        .unwrap();
    assert_eq!(third.response.previous_response_id, None);
    let kinds: Vec<&str> = session
        .recoveries()
        .iter()
        .map(|recovered| match recovered {
            Recovered::Reconnected { .. } => "reconnected",
            Recovered::ResentFullContext { .. } => "resent",
            Recovered::FellBackToHttp { .. } => "http",
        })
        .collect();
    assert_eq!(kinds, ["reconnected", "reconnected", "resent"]);
    session.close().await;
    server.stop().await;
}
