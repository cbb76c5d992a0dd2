//! The SSE codec of the Responses API's HTTP streaming: Server-Sent Events decoding,
//! incremental — bytes go in as the network delivers them, whole events come out — and the
//! encoding of one event. No I/O, so the server, the playground (over `fetch`'s body reader) and
//! the fuzzer (`fuzz/`) share one decoder, tested natively with chunks cut anywhere: in the
//! middle of a line, of a `\r\n` pair, or of a multi-byte UTF-8 character.
//!
//! Follows the WHATWG event-stream rules the Responses API needs: lines end with `\n`, `\r\n` or
//! `\r`; `event:` names the event, `data:` lines accumulate (joined with `\n`); one optional space
//! after the colon is dropped; lines starting with `:` are comments; a blank line dispatches.
//! `id:` and `retry:` are accepted and ignored (the API never resumes a stream). Bytes that are
//! not UTF-8 become U+FFFD, line by line.
//!
//! Splitting a stream differently never changes what it decodes to: feeding it whole, byte by
//! byte or cut at any points gives the same events (the fuzz target `sse` checks this).

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseMessage {
    /// The `event:` field; `None` means the default type `message`.
    pub event: Option<String>,
    pub data: String,
}

impl SseMessage {
    /// The event as it goes on the wire: an `event:` line when it has a type, one `data:` line
    /// per line of `data`, and the blank line that dispatches it.
    ///
    /// Decoding gives the message back, except what no event stream can carry: a line end in
    /// `data` (`\n`, `\r\n` or `\r`) comes back as `\n`, and line-end characters in the event
    /// type are dropped.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(self.data.len() + 16);
        if let Some(event) = &self.event {
            out.push_str("event: ");
            out.extend(event.chars().filter(|c| !matches!(c, '\n' | '\r')));
            out.push('\n');
        }
        for line in split_lines(&self.data) {
            out.push_str("data: ");
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
        out
    }
}

