//! Why a comparison came out as it did, in a few sentences, the measured part first: which part
//! of the time dominated, or which made the difference, in the terms of what each transport
//! really did — "the engine is 97 % of both runs, so there is little to save"; "HTTP sent 9.8 MB
//! up a 20 Mbit/s link, the whole conversation every turn, against 0.4 MB over WebSocket" —;
//! then the link's round trips, which both transports pay on every turn; then, apart, what the
//! server modelled (a hosted API's classifier and engine hop) and what it added. Built from the
//! comparison's medians and what the server said it applied, never from a formula of what
//! should happen.

use crate::agent::breakdown::Part;
use crate::agent::compare::{COMPARE_HTTP_MODE, Comparison, leg_name};
use crate::agent::duration::format_span as span;
use crate::agent::{ContinuationMode, Speedup, Verdict};
use crate::conditions::{HOSTED_PARAMETERS, Link, number};

/// When the engine and the tools take this share of both legs' time, there is little left for
/// a transport to save.
const DOMINANT: f64 = 0.9;

/// When only the engine's or the tools' time went the result's way: neither is a transport's
/// doing, so neither is named as its cause.
const NOT_THE_TRANSPORT: &str = "no part that depends on the transport differed that way — the \
     model's and the tools' times, the same work on both legs, vary run to run";

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
/// Two counts side by side in one form: short (`100k`, `2.7M`) only when both are large,
/// else both in full (`11,865` against `2,308`), so a reader compares like with like.
fn token_pair(a: f64, b: f64) -> (String, String) {
    if a.min(b) >= 1e4 {
        (tokens(a), tokens(b))
    } else {
        (
            crate::conditions::thousands(a),
            crate::conditions::thousands(b),
        )
    }
}

