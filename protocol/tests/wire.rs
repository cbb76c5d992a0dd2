//! Round-trip and decoding tests on the example payloads of the wire contract, `docs/protocol.md`.

use serde_json::{Value, json};
use tether_protocol::events::Part;
use tether_protocol::items::OutputText;
use tether_protocol::{
    ApiError, ClientFrame, DecodeError, ErrorFrame, Input, Item, ResponseCreate,
    ResponseStreamBuilder, ServerEvent, StreamEvent, Tool, Usage, decode_client_frame,
};

fn roundtrip_event(value: Value) -> ServerEvent {
    let event: ServerEvent = serde_json::from_value(value.clone()).expect("decodes");
    let back = serde_json::to_value(&event).unwrap();
    assert_eq!(back, value, "re-encoding changes the event");
    event
}

fn create(frame: Value) -> ResponseCreate {
    match decode_client_frame(&frame.to_string()).expect("decodes") {
        ClientFrame::ResponseCreate(request) => *request,
        #[allow(unreachable_patterns)]
        other => panic!("a response.create frame expected, got {other:?}"),
    }
}

#[test]
fn codex_style_frame_decodes_with_every_field() {
    let request = create(json!({
        "type": "response.create",
        "model": "gpt-5.1-codex",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "be brief"}]},
            {"type": "function_call_output", "call_id": "call_1", "output": "ok"},
            {"type": "custom_tool_call_output", "call_id": "call_2", "output": "patched"},
            {"type": "web_search_call", "id": "ws_1", "status": "completed"}
        ],
        "tools": [
            {"type": "function", "name": "shell", "parameters": {"type": "object"}, "strict": false},
            {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
            {"type": "namespace", "name": "mcp", "description": "d", "tools": [{"type": "function", "name": "x"}]},
            {"type": "web_search"}
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": true,
        "previous_response_id": "resp_1",
        "store": false,
        "stream": true,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "k",
        "client_metadata": {"x": 1},
        "reasoning": {"effort": "medium", "summary": "auto"},
        "generate": true,
        "stream_id": "lane-1",
        "some_future_field": {"ignored": true}
    }));
    assert_eq!(request.model, "gpt-5.1-codex");
    assert_eq!(request.previous_response_id.as_deref(), Some("resp_1"));
    assert!(!request.stores());
    assert_eq!(request.stream_id.as_deref(), Some("lane-1"));
    let Input::Items(items) = &request.input else {
        panic!("items expected")
    };
    assert_eq!(items.len(), 4);
    assert!(matches!(items[0], Item::Message(_)));
    assert!(matches!(items[1], Item::FunctionCallOutput(_)));
    assert!(matches!(items[2], Item::CustomToolCallOutput(_)));
    assert!(matches!(&items[3], Item::Unknown(v) if v["type"] == "web_search_call"));
    assert!(matches!(request.tools[0], Tool::Function(_)));
    assert!(matches!(request.tools[1], Tool::Custom(_)));
    assert!(matches!(&request.tools[2], Tool::Namespace(ns) if ns.tools.len() == 1));
    assert!(matches!(&request.tools[3], Tool::Other(v) if v["type"] == "web_search"));
    // Unknown items and tools survive re-encoding untouched.
    let encoded = serde_json::to_value(&request).unwrap();
    assert_eq!(
        encoded["input"][3],
        json!({"type": "web_search_call", "id": "ws_1", "status": "completed"})
    );
    assert_eq!(encoded["tools"][3], json!({"type": "web_search"}));
}

#[test]
fn string_input_and_untyped_messages() {
    let request = create(json!({"type": "response.create", "model": "m", "input": "hi"}));
    assert_eq!(request.input, Input::Text("hi".into()));
    assert_eq!(
        request.clone().input.into_items(),
        vec![Item::user_text("hi")]
    );

    let request = create(json!({
        "type": "response.create", "model": "m",
        "input": [{"role": "user", "content": "no type key"}]
    }));
    let items = request.input.into_items();
    assert!(matches!(&items[0], Item::Message(m) if m.content.text() == "no type key"));
}