/// `text` cut at every `\n`, `\r\n` and `\r`; a text ending in a line end has an empty last
/// line, as the lines of a `data` field do.
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.find(['\n', '\r']) {
            Some(end) => {
                let skip = if text[end..].starts_with("\r\n") {
                    2
                } else {
                    1
                };
                rest = Some(&text[end + skip..]);
                Some(&text[..end])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

/// Incremental decoder state.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of an unfinished line (kept as bytes: a chunk may end inside a UTF-8 character).
    line: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` starting the next chunk belongs to it.
    after_cr: bool,
    event: Option<String>,
    data: Option<String>,
}

impl SseDecoder {
    pub fn new() -> Self {
        SseDecoder::default()
    }

    /// Feeds one chunk; returns the events it completed, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseMessage> {
        let mut out = Vec::new();
        let mut bytes = chunk;
        // An empty chunk says nothing about the byte after a `\r`: keep waiting for it.
        if self.after_cr && !bytes.is_empty() {
            self.after_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', bytes) {
            if self.line.is_empty() {
                // The whole line is in this chunk: read it where it is, without a copy.
                self.take_line(&String::from_utf8_lossy(&bytes[..end]), &mut out);
            } else {
                self.line.extend_from_slice(&bytes[..end]);
                let line = std::mem::take(&mut self.line);
                self.take_line(&String::from_utf8_lossy(&line), &mut out);
            }
            let crlf = bytes[end] == b'\r';
            bytes = &bytes[end + 1..];
            if crlf {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
        }
        self.line.extend_from_slice(bytes);
        out
    }

    /// The end of the stream: an event not yet closed by a blank line is discarded, as the
    /// event-stream rules require; returns whether anything was left unfinished.
    pub fn finish(&mut self) -> bool {
        let unfinished = !self.line.is_empty() || self.data.is_some();
        *self = SseDecoder::default();
        unfinished
    }

    fn take_line(&mut self, line: &str, out: &mut Vec<SseMessage>) {
        if line.is_empty() {
            let event = self.event.take();
            if let Some(data) = self.data.take() {
                out.push(SseMessage { event, data });
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "event: response.created\ndata: {\"a\":1}\n\n\
        : keep-alive comment\r\n\
        event: response.output_text.delta\r\ndata: {\"delta\":\"h\u{e9}llo \u{1F600}\"}\r\n\r\n\
        data: line one\rdata:line two\r\r\
        id: 7\nretry: 10\nevent: response.completed\ndata: {}\n\n";

    fn expected() -> Vec<SseMessage> {
        vec![
            SseMessage {
                event: Some("response.created".into()),
                data: "{\"a\":1}".into(),
            },
            SseMessage {
                event: Some("response.output_text.delta".into()),
                data: "{\"delta\":\"h\u{e9}llo \u{1F600}\"}".into(),
            },
            SseMessage {
                event: None,
                data: "line one\nline two".into(),
            },
            SseMessage {
                event: Some("response.completed".into()),
                data: "{}".into(),
            },
        ]
    }

    #[test]
    fn one_chunk_decodes_every_event() {
        let mut decoder = SseDecoder::new();
        assert_eq!(decoder.push(STREAM.as_bytes()), expected());
        assert!(!decoder.finish());
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let bytes = STREAM.as_bytes();
        for cut in 0..=bytes.len() {
            let mut decoder = SseDecoder::new();
            let mut events = decoder.push(&bytes[..cut]);
            events.extend(decoder.push(&bytes[cut..]));
            assert_eq!(events, expected(), "split at byte {cut}");
        }
    }

    #[test]
    fn byte_by_byte_gives_the_same_events() {
        let mut decoder = SseDecoder::new();
        let events: Vec<_> = STREAM
            .as_bytes()
            .iter()
            .flat_map(|b| decoder.push(std::slice::from_ref(b)))
            .collect();
        assert_eq!(events, expected());
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        let mut decoder = SseDecoder::new();
        assert!(decoder.push(b"data: x\r").is_empty());
        // If the `\n` were a second line end, this blank line would dispatch early.
        assert!(decoder.push(b"\ndata: y\r").is_empty());
        assert_eq!(
            decoder.push(b"\n\r\n"),
            vec![SseMessage {
                event: None,
                data: "x\ny".into()
            }]
        );
    }

    /// Found by the `sse` fuzz target: an empty chunk between the `\r` and the `\n` of a line
    /// end cleared the "after `\r`" state, so the `\n` counted as a second, blank line and
    /// dispatched the event early. A body reader may deliver empty chunks.
    #[test]
    fn an_empty_chunk_between_cr_and_lf_changes_nothing() {
        let mut decoder = SseDecoder::new();
        assert!(decoder.push(b"data: x\r").is_empty());
        assert!(decoder.push(b"").is_empty());
        assert!(decoder.push(b"\ndata: y\n").is_empty());
        assert_eq!(
            decoder.push(b"\n"),
            vec![SseMessage {
                event: None,
                data: "x\ny".into()
            }]
        );
    }

    #[test]
    fn an_unterminated_event_is_reported_and_dropped() {
        let mut decoder = SseDecoder::new();
        assert!(decoder.push(b"event: e\ndata: half").is_empty());
        assert!(decoder.finish());
        assert!(decoder.push(b"\n\n").is_empty(), "the state was reset");
    }

    #[test]
    fn encoded_events_decode_to_themselves() {
        let mut messages = expected();
        messages.push(SseMessage {
            event: Some(" spaced".into()),
            data: " lead\n\ntrail\n".into(),
        });
        messages.push(SseMessage {
            event: Some(String::new()),
            data: String::new(),
        });
        let wire: String = messages.iter().map(SseMessage::encode).collect();
        let mut decoder = SseDecoder::new();
        assert_eq!(decoder.push(wire.as_bytes()), messages);
        assert!(!decoder.finish());
    }

    #[test]
    fn encoding_normalises_what_the_wire_cannot_carry() {
        let message = SseMessage {
            event: Some("a\r\nb".into()),
            data: "one\r\ntwo\rthree".into(),
        };
        assert_eq!(
            message.encode(),
            "event: ab\ndata: one\ndata: two\ndata: three\n\n"
        );
        assert_eq!(
            SseDecoder::new().push(message.encode().as_bytes()),
            vec![SseMessage {
                event: Some("ab".into()),
                data: "one\ntwo\nthree".into(),
            }]
        );
    }

    #[test]
    fn a_blank_line_without_data_dispatches_nothing() {
        let mut decoder = SseDecoder::new();
        assert!(decoder.push(b"event: ping\n\n").is_empty());
        assert_eq!(
            decoder.push(b"data\n\n"),
            vec![SseMessage {
                event: None,
                data: String::new()
            }]
        );
    }
}
