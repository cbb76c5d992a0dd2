//! One response over several engine calls — v1 `response.append` and the multi-agent beta's
//! `response.inject` — and steering a running response (`response.steer`): the event sequences,
//! what is stored and billed, and every refusal with its reason.

mod common;

use common::{Client, TestServer, config, connect_with_headers};
use serde_json::{Value, json};

const V1: (&str, &str) = ("OpenAI-Beta", "responses_websockets=2026-02-04");
const MULTI_AGENT: (&str, &str) = ("OpenAI-Beta", "responses_multi_agent=v1");

fn lookup_tool() -> Value {
    json!({"type": "function", "name": "lookup", "description": "Looks a word up.",
           "parameters": {"type": "object", "properties": {"word": {"type": "string"}},
                          "required": ["word"]}})
}

/// Reads events until one of type `kind` (returned last).
async fn until(client: &mut Client, kind: &str) -> Vec<Value> {
    let mut events = Vec::new();
    loop {
        let event = client.next_json().await;
        let found = event["type"] == kind;
        events.push(event);
        if found {
            return events;
        }
    }
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn output_for(call_id: &str, output: &str) -> Value {
    json!({"type": "function_call_output", "call_id": call_id, "output": output})
}

/// The body of a `GET` as JSON.
async fn get_json(server: &TestServer, path: &str) -> Value {
    let reply = server.get(path).await;
    reply
        .json()
        .unwrap_or_else(|_| panic!("not JSON: {}", reply.text()))
}

/// Every event of one response is numbered 0, 1, 2, … in the order sent.
fn assert_one_sequence(events: &[Value]) {
    let numbers: Vec<u64> = events
        .iter()
        .filter_map(|e| e["sequence_number"].as_u64())
        .collect();
    let expected: Vec<u64> = (0..numbers.len() as u64).collect();
    assert_eq!(numbers, expected, "{:?}", types(events));
}

#[tokio::test]
async fn append_resumes_the_paused_response_which_is_stored_and_billed_once() {
    let server = TestServer::start(":memory:").await;
    let mut client = connect_with_headers(server.addr, &[V1, ("x-tether-timing", "1")]).await;
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": true,
                    "input": "define tether", "tools": [lookup_tool()]})
            .to_string(),
        )
        .await;
    let paused = until(&mut client, "response.done").await;
    let done = paused.last().unwrap();
    assert_eq!(done["response"]["status"], "in_progress");
    let id = done["response"]["id"].as_str().unwrap().to_string();
    let call = &done["response"]["output"][0];
    assert_eq!(call["type"], "function_call");
    let call_id = call["call_id"].as_str().unwrap();
    assert!(done["response"]["usage"]["input_tokens"].as_u64().unwrap() > 0);

    // The client's tool takes a while: its time is neither the API's nor the engine's.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    client
        .send(
            &json!({"type": "response.append",
                    "input": [output_for(call_id, "a rope that holds")]})
            .to_string(),
        )
        .await;
    let resumed = client.response_events().await;
    let mut all = paused.clone();
    all.extend(resumed.iter().cloned());
    assert_one_sequence(&all);
    assert!(
        !types(&resumed).contains(&"response.created"),
        "the same response resumes: {:?}",
        types(&resumed)
    );
    let completed = resumed.last().unwrap();
    assert_eq!(completed["type"], "response.completed");
    let response = &completed["response"];
    assert_eq!(response["id"], id.as_str());
    assert_eq!(response["output"].as_array().unwrap().len(), 2);
    let answer = response["output"][1]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(answer.contains("a rope that holds"), "{answer}");
    // Two engine calls: the second read the first's prompt again, plus the call and its output.
    let first_input = done["response"]["usage"]["input_tokens"].as_u64().unwrap();
    assert!(response["usage"]["input_tokens"].as_u64().unwrap() > 2 * first_input);
    let timing = &completed["tether_timing"];
    assert_eq!(timing["engine"]["calls"], 2, "{timing}");
    assert!(timing["api_us"].as_u64().unwrap() < 250_000, "{timing}");
    assert!(
        timing["stages"]["generate_us"].as_u64().unwrap() > 0,
        "{timing}"
    );
    // Rendered twice (the request, then the call and its output), summed.
    assert!(
        timing["stages"]["render_us"].as_u64().unwrap() > 0,
        "{timing}"
    );

    // `response.completed` closes it to appends.
    client
        .send(
            &json!({"type": "response.append", "input": [output_for(call_id, "again")]})
                .to_string(),
        )
        .await;
    let refused = client.next_json().await;
    assert_eq!(refused["type"], "error");
    assert_eq!(refused["error"]["code"], "response_already_completed");

    // Stored once, whole: its input items are the user's message and the tool output.
    let stored = get_json(&server, &format!("/v1/responses/{id}")).await;
    assert_eq!(stored["status"], "completed");
    assert_eq!(stored["output"], response["output"]);
    let items = get_json(
        &server,
        &format!("/v1/responses/{id}/input_items?order=asc"),
    )
    .await;
    let kinds: Vec<&str> = items["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["message", "function_call_output"]);

    // And it continues like any other response.
    client
        .send(
            &json!({"type": "response.create", "model": "m", "previous_response_id": id,
                    "input": "thanks", "tools": [lookup_tool()], "tool_choice": "none"})
            .to_string(),
        )
        .await;
    let next = client.response_events().await;
    assert_eq!(next.last().unwrap()["type"], "response.completed");
    server.stop().await;
}

