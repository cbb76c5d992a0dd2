//! Why a comparison came out as it did, in one sentence: which part of the time dominated, or
//! which part made the difference, in the terms of what each transport really did — "the
//! engine is 97 % of both runs, so there is little to save"; "HTTP sent 9.8 MB up a 20 Mbit/s
//! link, the whole conversation every turn, against 0.4 MB over WebSocket". Built from the
//! comparison's medians and what the server said it applied, never from a formula of what
//! should happen.

use crate::agent::compare::{COMPARE_HTTP_MODE, Comparison, leg_name};
use crate::agent::{ContinuationMode, Part, Precision, format_duration};
use crate::conditions::number;

/// When the engine and the tools take this share of both legs' time, there is little left for
/// a transport to save.
const DOMINANT: f64 = 0.9;

/// `4.1 MB`, `380 kB`, `900 B`: bytes, decimal.
pub fn format_bytes(bytes: f64) -> String {
    if bytes >= 1e6 {
        format!("{:.1} MB", bytes / 1e6)
    } else if bytes >= 1e3 {
        format!("{:.0} kB", bytes / 1e3)
    } else {
        format!("{bytes:.0} B")
    }
}

/// `5.4M`, `120k`, `800`: a token count in a sentence.
fn tokens(count: f64) -> String {
    if count >= 1e6 {
        format!("{:.1}M", count / 1e6)
    } else if count >= 1e4 {
        format!("{:.0}k", count / 1e3)
    } else {
        crate::conditions::thousands(count)
    }
}

/// `4.2 s`, `812 ms`, `0.40 ms`: a time in a sentence.
fn span(ms: f64) -> String {
    if ms.abs() >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else {
        format_duration(ms, Precision::BySize)
    }
}

/// `+4.2 s`, `−0.40 ms`.
fn signed_ms(ms: f64) -> String {
    let sign = if ms < 0.0 { '−' } else { '+' };
    format!("{sign}{}", span(ms.abs()))
}

fn percent(share: f64) -> String {
    format!("{:.0} %", share * 100.0)
}