fn tokens(count: f64) -> String {
    if count >= 1e6 {
        format!("{:.1}M", count / 1e6)
    } else if count >= 1e4 {
        format!("{:.0}k", count / 1e3)
    } else {
        crate::conditions::thousands(count)
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

/// What the comparison's legs did, as the sentences need it.
struct Legs<'a> {
    c: &'a Comparison,
    ws: ContinuationMode,
    ws_name: &'static str,
}

impl Legs<'_> {
    fn median(&self, mode: ContinuationMode, part: Part) -> Option<f64> {
        self.c.part(mode, part).map(|s| s.median)
    }

    fn count(
        &self,
        mode: ContinuationMode,
        value: fn(&crate::agent::LegSummary) -> f64,
    ) -> Option<f64> {
        self.c.spread_of(mode, |l| Some(value(l))).map(|s| s.median)
    }

    /// Why the measured part came out as it did: its largest part in the direction of the
    /// result that the transport changes, in the terms of what each transport did.
    fn measured_reason(&self, saved: bool) -> Option<String> {
        let ws_name = self.ws_name;
        let http = COMPARE_HTTP_MODE;
        let (part, by) = self
            .c
            .difference_of(self.ws)?
            .into_iter()
            .filter(|(part, ms)| {
                part.is_measured()
                    && part.depends_on_transport()
                    && if saved { *ms > 0.0 } else { *ms < 0.0 }
            })
            .fold(None, |best: Option<(Part, f64)>, (part, ms)| match best {
                Some((_, top)) if top.abs() >= ms.abs() => best,
                _ => Some((part, ms)),
            })?;
        let link = self.link();
        let bytes = |mode| self.count(mode, |l| l.sent_bytes as f64);
        let api_tokens = |mode| self.count(mode, |l| l.api_tokens as f64);
        Some(match (part, saved) {
            (Part::Link | Part::Network, true) => {
                // Each of the two parts by its own name and figure: the emulated link, and the
                // delivery of the frames (loopback, the server's socket, the browser).
                let of = |part: Part| {
                    self.c
                        .difference_of(self.ws)
                        .and_then(|d| d.into_iter().find(|(p, _)| *p == part))
                        .map(|(_, ms)| ms)
                };
                let on_link = of(Part::Link).filter(|ms| *ms != 0.0);
                let delivery = of(Part::Network).filter(|ms| *ms != 0.0);
                let where_ = match (on_link, delivery) {
                    (Some(l), Some(d)) => format!(
                        "{} on the link, {} in frame delivery and loopback",
                        signed_ms(l),
                        signed_ms(d)
                    ),
                    (Some(l), None) => format!("{} on the link", signed_ms(l)),
                    (None, _) => format!("{} in frame delivery and loopback", signed_ms(by)),
                };
                // The API's repeated work, measured too, when it went the same way.
                let where_ = match of(Part::Api).filter(|ms| *ms > 0.0) {
                    Some(api) => format!(
                        "{where_}, {} in this server's API work (the whole conversation \
                         rendered and checked again every turn)",
                        signed_ms(api)
                    ),
                    None => where_,
                };
                match (link, bytes(http), bytes(self.ws)) {
                    (Some(link), Some(http_bytes), Some(ws_bytes)) if !link.is_loopback() => {
                        let uplink = link.up_mbit.map_or_else(
                            || format!("an unlimited link with {} ms RTT", number(link.rtt_ms)),
                            |mbit| format!("a {} Mbit/s link", number(mbit)),
                        );
                        format!(
                            "HTTP sent {} up {uplink} — the whole conversation every turn — \
                             against {} over {ws_name}: {where_}",
                            format_bytes(http_bytes),
                            format_bytes(ws_bytes),
                        )
                    }
                    _ => format!(
                        "HTTP's requests carry the whole conversation: {where_}, on loopback \
                         where bytes cost little"
                    ),
                }
            }
            (Part::Api, true) => {
                let scanned = match (api_tokens(http), api_tokens(self.ws)) {
                    (Some(h), Some(w)) => {
                        let (h, w) = token_pair(h, w);
                        format!(" — {h} tokens against {ws_name}'s {w} new ones")
                    }
                    _ => String::new(),
                };
                format!(
                    "this server's API rendered, validated and classified the whole conversation \
                     on every HTTP turn{scanned}: {} of its own work",
                    signed_ms(by)
                )
            }
            (Part::Client, true) => format!(
                "this page encoded the whole conversation into every HTTP request: {} of the \
                 page's own work",
                signed_ms(by)
            ),
            (Part::Network, false) => format!(
                "{ws_name} delivers every event as a frame of its own, where an HTTP body \
                 carries many in one chunk: {} more network and frame delivery over {ws_name}",
                signed_ms(-by)
            ),
            (part, true) => format!("HTTP's {} took {}", part.noun(), signed_ms(by)),
            (part, false) => format!("{ws_name}'s {} took {}", part.noun(), signed_ms(-by)),
        })
    }

    /// The link the server applied, as the latest leg reported it.
    fn link(&self) -> Option<Link> {
        self.applied().map(|a| a.link)
    }

    fn applied(&self) -> Option<crate::conditions::Applied> {
        let http = COMPARE_HTTP_MODE;
        self.c
            .done(http)
            .last()
            .and_then(|l| l.conditions.clone())
            .or_else(|| {
                self.c
                    .done(self.ws)
                    .last()
                    .and_then(|l| l.conditions.clone())
            })
    }

    /// Both transports pay the link's round trip on every turn: what that is, and what it does
    /// to the ratio.
    fn round_trips(&self) -> Option<String> {
        let link = self.link().filter(|l| l.rtt_ms > 0.0)?;
        let turns = self.count(COMPARE_HTTP_MODE, |l| l.turns as f64)?;
        let plural = if turns == 1.0 { "" } else { "s" };
        Some(format!(
            "Both transports wait for the link's {} ms round trip on every turn ({} turn{plural}: \
             {} a run, the same on both sides): a longer round trip adds as much to each, which \
             lowers the ratio but not the saving.",
            number(link.rtt_ms),
            number(turns),
            span(link.rtt_ms * turns)
        ))
    }

    /// What the server modelled, and what it added to the difference.
    fn modelled(&self, speedup: &Speedup) -> Option<String> {
        if !speedup.has_modelled() {
            return None;
        }
        let (ws_modelled, http_modelled) = speedup.modelled?;
        let ws_name = self.ws_name;
        let api_tokens = |mode| self.count(mode, |l| l.api_tokens as f64);
        let scanned = match (api_tokens(COMPARE_HTTP_MODE), api_tokens(self.ws)) {
            // What the API tokenized; the classifier scans the conversation's text among them,
            // not the tools' schemas or the instructions, so it is not the classifier's count.
            (Some(h), Some(w)) => {
                let (h, w) = token_pair(h, w);
                format!(
                    ", the API tokenizing {h} tokens a run for HTTP against {w} for {ws_name} \
                     (the classifier scans their conversation's text, not the tools or the \
                     instructions)"
                )
            }
            _ => String::new(),
        };
        let what = match self.applied().map(|a| a.api_costs) {
            Some(costs) if costs == "hosted" => {
                format!("the hosted API's services ({HOSTED_PARAMETERS})")
            }
            _ => "the server's modelled API services".to_string(),
        };
        let total = &speedup.total;
        let of = |ms: f64| {
            format!(
                "{} of {} ({})",
                span(ms),
                span(total.http.median),
                percent(ms / total.http.median)
            )
        };
        // A saving only when it is a verdict, as in the headline.
        let with_them = match total.verdict {
            Verdict::Faster => format!("{ws_name} saved {}", of(total.saved_ms())),
            Verdict::Slower => format!("HTTP took {} less", of(-total.saved_ms())),
            Verdict::Noise => format!(
                "the medians differ by {}, within noise",
                of(total.saved_ms().abs())
            ),
        };
        Some(format!(
            "Modelled, not measured: {what} took {} a run over HTTP and {} over {ws_name}{scanned} \
             — with them, {with_them}.",
            span(http_modelled),
            span(ws_modelled),
        ))
    }
}

