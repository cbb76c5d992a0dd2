//! The browser backend in headless Chromium (`cargo test -p tether-client --target
//! wasm32-unknown-unknown`; runner: wasm-bindgen-test-runner) against real servers, which
//! `cargo xtask test` starts and names at build time:
//!
//! - `TETHER_CLIENT_TEST_URL`: defaults (fast model), client-chosen conditions allowed;
//! - `TETHER_CLIENT_TEST_NO_WS_URL`: `--no-websocket`, every upgrade refused with 426;
//! - `TETHER_CLIENT_TEST_KEYED_URL`: `--api-key sk-client-test`, a 1.5 s connection lifetime and
//!   100 tokens/s, so that an answer of 200 tokens outlives its connection.
//!
//! The same scenarios as the native tests: WebSocket mode from the connection cache, JSON and
//! SSE over fetch, query parameters (client-chosen conditions) on the upgrade and on fetch, a
//! client secret minted for a keyed upgrade, and the three recovery rules.
#![cfg(target_arch = "wasm32")]

use tether_client::{
    Ending, Endpoint, Error, Http, Recovered, Recovery, Session, Transport, WebSocket,
};
use tether_protocol::{Input, ResponseCreate};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const KEY: &str = "sk-client-test";

fn server(url: Option<&'static str>, name: &str) -> Endpoint {
    let url = url.unwrap_or_else(|| {
        panic!(
            "{name} is not set: the browser suite needs running servers — run it with \
             `cargo xtask test` (docs/testing.md says how to start them by hand)"
        )
    });
    Endpoint::new(url).unwrap()
}

fn plain() -> Endpoint {
    server(
        option_env!("TETHER_CLIENT_TEST_URL"),
        "TETHER_CLIENT_TEST_URL",
    )
}

fn no_websocket() -> Endpoint {
    server(
        option_env!("TETHER_CLIENT_TEST_NO_WS_URL"),
        "TETHER_CLIENT_TEST_NO_WS_URL",
    )
}

fn keyed() -> Endpoint {
    server(
        option_env!("TETHER_CLIENT_TEST_KEYED_URL"),
        "TETHER_CLIENT_TEST_KEYED_URL",
    )
}

fn request(input: &str, tokens: usize, store: bool) -> ResponseCreate {
    let mut request = ResponseCreate::new("tether-sim", input);
    let mut metadata = serde_json::Map::new();
    metadata.insert("sim_output_tokens".into(), tokens.to_string().into());
    request.metadata = Some(metadata);
    request.store = Some(store);
    request
}

#[wasm_bindgen_test]
async fn a_websocket_conversation_continues_on_one_connection() {
    let mut ws = WebSocket::connect(&plain().with_timing(true))
        .await
        .unwrap();
    assert!(
        ws.url().ends_with("/v1/responses?tether_timing=1"),
        "{}",
        ws.url()
    );
    let mut deltas = 0u64;
    let first = ws
        .turn_with(&request("hi", 10, false), |frame| {
            deltas += frame.carries_tokens() as u64
        })
        .await
        .unwrap();
    assert_eq!(first.ending, Ending::Completed);
    assert!(deltas > 0);
    assert!(first.timing.is_some(), "asked for in the upgrade URL");
    let mut next = request("more", 10, false);
    next.previous_response_id = Some(first.response.id.clone());
    let second = ws.turn(&next).await.unwrap();
    assert_eq!(
        second.response.previous_response_id.as_deref(),
        Some(first.response.id.as_str())
    );
    let mut lost = request("more", 10, false);
    lost.previous_response_id = Some("resp_nowhere".into());
    let error = ws.turn(&lost).await.unwrap_err();
    assert_eq!(error.code(), Some("previous_response_not_found"));
    assert_eq!(error.status(), Some(400));
    ws.close().await;
}

#[wasm_bindgen_test]
async fn json_and_sse_over_fetch() {
    let mut http = Http::new(&plain());
    let response = http.create(&request("hi", 5, false)).await.unwrap();
    assert!(!response.output_text().is_empty());
    let mut kinds = Vec::new();
    let streamed = http
        .stream(&request("hi", 5, false))
        .await
        .unwrap()
        .finish_with(|frame| kinds.push(frame.kind().into_owned()))
        .await
        .unwrap();
    assert_eq!(streamed.ending, Ending::Completed);
    assert_eq!(kinds.first().map(String::as_str), Some("response.created"));
    let missing = http.get("/v1/responses/resp_nowhere").await.unwrap();
    assert_eq!(missing.status, 404);
    let mut lost = request("hi", 5, false);
    lost.previous_response_id = Some("resp_nowhere".into());
    let error = http.turn(&lost).await.unwrap_err();
    assert!(
        matches!(&error, Error::Http { status: 400, .. }),
        "{error:?}"
    );
    assert_eq!(error.code(), Some("previous_response_not_found"));
}

