//! HTTP as a [`Transport`]: each turn is a `POST /v1/responses` with `stream: true`, read through
//! `fetch`'s streaming body and decoded as Server-Sent Events while it arrives (so the time to
//! first token is measured the same way as over WebSocket).
//!
//! The browser parts (fetch, the body reader) are thin; the decoding — [`SseEvents`], over the
//! protocol's SSE decoder — is plain Rust, tested natively. A request that gets no answer, or a
//! body that breaks off, says so with its URL ([`super::diagnose`]).

use std::collections::VecDeque;

use futures::future::LocalBoxFuture;
use tether_protocol::{ErrorBody, ResponseCreate};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, ReadableStreamReadResult};

use crate::transport::decode::decode_event;
use crate::transport::diagnose::{broken_stream, unreachable};
use crate::transport::fetch::{bearer, fetch, js_error_text, text};
use crate::transport::sse::SseDecoder;
use crate::transport::{Received, Transport, TransportError, TransportKind};

/// SSE bytes in, server events out.
#[derive(Debug, Default)]
pub struct SseEvents {
    decoder: SseDecoder,
}

impl SseEvents {
    /// Feeds one chunk of the body; returns the events (or decoding errors) it completed.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Result<Received, TransportError>> {
        self.decoder
            .push(chunk)
            .into_iter()
            .map(|message| match decode_event(&message.data) {
                Ok(event) => Ok(Received {
                    event,
                    text: message.data,
                }),
                Err(e) => Err(TransportError::Undecodable(format!(
                    "{e} in {:?}",
                    message.data
                ))),
            })
            .collect()
    }

    /// The body ended; whether an event was cut off.
    pub fn finish(&mut self) -> bool {
        self.decoder.finish()
    }
}

/// The message of an HTTP error answer: the API's `{"error":{"message":…}}`, else the body.
pub fn error_message(body: &str) -> String {
    match serde_json::from_str::<ErrorBody>(body) {
        Ok(parsed) => parsed.error.message,
        Err(_) if body.trim().is_empty() => "no details".to_string(),
        Err(_) => body.trim().to_string(),
    }
}

/// `POST /v1/responses` with a streaming SSE body.
pub struct HttpTransport {
    url: String,
    /// `GET` before the first turn, to open the kept-alive connection ([`Transport::ready`]).
    warm_up_url: Option<String>,
    /// Sent as `Authorization: Bearer`.
    api_key: String,
    reader: Option<ReadableStreamDefaultReader>,
    events: SseEvents,
    pending: VecDeque<Result<Received, TransportError>>,
}

impl HttpTransport {
    /// A transport posting to `url` (`http://host/v1/responses`).
    pub fn new(url: &str) -> Self {
        HttpTransport {
            url: url.to_string(),
            warm_up_url: None,
            api_key: String::new(),
            reader: None,
            events: SseEvents::default(),
            pending: VecDeque::new(),
        }
    }

    /// Authenticates every request with `key` (none when empty).
    pub fn with_api_key(mut self, key: &str) -> Self {
        self.api_key = key.trim().to_string();
        self
    }

    /// Opens the connection with a `GET url` before the first turn (`/v1/models`: cheap, and
    /// it needs the same key).
    pub fn with_warm_up(mut self, url: &str) -> Self {
        self.warm_up_url = Some(url.to_string());
        self
    }

    fn drop_stream(&mut self) {
        if let Some(reader) = self.reader.take() {
            // The server is done with this body (or we gave up on it); cancelling frees it.
            let _ = reader.cancel();
        }
        self.events = SseEvents::default();
        self.pending.clear();
    }

    /// Reads one chunk of the body into `pending`; `Err` when the body ended or broke.
    async fn read_chunk(&mut self) -> Result<(), TransportError> {
        let Some(reader) = &self.reader else {
            return Err(TransportError::Closed("no response is streaming".into()));
        };
        let result = JsFuture::from(reader.read())
            .await
            .map_err(|e| broken_stream(&self.url, &js_error_text(&e)))?;
        let result: ReadableStreamReadResult = result.unchecked_into();
        if result.get_done().unwrap_or(false) {
            let cut = self.events.finish();
            self.reader = None;
            return Err(TransportError::Closed(if cut {
                "the stream ended inside an event".into()
            } else {
                "the stream ended before a terminal event".into()
            }));
        }
        let bytes = js_sys::Uint8Array::new(&result.get_value()).to_vec();
        self.pending.extend(self.events.push(&bytes));
        Ok(())
    }
}

