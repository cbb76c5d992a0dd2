//! The simulator's scripted scenario `fix-sample-project` driven turn by turn through the real
//! pipeline (the router, in process), each tool call executed by the real sandbox on its sample
//! project with real `node`: the project's tests fail before and pass at the end. Also the
//! simulator's HTTP surface: models, exact lengths, failure injection.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tether_sandbox::native::NodeProcessRuntime;
use tether_sandbox::{ApplyPatchForm, Sandbox, sample_project};
use tether_server::{AppState, app};
use tower::ServiceExt;

mod common;

fn router() -> Router {
    let config = common::config(":memory:");
    app(
        AppState::new(&config).unwrap(),
        std::path::Path::new("does-not-exist"),
    )
}

async fn post(router: &Router, body: Value, headers: &[(&str, &str)]) -> (StatusCode, String) {
    let mut request = Request::builder()
        .method("POST")
        .uri("/v1/responses")
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(Body::from(body.to_string())).unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

async fn post_json(router: &Router, body: Value) -> Value {
    let (status, text) = post(router, body, &[]).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    serde_json::from_str(&text).unwrap()
}

fn sandbox() -> Sandbox {
    Sandbox::new(sample_project()).with_js_runtime(Box::new(NodeProcessRuntime::default()))
}

/// How the agent sends each turn.
#[derive(Clone, Copy)]
enum Continuation {
    /// The whole conversation every time, nothing stored.
    FullInput,
    /// `previous_response_id` over the store, only the tool outputs as input.
    Store,
}

/// Plays the scenario like an agent: send, execute every tool call in the sandbox, send the
/// outputs back, until the model answers without calls. Returns the tool names called (one
/// entry per turn) and the final message.
async fn run_agent(
    sandbox: &mut Sandbox,
    form: ApplyPatchForm,
    continuation: Continuation,
) -> (Vec<Vec<String>>, String) {
    let router = router();
    let tools = sandbox.tool_specs(form);
    let mut conversation = vec![json!({"role": "user", "content": "The tests fail. Fix the bug."})];
    let mut input = conversation.clone();
    let mut previous: Option<String> = None;
    let mut turns = Vec::new();
    for _ in 0..12 {
        let mut body = json!({
            "model": "tether-sim",
            "input": input,
            "tools": tools,
            "metadata": {"scenario": "fix-sample-project"},
            "store": matches!(continuation, Continuation::Store),
        });
        if let (Continuation::Store, Some(id)) = (continuation, &previous) {
            body["previous_response_id"] = json!(id);
        }
        let response = post_json(&router, body).await;
        assert_eq!(response["status"], "completed", "{response}");
        previous = Some(response["id"].as_str().unwrap().to_string());
        let output = response["output"].as_array().unwrap().clone();
        let mut results = Vec::new();
        let mut names = Vec::new();
        for item in &output {
            let call_id = item["call_id"].as_str().unwrap_or_default();
            let name = item["name"].as_str().unwrap_or_default().to_string();
            match item["type"].as_str().unwrap() {
                "function_call" => {
                    let arguments = item["arguments"].as_str().unwrap();
                    let result = sandbox.call_tool(&name, arguments).await;
                    results.push(json!({"type": "function_call_output", "call_id": call_id, "output": result.output}));
                    names.push(name);
                }
                "custom_tool_call" => {
                    let result = sandbox
                        .call_custom_tool(&name, item["input"].as_str().unwrap())
                        .await;
                    results.push(json!({"type": "custom_tool_call_output", "call_id": call_id, "output": result.output}));
                    names.push(name);
                }
                _ => {}
            }
        }
        if results.is_empty() {
            let text = output
                .iter()
                .find(|item| item["type"] == "message")
                .map(|item| item["content"][0]["text"].as_str().unwrap().to_string())
                .expect("a final message");
            return (turns, text);
        }
        turns.push(names);
        conversation.extend(output);
        conversation.extend(results.iter().cloned());
        input = match continuation {
            Continuation::FullInput => conversation.clone(),
            Continuation::Store => results,
        };
    }
    panic!("the scenario did not finish in 12 turns: {turns:?}");
}

async fn tests_pass(sandbox: &mut Sandbox) -> bool {
    let run = sandbox.run_shell("node test/run.js").await;
    assert!(
        run.stdout.contains("passing"),
        "the sample project's test runner ran: {} {}",
        run.stdout,
        run.stderr
    );
    run.exit_code == 0
}

async fn fixes_the_sample_project(form: ApplyPatchForm, continuation: Continuation) {
    let mut sandbox = sandbox();
    assert!(!tests_pass(&mut sandbox).await, "the tests fail before");
    let (turns, summary) = run_agent(&mut sandbox, form, continuation).await;
    assert_eq!(
        turns,
        [
            vec!["list_dir"],
            vec!["read_file", "read_file"],
            vec!["shell"],
            vec!["apply_patch"],
            vec!["shell"],
        ]
    );
    assert!(summary.starts_with("All tests pass now."), "{summary}");
    assert!(tests_pass(&mut sandbox).await, "the tests pass after");
}

#[tokio::test]
async fn fix_sample_project_with_the_full_input_every_turn() {
    fixes_the_sample_project(ApplyPatchForm::Freeform, Continuation::FullInput).await;
}

#[tokio::test]
async fn fix_sample_project_continuing_over_the_store() {
    fixes_the_sample_project(ApplyPatchForm::Function, Continuation::Store).await;
}

#[tokio::test]
async fn scenario_patch_is_the_sandbox_fix() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scenarios/fix-sample-project.json"
    ))
    .unwrap();
    let scenario: Value = serde_json::from_str(&text).unwrap();
    let fix = scenario["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|step| step["id"] == "fix")
        .unwrap();
    assert_eq!(fix["calls"][0]["input"], tether_sandbox::SAMPLE_FIX_PATCH);
}

