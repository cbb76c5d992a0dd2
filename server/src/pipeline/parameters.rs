//! Which top-level parameters of `response.create` this server serves, over which transport
//! (docs/protocol.md §2, "Parameters"): nothing a client sends is dropped silently. A field
//! [`ResponseCreate`] does not model is refused with 400 `unknown_parameter` naming it — a typo'd
//! `previous_response_id` must not quietly start a new conversation — unless it is one of
//! [`ALLOWED_UNKNOWN`], fields the pinned official clients really send; a parameter Tether knows
//! but does not implement is refused with a message that says so.

use serde_json::Value;
use tether_protocol::ResponseCreate;

use crate::error::ApiFailure;

/// The transport a request came by: some parameters belong to one of them only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Http,
    WebSocket,
}

/// Top-level fields that a pinned client sends and [`ResponseCreate`] does not model, with who
/// sends them and why ignoring them loses nothing. The conformance suite runs those clients
/// (`tests/conformance/`), so a field missing here fails it; a test below keeps every entry
/// unknown to the protocol (a field it models is served, not ignored).
pub const ALLOWED_UNKNOWN: &[(&str, &str)] = &[];

/// Parameters of the reference API that Tether knows and does not implement.
const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "prompt",
        "Stored prompt templates ('prompt') are not supported by this server: send the \
         template's text as 'instructions' and 'input'.",
    ),
    (
        "moderation",
        "Moderation of a response's input and output ('moderation') is not supported by this \
         server.",
    ),
];

/// Refuses what the transport `via` does not serve: parameters it does not know or implement,
/// background mode where it is not offered. Both transports call it first, before touching any
/// state.
pub fn supported(request: &ResponseCreate, via: Via) -> Result<(), ApiFailure> {
    check(request, via)?;
    if via == Via::WebSocket && request.background == Some(true) {
        return Err(ApiFailure::bad_request(
            None,
            "Background mode (background: true) is not supported over WebSocket: create the \
             response with POST /v1/responses.",
            Some("background"),
        ));
    }
    Ok(())
}

/// Refuses a request whose top-level parameters this server does not serve over `via`.
fn check(request: &ResponseCreate, via: Via) -> Result<(), ApiFailure> {
    if let Some(unknown) = request
        .unknown_fields
        .iter()
        .find(|field| !ALLOWED_UNKNOWN.iter().any(|(allowed, _)| allowed == field))
    {
        return Err(ApiFailure::bad_request(
            Some("unknown_parameter"),
            format!("Unknown parameter: '{unknown}'."),
            Some(unknown),
        ));
    }
    let given = |name: &str| match name {
        "prompt" => request.prompt.is_some(),
        "moderation" => request.moderation.is_some(),
        _ => false,
    };
    if let Some((name, message)) = UNSUPPORTED.iter().find(|(name, _)| given(name)) {
        return Err(ApiFailure::bad_request(
            Some("unsupported_parameter"),
            *message,
            Some(name),
        ));
    }
    if let Some(options) = &request.stream_options {
        stream_options(options)?;
    }
    if via == Via::Http && request.stream_id.is_some() {
        return Err(ApiFailure::bad_request(
            Some("unsupported_parameter"),
            "'stream_id' names a lane of a WebSocket connection; it is not a parameter of \
             POST /v1/responses.",
            Some("stream_id"),
        ));
    }
    if request.conversation.is_some() && request.previous_response_id.is_some() {
        return Err(ApiFailure::bad_request(
            Some("mutually_exclusive_parameters"),
            "Mutually exclusive parameters: 'previous_response_id' and 'conversation'. Ensure \
             you are only providing one of them.",
            Some("conversation"),
        ));
    }
    Ok(())
}

