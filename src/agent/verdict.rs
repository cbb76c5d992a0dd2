//! What a comparison says, and how sure it can be. The speedup is HTTP's median time over a
//! WebSocket design's, taken twice with one formula for both legs:
//!
//! - **measured**: each run's end-to-end time less the waits the server modelled
//!   ([`Part::Modelled`]): this server's work, the simulated model's pacing, the emulated link
//!   and the page — what this machine really spent;
//! - **with the modelled waits**: the end-to-end time, a hosted API's classifier and engine
//!   hop included (`--api-costs hosted`, stated parameters). The same as the measured one under
//!   local costs.
//!
//! The page leads with the measured one. Either is a **verdict** — faster or slower, and
//! coloured — only when the repetitions' spread separates the legs: every run of one leg took
//! less time than every run of the other (its slowest below the other's fastest), over at least
//! [`JUDGED_FROM`] repetitions. Fewer cannot tell: with two legs alike, two runs each separate
//! by chance one time in three (2 of the 6 orders of four times), three each one time in ten (2
//! of 20). One or two repetitions, and overlapping ranges, are **within noise**, and say why.
//!
//! A result shows as soon as one repetition has both legs done, and is refined as the others
//! arrive; until every leg is done it says how many repetitions it counts.

use crate::agent::breakdown::Part;
use crate::agent::compare::{COMPARE_HTTP_MODE, Comparison, LegSummary, format_speedup};
use crate::agent::duration::{format_ranges, format_span};
use crate::agent::stats::Spread;
use crate::agent::{ContinuationMode, RunStatus};

/// Repetitions a leg needs before its range can separate it from the other's: with two, legs
/// that are alike separate by chance one time in three.
pub const JUDGED_FROM: usize = 3;

/// What a result says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every WebSocket run took less time than every HTTP run.
    Faster,
    /// Every WebSocket run took more time than every HTTP run.
    Slower,
    /// The legs' ranges overlap, or there are fewer than [`JUDGED_FROM`] repetitions: no
    /// verdict.
    Noise,
}

impl Verdict {
    /// A stable name for CSS classes and tests.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Noise => "noise",
        }
    }
}

/// HTTP's time over a WebSocket design's, for one kind of time (measured, or end to end).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    /// HTTP's median over the WebSocket design's.
    pub median: f64,
    /// The WebSocket design's times, one per counted repetition.
    pub ws: Spread,
    /// HTTP's times.
    pub http: Spread,
    pub verdict: Verdict,
}

impl Ratio {
    /// The ratio of `http` over `ws`, judged by whether their ranges separate; `None` without
    /// a WebSocket time to divide by.
    pub fn of(ws: Spread, http: Spread) -> Option<Ratio> {
        if ws.median <= 0.0 {
            return None;
        }
        let verdict = match apart(&ws, &http) {
            Some(verdict) if ws.n >= JUDGED_FROM && http.n >= JUDGED_FROM => verdict,
            _ => Verdict::Noise,
        };
        Some(Ratio {
            median: http.median / ws.median,
            ws,
            http,
            verdict,
        })
    }

    /// The ratio as the page prints it: `1.34×`; with a third decimal when a verdict would
    /// otherwise read `1.00×` (`1.004×`), so that a result never looks like no difference.
    /// Within noise the two decimals stand: a third would claim a precision the runs lack.
    pub fn shown(&self) -> String {
        if self.verdict == Verdict::Noise {
            format!("{:.2}×", self.median)
        } else {
            format_speedup(self.median)
        }
    }

    /// Whether the legs' ranges are apart, however few their runs.
    pub fn apart(&self) -> bool {
        apart(&self.ws, &self.http).is_some()
    }

    /// What HTTP's median took more than the WebSocket design's, in milliseconds.
    pub fn saved_ms(&self) -> f64 {
        self.http.median - self.ws.median
    }

    /// Why the result is within noise, if it is: `1 repetition: no spread to judge by`; `too
    /// few to judge by: …` (two repetitions apart); `the legs' ranges overlap: WebSocket
    /// 10.9–11.6 s, HTTP 11.2–11.9 s`.
    pub fn noise(&self, ws_name: &str) -> Option<String> {
        (self.verdict == Verdict::Noise).then(|| {
            let [ws, http] = ranges(&self.ws, &self.http);
            if self.ws.n.min(self.http.n) < 2 {
                "1 repetition: no spread to judge by".to_string()
            } else if self.apart() {
                // Apart, but over fewer repetitions than can tell.
                format!(
                    "too few to judge by: legs alike would be as far apart one time in three \
                     ({ws_name} {ws}, HTTP {http}); {JUDGED_FROM} or more can tell"
                )
            } else {
                format!("the legs' ranges overlap: {ws_name} {ws}, HTTP {http}")
            }
        })
    }
}

