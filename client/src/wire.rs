//! The text a client sends: a `response.create` frame, the body of `POST /v1/responses`, and the
//! frames that reach a running response (`response.append`, `response.inject`,
//! `response.steer`, docs/protocol.md §9) — all built from `tether-protocol`'s types.
//!
//! A request carrying a long conversation is mostly tool outputs, so the create frame and the
//! HTTP body are serialized straight to text — never through a `serde_json::Value` tree, which
//! would copy every item once more — and the fields a transport fixes (`type`, `stream`) are
//! spliced in front of the body. A request always has `model` first, so its text is
//! `{"model":…`.

use tether_protocol::{
    ClientFrame, Input, ResponseAppend, ResponseCreate, ResponseInject, ResponseSteer,
};

/// The `response.create` frame of `request`: its body flat next to `type`, as
/// [`ClientFrame::to_json`] writes it.
pub fn create_frame(request: &ResponseCreate) -> String {
    splice(request, r#""type":"response.create""#)
}

/// The body of `POST /v1/responses` for `request`, with `stream` set to `stream` whatever the
/// request said.
pub fn http_body(request: &ResponseCreate, stream: bool) -> String {
    match request.stream {
        Some(given) if given == stream => to_text(request),
        None if !stream => to_text(request),
        None => splice(request, r#""stream":true"#),
        Some(_) => {
            let mut request = request.clone();
            request.stream = Some(stream);
            to_text(&request)
        }
    }
}

/// `{"type":"response.append","input":[…]}`, on `stream_id`'s lane (the default lane when
/// `None`).
pub fn append_frame(input: Input, stream_id: Option<&str>) -> String {
    ClientFrame::ResponseAppend(ResponseAppend {
        input,
        client_metadata: None,
        stream_id: stream_id.map(str::to_string),
    })
    .to_json()
}

/// `{"type":"response.inject","response_id":…,"input":[…]}`.
pub fn inject_frame(response_id: &str, input: Input) -> String {
    ClientFrame::ResponseInject(ResponseInject {
        response_id: response_id.to_string(),
        input,
    })
    .to_json()
}

/// `{"type":"response.steer","previous_response_id":…,"input":…}`.
pub fn steer_frame(previous_response_id: &str, input: Input) -> String {
    ClientFrame::ResponseSteer(ResponseSteer {
        previous_response_id: previous_response_id.to_string(),
        input,
    })
    .to_json()
}

fn to_text(request: &ResponseCreate) -> String {
    serde_json::to_string(request).expect("requests always serialize")
}

/// `request`'s JSON with `field` (`"name":value`) as its first member.
fn splice(request: &ResponseCreate, field: &str) -> String {
    let body = to_text(request);
    let mut text = String::with_capacity(body.len() + field.len() + 1);
    text.push('{');
    text.push_str(field);
    text.push(',');
    // `body` is `{"model":…}`: a request always has its model, first.
    text.push_str(&body[1..]);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::{Item, decode_client_frame, decode_request};

    fn request() -> ResponseCreate {
        let mut request = ResponseCreate::new("instant", "hi");
        request.previous_response_id = Some("resp_1".into());
        request.store = Some(false);
        request
    }

    #[test]
    fn a_create_frame_decodes_as_its_request() {
        let frame = create_frame(&request());
        assert!(frame.starts_with(r#"{"type":"response.create","model":"instant""#));
        assert_eq!(
            decode_client_frame(&frame),
            Ok(ClientFrame::ResponseCreate(Box::new(request())))
        );
    }

    #[test]
    fn an_http_body_streams_as_asked() {
        let body = |request: &ResponseCreate, stream| {
            decode_request(serde_json::from_str(&http_body(request, stream)).unwrap()).unwrap()
        };
        assert_eq!(body(&request(), true).stream, Some(true));
        assert_eq!(body(&request(), false).stream, None);
        let mut streaming = request();
        streaming.stream = Some(true);
        assert_eq!(body(&streaming, true).stream, Some(true));
        assert_eq!(body(&streaming, false).stream, Some(false));
        let mut expected = request();
        expected.stream = Some(true);
        assert_eq!(body(&request(), true), expected);
    }

    #[test]
    fn continuation_frames_carry_only_their_fields() {
        let input = Input::Items(vec![Item::user_text("more")]);
        let append: serde_json::Value =
            serde_json::from_str(&append_frame(input.clone(), Some("b"))).unwrap();
        assert_eq!(
            append,
            serde_json::json!({"type": "response.append", "stream_id": "b",
                "input": [{"type": "message", "role": "user", "content": "more"}]})
        );
        for frame in [
            append_frame(input.clone(), None),
            inject_frame("resp_1", input.clone()),
            steer_frame("resp_1", Input::Text("faster".into())),
        ] {
            assert!(decode_client_frame(&frame).is_ok(), "{frame}");
        }
    }
}