/// `stream_options`: `{include_obfuscation}`. Tether's deltas carry no obfuscation padding, which
/// is what `false` asks for; `true` is refused rather than ignored.
fn stream_options(options: &Value) -> Result<(), ApiFailure> {
    let Some(options) = options.as_object() else {
        return Err(ApiFailure::bad_request(
            Some("invalid_type"),
            "Invalid type for 'stream_options': expected an object.",
            Some("stream_options"),
        ));
    };
    for (key, value) in options {
        match (key.as_str(), value) {
            ("include_obfuscation", Value::Bool(false) | Value::Null) => {}
            ("include_obfuscation", Value::Bool(true)) => {
                return Err(ApiFailure::bad_request(
                    Some("unsupported_parameter"),
                    "Obfuscation padding of streamed deltas (stream_options.include_obfuscation: \
                     true) is not supported by this server; its deltas never carry it.",
                    Some("stream_options.include_obfuscation"),
                ));
            }
            ("include_obfuscation", _) => {
                return Err(ApiFailure::bad_request(
                    Some("invalid_type"),
                    "Invalid type for 'stream_options.include_obfuscation': expected a boolean.",
                    Some("stream_options.include_obfuscation"),
                ));
            }
            (other, _) => {
                return Err(ApiFailure::bad_request(
                    Some("unknown_parameter"),
                    format!("Unknown parameter: 'stream_options.{other}'."),
                    Some(&format!("stream_options.{other}")),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tether_protocol::decode_request;

    fn refusal(body: Value, via: Via) -> Option<(String, String)> {
        let request = decode_request(body).unwrap();
        check(&request, via).err().map(|failure| {
            (
                failure.error.code.unwrap_or_default(),
                failure.error.param.unwrap_or_default(),
            )
        })
    }

    #[test]
    fn an_unknown_parameter_is_refused_by_name() {
        let refused = refusal(
            json!({"model": "m", "previous_responce_id": "resp_x"}),
            Via::Http,
        );
        assert_eq!(
            refused,
            Some(("unknown_parameter".into(), "previous_responce_id".into()))
        );
        let request = decode_request(json!({"model": "m", "frobnicate": 1})).unwrap();
        let failure = check(&request, Via::WebSocket).unwrap_err();
        assert_eq!(failure.status, 400);
        assert_eq!(failure.error.message, "Unknown parameter: 'frobnicate'.");
        assert_eq!(
            refusal(json!({"model": "m", "input": "hi"}), Via::Http),
            None
        );
    }

    #[test]
    fn known_parameters_that_are_not_implemented_say_so() {
        let prompt = refusal(json!({"model": "m", "prompt": {"id": "pmpt_1"}}), Via::Http);
        assert_eq!(
            prompt,
            Some(("unsupported_parameter".into(), "prompt".into()))
        );
        let obfuscation = refusal(
            json!({"model": "m", "stream_options": {"include_obfuscation": true}}),
            Via::Http,
        );
        assert_eq!(
            obfuscation.map(|(_, param)| param).as_deref(),
            Some("stream_options.include_obfuscation")
        );
        assert_eq!(
            refusal(
                json!({"model": "m", "stream_options": {"include_obfuscation": false}}),
                Via::Http
            ),
            None
        );
        assert_eq!(
            refusal(json!({"model": "m", "stream_id": "a"}), Via::Http).map(|(_, p)| p),
            Some("stream_id".into())
        );
        assert_eq!(
            refusal(json!({"model": "m", "stream_id": "a"}), Via::WebSocket),
            None
        );
        assert_eq!(
            refusal(
                json!({"model": "m", "conversation": "conv_1", "previous_response_id": "r"}),
                Via::WebSocket
            )
            .map(|(_, p)| p),
            Some("conversation".into())
        );
    }

    #[test]
    fn the_allowed_unknown_fields_are_unknown_to_the_protocol() {
        for (field, _) in ALLOWED_UNKNOWN {
            assert!(
                !ResponseCreate::FIELDS.contains(field),
                "{field} is modelled"
            );
        }
    }
}
