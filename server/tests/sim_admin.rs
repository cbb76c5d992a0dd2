//! The simulator's admin endpoint and its vLLM-named metrics, through the router.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tether_server::{AppState, app};
use tower::ServiceExt;

mod common;

fn router(admin_key: Option<&str>) -> Router {
    let mut config = common::config(":memory:");
    config.admin_key = admin_key.map(str::to_string);
    app(
        AppState::new(&config).unwrap(),
        std::path::Path::new("does-not-exist"),
    )
}

async fn send(
    router: &Router,
    method: &str,
    uri: &str,
    key: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, String) {
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json");
    if let Some(key) = key {
        request = request.header("authorization", format!("Bearer {key}"));
    }
    let request = request
        .body(body.map_or_else(Body::empty, |b| Body::from(b.to_string())))
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

#[tokio::test]
async fn admin_needs_its_key_and_is_off_without_one() {
    let off = router(None);
    let (status, _) = send(&off, "GET", "/admin/simulator", Some("x"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let on = router(Some("secret"));
    let (status, _) = send(&on, "GET", "/admin/simulator", None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = send(&on, "GET", "/admin/simulator", Some("wrong"), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = send(&on, "GET", "/admin/simulator", Some("secret"), None).await;
    assert_eq!(status, StatusCode::OK);
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["seed"], 1);
    assert_eq!(body["profiles"]["spark"]["tokens_per_second"], 1000.0);
    assert_eq!(
        body["profiles"]["tether-sim"]["tokens_per_second"],
        100_000.0
    );
    assert_eq!(body["failure_rates"]["server_error"], 0.0);
}

#[tokio::test]
async fn changes_apply_together_or_not_at_all() {
    let router = router(Some("k"));
    let change = json!({
        "profiles": {"spark": {"tokens_per_second": 2000.0, "jitter": 0.01}},
        "failure_rates": {"rate_limit": 1.0}
    });
    let (status, body) = send(
        &router,
        "PATCH",
        "/admin/simulator",
        Some("k"),
        Some(change),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["profiles"]["spark"]["tokens_per_second"], 2000.0);
    assert_eq!(
        body["profiles"]["spark"]["max_running"], 256,
        "other fields stay"
    );
    assert_eq!(body["failure_rates"]["rate_limit"], 1.0);

    // Every request now fails with 429.
    let (status, _) = send(
        &router,
        "POST",
        "/v1/responses",
        None,
        Some(json!({"model": "tether-sim", "input": "hi"})),
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);

    // One invalid value: 400, and nothing changes (the valid rate reset included).
    for bad in [
        json!({"failure_rates": {"rate_limit": 0.0}, "profiles": {"spark": {"tokens_per_second": -1}}}),
        json!({"failure_rates": {"rate_limit": 0.0}, "profiles": {"nope": {}}}),
        json!({"failure_rates": {"rate_limit": 0.0, "typo": 1}}),
        json!({"failure_rates": {"rate_limit": 0.0}, "profiles": {"burst": {"jitter_clamp": 2}}}),
        json!({"failure_rates": {"rate_limit": 0.0}, "extra": true}),
    ] {
        let (status, body) = send(
            &router,
            "PATCH",
            "/admin/simulator",
            Some("k"),
            Some(bad.clone()),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
    let (_, body) = send(&router, "GET", "/admin/simulator", Some("k"), None).await;
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["failure_rates"]["rate_limit"], 1.0);
    assert_eq!(body["profiles"]["spark"]["tokens_per_second"], 2000.0);
}

#[tokio::test]
async fn metrics_carry_vllm_series() {
    let router = router(None);
    let (status, _) = send(
        &router,
        "POST",
        "/v1/responses",
        None,
        Some(json!({"model": "instant", "input": "hi", "metadata": {"sim_output_tokens": "12"}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, text) = send(&router, "GET", "/metrics", None, None).await;
    for series in [
        "vllm:generation_tokens_total{model_name=\"instant\"} 12\n",
        "vllm:request_success_total{model_name=\"instant\"} 1\n",
        "vllm:time_to_first_token_seconds_count{model_name=\"instant\"} 1\n",
        "vllm:inter_token_latency_seconds_count{model_name=\"instant\"} 11\n",
        "vllm:e2e_request_latency_seconds_count{model_name=\"instant\"} 1\n",
        "vllm:request_queue_time_seconds_count{model_name=\"instant\"} 1\n",
        "vllm:num_requests_running{model_name=\"instant\"} 0\n",
        "vllm:num_requests_waiting{model_name=\"flagship\"} 0\n",
        "# TYPE vllm:prompt_tokens_total counter\n",
        "tether_responses_total{transport=\"http\"} 1\n",
    ] {
        assert!(text.contains(series), "no {series} in {text}");
    }
}

#[tokio::test]
async fn a_configuration_file_sets_aliases_profiles_and_rates() {
    let dir = std::env::temp_dir().join(format!("tether-sim-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sim.json");
    std::fs::write(
        &path,
        r#"{"aliases": {"fast": "instant"},
            "profiles": {"spark": {"tokens_per_second": 1500}},
            "failure_rates": {"invalid_request": 0.0}}"#,
    )
    .unwrap();
    let mut config = common::config(":memory:");
    config.sim_config = Some(path.clone());
    config.admin_key = Some("k".into());
    let router = app(
        AppState::new(&config).unwrap(),
        std::path::Path::new("does-not-exist"),
    );
    let (_, body) = send(&router, "GET", "/admin/simulator", Some("k"), None).await;
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["aliases"]["fast"], "instant");
    assert_eq!(body["profiles"]["spark"]["tokens_per_second"], 1500.0);
    let (_, models) = send(&router, "GET", "/v1/models", None, None).await;
    assert!(models.contains("\"fast\""), "{models}");
    let (status, _) = send(
        &router,
        "POST",
        "/v1/responses",
        None,
        Some(json!({"model": "fast", "input": "hi", "metadata": {"sim_output_tokens": "4"}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, text) = send(&router, "GET", "/metrics", None, None).await;
    assert!(text.contains("vllm:generation_tokens_total{model_name=\"instant\"} 4\n"));

    std::fs::write(&path, r#"{"aliases": {"fast": "nope"}}"#).unwrap();
    assert!(AppState::new(&config).is_err());
    std::fs::write(&path, r#"{"profiles": {"spark": {"jitter": -1}}}"#).unwrap();
    assert!(AppState::new(&config).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
