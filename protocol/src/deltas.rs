//! The delta events decoded straight from their text: the fast path of
//! [`ServerEvent::from_json`].
//!
//! A streamed answer is mostly deltas — one frame per token or few — and a client pays for each
//! one it decodes (the playground's page most: every frame it receives goes through here). A
//! delta needs five fields, so the three delta types that carry a conversation's text and tool
//! arguments are read by a small scanner of their one flat object ([`DeltaFrame::scan`]),
//! without the JSON tree of the general path ([`crate::event_tree`]). serde's derive of a struct
//! of the fields does the same work a little faster natively, but costs the page's wasm 4.2 KiB
//! more (0.9 KiB gzipped; `cargo xtask dist`).
//!
//! Only a frame the scanner takes whole, with every field its variant needs, takes this path;
//! anything else — another type, a field twice, a field of the wrong type, an escape the scanner
//! does not take, a timing summary — goes the general way, so the errors are that path's.
//! Tested below against serde's derive of [`ServerEvent`], and by the `sse` fuzz target.

use crate::events::{ServerEvent, StreamEvent};

const TEXT_DELTA: &str = "response.output_text.delta";
const ARGUMENTS_DELTA: &str = "response.function_call_arguments.delta";
const INPUT_DELTA: &str = "response.custom_tool_call_input.delta";

/// The fields of the three delta types.
#[derive(Default)]
struct DeltaFrame {
    kind: Option<String>,
    item_id: Option<String>,
    output_index: Option<usize>,
    content_index: Option<usize>,
    delta: Option<String>,
    sequence_number: Option<u64>,
    stream_id: Option<String>,
    /// `logprobs` was there: only `[]` is taken (the event keeps it empty).
    logprobs: bool,
}

/// Reads a flat JSON object one token at a time; every method answers `None` for anything it
/// does not take, and the caller then leaves the frame to the full decoder.
struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// Takes `byte` (after any space).
    fn eat(&mut self, byte: u8) -> Option<()> {
        self.skip_space();
        (self.bytes.get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    /// A string, unescaped.
    fn string(&mut self) -> Option<String> {
        self.eat(b'"')?;
        let mut out = String::new();
        loop {
            let start = self.at;
            while let Some(&b) = self.bytes.get(self.at) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            // The input is a `&str`, and the run stops only at ASCII: whole characters.
            out.push_str(std::str::from_utf8(&self.bytes[start..self.at]).ok()?);
            match *self.bytes.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(out);
                }
                b'\\' => {
                    let escape = *self.bytes.get(self.at + 1)?;
                    self.at += 2;
                    out.push(match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return None,
                    });
                }
                // A raw control character: not JSON.
                _ => return None,
            }
        }
    }

    /// The character of `\uXXXX` (the `\u` taken), a surrogate pair as one.
    fn unicode_escape(&mut self) -> Option<char> {
        let unit = self.hex4()?;
        match unit {
            0xD800..=0xDBFF => {
                if self.bytes.get(self.at..self.at + 2)? != b"\\u" {
                    return None;
                }
                self.at += 2;
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return None;
                }
                char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            }
            0xDC00..=0xDFFF => None,
            _ => char::from_u32(unit),
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = std::str::from_utf8(self.bytes.get(self.at..self.at + 4)?).ok()?;
        let unit = u32::from_str_radix(digits, 16).ok()?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at += 4;
        Some(unit)
    }

    /// A key: a string without escapes, borrowed (an escaped key is the full decoder's).
    fn key(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.at;
        while let Some(&b) = self.bytes.get(self.at) {
            match b {
                b'"' => {
                    self.at += 1;
                    return std::str::from_utf8(&self.bytes[start..self.at - 1]).ok();
                }
                b'\\' => return None,
                b if b < 0x20 => return None,
                _ => self.at += 1,
            }
        }
        None
    }

    /// A non-negative integer in plain digits.
    fn integer(&mut self) -> Option<u64> {
        self.skip_space();
        let start = self.at;
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        let digits = std::str::from_utf8(&self.bytes[start..self.at]).ok()?;
        // A leading zero, a fraction or an exponent: the full decoder decides.
        if digits.is_empty()
            || (digits.len() > 1 && digits.starts_with('0'))
            || matches!(self.bytes.get(self.at), Some(b'.' | b'e' | b'E'))
        {
            return None;
        }
        digits.parse().ok()
    }

    /// `[]`.
    fn empty_array(&mut self) -> Option<()> {
        self.eat(b'[')?;
        self.eat(b']')
    }

    /// A number as JSON writes it — `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` —, which
    /// the full decoder would take too (Rust's `f64` parse also takes `09` and `1.`, which JSON
    /// refuses: a fuzz finding).
    fn json_number(&mut self) -> Option<()> {
        let digits = |s: &mut Self| {
            let start = s.at;
            while s.bytes.get(s.at).is_some_and(u8::is_ascii_digit) {
                s.at += 1;
            }
            (s.at > start).then_some(())
        };
        if self.bytes.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        match self.bytes.get(self.at)? {
            b'0' => self.at += 1,
            b'1'..=b'9' => digits(self)?,
            _ => return None,
        }
        if self.bytes.get(self.at) == Some(&b'.') {
            self.at += 1;
            digits(self)?;
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            digits(self)?;
        }
        Some(())
    }

    /// Any value of a field the event does not keep: a string, a number, `true`, `false` or
    /// `null` (a nested value is left to the full decoder).
    fn skip_value(&mut self) -> Option<()> {
        self.skip_space();
        match *self.bytes.get(self.at)? {
            b'"' => self.string().map(drop),
            b'0'..=b'9' | b'-' => self.json_number(),
            _ => {
                for word in [&b"true"[..], b"false", b"null"] {
                    if self.bytes[self.at..].starts_with(word) {
                        self.at += word.len();
                        return Some(());
                    }
                }
                None
            }
        }
    }
}

