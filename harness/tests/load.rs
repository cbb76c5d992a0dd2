//! The load generator against a real server: every transport, churn, open loop, idle
//! connections, the tool outputs' size, and the overhead's definition.

mod common;

use common::{Server, assert_clean, load};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_agents_play_every_turn() {
    let server = Server::start(&[]).await;
    let url = server.url();
    let report = load(&[
        "--url",
        &url,
        "--transport",
        "ws",
        "--clients",
        "3",
        "--turns",
        "4",
        "--conversations",
        "2",
    ])
    .await;
    assert_clean(&report, 3 * 4 * 2);
    // Every turn streams at least created, in_progress, the item's events and the terminal.
    assert!(report.events >= 5 * report.turns_ok, "{}", report.to_text());
    assert_eq!(report.overhead_basis, "round_trip");
    assert_eq!(report.overhead, report.round_trip);
    // The server runs in this process, which the port lookup finds.
    let server_report = report.server.as_ref().expect("the local server is found");
    assert_eq!(server_report.pid, std::process::id());
    assert_eq!(server_report.connections, 3);
    assert!(server_report.rss_before_bytes.unwrap() > 0);
    assert!(report.generator.cpu_seconds_total > 0.0);
    assert!(report.server_generate.is_some(), "timings are asked for");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_http_resends_the_conversation() {
    let server = Server::start(&[]).await;
    let url = server.url();
    let report = load(&[
        "--url",
        &url,
        "--transport",
        "http",
        "--clients",
        "2",
        "--turns",
        "5",
        "--tool-output-tokens",
        "200",
    ])
    .await;
    assert_clean(&report, 10);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chained_http_and_mixed_transports() {
    let server = Server::start(&[]).await;
    let url = server.url();
    let report = load(&[
        "--url",
        &url,
        "--transport",
        "http-chained",
        "--clients",
        "2",
        "--turns",
        "4",
    ])
    .await;
    assert_clean(&report, 8);
    let report = load(&[
        "--url",
        &url,
        "--transport",
        "mixed",
        "--clients",
        "3",
        "--turns",
        "3",
        "--output-tokens",
        "50",
    ])
    .await;
    assert_clean(&report, 9);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn churned_websocket_clients_continue_their_conversations() {
    let server = Server::start(&[]).await;
    let url = server.url();
    // Without store: after each reconnect the full context is sent again.
    let report = load(&[
        "--url",
        &url,
        "--transport",
        "ws",
        "--clients",
        "2",
        "--turns",
        "6",
        "--churn",
        "2",
    ])
    .await;
    assert_clean(&report, 12);
    // The initial connections plus two reconnects per client (after turns 2 and 4).
    assert_eq!(report.connect.count, 2 + 2 * 2, "{}", report.to_text());
    // With store: previous_response_id is found in the store on the new connection.
    let report = load(&[
        "--url",
        &url,
        "--transport",
        "ws",
        "--clients",
        "2",
        "--turns",
        "6",
        "--churn",
        "2",
        "--store",
    ])
    .await;
    assert_clean(&report, 12);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_arrivals_are_scheduled_and_misses_counted() {
    let server = Server::start(&[]).await;
    let url = server.url();
    let report = load(&[
        "--url",
        &url,
        "--clients",
        "4",
        "--turns",
        "3",
        "--rate",
        "200",
        "--arrivals",
        "fixed",
    ])
    .await;
    let open = report.open_loop.as_ref().expect("an open-loop report");
    assert_eq!(open.scheduled, 12);
    assert_eq!(open.dispatched + open.missed, 12);
    assert_eq!(report.turns_ok, open.dispatched, "{}", report.to_text());
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    // 12 arrivals 5 ms apart: the schedule lasts ~55 ms.
    assert!(report.wall_seconds >= 0.05, "{}", report.to_text());

    // Overload: one agent with 50 ms of tool time cannot take 100 arrivals a second.
    let report = load(&[
        "--url",
        &url,
        "--clients",
        "1",
        "--turns",
        "3",
        "--rate",
        "100",
        "--arrivals",
        "fixed",
        "--tool-time-ms",
        "50",
        "--duration",
        "500ms",
    ])
    .await;
    let open = report.open_loop.as_ref().unwrap();
    assert!(open.missed > open.scheduled / 2, "{}", report.to_text());
    assert!(open.missed_fraction > 0.5);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_opened_held_and_counted() {
    let server = Server::start(&[]).await;
    let url = server.url();
    let report = load(&["--url", &url, "--idle", "50", "--duration", "300ms"]).await;
    let idle = report.idle.as_ref().expect("an idle report");
    assert_eq!(idle.connected, 50, "{}", report.to_text());
    assert_eq!(idle.failed, 0);
    assert_eq!(idle.closed_by_server, 0);
    assert!(idle.held_seconds >= 0.3);
    assert_eq!(idle.connect.count, 50);
    assert!(idle.rss_per_connection_bytes.is_some());
    assert_eq!(report.server.as_ref().unwrap().connections, 50);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_counted_by_code() {
    let server = Server::start(&["--api-key", "sekret"]).await;
    let url = server.url();
    let report = load(&["--url", &url, "--clients", "1", "--turns", "2"]).await;
    assert_eq!(report.turns_ok, 0);
    assert!(
        report.errors.contains_key("upgrade_401"),
        "{:?}",
        report.errors
    );
    let report = load(&[
        "--url",
        &url,
        "--transport",
        "http",
        "--clients",
        "1",
        "--turns",
        "2",
    ])
    .await;
    assert_eq!(report.turns_ok, 0);
    assert!(
        report.errors.keys().any(|k| k.starts_with("http_401")),
        "{:?}",
        report.errors
    );
    let report = load(&[
        "--url",
        &url,
        "--clients",
        "1",
        "--turns",
        "2",
        "--api-key",
        "sekret",
    ])
    .await;
    assert_clean(&report, 2);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_with_latency_has_its_generate_stage_taken_off() {
    // `tether-sim` decodes at --tokens-per-second: 500 tokens/s, so each tool call's arguments
    // take milliseconds of model time.
    let server = Server::start(&["--tokens-per-second", "500"]).await;
    let url = server.url();
    let report = load(&[
        "--url",
        &url,
        "--model",
        "tether-sim",
        "--clients",
        "2",
        "--turns",
        "3",
        "--output-tokens",
        "20",
    ])
    .await;
    assert_clean(&report, 6);
    assert_eq!(report.overhead_basis, "round_trip_minus_server_generate");
    assert_eq!(report.overhead_fallback_turns, 0);
    let generate = report.server_generate.expect("timings");
    assert!(generate.p50_ms > 5.0, "{}", report.to_text());
    assert!(report.overhead.p50_ms < report.round_trip.p50_ms - 5.0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_outputs_have_the_asked_size_in_tokens() {
    // The server counts every turn's input. Of a 2-turn conversation only turn 2 holds a tool
    // output, so the input totals of runs with different tool-output sizes differ by the
    // outputs' words: one token each. (The label, ~10 tokens, is in all of them.)
    let server = Server::start(&[]).await;
    let url = server.url();
    let input = |tokens: &'static str| {
        let url = url.clone();
        async move {
            let report = load(&[
                "--url",
                &url,
                "--transport",
                "http-chained",
                "--clients",
                "1",
                "--turns",
                "2",
                "--tool-output-tokens",
                tokens,
            ])
            .await;
            assert_clean(&report, 2);
            report.tokens.input
        }
    };
    let empty = input("0").await; // the label alone
    for asked in [1_000u64, 10_000] {
        let total = input(if asked == 1_000 { "1000" } else { "10000" }).await;
        let words = asked - tether_harness::load::text::LABEL_TOKENS as u64;
        let added = total - empty;
        // Within a few tokens: the rest of each run's input varies a little with the random
        // call ids the server renders into the prompt.
        assert!(
            added.abs_diff(words) <= 10,
            "{asked} tokens asked: {added} added"
        );
    }
    server.stop().await;
}