#[tokio::test]
async fn a_new_request_ends_the_pause_and_append_needs_the_v1_beta() {
    let server = TestServer::start(":memory:").await;
    let mut client = connect_with_headers(server.addr, &[V1]).await;
    // Nothing is paused yet.
    client
        .send(&json!({"type": "response.append", "input": []}).to_string())
        .await;
    let refused = client.next_json().await;
    assert_eq!(refused["error"]["code"], "response_not_found");

    let create = json!({"type": "response.create", "model": "m", "store": false,
                        "input": "go", "tools": [lookup_tool()]});
    client.send(&create.to_string()).await;
    let paused = until(&mut client, "response.done").await;
    let id = paused.last().unwrap()["response"]["id"].clone();
    // A response.create on the lane instead of an append: the paused one completes as it
    // stands, then the new one runs.
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "input": "other"})
                .to_string(),
        )
        .await;
    let closed = client.response_events().await;
    let completed = closed.last().unwrap();
    assert_eq!(completed["type"], "response.completed");
    assert_eq!(completed["response"]["id"], id);
    let next = client.response_events().await;
    assert_ne!(next.last().unwrap()["response"]["id"], id);

    // v2 (no beta header): a function call completes the response; append is refused.
    let mut v2 = server.connect().await;
    v2.send(&create.to_string()).await;
    let events = v2.response_events().await;
    assert_eq!(events.last().unwrap()["type"], "response.completed");
    v2.send(&json!({"type": "response.append", "input": []}).to_string())
        .await;
    let refused = v2.next_json().await;
    assert_eq!(refused["error"]["code"], "append_not_supported");
    server.stop().await;
}

#[tokio::test]
async fn inject_resumes_a_waiting_response_and_hands_back_what_it_cannot_take() {
    let server = TestServer::start(":memory:").await;
    let mut client = connect_with_headers(server.addr, &[MULTI_AGENT]).await;
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "input": "define",
                    "tools": [lookup_tool()], "multi_agent": {"enabled": true}})
            .to_string(),
        )
        .await;
    let waiting = until(&mut client, "response.output_item.done").await;
    let call = &waiting.last().unwrap()["item"];
    let call_id = call["call_id"].as_str().unwrap().to_string();
    let id = waiting[0]["response"]["id"].as_str().unwrap().to_string();

    // Unknown response: handed back.
    let stray = vec![output_for(&call_id, "x")];
    client
        .send(
            &json!({"type": "response.inject", "response_id": "resp_nope", "input": stray})
                .to_string(),
        )
        .await;
    let failed = client.next_json().await;
    assert_eq!(failed["type"], "response.inject.failed");
    assert_eq!(failed["error"]["code"], "response_not_found");
    assert_eq!(failed["input"], json!(stray));

    // An output for a call the response did not make: refused, and it keeps waiting.
    let wrong = vec![output_for("call_other", "x")];
    client
        .send(&json!({"type": "response.inject", "response_id": id, "input": wrong}).to_string())
        .await;
    let wrong_failed = client.next_json().await;
    assert_eq!(wrong_failed["type"], "response.inject.failed");
    assert_eq!(wrong_failed["input"], json!(wrong));
    assert_eq!(wrong_failed["response_id"], id.as_str());

    let good = vec![output_for(&call_id, "the word means a rope")];
    client
        .send(&json!({"type": "response.inject", "response_id": id, "input": good}).to_string())
        .await;
    let resumed = client.response_events().await;
    assert_eq!(resumed[0]["type"], "response.inject.created");
    assert_eq!(resumed[0]["response_id"], id.as_str());
    // The refusal is in the response's sequence (the unknown response's one is not).
    let mut all = waiting.clone();
    all.push(wrong_failed);
    all.extend(resumed.iter().cloned());
    assert_one_sequence(&all);
    let completed = resumed.last().unwrap();
    assert_eq!(completed["type"], "response.completed");
    let text = completed["response"]["output"][1]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("the word means a rope"), "{text}");

    // Too late: handed back, to be sent with response.create + previous_response_id.
    client
        .send(&json!({"type": "response.inject", "response_id": id, "input": good}).to_string())
        .await;
    let failed = client.next_json().await;
    assert_eq!(failed["error"]["code"], "response_already_completed");
    assert_eq!(failed["input"], json!(good));
    // … numbered after its end.
    assert_eq!(failed["sequence_number"], all.len());

    // A malformed inject: a 400, and the connection closes.
    client
        .send(&json!({"type": "response.inject", "input": good}).to_string())
        .await;
    let error = client.next_json().await;
    assert_eq!(error["type"], "error");
    assert_eq!(error["status"], 400);
    let close = close_code(&mut client).await;
    assert_eq!(close, Some(1008));
    server.stop().await;
}