#[tokio::test]
async fn models_lists_every_profile() {
    let request = Request::builder()
        .uri("/v1/models")
        .body(Body::empty())
        .unwrap();
    let response = router().oneshot(request).await.unwrap();
    // The scenarios `metadata.scenario` may name, for a page to check a name before it asks.
    assert_eq!(
        response.headers()["x-tether-scenarios"],
        "fix-sample-project,triage-ci-log"
    );
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    let ids: Vec<_> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["tether-sim", "flagship", "spark", "burst", "instant"]);
}

#[tokio::test]
async fn exact_output_tokens_show_in_usage() {
    let response = post_json(
        &router(),
        json!({"model": "instant", "input": "hi", "metadata": {"sim_output_tokens": "321"}}),
    )
    .await;
    assert_eq!(response["usage"]["output_tokens"], 321);
}

#[tokio::test]
async fn forced_failures_over_http() {
    let router = router();
    let body = json!({"model": "tether-sim", "input": "hi"});
    let (status, text) = post(&router, body.clone(), &[("x-tether-fail", "rate_limit")]).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let error: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(error["error"]["code"], "rate_limit_exceeded");

    let (status, _) = post(&router, body.clone(), &[("x-tether-fail", "server_error")]).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);

    let (status, text) = post(&router, body.clone(), &[("x-tether-fail", "nonsense")]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");

    // Streaming: some text, then a flat `error` event, then `response.failed`.
    let mut streaming = body;
    streaming["stream"] = json!(true);
    let (status, text) = post(&router, streaming, &[("x-tether-fail", "server_error")]).await;
    assert_eq!(status, StatusCode::OK);
    let events: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("event: "))
        .collect();
    assert!(events.contains(&"response.output_text.delta"), "{events:?}");
    assert_eq!(events[events.len() - 2..], ["error", "response.failed"]);
    let error_data = text
        .lines()
        .skip_while(|line| *line != "event: error")
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap();
    let error: Value = serde_json::from_str(error_data).unwrap();
    assert_eq!(error["code"], "server_error");
    assert!(
        error.get("status").is_none(),
        "SSE errors are flat: {error}"
    );
}

#[tokio::test]
async fn reasoning_tokens_are_counted_in_usage() {
    let response = post_json(
        &router(),
        json!({"model": "instant", "input": "hi",
               "metadata": {"sim_reasoning_tokens": "7", "sim_output_tokens": "3"}}),
    )
    .await;
    assert_eq!(response["output"][0]["type"], "reasoning");
    assert_eq!(response["output"][1]["type"], "message");
    assert_eq!(response["usage"]["output_tokens"], 10);
    assert_eq!(
        response["usage"]["output_tokens_details"]["reasoning_tokens"],
        7
    );
}