/// Which way the legs' ranges are apart, if they are: every WebSocket run faster than every
/// HTTP run, or slower.
fn apart(ws: &Spread, http: &Spread) -> Option<Verdict> {
    if ws.max < http.min {
        Some(Verdict::Faster)
    } else if http.max < ws.min {
        Some(Verdict::Slower)
    } else {
        None
    }
}

/// `10.9–11.6 s` and `15.3–17.7 s`: both legs' ranges, with the same digits.
fn ranges(ws: &Spread, http: &Spread) -> [String; 2] {
    format_ranges([(ws.min, ws.max), (http.min, http.max)])
}

/// A comparison's result against HTTP stateless for one WebSocket design.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Speedup {
    /// The leg HTTP is compared with: WebSocket mode, or the long-running design.
    pub leg: ContinuationMode,
    /// This machine's time: each run's end to end less its modelled waits. `None` when a run
    /// has no timing summary to tell them apart.
    pub measured: Option<Ratio>,
    /// End to end, the modelled waits included.
    pub total: Ratio,
    /// The modelled waits per run, medians: the WebSocket design's and HTTP's.
    pub modelled: Option<(f64, f64)>,
    /// Repetitions with both legs done, and repetitions planned.
    pub counted: usize,
    pub planned: usize,
}

impl Speedup {
    /// The result the page leads with: the measured one when it is known.
    pub fn headline(&self) -> &Ratio {
        self.measured.as_ref().unwrap_or(&self.total)
    }

    /// The headline's verdict.
    pub fn verdict(&self) -> Verdict {
        self.headline().verdict
    }

    /// What the headline's ratio is not, said beside it: `so far` while repetitions are still
    /// to come, `within noise` when the spread does not separate the legs — so that a glance
    /// at the number alone does not take it for a final result. Empty for a final verdict.
    pub fn qualifier(&self) -> &'static str {
        match (!self.is_final(), self.verdict() == Verdict::Noise) {
            (true, true) => "so far, within noise",
            (true, false) => "so far",
            (false, true) => "within noise",
            (false, false) => "",
        }
    }

    /// Whether the server modelled any wait in these runs (hosted API costs).
    pub fn has_modelled(&self) -> bool {
        self.modelled
            .is_some_and(|(ws, http)| ws > 0.0 || http > 0.0)
    }

    /// Whether every planned repetition is counted.
    pub fn is_final(&self) -> bool {
        self.counted >= self.planned
    }

    fn who(&self) -> &'static str {
        match self.leg {
            ContinuationMode::LongRunning => "the long-running response (response.append)",
            _ => "WebSocket mode",
        }
    }

    /// The result in words, the measured part first: `Measured on this machine: WebSocket mode
    /// was 1.34× faster — 3.9 s saved a run (median of 3 repetitions; every WebSocket run
    /// 10.9–11.6 s, every HTTP run 15.3–17.7 s). With the modelled hosted costs: 2.46×, 18.1 s
    /// saved a run.`
    pub fn describe(&self) -> String {
        let ws_name = match self.leg {
            ContinuationMode::LongRunning => "long-running",
            _ => "WebSocket",
        };
        let lead = self.headline();
        let n = lead.ws.n;
        let basis = if n > 1 {
            format!("median of {n} repetitions")
        } else {
            "1 repetition".to_string()
        };
        let ranges = match lead.noise(ws_name) {
            Some(_) if n < 2 => basis,
            Some(overlap) => format!("{basis}; {overlap}"),
            None => {
                let [ws, http] = ranges(&lead.ws, &lead.http);
                format!("{basis}; every {ws_name} run {ws}, every HTTP run {http}")
            }
        };
        let speedup = lead.shown();
        let saved = lead.saved_ms();
        let result = match lead.verdict {
            Verdict::Faster => format!(
                "{} was {speedup} faster — {} saved a run ({ranges})",
                self.who(),
                format_span(saved)
            ),
            Verdict::Slower => format!(
                "{} was slower: {speedup}, HTTP took {} less a run ({ranges})",
                self.who(),
                format_span(-saved)
            ),
            Verdict::Noise if n < 2 => {
                format!("within noise: {speedup} (1 repetition: no spread to judge by)")
            }
            Verdict::Noise => format!("within noise: {speedup} ({ranges})"),
        };
        let so_far = if self.is_final() {
            String::new()
        } else {
            format!(
                "So far ({} of {} repetitions): ",
                self.counted, self.planned
            )
        };
        // "Measured on this machine, within noise: 1.00×", not two colons in a row.
        let joint = if result.starts_with("within noise") {
            ", "
        } else {
            ": "
        };
        let measured = if self.measured.is_some() {
            format!("{so_far}Measured on this machine{joint}{result}.")
        } else {
            format!("{so_far}{}.", capitalize(&result))
        };
        if !self.has_modelled() {
            return measured;
        }
        let total = &self.total;
        let judged = match total.noise(ws_name) {
            Some(_) => " (within noise)",
            None => "",
        };
        // A saving only when it is a verdict: within noise it is a difference of medians.
        let tail = match total.verdict {
            Verdict::Faster => format!("{} saved a run", format_span(total.saved_ms())),
            Verdict::Slower => format!("HTTP took {} less a run", format_span(-total.saved_ms())),
            Verdict::Noise => format!(
                "the medians {} apart a run",
                format_span(total.saved_ms().abs())
            ),
        };
        format!(
            "{measured} With the modelled hosted costs (not measured): {}{judged}, {tail}.",
            total.shown()
        )
    }
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