/// Sets `slot` once: a field twice is the full decoder's to refuse.
fn once<T>(slot: &mut Option<T>, value: Option<T>) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(value?);
    Some(())
}

impl DeltaFrame {
    /// The frame's fields, if it is one flat object the scanner takes whole.
    fn scan(text: &str) -> Option<DeltaFrame> {
        let mut s = Scanner {
            bytes: text.as_bytes(),
            at: 0,
        };
        let mut frame = DeltaFrame::default();
        s.eat(b'{')?;
        if s.eat(b'}').is_none() {
            loop {
                let key = s.key()?;
                s.eat(b':')?;
                match key {
                    "type" => once(&mut frame.kind, s.string())?,
                    "item_id" => once(&mut frame.item_id, s.string())?,
                    "delta" => once(&mut frame.delta, s.string())?,
                    "stream_id" => once(&mut frame.stream_id, s.string())?,
                    "output_index" => {
                        once(&mut frame.output_index, s.integer().map(|n| n as usize))?
                    }
                    "content_index" => {
                        once(&mut frame.content_index, s.integer().map(|n| n as usize))?
                    }
                    "sequence_number" => once(&mut frame.sequence_number, s.integer())?,
                    "logprobs" if !frame.logprobs => {
                        s.empty_array()?;
                        frame.logprobs = true;
                    }
                    // A field the event has no place for but the full decoder keeps, or one
                    // twice.
                    "logprobs" | "tether_timing" | "event" => return None,
                    _ => s.skip_value()?,
                }
                if s.eat(b',').is_none() {
                    s.eat(b'}')?;
                    break;
                }
            }
        }
        s.skip_space();
        (s.at == text.len()).then_some(frame)
    }

    /// The event, if this is one of the three delta types with every field its variant needs.
    fn into_event(self) -> Option<ServerEvent> {
        let item_id = self.item_id?;
        let output_index = self.output_index?;
        let delta = self.delta?;
        let event = match self.kind?.as_str() {
            TEXT_DELTA => StreamEvent::OutputTextDelta {
                item_id,
                output_index,
                content_index: self.content_index?,
                delta,
                logprobs: Vec::new(),
            },
            ARGUMENTS_DELTA if self.content_index.is_none() && !self.logprobs => {
                StreamEvent::FunctionCallArgumentsDelta {
                    item_id,
                    output_index,
                    delta,
                }
            }
            INPUT_DELTA if self.content_index.is_none() && !self.logprobs => {
                StreamEvent::CustomToolCallInputDelta {
                    item_id,
                    output_index,
                    delta,
                }
            }
            _ => return None,
        };
        Some(ServerEvent {
            event,
            sequence_number: self.sequence_number,
            stream_id: self.stream_id,
            tether_timing: None,
        })
    }
}