/// Why HTTP stateless and the leg `ws` differ as they do, once a repetition of both is done:
/// the measured part first (its largest reason), then the link's round trips, then the
/// modelled waits.
pub fn explain_why(c: &Comparison, ws: ContinuationMode) -> Option<String> {
    let speedup = c.speedup_of(ws)?;
    let legs = Legs {
        c,
        ws,
        ws_name: leg_name(ws),
    };
    let http = COMPARE_HTTP_MODE;
    let measured = speedup.measured.unwrap_or(speedup.total);
    // The model's and the tools' share of what was measured, as the sentence it is in.
    let (ws_total, http_total) = (measured.ws.median, measured.http.median);
    if ws_total <= 0.0 || http_total <= 0.0 {
        return None;
    }
    let model_share = |mode, total: f64| -> Option<f64> {
        Some((legs.median(mode, Part::Engine)? + legs.median(mode, Part::Tools)?) / total)
    };
    let (ws_model, http_model) = (model_share(ws, ws_total)?, model_share(http, http_total)?);
    let saved = measured.saved_ms();
    let ws_name = legs.ws_name;
    let found = legs.measured_reason(saved >= 0.0);
    // "because …", or, when no transport's part explains the result, that it is not one's.
    let because = found.as_ref().map_or_else(
        || format!(", but {NOT_THE_TRANSPORT}"),
        |r| format!(" because {r}"),
    );
    let reason = found.unwrap_or_else(|| NOT_THE_TRANSPORT.to_string());
    let here = if speedup.measured.is_some() {
        "Measured on this machine"
    } else {
        "End to end"
    };
    let share = ws_model.min(http_model);
    let lead = if measured.verdict == Verdict::Noise && measured.ws.n > 1 {
        // No result to explain: the medians' difference is smaller than the runs' spread, or
        // the runs are too few to tell.
        let why_not = if measured.apart() {
            "two repetitions are too few to judge by"
        } else {
            "their runs' ranges overlap"
        };
        format!(
            "{here}, the legs are within noise: {why_not}, so the medians' difference ({} a \
             run) is not a result. Where a difference would come from: {reason}; the model and \
             the tools are {} of {ws_name}'s run.",
            signed_ms(saved),
            percent(ws_model)
        )
    } else if measured.verdict == Verdict::Noise {
        format!(
            "{here}, one repetition, so no result yet: the medians differ by {} a run. Where a \
             difference would come from: {reason}; the model and the tools are {} of \
             {ws_name}'s run.",
            signed_ms(saved),
            percent(ws_model)
        )
    } else if share >= DOMINANT {
        format!(
            "The model and the tools are {} of both runs, so there is little to save. {here}: \
             {reason}.",
            percent(share)
        )
    } else if saved >= 0.0 {
        format!(
            "{here}, by the medians, {ws_name} saved {} of {} a run ({}){because}; the model \
             and the tools are {} of {ws_name}'s run.",
            span(saved),
            span(measured.http.median),
            percent(saved / measured.http.median),
            percent(ws_model)
        )
    } else {
        format!(
            "{here}, by the medians, HTTP was {} faster a run{because}; the model and the tools \
             are {} of {ws_name}'s run.",
            span(-saved),
            percent(ws_model)
        )
    };
    let sentences: Vec<String> = [Some(lead), legs.round_trips(), legs.modelled(&speedup)]
        .into_iter()
        .flatten()
        .collect();
    Some(sentences.join(" "))
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

    /// What one leg of one turn did: `api` ms of API time (`modelled` of them the modelled
    /// classifier), `engine` ms of decoding, `network` ms left on the way (`link` of them the
    /// emulated link's, as the server reports it), `sent` bytes up.
    #[derive(Clone, Copy)]
    struct Did {
        api: f64,
        modelled: f64,
        engine: f64,
        network: f64,
        link: f64,
        sent: u64,
    }

    fn did(api: f64, engine: f64, network: f64, sent: u64) -> Did {
        Did {
            api,
            modelled: 0.0,
            engine,
            network,
            link: 0.0,
            sent,
        }
    }

    fn leg(
        mode: ContinuationMode,
        repetition: usize,
        d: Did,
        conditions: &serde_json::Value,
    ) -> LegSummary {
        let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        turn.completed_at = Some(d.api + d.engine + d.network);
        turn.sent_bytes = d.sent;
        turn.input_tokens = 100_000;
        let us = |ms: f64| (ms * 1000.0) as u64;
        let reused = if mode == WS { 97_000 } else { 0 };
        let mut summary = json!({"path": "x", "stages": {},
            "modelled": {"classify_us": us(d.modelled)},
            "api_us": us(d.api),
            "engine": {"queue_us": 0, "prefill_us": 0, "decode_us": us(d.engine),
                       "service_total_us": 0, "service_ttft_us": 0, "iapi_ttft_us": 0,
                       "iapi_total_us": us(d.engine)},
            "tokens": {"input": 100_000, "cached": 0, "reused_by_connection": reused},
            "conditions": conditions});
        if d.link > 0.0 {
            summary["link"] = json!({"up_bytes": d.sent, "up_us": us(d.link), "down_bytes": 0,
                                     "down_us": 0});
        }
        turn.server = ServerTimings::parse(&summary);
        let run = AgentRun {
            status: RunStatus::Done,
            turns: vec![turn],
            ..AgentRun::default()
        };
        LegSummary::of(mode, repetition, &run)
    }

    /// Three repetitions alike: the legs' ranges are apart, so the result is a verdict.
    fn compared(ws: Did, http: Did, conditions: serde_json::Value) -> Comparison {
        let mut c = Comparison::new(3);
        for mode in [WS, HTTP] {
            c.update(leg(mode, WARM_UP, did(1.0, 1.0, 1.0, 1), &conditions));
        }
        for repetition in [1, 2, 3] {
            c.update(leg(WS, repetition, ws, &conditions));
            c.update(leg(HTTP, repetition, http, &conditions));
        }
        c
    }

    fn local() -> serde_json::Value {
        json!({"rtt_ms": 0, "up_mbit": null, "down_mbit": null, "api_costs": "local",
               "model": "flagship", "tokens_per_second": 65.0})
    }

    #[test]
    fn a_dominant_model_leaves_little_to_save() {
        let c = compared(
            did(1.0, 9_700.0, 10.0, 2_000),
            did(12.0, 9_700.0, 12.0, 90_000),
            local(),
        );
        assert_eq!(
            explain_why(&c, WS).unwrap(),
            "The model and the tools are 100 % of both runs, so there is little to save. \
             Measured on this machine: this server's API rendered, validated and classified the \
             whole conversation on every HTTP turn — 100,000 tokens against WebSocket's 3,000 new \
             ones: +11.0 ms of its own work."
        );
    }

    #[test]
    fn an_upload_over_a_slow_link_is_named_with_its_bytes_and_the_round_trips_are_both_legs() {
        let uplink = json!({"rtt_ms": 40, "up_mbit": 20, "down_mbit": 100, "api_costs": "local",
                            "model": "spark", "tokens_per_second": 1000.0});
        // Of the time on the way, the link the server emulated took 100 ms over WebSocket and
        // 3.0 s over HTTP; frame delivery and loopback the rest.
        let c = compared(
            Did {
                link: 100.0,
                ..did(40.0, 18_000.0, 2_000.0, 400_000)
            },
            Did {
                link: 3_000.0,
                ..did(500.0, 18_000.0, 5_700.0, 9_800_000)
            },
            uplink,
        );
        assert_eq!(
            explain_why(&c, WS).unwrap(),
            "Measured on this machine, by the medians, WebSocket saved 4.16 s of 24.2 s a run (17 %) because HTTP \
             sent 9.8 MB up a 20 Mbit/s link — the whole conversation every turn — against 400 kB \
             over WebSocket: +2.90 s on the link, +800 ms in frame delivery and loopback, +460 ms \
             in this server's API work (the whole conversation rendered and checked again every \
             turn); the model and the tools are 90 % of WebSocket's run. Both transports wait for the \
             link's 40 ms round trip on every turn (1 turn: 40.0 ms a run, the same on both \
             sides): a longer round trip adds as much to each, which lowers the ratio but not \
             the saving."
        );
    }

    #[test]
    fn the_modelled_waits_come_after_the_measured_part_and_apart_from_it() {
        // The model's and the tools' share is of the measured runs (18.1 s and 18.7 s), not of
        // HTTP's with its 15 s of modelled waits, where it would look like half.
        let hosted = json!({"rtt_ms": 0, "up_mbit": null, "down_mbit": null,
                            "api_costs": "hosted", "model": "spark", "tokens_per_second": 1000.0});
        let c = compared(
            Did {
                modelled: 700.0,
                ..did(760.0, 18_000.0, 40.0, 1)
            },
            Did {
                modelled: 15_000.0,
                ..did(15_570.0, 18_000.0, 90.0, 2)
            },
            hosted,
        );
        assert_eq!(
            explain_why(&c, WS).unwrap(),
            "The model and the tools are 96 % of both runs, so there is little to save. Measured \
             on this machine: this server's API rendered, validated and classified the whole \
             conversation on every HTTP turn — 100,000 tokens against WebSocket's 3,000 new ones: \
             +510 ms of its own work. Modelled, not measured: \
             the hosted API's services (a safety classifier at 5.7 µs per scanned token, a 1 ms \
             hop to the engine per call) took 15.0 s a run over HTTP and 700 ms over WebSocket, \
             the API tokenizing 100,000 tokens a run for HTTP against 3,000 for WebSocket (the \
             classifier scans their conversation's text, not the tools or the instructions) — \
             with them, WebSocket saved 14.9 s of 33.7 s (44 %)."
        );
    }

    #[test]
    fn legs_within_noise_are_not_explained_as_a_saving() {
        // The runs' ranges overlap (WebSocket 21–27 ms, HTTP 24–26 ms): no "saved … because".
        let mut c = Comparison::new(2);
        for (repetition, ws, http) in [(1, 20.0, 23.0), (2, 26.0, 25.0)] {
            c.update(leg(WS, repetition, did(1.0, 0.0, ws, 1_000), &local()));
            c.update(leg(HTTP, repetition, did(1.0, 0.0, http, 5_000), &local()));
        }
        let why = explain_why(&c, WS).unwrap();
        assert!(
            why.starts_with(
                "Measured on this machine, the legs are within noise: their runs' ranges \
                 overlap, so the medians' difference (+1.0 ms a run) is not a result. Where a \
                 difference would come from: "
            ),
            "{why}"
        );
        assert!(!why.contains("saved"), "{why}");
    }

    #[test]
    fn a_modelled_difference_within_noise_is_not_called_a_saving() {
        let hosted = json!({"rtt_ms": 0, "up_mbit": null, "down_mbit": null,
                            "api_costs": "hosted", "model": "spark", "tokens_per_second": 1000.0});
        let mut c = Comparison::new(2);
        for (repetition, ws, http) in [(1, 20.0, 23.0), (2, 26.0, 25.0)] {
            let with = |api, modelled, network, sent| Did {
                modelled,
                ..did(api, 0.0, network, sent)
            };
            c.update(leg(WS, repetition, with(6.0, 5.0, ws, 1_000), &hosted));
            c.update(leg(HTTP, repetition, with(7.0, 6.0, http, 5_000), &hosted));
        }
        let why = explain_why(&c, WS).unwrap();
        assert!(why.contains("— with them, the medians differ by "), "{why}");
        assert!(why.ends_with(", within noise."), "{why}");
        assert!(!why.contains("saved"), "{why}");
    }

    #[test]
    fn the_model_or_the_tools_are_never_named_as_the_transports_doing() {
        // WebSocket's model took 20 ms longer (the same work on both legs: its pacing varied);
        // HTTP's frames took 2 ms longer. HTTP was faster, but not by anything a transport does.
        let c = compared(
            did(1.0, 50.0, 10.0, 1_000),
            did(1.0, 30.0, 12.0, 5_000),
            local(),
        );
        assert_eq!(
            explain_why(&c, WS).unwrap(),
            "Measured on this machine, by the medians, HTTP was 18.0 ms faster a run, but no part that depends \
             on the transport differed that way — the model's and the tools' times, the same \
             work on both legs, vary run to run; the model and the tools are 82 % of \
             WebSocket's run."
        );
    }

    #[test]
    fn two_repetitions_apart_are_too_few_to_explain_as_a_saving() {
        let mut c = Comparison::new(2);
        for (repetition, ws, http) in [(1, 20.0, 30.0), (2, 22.0, 31.0)] {
            c.update(leg(WS, repetition, did(1.0, 0.0, ws, 1_000), &local()));
            c.update(leg(HTTP, repetition, did(1.0, 0.0, http, 5_000), &local()));
        }
        let why = explain_why(&c, WS).unwrap();
        assert!(
            why.starts_with(
                "Measured on this machine, the legs are within noise: two repetitions are too \
                 few to judge by, so the medians' difference (+9.5 ms a run) is not a result."
            ),
            "{why}"
        );
    }

    #[test]
    fn when_http_wins_the_sentence_says_what_favoured_it() {
        let c = compared(
            did(1.0, 0.0, 30.0, 1_000),
            did(3.0, 0.0, 20.0, 5_000),
            local(),
        );
        assert_eq!(
            explain_why(&c, WS).unwrap(),
            "Measured on this machine, by the medians, HTTP was 8.0 ms faster a run because WebSocket delivers \
             every event as a frame of its own, where an HTTP body carries many in one chunk: \
             +10.0 ms more network and frame delivery over WebSocket; the model and the tools \
             are 0 % of WebSocket's run."
        );
        assert_eq!(format_bytes(999.0), "999 B");
        assert_eq!(explain_why(&Comparison::new(1), WS), None);
    }
}