/// The endpoint's query parameters ride on the upgrade URL and every fetch: the default
/// server accepts client-chosen conditions and reports them; the one without WebSocket mode,
/// started without `--allow-client-conditions`, refuses them, and the explained upgrade
/// failure carries its message.
#[wasm_bindgen_test]
async fn query_parameters_carry_client_chosen_conditions() {
    let endpoint = plain()
        .with_timing(true)
        .with_query("tether_rtt_ms", "2")
        .with_query("tether_api_costs", "local");
    let mut ws = WebSocket::connect(&endpoint).await.unwrap();
    assert!(
        ws.url()
            .ends_with("/v1/responses?tether_rtt_ms=2&tether_api_costs=local&tether_timing=1"),
        "{}",
        ws.url()
    );
    let over_ws = ws.turn(&request("hi", 5, false)).await.unwrap();
    ws.close().await;
    let over_http = Http::new(&endpoint)
        .turn(&request("hi", 5, false))
        .await
        .unwrap();
    for (transport, finished) in [("WebSocket", over_ws), ("SSE", over_http)] {
        let timing = finished.timing.expect("asked for");
        let conditions = &timing["conditions"];
        assert_eq!(conditions["chosen_by"], "client", "{transport}: {timing}");
        assert_eq!(conditions["rtt_ms"], 2.0, "{transport}: {timing}");
        assert!(
            timing["link"]["up_bytes"].as_u64().unwrap_or(0) > 0,
            "{transport}: {timing}"
        );
    }

    let bare = no_websocket().with_query("tether_rtt_ms", "2");
    let probe = Http::new(&bare).get("/v1/models").await.unwrap();
    assert_eq!(probe.status, 400, "{}", probe.text());
    match WebSocket::connect(&bare).await.unwrap_err() {
        Error::UpgradeRefused { detail, .. } => {
            assert!(detail.contains("client-chosen conditions"), "{detail}")
        }
        other => panic!("{other:?}"),
    }
}

#[wasm_bindgen_test]
async fn a_keyed_upgrade_carries_a_minted_secret_and_a_wrong_key_is_named() {
    let mut ws = WebSocket::connect(&keyed().with_api_key(KEY))
        .await
        .unwrap();
    assert!(!ws.url().contains(KEY), "the key never goes in the URL");
    let finished = ws.turn(&request("hi", 1, false)).await.unwrap();
    assert_eq!(finished.ending, Ending::Completed);
    ws.close().await;
    let error = WebSocket::connect(&keyed().with_api_key("sk-wrong"))
        .await
        .expect_err("refused");
    match &error {
        Error::UpgradeRefused { detail, .. } => {
            assert!(detail.starts_with("401: wrong API key"), "{detail}")
        }
        other => panic!("{other:?}"),
    }
    let error = WebSocket::connect(&keyed()).await.expect_err("refused");
    assert!(
        error.to_string().contains("this server needs an API key"),
        "{error}"
    );
}

#[wasm_bindgen_test]
async fn a_refused_upgrade_moves_the_session_to_http() {
    let refused = WebSocket::connect(&no_websocket()).await.expect_err("426");
    match &refused {
        Error::UpgradeRefused { status, detail, .. } => {
            assert_eq!(*status, None, "a browser does not see the status");
            assert!(
                detail.contains("although the server answers HTTP"),
                "{detail}"
            );
        }
        other => panic!("{other:?}"),
    }
    let mut session = Session::new(no_websocket());
    let first = session.turn(request("hi", 5, true)).await.unwrap();
    assert_eq!(session.transport(), Transport::Http);
    assert_eq!(
        session.recoveries(),
        [Recovered::FellBackToHttp { status: None }]
    );
    let second = session.turn(request("more", 5, true)).await.unwrap();
    assert_eq!(
        second.response.previous_response_id.as_deref(),
        Some(first.response.id.as_str())
    );
    let mut strict = Session::new(no_websocket()).with_recovery(Recovery::none());
    assert!(matches!(
        strict.turn(request("hi", 5, true)).await,
        Err(Error::UpgradeRefused { .. })
    ));
}

#[wasm_bindgen_test]
async fn a_lost_previous_response_is_answered_with_the_full_context() {
    let mut session = Session::over_http(plain());
    let first = session.turn(request("hi", 5, true)).await.unwrap();
    let deleted = Http::new(&plain())
        .delete(&format!("/v1/responses/{}", first.response.id))
        .await
        .unwrap();
    assert_eq!(deleted.status, 200);
    let second = session.turn(request("more", 5, true)).await.unwrap();
    assert_eq!(second.response.previous_response_id, None);
    assert_eq!(
        session.recoveries(),
        [Recovered::ResentFullContext {
            previous_response_id: first.response.id.clone()
        }]
    );
}

#[wasm_bindgen_test]
async fn a_connection_past_its_lifetime_is_replaced_with_a_fresh_secret() {
    let mut session = Session::new(keyed().with_api_key(KEY));
    // 200 tokens at 100 tokens/s outlive the 1.5 s lifetime however slow the machine (the
    // model's time is a floor), and a short turn on a fresh connection has 1.5 s to arrive.
    session.turn(request("hi", 200, false)).await.unwrap();
    let second = session.turn(request("more", 1, false)).await.unwrap();
    assert_eq!(second.response.previous_response_id, None, "full context");
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
    // The append beta travels in the URL too.
    let mut ws = WebSocket::connect(
        &keyed()
            .with_api_key(KEY)
            .with_beta(tether_client::APPEND_BETA),
    )
    .await
    .unwrap();
    assert!(
        ws.url()
            .contains("openai_beta=responses_websockets%3D2026-02-04")
    );
    ws.send_text(tether_client::wire::append_frame(
        Input::Items(Vec::new()),
        None,
    ))
    .await
    .unwrap();
    let refusal = ws.next().await.unwrap();
    assert_eq!(
        refusal.kind(),
        "error",
        "nothing ran on the lane to append to"
    );
    session.close().await;
}

#[wasm_bindgen_test]
async fn nothing_listening_is_a_connect_error() {
    // Port 1: nothing listens there, and browsers refuse it besides.
    let nowhere = Endpoint::new("http://127.0.0.1:1").unwrap();
    let error = Http::new(&nowhere).get("/readyz").await.unwrap_err();
    assert!(matches!(error, Error::Connect { .. }), "{error:?}");
    let error = WebSocket::connect(&nowhere).await.unwrap_err();
    assert!(matches!(error, Error::Connect { .. }), "{error:?}");
}