#[test]
fn nulls_and_empty_input_are_absent_values() {
    let request = create(json!({
        "type": "response.create", "model": "m", "input": [], "tools": null, "instructions": null
    }));
    assert_eq!(request.input, Input::Items(vec![]));
    assert!(request.tools.is_empty());
    assert!(request.generates());
    let request = create(json!({"type": "response.create", "model": "m", "generate": false}));
    assert!(!request.generates());
}

#[test]
fn nested_response_body_is_accepted() {
    let request =
        create(json!({"type": "response.create", "response": {"model": "m", "input": "x"}}));
    assert_eq!(request.model, "m");
    assert_eq!(request.input, Input::Text("x".into()));
}

#[test]
fn client_frame_encodes_flat() {
    let frame = ClientFrame::ResponseCreate(Box::new(ResponseCreate::new("m", "hello")));
    let value: Value = serde_json::from_str(&frame.to_json()).unwrap();
    assert_eq!(
        value,
        json!({"type": "response.create", "model": "m", "input": "hello"})
    );
}

/// The `request` and `client_frame` fuzz targets found a frame with an unknown top-level field
/// (`some_future_field`) whose re-encoding "changed the request": the field's name is kept in
/// `unknown_fields` for the server to refuse, never encoded, so the round trip holds for the
/// modelled fields and the re-decoded frame names no unknown field.
#[test]
fn unknown_fields_are_named_on_decoding_and_never_encoded() {
    let request = create(json!({
        "type": "response.create", "model": "m", "input": "hi", "some_future_field": 1,
    }));
    assert_eq!(request.unknown_fields, ["some_future_field"]);
    let json = ClientFrame::ResponseCreate(Box::new(request.clone())).to_json();
    assert!(!json.contains("some_future_field"), "{json}");
    let again = create(serde_json::from_str(&json).unwrap());
    assert!(again.unknown_fields.is_empty());
    assert_eq!(
        again,
        ResponseCreate {
            unknown_fields: Vec::new(),
            ..request
        }
    );
}