impl Comparison {
    /// HTTP over WebSocket mode, once a repetition has both legs done.
    pub fn speedup(&self) -> Option<Speedup> {
        self.speedup_of(ContinuationMode::WebSocket)
    }

    /// HTTP over the leg `ws` (WebSocket mode, or the long-running design), over the
    /// repetitions that have both legs done; `None` before the first, and for a sweep (its
    /// points are on different models: their median says nothing).
    pub fn speedup_of(&self, ws: ContinuationMode) -> Option<Speedup> {
        if !self.modes.contains(&ws) || self.is_sweep() {
            return None;
        }
        let pairs = self.complete(ws);
        let spread = |value: fn(&LegSummary) -> Option<f64>, leg: usize| -> Option<Spread> {
            let values: Option<Vec<f64>> = pairs
                .iter()
                .map(|pair| value(if leg == 0 { pair.0 } else { pair.1 }))
                .collect();
            Spread::of(values?)
        };
        let total = Ratio::of(
            spread(|l| l.end_to_end_ms, 0)?,
            spread(|l| l.end_to_end_ms, 1)?,
        )?;
        let measured_of = |l: &LegSummary| l.breakdown?.measured_ms();
        let modelled_of = |l: &LegSummary| l.breakdown?.part(Part::Modelled);
        let measured = spread(measured_of, 0)
            .zip(spread(measured_of, 1))
            .and_then(|(w, h)| Ratio::of(w, h));
        let modelled = spread(modelled_of, 0)
            .zip(spread(modelled_of, 1))
            .map(|(w, h)| (w.median, h.median));
        Some(Speedup {
            leg: ws,
            measured,
            total,
            modelled,
            counted: pairs.len(),
            planned: self.repetitions,
        })
    }

    /// The counted repetitions whose leg `ws` and HTTP leg are both done: (ws, http).
    fn complete(&self, ws: ContinuationMode) -> Vec<(&LegSummary, &LegSummary)> {
        (1..=self.repetitions)
            .filter_map(|repetition| {
                let done = |mode| {
                    self.leg(repetition, mode)
                        .filter(|l| l.status == RunStatus::Done && l.end_to_end_ms.is_some())
                };
                Some((done(ws)?, done(COMPARE_HTTP_MODE)?))
            })
            .collect()
    }