/// Why HTTP stateless and the leg `ws` differ as they do, once both have finished runs the
/// server split: one sentence, its largest reason first.
pub fn explain_why(c: &Comparison, ws: ContinuationMode) -> Option<String> {
    let http = COMPARE_HTTP_MODE;
    let median = |mode, part| c.part(mode, part).map(|s| s.median);
    let (ws_total, http_total) = (c.end_to_end(ws)?.median, c.end_to_end(http)?.median);
    if ws_total <= 0.0 || http_total <= 0.0 {
        return None;
    }
    let model_share = |mode, total: f64| -> Option<f64> {
        Some((median(mode, Part::Engine)? + median(mode, Part::Tools)?) / total)
    };
    let (ws_model, http_model) = (model_share(ws, ws_total)?, model_share(http, http_total)?);
    let difference = c.difference_of(ws)?;
    let saved = http_total - ws_total;
    let ws_name = leg_name(ws);
    let bytes = |mode| {
        c.spread_of(mode, |l| Some(l.sent_bytes as f64))
            .map(|s| s.median)
    };
    let api_tokens = |mode| {
        c.spread_of(mode, |l| Some(l.api_tokens as f64))
            .map(|s| s.median)
    };
    let conditions = c
        .done(http)
        .last()
        .and_then(|l| l.conditions.clone())
        .or_else(|| c.done(ws).last().and_then(|l| l.conditions.clone()));
    let link = conditions.as_ref().map(|c| c.link);
    let hosted = conditions.as_ref().is_some_and(|c| c.api_costs == "hosted");
    // The part that made the difference, in the direction of the result.
    let (part, by) = difference
        .iter()
        .copied()
        .filter(|(_, ms)| if saved >= 0.0 { *ms > 0.0 } else { *ms < 0.0 })
        .fold(None, |best: Option<(Part, f64)>, (part, ms)| match best {
            Some((_, top)) if top.abs() >= ms.abs() => best,
            _ => Some((part, ms)),
        })?;
    let reason = match (part, saved >= 0.0) {
        (Part::Link | Part::Network, true) => match (link, bytes(http), bytes(ws)) {
            (Some(link), Some(http_bytes), Some(ws_bytes)) if !link.is_loopback() => {
                let uplink = link.up_mbit.map_or_else(
                    || format!("an unlimited link with {} ms RTT", number(link.rtt_ms)),
                    |mbit| format!("a {} Mbit/s link", number(mbit)),
                );
                format!(
                    "HTTP sent {} up {uplink} — the whole conversation every turn — against {} \
                     over {ws_name}: {} on the link",
                    format_bytes(http_bytes),
                    format_bytes(ws_bytes),
                    signed_ms(by)
                )
            }
            _ => format!(
                "HTTP's requests carry the whole conversation: {} on the way, on loopback where \
                 bytes cost little",
                signed_ms(by)
            ),
        },
        (Part::Api, true) => {
            let scanned = match (api_tokens(http), api_tokens(ws)) {
                (Some(h), Some(w)) => format!(
                    " — {} tokens against {ws_name}'s {} new ones",
                    tokens(h),
                    tokens(w)
                ),
                _ => String::new(),
            };
            let classifier = if hosted {
                ", the hosted classifier scanning each at 5.7 µs"
            } else {
                ""
            };
            format!(
                "HTTP's API rendered, validated and classified the whole conversation every \
                 turn{scanned}{classifier}: {} of API work",
                signed_ms(by)
            )
        }
        (Part::Client, true) => format!(
            "this page encoded the whole conversation into every HTTP request: {} of the \
             page's own work",
            signed_ms(by)
        ),
        (Part::Network, false) => format!(
            "{ws_name} delivers every event as a frame of its own, where an HTTP body carries \
             many in one chunk: {} more network and frame delivery over {ws_name}",
            signed_ms(-by)
        ),
        (part, true) => format!("HTTP's {} took {}", part.noun(), signed_ms(by)),
        (part, false) => format!("{ws_name}'s {} took {}", part.noun(), signed_ms(-by)),
    };
    let share = ws_model.min(http_model);
    let sentence = if share >= DOMINANT {
        format!(
            "The model and the tools are {} of both runs, so there is little to save: {reason}.",
            percent(share)
        )
    } else if saved >= 0.0 {
        format!(
            "{ws_name} saved {} of {} per run ({}) because {reason}; the model and the tools are \
             {} of {ws_name}'s run.",
            span(saved),
            span(http_total),
            percent(saved / http_total),
            percent(ws_model)
        )
    } else {
        format!(
            "HTTP was {} faster per run because {reason}; the model and the tools are {} of \
             {ws_name}'s run.",
            span(-saved),
            percent(ws_model)
        )
    };
    Some(capitalize(&sentence))
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::compare::{LegSummary, WARM_UP};
    use crate::agent::{AgentRun, RunStatus, ServerTimings, TurnRecord};
    use serde_json::json;
    use tether_protocol::ResponseCreate;

    const WS: ContinuationMode = ContinuationMode::WebSocket;
    const HTTP: ContinuationMode = COMPARE_HTTP_MODE;

    /// A done leg of one turn: `api` ms of API work, `engine` ms of decoding, `network` ms
    /// left on the way, `sent` bytes up, under `conditions`.
    fn leg(
        mode: ContinuationMode,
        repetition: usize,
        (api, engine, network): (f64, f64, f64),
        sent: u64,
        conditions: serde_json::Value,
    ) -> LegSummary {
        let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        turn.completed_at = Some(api + engine + network);
        turn.sent_bytes = sent;
        turn.input_tokens = 100_000;
        let us = |ms: f64| (ms * 1000.0) as u64;
        let reused = if mode == WS { 97_000 } else { 0 };
        turn.server = ServerTimings::parse(&json!({"path": "x", "stages": {},
            "api_us": us(api),
            "engine": {"queue_us": 0, "prefill_us": 0, "decode_us": us(engine),
                       "service_total_us": 0, "service_ttft_us": 0, "iapi_ttft_us": 0,
                       "iapi_total_us": us(engine)},
            "tokens": {"input": 100_000, "cached": 0, "reused_by_connection": reused},
            "conditions": conditions}));
        let run = AgentRun {
            status: RunStatus::Done,
            turns: vec![turn],
            ..AgentRun::default()
        };
        LegSummary::of(mode, repetition, &run)
    }

    fn compared(
        ws: (f64, f64, f64),
        http: (f64, f64, f64),
        bytes: (u64, u64),
        conditions: serde_json::Value,
    ) -> Comparison {
        let mut c = Comparison::new(1);
        for mode in [WS, HTTP] {
            c.update(leg(mode, WARM_UP, (1.0, 1.0, 1.0), 1, conditions.clone()));
        }
        c.update(leg(WS, 1, ws, bytes.0, conditions.clone()));
        c.update(leg(HTTP, 1, http, bytes.1, conditions));
        c
    }

    fn local() -> serde_json::Value {
        json!({"rtt_ms": 0, "up_mbit": null, "down_mbit": null, "api_costs": "local",
               "model": "flagship", "tokens_per_second": 65.0})
    }

    #[test]
    fn a_dominant_model_leaves_little_to_save() {
        let c = compared(
            (1.0, 9_700.0, 10.0),
            (12.0, 9_700.0, 12.0),
            (2_000, 90_000),
            local(),
        );
        assert_eq!(
            explain_why(&c, WS).unwrap(),
            "The model and the tools are 100 % of both runs, so there is little to save: HTTP's \
             API rendered, validated and classified the whole conversation every turn — 100k \
             tokens against WebSocket's 3,000 new ones: +11.0 ms of API work."
        );
    }

    #[test]
    fn an_upload_over_a_slow_link_is_named_with_its_bytes() {
        let uplink = json!({"rtt_ms": 40, "up_mbit": 20, "down_mbit": 100, "api_costs": "local",
                            "model": "spark", "tokens_per_second": 1000.0});
        let c = compared(
            (40.0, 18_000.0, 2_000.0),
            (500.0, 18_000.0, 5_700.0),
            (400_000, 9_800_000),
            uplink,
        );
        assert_eq!(
            explain_why(&c, WS).unwrap(),
            "WebSocket saved 4.2 s of 24.2 s per run (17 %) because HTTP sent 9.8 MB up a 20 \
             Mbit/s link — the whole conversation every turn — against 400 kB over WebSocket: \
             +3.7 s on the link; the model and the tools are 90 % of WebSocket's run."
        );
    }

    #[test]
    fn the_hosted_classifier_is_named_when_the_api_made_the_difference() {
        let hosted = json!({"rtt_ms": 0, "up_mbit": null, "down_mbit": null,
                            "api_costs": "hosted", "model": "spark", "tokens_per_second": 1000.0});
        let c = compared(
            (760.0, 18_000.0, 40.0),
            (15_570.0, 18_000.0, 80.0),
            (1, 2),
            hosted,
        );
        let why = explain_why(&c, WS).unwrap();
        assert!(
            why.contains(
                "3,000 new ones, the hosted classifier scanning each at 5.7 µs: +14.8 s of API work"
            ),
            "{why}"
        );
        assert!(
            why.starts_with("WebSocket saved 14.8 s of 33.6 s per run (44 %)"),
            "{why}"
        );
    }

    #[test]
    fn when_http_wins_the_sentence_says_what_favoured_it() {
        let c = compared((1.0, 0.0, 30.0), (3.0, 0.0, 20.0), (1_000, 5_000), local());
        assert_eq!(
            explain_why(&c, WS).unwrap(),
            "HTTP was 8.0 ms faster per run because WebSocket delivers every event as a frame of \
             its own, where an HTTP body carries many in one chunk: +10.0 ms more network and \
             frame delivery over WebSocket; the model and the tools are 0 % of WebSocket's run."
        );
        assert_eq!(format_bytes(999.0), "999 B");
        assert_eq!(explain_why(&Comparison::new(1), WS), None);
    }
}