#[tokio::test]
async fn websocket_mid_stream_failure_is_an_error_with_status_then_failed() {
    let server = common::TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    client
        .send(
            &json!({"type": "response.create", "model": "tether-sim", "input": "hi",
                    "metadata": {"sim_fail": "server_error"}})
            .to_string(),
        )
        .await;
    let events = client.response_events().await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert!(types.contains(&"response.output_text.delta"), "{types:?}");
    assert_eq!(types[types.len() - 2..], ["error", "response.failed"]);
    let error = &events[events.len() - 2];
    assert_eq!(error["status"], 500);
    assert_eq!(error["error"]["code"], "server_error");
    let failed = &events[events.len() - 1]["response"];
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"]["code"], "server_error");
    // The connection stays usable.
    client
        .send(
            &json!({"type": "response.create", "model": "tether-sim", "input": "again"})
                .to_string(),
        )
        .await;
    let events = client.response_events().await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    server.stop().await;
}

/// The long task (`triage-ci-log`, issue 23's "a long rollout like the bench's"), played over
/// WebSocket mode with every call run by the sandbox on `long_task_project()`, as the playground
/// and the bench run it: 40 shell calls, each reading one shard's window of the log (~3,000
/// tokens, nothing elided), the context past 100k tokens, each message saying what its window
/// holds, then the summary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_long_task_reads_forty_windows_of_the_ci_log_and_summarises() {
    let server = common::TestServer::start(":memory:").await;
    let mut client = server.connect().await;
    let mut sandbox = Sandbox::new(tether_sandbox::long_task_project());
    let tools = sandbox.tool_specs(ApplyPatchForm::Freeform);
    let tokenizer = tether_server::tokenizer::tokenizer();
    let mut input = vec![json!({"role": "user", "content": tether_sandbox::LONG_TASK_PROMPT})];
    let mut previous: Option<String> = None;
    let mut messages = Vec::new();
    let mut last_input_tokens = 0;
    for turn in 0..=tether_sandbox::SHARDS {
        let mut body = json!({"type": "response.create", "model": "tether-sim", "input": input,
            "tools": tools, "store": false, "metadata": {"scenario": "triage-ci-log"}});
        if let Some(id) = &previous {
            body["previous_response_id"] = json!(id);
        }
        client.send(&body.to_string()).await;
        let completed = client.response_events().await.pop().unwrap();
        assert_eq!(completed["type"], "response.completed", "turn {turn}");
        let response = &completed["response"];
        last_input_tokens = response["usage"]["input_tokens"].as_u64().unwrap();
        previous = Some(response["id"].as_str().unwrap().to_string());
        let output = response["output"].as_array().unwrap();
        messages.push(
            output
                .iter()
                .find(|item| item["type"] == "message")
                .map(|item| item["content"][0]["text"].as_str().unwrap().to_string())
                .expect("every turn says something"),
        );
        let calls: Vec<&Value> = output
            .iter()
            .filter(|item| item["type"] == "function_call")
            .collect();
        if turn == tether_sandbox::SHARDS {
            assert!(calls.is_empty(), "the last turn only summarises");
            break;
        }
        assert_eq!(calls.len(), 1, "turn {turn}");
        let call = calls[0];
        assert_eq!(call["name"], "shell");
        let result = sandbox
            .call_tool("shell", call["arguments"].as_str().unwrap())
            .await;
        let shard = turn + 1;
        assert!(
            result.output.starts_with("Exit code: 0\n"),
            "turn {turn}: {}",
            &result.output[..200.min(result.output.len())]
        );
        assert!(
            result.output.contains(&format!("== shard {shard:02}/40"))
                && !result.output.contains("elided"),
            "turn {turn} reads shard {shard} whole"
        );
        let tokens = tokenizer.count(result.output.as_str());
        assert!(
            (2_500..3_500).contains(&tokens),
            "turn {turn}: {tokens} tokens"
        );
        input = vec![
            json!({"type": "function_call_output", "call_id": call["call_id"],
            "output": result.output}),
        ];
    }
    assert!(last_input_tokens > 100_000, "{last_input_tokens}");
    // Each message after a read says what that window held.
    for (shard, message) in messages.iter().enumerate().skip(1) {
        let (passed, failed) = tether_sandbox::shard_counts(shard);
        let said = format!("Shard {shard}/40");
        assert!(
            message.starts_with(&said)
                && message.contains(&format!("{passed} passed, {failed} failed")),
            "{message}"
        );
    }
    for (shard, name, _) in tether_sandbox::FAILURES {
        assert!(messages[shard].contains(name), "{}", messages[shard]);
    }
    assert!(messages[40].contains("Summary: 4 of the run's tests fail"));
    server.stop().await;
}