#[test]
fn malformed_frames_are_typed_errors_naming_the_field() {
    assert!(matches!(
        decode_client_frame("{not json"),
        Err(DecodeError::NotJson(_))
    ));
    assert!(matches!(
        decode_client_frame("[1]"),
        Err(DecodeError::NotAnObject("an array"))
    ));
    assert_eq!(
        decode_client_frame(r#"{"model":"m"}"#),
        Err(DecodeError::MissingType)
    );
    assert_eq!(
        decode_client_frame(r#"{"type":"response.cancel"}"#),
        Err(DecodeError::UnknownType("response.cancel".into()))
    );
    let field = |text: &str| match decode_client_frame(text) {
        Err(DecodeError::InvalidField { field, .. }) => field,
        other => panic!("expected InvalidField, got {other:?}"),
    };
    assert_eq!(field(r#"{"type":"response.create","model":5}"#), "model");
    assert_eq!(field(r#"{"type":"response.create"}"#), "model");
    assert_eq!(
        field(r#"{"type":"response.create","model":"m","store":"yes"}"#),
        "store"
    );
    assert_eq!(
        field(r#"{"type":"response.create","model":"m","input":7}"#),
        "input"
    );
    let inner = field(
        r#"{"type":"response.create","model":"m","input":[{"type":"message","role":"user","content":3}]}"#,
    );
    assert!(inner.starts_with("input[0]"), "{inner}");
    let err = decode_client_frame(
        r#"{"type":"response.create","model":"m","tools":[{"type":"function"}]}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("name"), "{err}");
    let api = decode_client_frame(r#"{"type":"nope"}"#)
        .unwrap_err()
        .to_api_error();
    assert_eq!(api.kind.as_deref(), Some("invalid_request_error"));
    assert!(api.message.contains("nope"));
}

#[test]
fn error_frame_of_the_protocol_page_roundtrips() {
    let value = json!({"type": "error", "status": 400, "error": {
        "type": "invalid_request_error", "code": "previous_response_not_found",
        "message": "Previous response with id 'resp_abc' not found.", "param": "previous_response_id"}});
    let event = roundtrip_event(value);
    let StreamEvent::Error(frame) = event.event else {
        panic!("error expected")
    };
    assert_eq!(frame.status, Some(400));
    assert_eq!(
        frame.api_error().code.as_deref(),
        Some("previous_response_not_found")
    );

    let sse = ErrorFrame::sse(ApiError::server("boom"));
    assert_eq!(sse.api_error().message, "boom");
}

#[test]
fn text_answer_events_roundtrip() {
    roundtrip_event(
        json!({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0,
        "item": {"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
    );
    roundtrip_event(
        json!({"type": "response.content_part.added", "sequence_number": 3, "item_id": "msg_1",
        "output_index": 0, "content_index": 0,
        "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}}),
    );
    roundtrip_event(
        json!({"type": "response.output_text.delta", "sequence_number": 4, "item_id": "msg_1",
        "output_index": 0, "content_index": 0, "delta": "Hel", "logprobs": []}),
    );
    roundtrip_event(
        json!({"type": "response.output_text.done", "sequence_number": 5, "item_id": "msg_1",
        "output_index": 0, "content_index": 0, "text": "Hello", "logprobs": []}),
    );
    roundtrip_event(
        json!({"type": "response.output_item.done", "sequence_number": 7, "output_index": 0,
        "item": {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Hello", "annotations": [], "logprobs": []}]}}),
    );
}

#[test]
fn function_call_events_roundtrip() {
    roundtrip_event(
        json!({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0,
        "item": {"id": "fc_1", "type": "function_call", "status": "in_progress", "call_id": "call_1",
                 "name": "shell", "arguments": ""}}),
    );
    roundtrip_event(
        json!({"type": "response.function_call_arguments.delta", "sequence_number": 3,
        "item_id": "fc_1", "output_index": 0, "delta": "{\"cmd\""}),
    );
    roundtrip_event(
        json!({"type": "response.function_call_arguments.done", "sequence_number": 4,
        "item_id": "fc_1", "output_index": 0, "name": "shell", "arguments": "{\"cmd\":\"ls\"}"}),
    );
    roundtrip_event(
        json!({"type": "response.reasoning_summary_text.delta", "sequence_number": 1,
        "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "thinking"}),
    );
}

#[test]
fn unknown_event_types_decode_as_unknown() {
    let event: ServerEvent = serde_json::from_value(
        json!({"type": "response.future_thing", "sequence_number": 9, "x": 1}),
    )
    .unwrap();
    assert_eq!(event.event, StreamEvent::Unknown);
    assert_eq!(event.sequence_number, Some(9));
}

#[test]
fn lane_events_carry_stream_id() {
    let event = roundtrip_event(
        json!({"type": "response.output_text.delta", "sequence_number": 4,
        "stream_id": "lane-a", "item_id": "m", "output_index": 0, "content_index": 0, "delta": "x", "logprobs": []}),
    );
    assert_eq!(event.stream_id.as_deref(), Some("lane-a"));
}

#[test]
fn usage_has_the_documented_shape() {
    let value = serde_json::to_value(Usage::new(120, 100, 30, 5)).unwrap();
    assert_eq!(
        value,
        json!({"input_tokens": 120,
        "input_tokens_details": {"cached_tokens": 100, "cache_write_tokens": 0},
        "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 5}, "total_tokens": 150})
    );
}

fn built_sequence() -> (Vec<ServerEvent>, ResponseStreamBuilder) {
    let request = ResponseCreate::new("m", "hi");
    let response = tether_protocol::Response::in_progress("resp_1", 1_700_000_000, &request);
    let mut builder = ResponseStreamBuilder::new(response, None);
    let mut events = builder.start();
    events.extend(builder.begin_message("msg_1"));
    events.push(builder.text_delta("Hel"));
    events.push(builder.text_delta("lo"));
    events.extend(builder.end_item());
    events.push(builder.begin_function_call("fc_1", "call_1", "shell"));
    events.push(builder.arguments_delta("{}"));
    events.extend(builder.complete(Usage::new(1, 0, 3, 0), 1_700_000_001));
    (events, builder)
}

#[test]
fn builder_emits_the_full_sequence() {
    let (events, builder) = built_sequence();
    let types: Vec<_> = events.iter().map(ServerEvent::type_name).collect();
    assert_eq!(
        types,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    for (i, event) in events.iter().enumerate() {
        assert_eq!(event.sequence_number, Some(i as u64));
    }
    let response = builder.response();
    assert_eq!(response.output.len(), 2);
    assert_eq!(response.output_text(), "Hello");
    assert_eq!(response.usage.as_ref().unwrap().total_tokens, 4);
    let StreamEvent::ContentPartDone {
        part: Part::OutputText(OutputText { text, .. }),
        ..
    } = &events[7].event
    else {
        panic!("content_part.done expected")
    };
    assert_eq!(text, "Hello");
    // Every event survives the wire.
    for event in &events {
        let decoded: ServerEvent = serde_json::from_str(&event.to_json()).unwrap();
        assert_eq!(&decoded, event);
    }
}

/// The 31 fields Open Responses' `ResponseResource` requires, all of which Tether always sends.
const RESPONSE_RESOURCE_FIELDS: [&str; 31] = [
    "id",
    "object",
    "created_at",
    "completed_at",
    "status",
    "incomplete_details",
    "model",
    "previous_response_id",
    "instructions",
    "output",
    "error",
    "tools",
    "tool_choice",
    "truncation",
    "parallel_tool_calls",
    "text",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "top_logprobs",
    "temperature",
    "reasoning",
    "usage",
    "max_output_tokens",
    "max_tool_calls",
    "store",
    "background",
    "service_tier",
    "metadata",
    "safety_identifier",
    "prompt_cache_key",
];

/// Fields of `ResponseResource` that must never be `null`.
const NOT_NULL: [&str; 17] = [
    "id",
    "object",
    "created_at",
    "status",
    "model",
    "output",
    "tools",
    "tool_choice",
    "truncation",
    "parallel_tool_calls",
    "text",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "top_logprobs",
    "temperature",
    "store",
];

#[test]
fn response_object_has_the_fields_strict_clients_require() {
    let (_, builder) = built_sequence();
    let value = serde_json::to_value(builder.response()).unwrap();
    for field in RESPONSE_RESOURCE_FIELDS {
        assert!(value.get(field).is_some(), "missing {field}");
    }
    for field in NOT_NULL.iter().chain(&["background", "service_tier"]) {
        assert!(!value[field].is_null(), "{field} is null");
    }
    assert_eq!(value["object"], "response");
    assert_eq!(value["status"], "completed");
    assert_eq!(value["service_tier"], "default");
    assert_eq!(value["background"], false);
    assert_eq!(value["top_logprobs"], 0);
    assert_eq!(value["text"], json!({"format": {"type": "text"}}));
    assert_eq!(value["reasoning"], Value::Null);
}

#[test]
fn a_response_echoes_settings_in_the_open_responses_shapes() {
    let request = create(json!({
        "type": "response.create", "model": "m", "input": "hi",
        "tools": [
            {"type": "function", "name": "bare"},
            {"type": "function", "name": "full", "description": "d",
             "parameters": {"type": "object"}, "strict": true},
            {"type": "namespace", "name": "ns", "tools": [{"type": "function", "name": "inner"}]},
            {"type": "web_search"}
        ],
        "text": {"format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}},
                 "verbosity": null},
        "reasoning": {"effort": "low"},
        "service_tier": "auto", "safety_identifier": "u1", "top_logprobs": 3, "max_tool_calls": 2
    }));
    let response = tether_protocol::Response::in_progress("resp_1", 1, &request);
    let value = serde_json::to_value(&response).unwrap();
    assert_eq!(
        value["tools"],
        json!([
            {"type": "function", "name": "bare", "description": null, "parameters": null, "strict": null},
            {"type": "function", "name": "full", "description": "d",
             "parameters": {"type": "object"}, "strict": true},
            {"type": "namespace", "name": "ns", "tools": [
                {"type": "function", "name": "inner", "description": null, "parameters": null, "strict": null}]},
            {"type": "web_search"}
        ])
    );
    assert_eq!(
        value["text"],
        json!({"format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"},
                          "description": null, "strict": false}})
    );
    assert_eq!(
        value["reasoning"],
        json!({"effort": "low", "summary": null})
    );
    assert_eq!(value["service_tier"], "default");
    assert_eq!(value["safety_identifier"], "u1");
    assert_eq!(value["top_logprobs"], 3);
    assert_eq!(value["max_tool_calls"], 2);
    // The request itself still serializes its tools as given.
    let encoded = serde_json::to_value(&request).unwrap();
    assert_eq!(
        encoded["tools"][0],
        json!({"type": "function", "name": "bare"})
    );
    // A response decodes back to itself, and one without the newer fields (an older stored
    // response) or with them null takes the defaults.
    let decoded: tether_protocol::Response = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(serde_json::to_value(&decoded).unwrap(), value);
    let mut old = value;
    for field in [
        "presence_penalty",
        "top_logprobs",
        "background",
        "service_tier",
        "max_tool_calls",
    ] {
        old.as_object_mut().unwrap().remove(field);
    }
    old["frequency_penalty"] = Value::Null;
    let decoded: tether_protocol::Response = serde_json::from_value(old).unwrap();
    assert_eq!(decoded.service_tier, "default");
    assert_eq!(decoded.frequency_penalty, 0.0);
    assert!(!decoded.background);
}

#[test]
fn error_events_carry_a_code_and_both_shapes_over_sse() {
    // No code of its own: the type stands in, on WebSocket and SSE alike.
    let untyped = ApiError::invalid_request(None, "bad", Some("input"));
    let frame = serde_json::to_value(ErrorFrame::websocket(400, untyped.clone())).unwrap();
    assert_eq!(
        frame,
        json!({"status": 400, "error": {"type": "invalid_request_error",
               "code": "invalid_request_error", "message": "bad", "param": "input"}})
    );
    let sse = serde_json::to_value(ErrorFrame::sse(ApiError::server("boom"))).unwrap();
    assert_eq!(
        sse,
        json!({"code": "server_error", "message": "boom",
               "error": {"type": "server_error", "code": "server_error", "message": "boom", "param": null}})
    );
    // A code of its own is kept; a missing type follows the status.
    let coded = ApiError {
        kind: None,
        code: Some("rate_limit_exceeded".into()),
        message: "slow down".into(),
        param: None,
    };
    let filled = coded.with_code(Some(503));
    assert_eq!(filled.kind.as_deref(), Some("server_error"));
    assert_eq!(filled.code.as_deref(), Some("rate_limit_exceeded"));
}

#[test]
fn failure_is_error_then_failed() {
    let request = ResponseCreate::new("m", "hi");
    let response = tether_protocol::Response::in_progress("resp_1", 1, &request);
    let mut builder = ResponseStreamBuilder::new(response, Some("lane".into()));
    builder.start();
    let events = builder.fail(Some(500), ApiError::server("simulated"));
    assert_eq!(events[0].type_name(), "error");
    assert_eq!(events[0].sequence_number, Some(2));
    assert_eq!(events[1].type_name(), "response.failed");
    let json: Value = serde_json::from_str(&events[0].to_json()).unwrap();
    assert_eq!(json["status"], 500);
    assert_eq!(json["stream_id"], "lane");

    // `response.error.code` is a string even when the failure has no code.
    let mut builder = ResponseStreamBuilder::new(
        tether_protocol::Response::in_progress("resp_2", 1, &request),
        None,
    );
    builder.start();
    let events = builder.fail(Some(400), ApiError::invalid_request(None, "no", None));
    let failed: Value = serde_json::from_str(&events[1].to_json()).unwrap();
    assert_eq!(failed["response"]["error"]["code"], "invalid_request_error");
    let error: Value = serde_json::from_str(&events[0].to_json()).unwrap();
    assert_eq!(error["error"]["code"], "invalid_request_error");
}

#[test]
fn custom_tool_calls_stream_their_input() {
    let request = ResponseCreate::new("m", "hi");
    let response = tether_protocol::Response::in_progress("resp_1", 1, &request);
    let mut builder = ResponseStreamBuilder::new(response, None);
    builder.start();
    let call = Item::CustomToolCall(tether_protocol::items::CustomToolCall {
        id: Some("ctc_1".into()),
        call_id: "call_1".into(),
        name: "apply_patch".into(),
        input: String::new(),
        status: None,
    });
    let mut events = vec![builder.begin_tool_call(call)];
    events.push(builder.arguments_delta("*** Begin"));
    events.push(builder.arguments_delta(" Patch"));
    events.extend(builder.end_item());
    let types: Vec<_> = events.iter().map(ServerEvent::type_name).collect();
    assert_eq!(
        types,
        [
            "response.output_item.added",
            "response.custom_tool_call_input.delta",
            "response.custom_tool_call_input.delta",
            "response.custom_tool_call_input.done",
            "response.output_item.done"
        ]
    );
    let StreamEvent::OutputItemDone {
        item: Item::CustomToolCall(done),
        ..
    } = &events[4].event
    else {
        panic!("custom tool call expected")
    };
    assert_eq!(done.input, "*** Begin Patch");
    let json: Value = serde_json::from_str(&events[4].to_json()).unwrap();
    assert_eq!(json["item"]["type"], "custom_tool_call");
    assert_eq!(json["item"]["status"], "completed");
}

#[test]
fn a_message_or_output_text_is_borrowed_unless_parts_are_joined() {
    use std::borrow::Cow;
    let items: Vec<Item> = serde_json::from_value(json!([
        {"type": "message", "role": "user", "content": "plain"},
        {"type": "message", "role": "user", "content": [
            {"type": "input_image", "image_url": "data:,"},
            {"type": "input_text", "text": "one part"}]},
        {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Be "}, {"type": "input_text", "text": "brief"},
            {"type": "input_image", "image_url": "data:,"}, {"type": "input_text", "text": "."}]},
        {"type": "message", "role": "user", "content": [
            {"type": "input_image", "image_url": "data:,"}]},
        {"type": "function_call_output", "call_id": "c1", "output": "a.txt"},
        {"type": "function_call_output", "call_id": "c2", "output": [
            {"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]}
    ]))
    .unwrap();
    let texts: Vec<(String, bool)> = items
        .iter()
        .map(|item| {
            let text = match item {
                Item::Message(m) => m.content.text_cow(),
                Item::FunctionCallOutput(o) => o.output.text_cow(),
                other => panic!("not a message or an output: {other:?}"),
            };
            let borrowed = matches!(text, Cow::Borrowed(_));
            (text.into_owned(), borrowed)
        })
        .collect();
    let expected = [
        ("plain", true),
        ("one part", true),
        ("Be brief.", false),
        ("", true),
        ("a.txt", true),
        ("ab", false),
    ];
    let expected: Vec<(String, bool)> = expected.iter().map(|(t, b)| (t.to_string(), *b)).collect();
    assert_eq!(texts, expected);
    // The owned form is the same text.
    for item in &items {
        if let Item::Message(m) = item {
            assert_eq!(m.content.text(), m.content.text_cow());
        }
    }
}

#[test]
fn an_event_encodes_as_serde_json_does_whatever_its_size() {
    // Instructions long and short, with every kind of escape, and none at all.
    let escapes = "line\n\t\"quoted\" back\\slash \u{1} \u{7f} é 🦀\r\u{8}\u{c}";
    for instructions in [
        None,
        Some(String::new()),
        Some("be brief".to_string()),
        Some(escapes.repeat(2_000)),
        Some("x".repeat(70_000)),
    ] {
        let mut request = ResponseCreate::new("m", "hi");
        request.instructions = instructions.map(Into::into);
        let response = tether_protocol::Response::in_progress("resp_1", 1_700_000_000, &request);
        let mut builder = ResponseStreamBuilder::new(response, Some("lane".into()));
        let mut events = builder.start();
        events.extend(builder.begin_message("msg_1"));
        events.push(builder.text_delta(escapes));
        events.extend(builder.end_item());
        events.extend(builder.complete(Usage::new(1, 0, 3, 0), 1_700_000_001));
        for event in &events {
            assert_eq!(event.to_json(), serde_json::to_string(event).unwrap());
        }
    }
}