/// Whether an event of type `kind` is one this path reads.
pub(crate) fn is_delta(kind: &str) -> bool {
    matches!(kind, TEXT_DELTA | ARGUMENTS_DELTA | INPUT_DELTA)
}

/// `text` as a delta event, if it is one of the three types the scanner takes whole; `None`
/// sends it the general way.
pub(crate) fn delta(text: &str) -> Option<ServerEvent> {
    DeltaFrame::scan(text)?.into_event()
}

/// The type an event's text names up front, as the server writes it (`{"type":"…`); `None`
/// when the text starts otherwise, or the type has an escape.
pub(crate) fn leading_type(text: &str) -> Option<&str> {
    let rest = text.strip_prefix(r#"{"type":""#)?;
    let kind = &rest[..rest.find('"')?];
    (!kind.contains('\\')).then_some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::items::CustomToolCall;
    use crate::{Item, Response, ResponseCreate, ResponseStreamBuilder, Usage};

    /// serde's derive of the whole enum, which both paths are held to.
    fn general(text: &str) -> Result<ServerEvent, String> {
        serde_json::from_str::<ServerEvent>(text).map_err(|e| e.to_string())
    }

    fn decoded(text: &str) -> Result<ServerEvent, String> {
        ServerEvent::from_json(text).map_err(|e| e.to_string())
    }

    /// A stream with every kind of delta, over awkward text.
    fn stream() -> Vec<ServerEvent> {
        let request = ResponseCreate::new("m", "x");
        let mut b = ResponseStreamBuilder::new(Response::in_progress("resp_d", 1, &request), None);
        let mut events = b.start();
        events.extend(b.begin_message("msg_d"));
        for piece in [
            "plain",
            " \"quoted\" ",
            "back\\slash\n",
            "caf\u{e9} \u{2615} \u{1f980}",
            "",
        ] {
            events.push(b.text_delta(piece));
        }
        events.extend(b.end_item());
        events.push(b.begin_function_call("fc_d", "call_d", "shell"));
        events.push(b.arguments_delta(r#"{"command":["bash","-lc","echo \"hi\""]}"#));
        events.extend(b.end_item());
        events.push(b.begin_tool_call(Item::CustomToolCall(CustomToolCall {
            id: Some("ctc_d".into()),
            call_id: "call_p".into(),
            name: "apply_patch".into(),
            input: String::new(),
            status: None,
        })));
        events.push(b.arguments_delta("*** Begin Patch\n\t+x\n"));
        events.extend(b.end_item());
        events.extend(b.complete(Usage::new(3, 0, 2, 0), 2));
        events
    }

    #[test]
    fn every_event_of_a_stream_decodes_as_the_general_path_decodes_it() {
        let events = stream();
        for kind in [TEXT_DELTA, ARGUMENTS_DELTA, INPUT_DELTA] {
            assert!(events.iter().any(|e| e.type_name() == kind), "{kind}");
        }
        for event in events {
            let text = event.to_json();
            if is_delta(event.type_name()) {
                assert!(delta(&text).is_some(), "the fast path: {text}");
            }
            assert_eq!(decoded(&text), general(&text), "{text}");
            assert_eq!(decoded(&text).unwrap(), event);
        }
    }

    #[test]
    fn any_field_order_and_unknown_fields_decode_alike() {
        for text in [
            r#"{"delta":"hi","output_index":2,"item_id":"m","content_index":0,"type":"response.output_text.delta","sequence_number":9,"logprobs":[],"obfuscation":"x"}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":1,"delta":"a","logprobs":[{"token":"a","logprob":-0.1}]}"#,
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc","output_index":1,"delta":"{\"a\":","stream_id":"s1"}"#,
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc","output_index":1,"delta":"x","content_index":"ignored","logprobs":null}"#,
            r#"{"type":"response.custom_tool_call_input.delta","item_id":"c","output_index":0,"delta":"\u00e9"}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"x","tether_timing":{"path":"http"}}"#,
            r#"{"type":"response.output_text\u002edelta","item_id":"m","output_index":0,"content_index":0,"delta":"escaped type"}"#,
            r#"{"type":"response.reasoning_summary_text.delta","item_id":"r","output_index":0,"summary_index":0,"delta":"think"}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"x","extra":{"nested":[1,2]},"event":7}"#,
            r#" { "type" : "response.output_text.delta" , "item_id" : "m" , "output_index" : 0 , "content_index" : 0 , "delta" : "spaced" , "flag" : true , "n" : null , "f" : -1.5e3 } "#,
            r#"{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"x","sequence_number":null,"stream_id":null,"tether_timing":null}"#,
        ] {
            assert_eq!(decoded(text), general(text), "{text}");
            assert!(decoded(text).is_ok(), "{text}");
        }
    }

    #[test]
    fn an_unknown_fields_number_is_held_to_json_as_the_full_decoder_holds_it() {
        // A fuzz finding: `09` passed Rust's f64 parse, so the fast path took an event serde
        // refuses.
        let frame = |n: &str| {
            format!(
                r#"{{"type":"response.function_call_arguments.delta","item_id":"fc","output_index":1,"delta":"x","extra":{n}}}"#
            )
        };
        for bad in [
            "09", "1.", "1.e5", "-", "--1", "1e", "1e+", "+1", "00", "-01", "1.5.2", "1e5e5",
        ] {
            let text = frame(bad);
            assert!(general(&text).is_err(), "{text}");
            assert!(decoded(&text).is_err(), "{text}");
        }
        for good in [
            "0",
            "-0",
            "9",
            "10",
            "-1.5e3",
            "0.25",
            "1E+2",
            "2e-7",
            "123456789012345678901",
        ] {
            let text = frame(good);
            assert!(general(&text).is_ok(), "{text}");
            assert_eq!(decoded(&text), general(&text), "{text}");
        }
    }

    #[test]
    fn random_text_decodes_alike() {
        // Characters that need escaping, multi-byte ones, and surrogate pairs.
        let alphabet: Vec<char> = "ab \"\\/\n\t\r\u{1}\u{1f}\u{7f}é☕🦀\u{2028}\u{fffd}{}[]:,"
            .chars()
            .collect();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..2000 {
            let len = (next() % 24) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let event = serde_json::json!({
                "type": TEXT_DELTA, "sequence_number": next() % 1000, "item_id": text,
                "output_index": next() % 4, "content_index": 0, "delta": text, "logprobs": []
            });
            let frame = event.to_string();
            assert!(delta(&frame).is_some(), "{frame}");
            assert_eq!(decoded(&frame), general(&frame), "{frame}");
            // \uXXXX escapes, as another server may write them.
            let escaped: String = frame
                .chars()
                .map(|c| {
                    if c.is_ascii() {
                        c.to_string()
                    } else {
                        c.encode_utf16(&mut [0; 2])
                            .iter()
                            .map(|u| format!("\\u{u:04x}"))
                            .collect()
                    }
                })
                .collect();
            assert_eq!(decoded(&escaped), general(&escaped), "{escaped}");
        }
    }

    #[test]
    fn a_malformed_delta_is_refused_as_the_derive_refuses_it() {
        for text in [
            r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"no item id"}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","output_index":0,"delta":"no content index"}"#,
            r#"{"type":"response.function_call_arguments.delta","item_id":"fc","output_index":"one","delta":"x"}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"cut"#,
            r#"{"type":"response.output_text.delta","item_id":"m","item_id":"n","output_index":0,"content_index":0,"delta":"twice"}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","output_index":-1,"content_index":0,"delta":"x"}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","output_index":1.0,"content_index":0,"delta":"x"}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"\ud800"}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"x","logprobs":null}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","output_index":0,"content_index":0,"delta":"x"} trailing"#,
            "not json .delta\"",
        ] {
            assert!(general(text).is_err(), "{text}");
            let Err(error) = decoded(text) else {
                // A field twice: the tree keeps the last (the derive refuses it), as JSON
                // parsers commonly do; a server never sends one.
                assert!(text.contains("twice"), "{text}");
                continue;
            };
            assert!(!error.is_empty(), "{text}");
        }
        // The error names the event and the field.
        assert_eq!(
            decoded(
                r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"x"}"#
            ),
            Err("response.output_text.delta: missing field `item_id`".into())
        );
    }

    #[test]
    fn the_leading_type_is_read_only_when_it_is_plain() {
        assert_eq!(
            leading_type(r#"{"type":"response.output_text.delta","delta":"x"}"#),
            Some(TEXT_DELTA)
        );
        assert_eq!(leading_type(r#"{"delta":"x","type":"a"}"#), None);
        assert_eq!(leading_type(r#"{"type":"a\u002eb"}"#), None);
        assert_eq!(leading_type(r#"{"type":"unterminated"#), None);
    }
}
