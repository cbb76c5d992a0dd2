//! The protocol's SSE decoder (`tether_protocol::sse`), which the playground feeds with the
//! chunks `fetch` delivers, and the decoding of each event's `data` as a server event.
//!
//! Checks: it never panics; cutting the stream at arbitrary byte boundaries (chosen from the
//! input), or feeding it byte by byte, gives the same events and the same end-of-stream verdict
//! as feeding it whole; the events are those of a plain reference reading of the event-stream
//! rules (whole stream, split into lines first); every event encodes
//! (`SseMessage::encode`) to text that decodes back to it; the protocol's decoder of an event's
//! `data` (`ServerEvent::from_json`, with its fast path for deltas) gives what serde's derived
//! decoder gives: the same event, or an error (but for a field given twice, which it takes).

#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_protocol::ServerEvent;
use tether_protocol::sse::{SseDecoder, SseMessage};

fuzz_target!(|data: &[u8]| {
    let mut whole = SseDecoder::new();
    let events = whole.push(data);
    let unfinished = whole.finish();

    let mut rng = tether_fuzz::Rng::seeded_by(data);
    let mut cut = SseDecoder::new();
    let mut cut_events = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(rng.below(rest.len().min(64) + 1));
        cut_events.extend(cut.push(chunk));
        rest = tail;
    }
    assert_eq!(cut_events, events, "cutting the stream changed its events");
    assert_eq!(
        cut.finish(),
        unfinished,
        "cutting the stream changed its end"
    );

    if data.len() <= 4096 {
        let mut bytewise = SseDecoder::new();
        let bytewise_events: Vec<SseMessage> =
            data.chunks(1).flat_map(|b| bytewise.push(b)).collect();
        assert_eq!(bytewise_events, events, "byte by byte changed the events");
        assert_eq!(bytewise.finish(), unfinished);
    }

    let (expected, expected_unfinished) = reference(data);
    assert_eq!(events, expected, "differs from the reference reading");
    assert_eq!(unfinished, expected_unfinished);

    for event in &events {
        let encoded = event.encode();
        let mut decoder = SseDecoder::new();
        assert_eq!(
            decoder.push(encoded.as_bytes()),
            std::slice::from_ref(event),
            "{encoded:?}"
        );
        assert!(!decoder.finish());
        // What a client does with each event's data.
        let decoded = ServerEvent::from_json(&event.data);
        // The reference: serde's derive over the same JSON tree. A field given twice keeps its
        // last value in a tree (serde_json's map), so the derive reading the text itself would
        // differ there, by design — it stops at the first copy's error or at the duplicate.
        let general = serde_json::from_str::<serde_json::Value>(&event.data)
            .and_then(serde_json::from_value::<ServerEvent>);
        match (&decoded, general) {
            (Ok(fast), Ok(general)) => assert_eq!(*fast, general, "{:?}", event.data),
            (Err(_), Err(_)) => {}
            (fast, general) => panic!("{fast:?} against {general:?} for {:?}", event.data),
        }
        if let Ok(server_event) = decoded {
            serde_json::to_string(&server_event).expect("a server event serializes");
        }
    }
});

/// The event-stream rules read literally, on the whole stream at once.
fn reference(data: &[u8]) -> (Vec<SseMessage>, bool) {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < data.len() {
        match data[i] {
            b'\n' => {
                lines.push(&data[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&data[start..i]);
                if data.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let tail = &data[start..];
    let mut events = Vec::new();
    let mut event: Option<String> = None;
    let mut data_lines: Option<Vec<String>> = None;
    for line in lines {
        let line = String::from_utf8_lossy(line);
        if line.is_empty() {
            if let Some(lines) = data_lines.take() {
                events.push(SseMessage {
                    event: event.take(),
                    data: lines.join("\n"),
                });
            }
            event = None;
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.find(':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (&line[..], ""),
        };
        match field {
            "event" => event = Some(value.to_string()),
            "data" => data_lines
                .get_or_insert_with(Vec::new)
                .push(value.to_string()),
            _ => {}
        }
    }
    (events, !tail.is_empty() || data_lines.is_some())
}