    /// Each counted repetition's own ratio, HTTP's end-to-end time over the leg `ws`'s, where
    /// both legs are done: (repetition, ratio).
    pub fn ratios(&self, ws: ContinuationMode) -> Vec<(usize, f64)> {
        self.complete(ws)
            .into_iter()
            .filter_map(|(w, h)| {
                let ws_ms = w.end_to_end_ms.filter(|ms| *ms > 0.0)?;
                Some((w.repetition, h.end_to_end_ms? / ws_ms))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::compare::WARM_UP;
    use crate::agent::{AgentRun, ServerTimings, TurnRecord};
    use serde_json::json;
    use tether_protocol::ResponseCreate;

    const WS: ContinuationMode = ContinuationMode::WebSocket;
    const HTTP: ContinuationMode = COMPARE_HTTP_MODE;

    /// A done leg of one turn taking `ms`, `modelled` of them the server's modelled classifier.
    fn leg(mode: ContinuationMode, repetition: usize, ms: f64, modelled: f64) -> LegSummary {
        let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        turn.completed_at = Some(ms);
        let us = |ms: f64| (ms * 1000.0) as u64;
        turn.server = ServerTimings::parse(&json!({"path": "x", "stages": {},
            "modelled": {"classify_us": us(modelled)},
            "api_us": us(modelled + 1.0),
            "engine": {"queue_us": 0, "prefill_us": 0, "decode_us": 0, "service_total_us": 0,
                       "service_ttft_us": 0, "iapi_ttft_us": 0, "iapi_total_us": 0}}));
        let run = AgentRun {
            status: RunStatus::Done,
            turns: vec![turn],
            ..AgentRun::default()
        };
        LegSummary::of(mode, repetition, &run)
    }

    /// A comparison of the repetitions `(ws, http)` end to end, with `modelled` ms of each
    /// run's time modelled (WebSocket's, HTTP's), after its warm-up.
    fn compared(planned: usize, runs: &[(f64, f64)], modelled: (f64, f64)) -> Comparison {
        let mut c = Comparison::new(planned);
        for mode in [WS, HTTP] {
            c.update(leg(mode, WARM_UP, 1.0, 0.0));
        }
        for (i, (ws, http)) in runs.iter().enumerate() {
            c.update(leg(WS, i + 1, *ws, modelled.0));
            c.update(leg(HTTP, i + 1, *http, modelled.1));
        }
        c
    }

    #[test]
    fn a_verdict_never_prints_as_no_difference() {
        let s = |values: &[f64]| Spread::of(values.iter().copied()).unwrap();
        let close = Ratio::of(
            s(&[7_650.0, 7_655.0, 7_657.0]),
            s(&[7_661.0, 7_680.0, 7_690.0]),
        )
        .unwrap();
        assert_eq!(close.verdict, Verdict::Faster);
        assert_eq!(close.shown(), "1.003×");
        let noise = Ratio::of(s(&[7_650.0, 7_670.0]), s(&[7_660.0, 7_680.0])).unwrap();
        assert_eq!(noise.shown(), "1.00×");
        let clear = Ratio::of(s(&[100.0, 105.0, 110.0]), s(&[120.0, 125.0, 130.0])).unwrap();
        assert_eq!(clear.shown(), "1.19×");
    }

    #[test]
    fn separated_ranges_are_a_verdict_overlapping_ones_are_noise() {
        let s = |values: &[f64]| Spread::of(values.iter().copied()).unwrap();
        let faster = Ratio::of(s(&[100.0, 105.0, 110.0]), s(&[120.0, 125.0, 130.0])).unwrap();
        assert_eq!(faster.verdict, Verdict::Faster);
        let slower = Ratio::of(s(&[120.0, 125.0, 130.0]), s(&[100.0, 105.0, 110.0])).unwrap();
        assert_eq!(slower.verdict, Verdict::Slower);
        // Two repetitions each: separated ranges, but legs alike separate so one time in three.
        let two = Ratio::of(s(&[100.0, 110.0]), s(&[120.0, 130.0])).unwrap();
        assert_eq!(two.verdict, Verdict::Noise);
        assert_eq!(
            two.noise("WebSocket").unwrap(),
            "too few to judge by: legs alike would be as far apart one time in three (WebSocket \
             100–110 ms, HTTP 120–130 ms); 3 or more can tell"
        );
        // Medians far apart, but one HTTP run as fast as a WebSocket one.
        let overlap = Ratio::of(s(&[100.0, 101.0, 140.0]), s(&[120.0, 130.0, 135.0])).unwrap();
        assert_eq!(overlap.verdict, Verdict::Noise);
        assert_eq!(
            overlap.noise("WebSocket").unwrap(),
            "the legs' ranges overlap: WebSocket 100–140 ms, HTTP 120–135 ms"
        );
        let one = Ratio::of(s(&[100.0]), s(&[200.0])).unwrap();
        assert_eq!(one.verdict, Verdict::Noise, "however large the ratio");
        assert_eq!(
            one.noise("WebSocket").unwrap(),
            "1 repetition: no spread to judge by"
        );
        assert_eq!(faster.noise("WebSocket"), None);
        assert_eq!(Ratio::of(s(&[0.0]), s(&[1.0])), None);
    }

    #[test]
    fn a_first_result_shows_after_one_repetition_and_is_refined() {
        let mut c = compared(3, &[], (0.0, 0.0));
        assert_eq!(c.speedup(), None, "the warm-up is no result");
        c.update(leg(WS, 1, 10_000.0, 0.0));
        assert_eq!(c.speedup(), None, "one leg of the pair");
        c.update(leg(HTTP, 1, 13_000.0, 0.0));
        let first = c.speedup().unwrap();
        assert_eq!(
            (first.counted, first.planned, first.is_final()),
            (1, 3, false)
        );
        assert_eq!(first.verdict(), Verdict::Noise);
        assert_eq!(first.qualifier(), "so far, within noise");
        assert_eq!(
            first.describe(),
            "So far (1 of 3 repetitions): Measured on this machine, within noise: 1.30× (1 \
             repetition: no spread to judge by)."
        );
        for (r, ws, http) in [(2, 11_000.0, 12_500.0), (3, 10_500.0, 14_000.0)] {
            c.update(leg(WS, r, ws, 0.0));
            c.update(leg(HTTP, r, http, 0.0));
        }
        let last = c.speedup().unwrap();
        assert!(last.is_final() && !last.has_modelled());
        assert_eq!(last.verdict(), Verdict::Faster);
        assert_eq!(last.qualifier(), "", "a final verdict stands alone");
        assert_eq!(
            last.describe(),
            "Measured on this machine: WebSocket mode was 1.24× faster — 2.50 s saved a run \
             (median of 3 repetitions; every WebSocket run 10.0–11.0 s, every HTTP run \
             12.5–14.0 s)."
        );
        assert_eq!(c.ratios(WS).len(), 3);
    }

    #[test]
    fn the_measured_part_leads_and_the_modelled_waits_follow() {
        // HTTP spends 15 s of its 31 s in the modelled classifier, WebSocket 0.7 s of 12 s.
        let c = compared(
            3,
            &[
                (12_000.0, 31_000.0),
                (12_300.0, 31_200.0),
                (12_100.0, 30_900.0),
            ],
            (700.0, 15_000.0),
        );
        let speedup = c.speedup().unwrap();
        assert!(speedup.has_modelled());
        let measured = speedup.measured.unwrap();
        assert!((measured.median - 16_000.0 / 11_400.0).abs() < 1e-9);
        assert!((speedup.total.median - 31_000.0 / 12_100.0).abs() < 1e-9);
        assert_eq!(speedup.headline(), &measured);
        assert_eq!(
            speedup.describe(),
            "Measured on this machine: WebSocket mode was 1.40× faster — 4.60 s saved a run \
             (median of 3 repetitions; every WebSocket run 11.3–11.6 s, every HTTP run \
             15.9–16.2 s). With the modelled hosted costs (not measured): 2.56×, 18.9 s saved \
             a run."
        );
    }

    #[test]
    fn within_noise_the_modelled_result_is_a_difference_not_a_saving() {
        let c = compared(
            3,
            &[(100.0, 120.0), (130.0, 105.0), (110.0, 125.0)],
            (1.0, 1.0),
        );
        let said = c.speedup().unwrap().describe();
        assert!(
            said.ends_with(
                "With the modelled hosted costs (not measured): 1.09× (within noise), the medians \
                 10.0 ms apart a run."
            ),
            "{said}"
        );
    }

    #[test]
    fn a_slower_or_unclear_result_says_so() {
        let slower = compared(
            3,
            &[(100.0, 80.0), (110.0, 85.0), (105.0, 82.0)],
            (0.0, 0.0),
        );
        let speedup = slower.speedup().unwrap();
        assert_eq!(speedup.verdict(), Verdict::Slower);
        assert!(
            speedup
                .describe()
                .starts_with("Measured on this machine: WebSocket mode was slower: 0.78×, HTTP took 23.0 ms less a run"),
            "{}",
            speedup.describe()
        );
        let unclear = compared(2, &[(100.0, 120.0), (130.0, 110.0)], (0.0, 0.0));
        assert_eq!(unclear.speedup().unwrap().qualifier(), "within noise");
        assert_eq!(
            unclear.speedup().unwrap().describe(),
            "Measured on this machine, within noise: 1.00× (median of 2 repetitions; the legs' \
             ranges overlap: WebSocket 100–130 ms, HTTP 110–120 ms)."
        );
        let sweep = Comparison::sweep(&["spark"]);
        assert_eq!(sweep.speedup(), None);
    }
}
