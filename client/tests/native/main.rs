//! The native backend against a real server in this process (127.0.0.1, port 0): WebSocket
//! mode (continuations, lanes, warm-ups, append, inject, steer), HTTP (JSON and SSE), and the
//! recovery rules of `Session`. One test binary, so the server is linked once.
#![cfg(not(target_arch = "wasm32"))]

mod common;
mod http;
mod recovery;
mod websocket;

use serde_json::json;
use tether_protocol::{ResponseCreate, Tool};

/// A request with one function tool (`shell`), as an agent sends it; the simulator's default
/// generator calls it while the conversation does not end with a tool output.
pub fn agent_request(input: &str) -> ResponseCreate {
    let shell: Tool = serde_json::from_value(json!({
        "type": "function", "name": "shell", "description": "Runs a shell command.",
        "parameters": {"type": "object", "required": ["command"],
            "properties": {"command": {"type": "array", "items": {"type": "string"}}}}
    }))
    .unwrap();
    let mut request = ResponseCreate::new("tether-sim", input);
    request.tools = vec![shell];
    request.store = Some(false);
    request
}

/// A request whose answer is `tokens` tokens of text (`metadata.sim_output_tokens`).
pub fn text_request(input: &str, tokens: usize) -> ResponseCreate {
    let mut request = ResponseCreate::new("tether-sim", input);
    let mut metadata = serde_json::Map::new();
    metadata.insert("sim_output_tokens".into(), json!(tokens.to_string()));
    request.metadata = Some(metadata);
    request.store = Some(false);
    request
}

/// The output item of a tool call answering `call`.
pub fn tool_output(call: &tether_protocol::Item, text: &str) -> tether_protocol::Item {
    let tether_protocol::Item::FunctionCall(call) = call else {
        panic!("not a function call: {call:?}")
    };
    tether_protocol::Item::FunctionCallOutput(tether_protocol::items::ToolCallOutput {
        id: None,
        call_id: call.call_id.clone(),
        output: tether_protocol::items::ToolOutputContent::Text(text.into()),
        status: None,
    })
}