#[tokio::test]
async fn over_http_a_multi_agent_response_completes_at_the_pause() {
    let server = TestServer::start(":memory:").await;
    let body = json!({"model": "m", "store": false, "input": "define",
                      "tools": [lookup_tool()], "multi_agent": {"enabled": true}});
    let response = server.post_json("/v1/responses", &body).await;
    assert_eq!(response["status"], "completed");
    assert_eq!(response["output"][0]["type"], "function_call");
    server.stop().await;
}

/// A server whose answers take long enough to steer: the echo answer (~60 tokens) at 60
/// tokens/s.
async fn slow_server() -> TestServer {
    let mut cfg = config(":memory:");
    cfg.tokens_per_second = 60.0;
    TestServer::start_with(cfg).await
}

#[tokio::test]
async fn a_steer_ends_the_response_at_a_safe_boundary_and_a_successor_takes_it_up() {
    let server = slow_server().await;
    let mut client = server.connect().await;
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false,
                    "input": "write a long story", "instructions": "Be brief."})
            .to_string(),
        )
        .await;
    let started = until(&mut client, "response.output_text.delta").await;
    let id = started[0]["response"]["id"].as_str().unwrap().to_string();
    client
        .send(&json!({"type": "response.steer", "previous_response_id": id, "input": "make it about a cat"}).to_string())
        .await;
    let rest = client.response_events().await;
    let accepted = rest
        .iter()
        .find(|e| e["type"] == "response.steer.accepted")
        .expect("accepted");
    assert_eq!(accepted["steer"]["previous_response_id"], id.as_str());
    let steer_id = accepted["steer"]["id"].as_str().unwrap();
    assert!(steer_id.starts_with("steer_"), "{steer_id}");
    let mut all = started.clone();
    all.extend(rest.iter().cloned());
    assert_one_sequence(&all);
    let incomplete = rest.last().unwrap();
    assert_eq!(incomplete["type"], "response.incomplete");
    assert_eq!(
        incomplete["response"]["incomplete_details"]["reason"],
        "steered"
    );
    // Stopped between two deltas: the message closed incomplete, well before 400 tokens.
    let message = &incomplete["response"]["output"][0];
    assert_eq!(message["status"], "incomplete");
    let full = echo_answer_tokens("write a long story");
    assert!(
        incomplete["response"]["usage"]["output_tokens"]
            .as_u64()
            .unwrap()
            < full
    );

    // The successor: its own response, continuing the steered one with the steer's input and
    // its settings.
    let successor = client.response_events().await;
    let created = &successor[0]["response"];
    assert_eq!(successor[0]["type"], "response.created");
    assert_eq!(created["previous_response_id"], id.as_str());
    assert_eq!(created["instructions"], "Be brief.");
    assert_one_sequence(&successor);
    let completed = successor.last().unwrap();
    assert_eq!(completed["type"], "response.completed");
    let text = completed["response"]["output"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("make it about a cat"), "{text}");
    server.stop().await;
}