impl Transport for HttpTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Http
    }

    fn send<'a>(
        &'a mut self,
        _request: &'a ResponseCreate,
        body: &'a str,
    ) -> LocalBoxFuture<'a, Result<(), TransportError>> {
        Box::pin(async move {
            self.drop_stream();
            let auth = bearer(&self.api_key);
            let mut headers = vec![
                ("Content-Type", "application/json"),
                // The server's per-stage timings, on the terminal event.
                ("x-tether-timing", "1"),
            ];
            if let Some(auth) = &auth {
                headers.push(("Authorization", auth));
            }
            let response = fetch("POST", &self.url, &headers, Some(body))
                .await
                .map_err(|detail| unreachable(&self.url, &detail))?;
            if !response.ok() {
                let status = response.status();
                let body = text(&response).await.unwrap_or_default();
                return Err(TransportError::Status {
                    status,
                    message: error_message(&body),
                });
            }
            let stream = response
                .body()
                .ok_or_else(|| TransportError::Closed("the response has no body".into()))?;
            let reader: ReadableStreamDefaultReader = stream
                .get_reader()
                .dyn_into()
                .map_err(|_| TransportError::Closed("the body has no default reader".into()))?;
            self.reader = Some(reader);
            Ok(())
        })
    }

    fn next_event(&mut self) -> LocalBoxFuture<'_, Result<Received, TransportError>> {
        Box::pin(async move {
            loop {
                if let Some(next) = self.pending.pop_front() {
                    return next;
                }
                self.read_chunk().await?;
            }
        })
    }

    fn reconnect(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            self.drop_stream();
            Ok(())
        })
    }

    fn ready(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            let Some(url) = self.warm_up_url.clone() else {
                return Ok(());
            };
            let auth = bearer(&self.api_key);
            let headers: Vec<(&str, &str)> = auth
                .iter()
                .map(|auth| ("Authorization", auth.as_str()))
                .collect();
            let response = fetch("GET", &url, &headers, None)
                .await
                .map_err(|detail| unreachable(&url, &detail))?;
            // Read to the end, so the connection goes back to the pool for the first turn.
            let _ = text(&response).await;
            Ok(())
        })
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        self.drop_stream();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::{Response, ResponseStreamBuilder, ServerEvent, StreamEvent, Usage};

    /// The SSE body the server sends for a short answer.
    fn sse_body() -> (Vec<ServerEvent>, String) {
        let request = ResponseCreate::new("m", "hi");
        let mut b = ResponseStreamBuilder::new(Response::in_progress("resp_h", 1, &request), None);
        let mut events = b.start();
        events.extend(b.begin_message("msg_h"));
        events.push(b.text_delta("caf\u{e9} "));
        events.push(b.text_delta("\u{2615}"));
        events.extend(b.complete(Usage::new(3, 0, 2, 0), 2));
        let body = events
            .iter()
            .map(|e| format!("event: {}\ndata: {}\n\n", e.type_name(), e.to_json()))
            .collect();
        (events, body)
    }

    #[test]
    fn events_decode_at_any_chunk_size() {
        let (expected, body) = sse_body();
        let bytes = body.as_bytes();
        for size in [1, 2, 3, 7, 64, 1000, bytes.len()] {
            let mut decoder = SseEvents::default();
            let received: Vec<Received> = bytes
                .chunks(size)
                .flat_map(|chunk| decoder.push(chunk))
                .collect::<Result<_, _>>()
                .unwrap();
            let events: Vec<ServerEvent> = received.iter().map(|r| r.event.clone()).collect();
            assert_eq!(events, expected, "chunks of {size} bytes");
            // The text kept is each event's `data` line, as sent.
            let texts: Vec<String> = expected.iter().map(ServerEvent::to_json).collect();
            let kept: Vec<String> = received.into_iter().map(|r| r.text).collect();
            assert_eq!(kept, texts);
            assert!(!decoder.finish());
        }
    }

    #[test]
    fn a_bad_data_line_is_an_error_between_good_events() {
        let mut decoder = SseEvents::default();
        let out = decoder.push(
            b"event: x\ndata: not json\n\nevent: error\ndata: {\"type\":\"error\",\"message\":\"m\"}\n\n",
        );
        assert!(
            matches!(&out[0], Err(TransportError::Undecodable(why)) if why.contains("not json"))
        );
        assert!(matches!(&out[1], Ok(e) if matches!(e.event.event, StreamEvent::Error(_))));
    }

    #[test]
    fn error_bodies_give_their_message() {
        let body = r#"{"error":{"message":"Previous response with id 'resp_x' not found.","type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}}"#;
        assert_eq!(
            error_message(body),
            "Previous response with id 'resp_x' not found."
        );
        assert_eq!(error_message("gateway down\n"), "gateway down");
        assert_eq!(error_message(""), "no details");
    }
}
