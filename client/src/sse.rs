//! A streamed HTTP body in, [`Frame`]s out: the bytes go to `tether-protocol`'s incremental SSE
//! decoder — the one the server encodes with and the fuzzer checks (any line ending, chunks cut
//! anywhere) — and each event it completes becomes a frame. There is no other SSE parser here.

use std::collections::VecDeque;

use tether_protocol::sse::SseDecoder;

use crate::frame::Frame;

/// SSE body bytes in, frames out, in order.
#[derive(Debug, Default)]
pub struct SseFrames {
    decoder: SseDecoder,
    ready: VecDeque<Frame>,
}

impl SseFrames {
    pub fn new() -> SseFrames {
        SseFrames::default()
    }

    /// Feeds one chunk of the body, as the network delivered it.
    pub fn push(&mut self, chunk: &[u8]) {
        self.ready
            .extend(self.decoder.push(chunk).into_iter().map(Frame::from_sse));
    }

    /// The next complete event, if one is ready.
    pub fn next_frame(&mut self) -> Option<Frame> {
        self.ready.pop_front()
    }

    /// The body ended: whether an event was cut off (what is ready stays readable).
    pub fn finish(&mut self) -> bool {
        self.decoder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_streams_dispatch_at_any_chunk_size() {
        let body = ": keep-alive\r\n\r\nevent: response.created\r\ndata: {\"type\":\"response.created\"}\r\n\r\ndata: {\"type\":\"x.y\"}\r\n\r\n";
        for size in 1..=body.len() {
            let mut sse = SseFrames::new();
            let mut seen = Vec::new();
            for chunk in body.as_bytes().chunks(size) {
                sse.push(chunk);
                while let Some(frame) = sse.next_frame() {
                    seen.push((frame.kind().into_owned(), frame.into_text()));
                }
            }
            assert_eq!(
                seen,
                [
                    (
                        "response.created".to_string(),
                        "{\"type\":\"response.created\"}".to_string()
                    ),
                    ("x.y".to_string(), "{\"type\":\"x.y\"}".to_string()),
                ],
                "chunks of {size}"
            );
            assert!(!sse.finish());
        }
    }

    #[test]
    fn a_cut_off_event_is_reported() {
        let mut sse = SseFrames::new();
        sse.push(b"event: response.created\ndata: {\"type\"");
        assert!(sse.next_frame().is_none());
        assert!(sse.finish());
    }
}
