//! `decode_client_frame`, the server's first look at every WebSocket text frame.
//!
//! Checks: it never panics; a failure converts to the API error the server sends; a frame that
//! decodes re-encodes (`ClientFrame::to_json`, what the playground sends) to text that decodes
//! to the same frame, and re-encoding that is stable. A `response.create`'s unknown top-level
//! fields are named in `unknown_fields` (the server refuses them) and never encoded, so the
//! re-decoded frame names none. The decoder's direct path for plain frames gives what its
//! general path (by way of a JSON tree) gives, error or frame, with and without a connection's
//! default model.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tether_protocol::{ClientFrame, decode_client_frame, decode_client_frame_with};

fuzz_target!(|data: &[u8]| {
    // Text that is JSON goes in as it is; other input half the time too (the "not JSON" path),
    // else as the recipe of a `response.create` frame (see `tether_fuzz::json_or_recipe`).
    let raw = std::str::from_utf8(data).ok().filter(|text| {
        serde_json::from_str::<Value>(text).is_ok()
            || data.last().is_none_or(|b| b.is_multiple_of(2))
    });
    let text = match raw {
        Some(text) => text.to_string(),
        None => {
            let mut value = tether_fuzz::json_or_recipe(data);
            if let Value::Object(map) = &mut value {
                map.entry("type")
                    .or_insert_with(|| "response.create".into());
            }
            value.to_string()
        }
    };
    let decoded = decode_client_frame(&text);
    assert_eq!(
        decoded,
        tether_protocol::frames::decode_by_value(&text, None),
        "the direct and the general path differ on {text}"
    );
    // And with a connection's default model (`?model=`), which only the general path applies.
    assert_eq!(
        decode_client_frame_with(&text, Some("fuzz-default")),
        tether_protocol::frames::decode_by_value(&text, Some("fuzz-default")),
        "the direct and the general path differ, with a default model, on {text}"
    );
    match decoded {
        Ok(mut frame) => {
            let json = frame.to_json();
            if let ClientFrame::ResponseCreate(request) = &mut frame {
                request.unknown_fields.clear();
            }
            check_roundtrip(&frame, &json, &text)
        }
        Err(error) => {
            let api = error.to_api_error();
            assert_eq!(api.kind.as_deref(), Some("invalid_request_error"));
            serde_json::to_string(&api).expect("an API error serializes");
        }
    }
});

fn check_roundtrip(frame: &ClientFrame, json: &str, text: &str) {
    let again = match decode_client_frame(json) {
        Ok(again) => again,
        Err(error) => {
            panic!("the re-encoded frame does not decode: {error}\nframe {text}\nre-encoded {json}")
        }
    };
    assert_eq!(
        &again, frame,
        "re-encoding changed the frame\nframe {text}\nre-encoded {json}"
    );
    assert_eq!(again.to_json(), json, "re-encoding is not stable");
}
