//! The HTTP path's optional process-wide token cache (`--token-cache-tokens`): the same counts
//! as without it, and a re-sent conversation is looked up instead of tokenized again.

mod common;

use common::TestServer;
use serde_json::{Value, json};

fn stateless_turn(conversation: &[Value]) -> Value {
    json!({"model": "instant", "store": false, "instructions": "Be brief.",
        "tools": [{"type": "function", "name": "shell",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}],
        "input": conversation, "metadata": {"sim_tool_calls": "0", "sim_output_tokens": "5"}})
}

#[tokio::test]
async fn stateless_http_turns_reuse_cached_tokens_with_identical_counts() {
    let plain = TestServer::start(":memory:").await;
    let mut config = common::config(":memory:");
    config.token_cache_tokens = 1_000_000;
    let cached = TestServer::start_with(config).await;

    let mut conversation = vec![json!({"role": "user", "content": "List the files."})];
    for turn in 0..3 {
        let body = stateless_turn(&conversation);
        let with_cache = cached.post_json("/v1/responses", &body).await;
        let without = plain.post_json("/v1/responses", &body).await;
        assert_eq!(with_cache["status"], "completed", "{with_cache}");
        assert_eq!(
            with_cache["usage"]["input_tokens"], without["usage"]["input_tokens"],
            "turn {turn}: the cache changes no count"
        );
        conversation.extend(with_cache["output"].as_array().unwrap().iter().cloned());
        conversation.push(json!({"role": "user", "content": format!("Now step {turn}.")}));
    }
    // Turn 1 rendered the preamble and one message; turns 2 and 3 found the preamble and
    // every block an earlier turn had rendered.
    assert_eq!(
        cached.metric("tether_token_cache_misses_total").await,
        2 + 2 + 2
    );
    assert_eq!(cached.metric("tether_token_cache_hits_total").await, 2 + 4);
    assert!(cached.metric("tether_token_cache_tokens").await > 0);
    assert!(
        !plain
            .get("/metrics")
            .await
            .text()
            .contains("tether_token_cache")
    );
    plain.stop().await;
    cached.stop().await;
}
