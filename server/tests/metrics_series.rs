//! `/metrics` exposes the same series, with the same types and labels, whatever encodes them:
//! after a request over each transport (a WebSocket continuation hitting the connection cache,
//! one hydrated from the store, one not found), a classifier finding and the HTTP token cache,
//! every series name, label set and `# TYPE` line is compared with `metrics_series.txt`
//! (values, help texts and the order of labels are not). `TETHER_BLESS=1` rewrites the file from the server.

use serde_json::json;

mod common;

/// The shape of a Prometheus text exposition: its `# TYPE` lines and every sample's name and
/// labels, sorted; values, help texts and an OpenMetrics `# EOF` left out.
fn shape(exposition: &str) -> Vec<String> {
    let mut lines: Vec<String> = exposition
        .lines()
        .filter_map(|line| {
            if let Some(kind) = line.strip_prefix("# TYPE ") {
                return Some(format!("# TYPE {kind}"));
            }
            if line.starts_with('#') || line.trim().is_empty() {
                return None;
            }
            // `name{labels} value`: the value is the last space-separated field.
            let (series, _value) = line.rsplit_once(' ')?;
            Some(canonical(series))
        })
        .collect();
    lines.sort();
    lines
}

/// A series with its labels in name order (their order carries no meaning).
fn canonical(series: &str) -> String {
    let Some((name, labels)) = series.split_once('{') else {
        return series.to_string();
    };
    let labels = labels.strip_suffix('}').unwrap_or(labels);
    let mut pairs: Vec<String> = labels
        .split("\",")
        .map(|pair| pair.trim_end_matches('"').to_string() + "\"")
        .collect();
    pairs.sort();
    format!("{name}{{{}}}", pairs.join(","))
}

#[tokio::test]
async fn the_metrics_series_are_unchanged() {
    let dir = std::env::temp_dir().join(format!("tether-metrics-{}", rand::random::<u64>()));
    let mut config = common::config(dir.to_str().unwrap());
    config.token_cache_tokens = 100_000;
    let server = common::TestServer::start_with(config).await;

    // HTTP (JSON) and SSE, the first with a classifier finding.
    let stored = server
        .post_json(
            "/v1/responses",
            &json!({"model": "spark", "input": "mail dev@example.com", "store": true}),
        )
        .await;
    let stored_id = stored["id"].as_str().unwrap().to_string();
    let sse = tether_client::Http::new(&server.endpoint())
        .turn(&tether_protocol::ResponseCreate::new("tether-sim", "hi"))
        .await
        .unwrap();
    assert_eq!(sse.ending, tether_client::Ending::Completed);

    // WebSocket: a fresh turn, a continuation from the cache, one from the store, one missing.
    let mut client = server.connect().await;
    client
        .send(&json!({"type": "response.create", "model": "tether-sim", "input": "one", "store": false}).to_string())
        .await;
    let first = client.response_events().await;
    let first_id = first.last().unwrap()["response"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    for previous in [first_id.as_str(), stored_id.as_str()] {
        client
            .send(
                &json!({"type": "response.create", "model": "tether-sim", "input": "next",
                "store": false, "previous_response_id": previous})
                .to_string(),
            )
            .await;
        client.response_events().await;
    }
    client
        .send(
            &json!({"type": "response.create", "model": "tether-sim", "input": "x",
            "previous_response_id": "resp_missing"})
            .to_string(),
        )
        .await;
    assert_eq!(client.next_json().await["type"], "error");

    let body = server.get("/metrics").await.text();
    let actual = shape(&body);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/metrics_series.txt");
    if std::env::var_os("TETHER_BLESS").is_some() {
        std::fs::write(&path, actual.join("\n") + "\n").unwrap();
    } else {
        let expected: Vec<String> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let missing: Vec<&String> = expected.iter().filter(|l| !actual.contains(l)).collect();
        let extra: Vec<&String> = actual.iter().filter(|l| !expected.contains(l)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "/metrics changed shape.\nmissing: {missing:#?}\nnew: {extra:#?}"
        );
    }
    drop(client);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