#[tokio::test]
async fn steer_failures_name_their_reason_and_hand_the_input_back() {
    let server = slow_server().await;
    let mut client = server.connect().await;
    // No such response on this connection.
    client
        .send(
            &json!({"type": "response.steer", "previous_response_id": "resp_nope", "input": "hi"})
                .to_string(),
        )
        .await;
    let failed = client.next_json().await;
    assert_eq!(failed["type"], "response.steer.failed");
    assert_eq!(failed["error"]["code"], "response_not_found");
    assert_eq!(failed["error"]["type"], "invalid_request_error");
    assert_eq!(failed["steer"]["input"], "hi");
    // Only type, previous_response_id and input.
    client
        .send(&json!({"type": "response.steer", "previous_response_id": "resp_x", "input": "hi", "stream_id": "a"}).to_string())
        .await;
    let failed = client.next_json().await;
    assert_eq!(failed["error"]["code"], "invalid_input");
    assert_eq!(failed["steer"]["input"], "hi");

    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "input": "go"})
                .to_string(),
        )
        .await;
    let started = until(&mut client, "response.output_text.delta").await;
    let id = started[0]["response"]["id"].as_str().unwrap().to_string();
    // Not a user message: refused in the response's sequence.
    let assistant = json!([{"type": "message", "role": "assistant", "content": "I say"}]);
    client
        .send(
            &json!({"type": "response.steer", "previous_response_id": id, "input": assistant})
                .to_string(),
        )
        .await;
    let rest = client.response_events().await;
    let failed = rest
        .iter()
        .find(|e| e["type"] == "response.steer.failed")
        .expect("failed");
    assert_eq!(failed["error"]["code"], "invalid_input");
    assert_eq!(failed["steer"]["input"], assistant);
    assert!(failed["sequence_number"].is_u64());
    // Not steered: it completes.
    assert_eq!(rest.last().unwrap()["type"], "response.completed");

    // Completed: too late.
    client
        .send(
            &json!({"type": "response.steer", "previous_response_id": id, "input": "late"})
                .to_string(),
        )
        .await;
    let failed = client.next_json().await;
    assert_eq!(failed["error"]["code"], "response_already_completed");
    assert_eq!(failed["steer"]["input"], "late");
    server.stop().await;
}

#[tokio::test]
async fn a_steer_waits_for_the_tool_outputs_when_the_response_ends_with_calls() {
    let scenarios = std::env::temp_dir().join(format!("tether-steer-{}", rand::random::<u64>()));
    std::fs::create_dir_all(&scenarios).unwrap();
    // One tool call with long arguments (the steer arrives while they stream), then a branch
    // on what the user said since.
    let long = "x".repeat(2000);
    let scenario = json!({
        "name": "steerable",
        "steps": [
            {"calls": [{"tool": "lookup", "arguments": {"word": long}}]},
            {"when": [{"user_says": "cat"}], "message": "Switching to cats, as you asked."},
            {"message": "Carrying on as planned."}
        ]
    });
    std::fs::write(scenarios.join("steerable.json"), scenario.to_string()).unwrap();
    let mut cfg = config(":memory:");
    cfg.tokens_per_second = 400.0;
    cfg.scenario_dir = Some(scenarios.clone());
    let server = TestServer::start_with(cfg).await;
    let mut client = server.connect().await;
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "input": "start",
                    "tools": [lookup_tool()], "metadata": {"scenario": "steerable"}})
            .to_string(),
        )
        .await;
    let started = until(&mut client, "response.function_call_arguments.delta").await;
    let id = started[0]["response"]["id"].as_str().unwrap().to_string();
    client
        .send(&json!({"type": "response.steer", "previous_response_id": id, "input": "about a cat please"}).to_string())
        .await;
    let rest = client.response_events().await;
    assert!(types(&rest).contains(&"response.steer.accepted"));
    // The tool call ran to its end: the response completed with it.
    let completed = rest.last().unwrap();
    assert_eq!(completed["type"], "response.completed");
    let call = &completed["response"]["output"][0];
    assert_eq!(call["type"], "function_call");
    assert_eq!(call["status"], "completed");
    let call_id = call["call_id"].as_str().unwrap();
    // … then `response.steer.pending`, in the same sequence, with the stub to fill.
    let pending = client.next_json().await;
    assert_eq!(pending["type"], "response.steer.pending");
    assert_eq!(pending["reason"], "waiting_for_required_input");
    assert_eq!(
        pending["required_input"],
        json!([{"type": "function_call_output", "call_id": call_id, "name": "lookup"}])
    );
    let mut all = started.clone();
    all.extend(rest.iter().cloned());
    all.push(pending.clone());
    assert_one_sequence(&all);

    // The next request gets the steer prepended; the scenario branches on it.
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false,
                    "previous_response_id": id, "tools": [lookup_tool()],
                    "metadata": {"scenario": "steerable"},
                    "input": [output_for(call_id, "found")]})
            .to_string(),
        )
        .await;
    let next = client.response_events().await;
    let text = next.last().unwrap()["response"]["output"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    // It branched on the steer, and its message says so in the user's words.
    assert_eq!(
        text,
        "Understood: “about a cat please”. Switching to cats, as you asked."
    );
    server.stop().await;
    std::fs::remove_dir_all(&scenarios).unwrap();
}

