//! `decode_request`, the decoder of `POST /v1/responses` bodies (and of frames without their
//! `type`): from JSON bytes, or — when the bytes are not JSON — from a JSON value built from
//! them with the protocol's field names and tags (structure-aware, see `tether_fuzz::Recipe`).
//!
//! Checks: it never panics; an error names a field and converts to the API error the server
//! sends; a request that decodes serializes to JSON that decodes to the same request — its
//! modelled fields, that is: unknown top-level fields are named in `unknown_fields` (the
//! server refuses them) and never serialized, so the re-decoded request names none.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_protocol::{DecodeError, decode_request};

fuzz_target!(|data: &[u8]| {
    let body = tether_fuzz::json_or_recipe(data);
    match decode_request(body.clone()) {
        Ok(mut request) => {
            let encoded = serde_json::to_value(&request).expect("a request serializes");
            request.unknown_fields.clear();
            match decode_request(encoded.clone()) {
                Ok(again) => assert_eq!(
                    again, request,
                    "re-encoding changed the request\nbody {body}\nre-encoded {encoded}"
                ),
                Err(error) => panic!(
                    "the re-encoded request does not decode: {error}\nbody {body}\nre-encoded {encoded}"
                ),
            }
        }
        Err(error) => {
            assert!(
                matches!(error, DecodeError::InvalidField { .. }),
                "a body is an object or an invalid field: {error:?}"
            );
            let _ = error.to_api_error();
        }
    }
});