#[tokio::test]
async fn steers_while_a_response_waits_are_announced_and_taken_when_it_resumes() {
    let server = TestServer::start(":memory:").await;
    let mut client = connect_with_headers(server.addr, &[MULTI_AGENT]).await;
    client
        .send(
            &json!({"type": "response.create", "model": "m", "store": false, "input": "define",
                    "tools": [lookup_tool()], "multi_agent": {"enabled": true}})
            .to_string(),
        )
        .await;
    let waiting = until(&mut client, "response.output_item.done").await;
    let call_id = waiting.last().unwrap()["item"]["call_id"]
        .as_str()
        .unwrap()
        .to_string();
    let id = waiting[0]["response"]["id"].as_str().unwrap().to_string();
    // One more than a response takes: the last is refused, in the response's sequence.
    let limit = tether_server::pipeline::MAX_PENDING_STEERS;
    for n in 0..=limit {
        client
            .send(&json!({"type": "response.steer", "previous_response_id": id, "input": format!("steer {n}")}).to_string())
            .await;
    }
    let mut announced = Vec::new();
    while announced.len() <= limit {
        announced.push(client.next_json().await);
    }
    let accepted = announced
        .iter()
        .filter(|e| e["type"] == "response.steer.accepted")
        .count();
    assert_eq!(accepted, limit, "{:?}", types(&announced));
    let refused = announced.last().unwrap();
    assert_eq!(refused["type"], "response.steer.failed");
    assert_eq!(refused["error"]["code"], "too_many_pending_steers");
    assert_eq!(refused["steer"]["input"], format!("steer {limit}"));
    let mut all = waiting.clone();
    all.extend(announced.iter().cloned());
    assert_one_sequence(&all);

    // The tool output resumes it; it is steered at its first boundary and the successor takes
    // every accepted steer, in order.
    client
        .send(&json!({"type": "response.inject", "response_id": id, "input": [output_for(&call_id, "found")]}).to_string())
        .await;
    let ended = client.response_events().await;
    let last = ended.last().unwrap();
    assert_eq!(last["type"], "response.incomplete");
    assert_eq!(last["response"]["incomplete_details"]["reason"], "steered");
    // The successor inherits the settings — the tool and multi_agent — so it calls the tool
    // and waits in turn; its answer then quotes the last steer.
    let successor = until(&mut client, "response.output_item.done").await;
    let created = &successor[0]["response"];
    assert_eq!(created["previous_response_id"], id.as_str());
    let successor_id = created["id"].as_str().unwrap();
    let call_id = successor.last().unwrap()["item"]["call_id"]
        .as_str()
        .unwrap();
    client
        .send(&json!({"type": "response.inject", "response_id": successor_id, "input": [output_for(call_id, "again")]}).to_string())
        .await;
    let done = client.response_events().await;
    let text = done.last().unwrap()["response"]["output"][1]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains(&format!("\"steer {}\"", limit - 1)), "{text}");
    server.stop().await;
}

/// How many tokens the echo generator's whole answer to `prompt` has.
fn echo_answer_tokens(prompt: &str) -> u64 {
    tether_server::tokenizer::count(&tether_server::sim::echo::answer(Some(prompt))) as u64
}

/// Reads until the server's close frame; its code.
async fn close_code(client: &mut Client) -> Option<u16> {
    client.until_close().await.1
}
