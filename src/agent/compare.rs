//! Compare mode: the same task over WebSocket mode and over HTTP stateless (what Codex does over
//! HTTP) — and, when chosen, over the long-running design (one v1 response per run,
//! `response.append`) as a third leg —, each leg from a fresh sample project, repeated and
//! alternated so that no leg pays for what the others do not:
//!
//! - each leg is warmed before its clock starts — its connection open, the sandbox's first
//!   `node` Web Worker started ([`super::session`]);
//! - first, a **warm-up** of every leg, discarded (repetition 0): the first run of a fresh page
//!   is slower — its code is compiled as it first runs, its memory grows — and whichever leg ran
//!   first lost for it (in 17 of 18 comparisons a review ran);
//! - then the legs run one after the other, never at once, `repetitions` times (3 by default),
//!   in a balanced order: WebSocket first in odd repetitions, HTTP first in even ones (A B, B A,
//!   A B, …; with three legs, the order rotates by one each repetition);
//! - each leg is reported as the **median** of its repetitions with their **range**; the
//!   speedup, and whether it is a verdict or within noise, is [`super::verdict`]'s.
//!
//! What a leg's time is made of is its [`Breakdown`]; [`LegSummary`] keeps it, with the totals,
//! for every leg that ran.

use crate::agent::breakdown::{Breakdown, Part, part_spread};
use crate::agent::duration::{Precision, format_duration};
use crate::agent::stats::Spread;
use crate::agent::{AgentRun, ContinuationMode, RunStatus, RunTotals};
use crate::conditions::Applied;

/// The HTTP mode compare runs against by default: stateless, as Codex speaks HTTP.
pub const COMPARE_HTTP_MODE: ContinuationMode = ContinuationMode::HttpStateless;

/// Repetitions a comparison runs unless the settings say otherwise.
pub const DEFAULT_REPETITIONS: usize = 3;

/// Repetitions a comparison may run.
pub const REPETITIONS: std::ops::RangeInclusive<usize> = 1..=9;

/// The pairs a sweep may run: four profiles, each as often as a comparison may repeat.
pub const MAX_SWEEP_PAIRS: usize = 4 * *REPETITIONS.end();

/// The repetition number of a comparison's warm-up: it runs every leg once, before repetition
/// 1, and is not counted.
pub const WARM_UP: usize = 0;

/// One leg of one repetition, as it stood when it last started or ended: enough to show and
/// compare it without the run itself.
#[derive(Debug, Clone, PartialEq)]
pub struct LegSummary {
    pub mode: ContinuationMode,
    /// 1-based; [`WARM_UP`] for the warm-up.
    pub repetition: usize,
    pub status: RunStatus,
    pub error: Option<String>,
    pub turns: usize,
    pub end_to_end_ms: Option<f64>,
    pub breakdown: Option<Breakdown>,
    pub input_tokens: u64,
    /// The engine's prompt-cache hits.
    pub cached_tokens: u64,
    /// What the connection cache supplied (`None`: not reported).
    pub reused_by_connection: Option<u64>,
    pub output_tokens: u64,
    /// Output tokens per second while decoding.
    pub decoding_rate: Option<f64>,
    /// Bytes of JSON the page sent.
    pub sent_bytes: u64,
    /// The tokens the API tokenized itself (the prompt less what the connection cache
    /// supplied).
    pub api_tokens: u64,
    /// The conditions the server said it applied (its latest summary's).
    pub conditions: Option<Applied>,
    /// The emulated link's time budget ran out on some turn: its bandwidth limit was lifted.
    pub link_budget_exhausted: bool,
}

impl LegSummary {
    /// The waits the server modelled in this leg (the hosted costs), when there were any.
    pub fn modelled_ms(&self) -> Option<f64> {
        self.breakdown?.part(Part::Modelled).filter(|ms| *ms > 0.0)
    }

    pub fn of(mode: ContinuationMode, repetition: usize, run: &AgentRun) -> LegSummary {
        let totals = RunTotals::of(run);
        LegSummary {
            mode,
            repetition,
            status: run.status,
            error: run.error.clone(),
            turns: totals.turns,
            end_to_end_ms: totals.end_to_end_ms,
            breakdown: Breakdown::of(run),
            input_tokens: totals.input_tokens,
            cached_tokens: totals.cached_tokens,
            reused_by_connection: totals.reused_by_connection,
            output_tokens: totals.output_tokens,
            decoding_rate: totals.decoding_rate(),
            sent_bytes: totals.sent_bytes,
            api_tokens: totals.api_tokens(),
            conditions: run
                .turns
                .iter()
                .rev()
                .find_map(|t| t.server.as_ref()?.conditions.clone()),
            link_budget_exhausted: run.turns.iter().any(|t| {
                t.server
                    .as_ref()
                    .and_then(|s| s.link)
                    .is_some_and(|l| l.budget_exhausted)
            }),
        }
    }
}

/// A comparison: the legs planned and every leg that has run so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Repetitions planned; each runs every leg.
    pub repetitions: usize,
    /// The legs' modes, in the order the first repetition runs them: [`Comparison::MODES`],
    /// and the long-running design when the comparison includes it.
    pub modes: Vec<ContinuationMode>,
    /// Every leg that started, in the order they ran.
    pub legs: Vec<LegSummary>,
    /// Whether every leg runs once, discarded, before repetition 1 (a comparison a page kept
    /// before there was a warm-up has none).
    pub warm_up: bool,
    /// A sweep over the model's speed ([`super::sweep`]): repetition `n` runs on the `n`-th of
    /// these profiles. Empty: every repetition runs on the settings' profile.
    pub sweep: Vec<String>,
}

impl Default for Comparison {
    fn default() -> Self {
        Comparison::new(DEFAULT_REPETITIONS)
    }
}

impl Comparison {
    /// The two legs every comparison has, in the order the first repetition runs them.
    pub const MODES: [ContinuationMode; 2] = [ContinuationMode::WebSocket, COMPARE_HTTP_MODE];

    /// Every leg a comparison may have: the two, and the long-running design.
    pub const ALL_MODES: [ContinuationMode; 3] = [
        ContinuationMode::WebSocket,
        COMPARE_HTTP_MODE,
        ContinuationMode::LongRunning,
    ];

    /// A comparison of `repetitions` repetitions of the two legs that has not started.
    pub fn new(repetitions: usize) -> Self {
        Comparison {
            repetitions: repetitions.clamp(*REPETITIONS.start(), *REPETITIONS.end()),
            modes: Self::MODES.to_vec(),
            legs: Vec::new(),
            warm_up: true,
            sweep: Vec::new(),
        }
    }

    /// The same, with the long-running design (`response.append`) as a third leg when
    /// `long_running`.
    pub fn with_long_running(repetitions: usize, long_running: bool) -> Self {
        let mut comparison = Comparison::new(repetitions);
        if long_running {
            comparison.modes.push(ContinuationMode::LongRunning);
        }
        comparison
    }

    /// A sweep: WebSocket mode and HTTP stateless on each of `profiles` in turn, one pair a
    /// repetition, after a warm-up; a profile repeated is a point measured more than once
    /// ([`super::sweep::sweep_profiles`]). At most [`MAX_SWEEP_PAIRS`] pairs.
    pub fn sweep(profiles: &[&str]) -> Self {
        let profiles: Vec<String> = profiles
            .iter()
            .take(MAX_SWEEP_PAIRS)
            .map(|p| p.to_string())
            .collect();
        Comparison {
            repetitions: profiles.len(),
            sweep: profiles,
            ..Comparison::new(1)
        }
    }

    /// Whether this is a sweep over the model's speed.
    pub fn is_sweep(&self) -> bool {
        !self.sweep.is_empty()
    }

    /// The profile repetition `repetition` runs on, when it is not the settings' own: a sweep's
    /// point's, or the warm-up's (no model time).
    pub fn profile_of(&self, repetition: usize) -> Option<&str> {
        if repetition == WARM_UP {
            return Some(crate::agent::WARM_UP_PROFILE);
        }
        self.sweep
            .get(repetition.checked_sub(1)?)
            .map(String::as_str)
    }

    /// Whether the long-running design is one of the legs.
    pub fn has_long_running(&self) -> bool {
        self.modes.contains(&ContinuationMode::LongRunning)
    }

    /// The order of repetition `repetition` (1-based): the legs rotated by one each repetition,
    /// so that each goes first in turn — with two legs, WebSocket first in odd repetitions and
    /// HTTP first in even ones. The warm-up runs them in the first repetition's order.
    pub fn order(&self, repetition: usize) -> Vec<ContinuationMode> {
        let mut order = self.modes.clone();
        if !order.is_empty() {
            let shift = repetition.saturating_sub(1) % order.len();
            order.rotate_left(shift);
        }
        order
    }

    /// Every leg in the order it runs: (repetition, mode), the warm-up's first.
    pub fn plan(&self) -> Vec<(usize, ContinuationMode)> {
        let first = if self.warm_up { WARM_UP } else { 1 };
        (first..=self.repetitions)
            .flat_map(|repetition| {
                self.order(repetition)
                    .into_iter()
                    .map(move |mode| (repetition, mode))
            })
            .collect()
    }

    /// Records `leg`, replacing what was recorded of the same repetition and mode.
    pub fn update(&mut self, leg: LegSummary) {
        match self
            .legs
            .iter_mut()
            .find(|l| l.mode == leg.mode && l.repetition == leg.repetition)
        {
            Some(known) => *known = leg,
            None => self.legs.push(leg),
        }
    }

    /// The leg of `mode` in `repetition`, if it started.
    pub fn leg(&self, repetition: usize, mode: ContinuationMode) -> Option<&LegSummary> {
        self.legs
            .iter()
            .find(|l| l.mode == mode && l.repetition == repetition)
    }

    /// The most recent leg of `mode`.
    pub fn latest(&self, mode: ContinuationMode) -> Option<&LegSummary> {
        self.legs.iter().rev().find(|l| l.mode == mode)
    }

    /// The state of the whole comparison: failed (or stopped) as soon as a leg is, done when
    /// every planned leg is, running in between.
    pub fn status(&self) -> RunStatus {
        let statuses: Vec<RunStatus> = self.legs.iter().map(|l| l.status).collect();
        if statuses.contains(&RunStatus::Failed) {
            RunStatus::Failed
        } else if statuses.contains(&RunStatus::Stopped) {
            RunStatus::Stopped
        } else if statuses.is_empty() || statuses.iter().all(|s| *s == RunStatus::Idle) {
            RunStatus::Idle
        } else if statuses.len() == self.plan().len()
            && statuses.iter().all(|s| *s == RunStatus::Done)
        {
            RunStatus::Done
        } else {
            RunStatus::Running
        }
    }

    /// The first error of any leg, naming the leg.
    pub fn error(&self) -> Option<String> {
        self.legs.iter().find_map(|leg| {
            leg.error.as_ref().map(|error| {
                let repetition = if leg.repetition == WARM_UP {
                    " (warm-up)".to_string()
                } else if self.repetitions > 1 {
                    format!(" (repetition {})", leg.repetition)
                } else {
                    String::new()
                };
                format!("{} run{repetition}: {error}", leg_name(leg.mode))
            })
        })
    }

    /// The legs of `mode` that finished and count: the warm-up's do not.
    pub fn done(&self, mode: ContinuationMode) -> impl Iterator<Item = &LegSummary> {
        self.legs.iter().filter(move |l| {
            l.mode == mode && l.status == RunStatus::Done && l.repetition != WARM_UP
        })
    }

    /// How many of the planned legs are done, warm-up included, and how many there are.
    pub fn legs_done(&self) -> (usize, usize) {
        let done = self
            .legs
            .iter()
            .filter(|l| l.status == RunStatus::Done)
            .count();
        (done, self.plan().len())
    }

    /// The end-to-end times of the finished legs of `mode`.
    pub fn end_to_end(&self, mode: ContinuationMode) -> Option<Spread> {
        Spread::of(self.done(mode).filter_map(|l| l.end_to_end_ms))
    }

    /// The median and range of a part of the finished legs of `mode`.
    pub fn part(&self, mode: ContinuationMode, part: Part) -> Option<Spread> {
        let breakdowns: Option<Vec<Breakdown>> = self.done(mode).map(|l| l.breakdown).collect();
        part_spread(&breakdowns?, part)
    }

    /// Whether `part` took any time in a finished run of `ws` or of HTTP (`ws` may be HTTP
    /// itself): the modelled waits
    /// with local costs, or the link on loopback, did not happen — a "0.00 ms" for them would
    /// read as measured.
    pub fn happened(&self, ws: ContinuationMode, part: Part) -> bool {
        [ws, COMPARE_HTTP_MODE]
            .into_iter()
            .any(|mode| self.part(mode, part).is_some_and(|s| s.max > 0.0))
    }

    /// The spread of any number the finished legs of `mode` have.
    pub fn spread_of(
        &self,
        mode: ContinuationMode,
        value: impl Fn(&LegSummary) -> Option<f64>,
    ) -> Option<Spread> {
        let values: Option<Vec<f64>> = self.done(mode).map(value).collect();
        Spread::of(values?)
    }

    /// How much more (or less) time HTTP's legs took than WebSocket's, part by part: the
    /// difference of the medians. `None` until both legs have finished runs that the server
    /// split into API and engine time.
    pub fn difference(&self) -> Option<Vec<(Part, f64)>> {
        self.difference_of(ContinuationMode::WebSocket)
    }

    /// [`Comparison::difference`] between HTTP's legs and those of `ws`.
    pub fn difference_of(&self, ws: ContinuationMode) -> Option<Vec<(Part, f64)>> {
        let http = COMPARE_HTTP_MODE;
        Part::ALL
            .iter()
            .map(|part| {
                let ws = self.part(ws, *part)?.median;
                let http = self.part(http, *part)?.median;
                Some((*part, http - ws))
            })
            .collect()
    }

    /// What the difference between the legs is made of, in a sentence, its largest parts first:
    /// `HTTP stateless took 12.3 ms more per run: API overhead +8.1 ms, network and frame
    /// delivery +3.0 ms, …`.
    pub fn explain(&self) -> Option<String> {
        self.explain_of(ContinuationMode::WebSocket)
    }

    /// [`Comparison::explain`] between HTTP's legs and those of `ws`: the means of the runs'
    /// parts, which add up to the mean run (medians do not), the measured parts first and
    /// summed apart from the modelled waits.
    pub fn explain_of(&self, ws: ContinuationMode) -> Option<String> {
        if self.is_sweep() {
            return None;
        }
        let http = COMPARE_HTTP_MODE;
        let mean_of = |mode, part| -> Option<f64> {
            let values: Option<Vec<f64>> = self
                .done(mode)
                .map(|l| l.breakdown.as_ref()?.part(part))
                .collect();
            let values = values?;
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        let mut parts: Vec<(Part, f64)> = Part::ALL
            .iter()
            .map(|part| Some((*part, mean_of(http, *part)? - mean_of(ws, *part)?)))
            .collect::<Option<_>>()?;
        let runs = self.done(http).count().min(self.done(ws).count());
        // What did not happen in any run (the link on loopback, the modelled waits with local
        // costs) is not a part of the difference.
        parts.retain(|(part, _)| self.happened(ws, *part));
        let modelled = parts
            .iter()
            .find(|(part, _)| !part.is_measured())
            .map(|(_, ms)| *ms);
        parts.retain(|(part, _)| part.is_measured());
        crate::agent::stats::sort_small(&mut parts, |a, b| a.1.abs() > b.1.abs());
        let measured: f64 = parts.iter().map(|(_, ms)| ms).sum();
        // The parts the transport changes first; the model's and the tools' apart, as what
        // the same work on both legs varied by run to run — not a reason for the difference.
        let said = |shared: bool| -> Vec<String> {
            parts
                .iter()
                .filter(|(part, _)| part.depends_on_transport() != shared)
                .map(|(part, ms)| format!("{} {}", part.noun(), signed_ms(*ms)))
                .collect()
        };
        let (dependent, shared) = (said(false), said(true));
        let listed = match (dependent.is_empty(), shared.is_empty()) {
            (_, true) => dependent.join(", "),
            (true, false) => format!(
                "only the work both legs share, run to run: {}",
                shared.join(", ")
            ),
            (false, false) => format!(
                "{}; the work both legs share varied run to run: {}",
                dependent.join(", "),
                shared.join(", ")
            ),
        };
        let more_or_less = |ms: f64| {
            let how = if ms >= 0.0 { "more" } else { "less" };
            format!("{} {how}", format_duration(ms.abs(), Precision::BySize))
        };
        // The headline and the why-sentence go by the median runs: when those differ the other
        // way, say so, rather than two lines disagreeing unexplained.
        let medians = self
            .speedup_of(ws)
            .map(|s| s.measured.unwrap_or(s.total).saved_ms())
            .filter(|median| runs > 1 && *median != 0.0 && (*median > 0.0) != (measured > 0.0))
            .map(|median| {
                format!(
                    "; the median runs differ the other way, {}: a run far from the others \
                     moves the mean",
                    signed_ms(median)
                )
            })
            .unwrap_or_default();
        let means = if runs == 1 {
            "1 run each".to_string()
        } else {
            format!("means of {runs} runs each, which add up{medians}")
        };
        let lead = format!(
            "{}, {} took {} per run than {} ({means}): {}.",
            if modelled.is_some() {
                "Measured"
            } else {
                "Part by part"
            },
            leg_name(http),
            more_or_less(measured),
            leg_name(ws),
            listed
        );
        Some(match modelled {
            Some(waits) => format!(
                "{lead} The modelled hosted services add {}: {} with them.",
                signed_ms(waits),
                more_or_less(measured + waits)
            ),
            None => lead,
        })
    }

    /// How far along the comparison is, 0 to 1, and in words: `leg 3 of 8 (HTTP stateless,
    /// repetition 1): turn 17 of 41`. `turns` is the leg under way's so far, `expected` the
    /// task's turns when known.
    pub fn progress(&self, turns: usize, expected: Option<usize>) -> (f64, String) {
        let plan = self.plan();
        let (done, all) = self.legs_done();
        let running = self.legs.iter().find(|l| l.status == RunStatus::Running);
        let Some(leg) = running else {
            let text = format!("{done} of {all} legs done");
            return (done as f64 / all.max(1) as f64, text);
        };
        let within = expected.map_or(0.0, |e| (turns as f64 / e.max(1) as f64).min(1.0));
        let at = plan
            .iter()
            .position(|(r, m)| *r == leg.repetition && *m == leg.mode)
            .map_or(done + 1, |i| i + 1);
        let which = match (leg.repetition, self.sweep_point(leg.repetition)) {
            (WARM_UP, _) => "warm-up, not counted".to_string(),
            (_, Some(at)) => at.describe(),
            (repetition, _) => format!("repetition {repetition}"),
        };
        let turn = match expected {
            // Before its first request a leg is starting, not at a turn 0.
            _ if turns == 0 => "starting".to_string(),
            Some(expected) => format!("turn {turns} of {expected}"),
            None => format!("turn {turns}"),
        };
        let text = format!(
            "leg {at} of {all} ({}, {which}): {turn}",
            leg_name(leg.mode)
        );
        ((done as f64 + within) / all.max(1) as f64, text)
    }

    /// The comparison as a page reloaded after it kept it: a leg cut off while it ran is
    /// stopped, and the repetitions stay as planned.
    pub fn restored(mut self) -> Self {
        for leg in &mut self.legs {
            if leg.status == RunStatus::Running {
                leg.status = RunStatus::Stopped;
            }
        }
        self.repetitions = if self.is_sweep() {
            self.sweep.len()
        } else {
            self.repetitions
                .clamp(*REPETITIONS.start(), *REPETITIONS.end())
        };
        self
    }
}

/// How far along a single run is, 0 to 1, and in words: `turn 17 of 41`; `expected` is the
/// task's turns when known.
pub fn run_progress(run: &AgentRun, expected: Option<usize>) -> (f64, String) {
    let turns = run.turns.len();
    match (run.status, expected) {
        (RunStatus::Idle, _) => (0.0, "not started".to_string()),
        (RunStatus::Running, _) if turns == 0 => (0.0, "starting".to_string()),
        (RunStatus::Running, Some(expected)) => (
            (turns as f64 / expected.max(1) as f64).min(1.0),
            format!("turn {turns} of {expected}"),
        ),
        (RunStatus::Running, None) => (0.0, format!("turn {turns}")),
        (RunStatus::Done, _) => (1.0, format!("done in {turns} turns")),
        (status, _) => (0.0, format!("{} at turn {turns}", status.as_str())),
    }
}

/// The leg's name in messages and headings.
pub fn leg_name(mode: ContinuationMode) -> &'static str {
    match mode {
        ContinuationMode::WebSocket => "WebSocket",
        ContinuationMode::LongRunning => "WebSocket long-running",
        ContinuationMode::HttpChained => "HTTP chained",
        ContinuationMode::HttpStateless => "HTTP stateless",
    }
}

/// `+8.1 ms`, `−0.40 ms`: a difference of times.
pub fn signed_ms(ms: f64) -> String {
    let sign = if ms < 0.0 { '−' } else { '+' };
    format!("{sign}{}", format_duration(ms.abs(), Precision::BySize))
}

/// How the page shows a speedup: `1.42×`; with a third decimal when two would read `1.00×`
/// for runs that differ (`1.004×`), so that a difference never looks like none.
pub fn format_speedup(speedup: f64) -> String {
    let plain = format!("{speedup:.2}×");
    if plain == "1.00×" && format!("{speedup:.3}") != "1.000" {
        format!("{speedup:.3}×")
    } else {
        plain
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::TurnRecord;
    use tether_protocol::ResponseCreate;

    const WS: ContinuationMode = ContinuationMode::WebSocket;
    const HTTP: ContinuationMode = COMPARE_HTTP_MODE;

    fn finished(status: RunStatus, end_to_end: f64) -> AgentRun {
        let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        turn.completed_at = Some(end_to_end);
        AgentRun {
            status,
            turns: vec![turn],
            ..AgentRun::default()
        }
    }

    fn leg(mode: ContinuationMode, repetition: usize, ms: f64) -> LegSummary {
        LegSummary::of(mode, repetition, &finished(RunStatus::Done, ms))
    }

    /// `c` with its warm-up done: every leg once, far slower than any repetition.
    fn warmed(mut c: Comparison) -> Comparison {
        for mode in c.modes.clone() {
            c.update(leg(mode, WARM_UP, 10_000.0));
        }
        c
    }

    #[test]
    fn a_warm_up_of_every_leg_comes_first_then_the_legs_alternate() {
        let two = Comparison::new(3);
        assert_eq!(two.order(1), [WS, HTTP]);
        assert_eq!(two.order(2), [HTTP, WS]);
        assert_eq!(
            Comparison::new(3).plan(),
            [
                (WARM_UP, WS),
                (WARM_UP, HTTP),
                (1, WS),
                (1, HTTP),
                (2, HTTP),
                (2, WS),
                (3, WS),
                (3, HTTP)
            ]
        );
        // Over four repetitions each leg goes first twice and second twice: A B B A A B B A.
        let plan = Comparison::new(4).plan();
        let counted: Vec<_> = plan.iter().filter(|(r, _)| *r != WARM_UP).collect();
        for mode in [WS, HTTP] {
            let first = counted.chunks(2).filter(|pair| pair[0].1 == mode).count();
            assert_eq!(first, 2, "{mode:?} goes first in half the repetitions");
        }
        let unwarmed = Comparison {
            warm_up: false,
            ..Comparison::new(1)
        };
        assert_eq!(unwarmed.plan(), [(1, WS), (1, HTTP)]);
        assert_eq!(Comparison::new(0).repetitions, 1);
        assert_eq!(Comparison::new(50).repetitions, 9);
    }

    #[test]
    fn the_warm_up_is_not_counted() {
        let mut c = Comparison::new(1);
        c.update(leg(WS, WARM_UP, 500.0));
        c.update(leg(HTTP, WARM_UP, 900.0));
        assert_eq!(c.status(), RunStatus::Running, "repetition 1 to go");
        assert_eq!(c.end_to_end(WS), None, "the warm-up is discarded");
        assert_eq!(c.legs_done(), (2, 4));
        c.update(leg(WS, 1, 100.0));
        c.update(leg(HTTP, 1, 120.0));
        assert_eq!(c.status(), RunStatus::Done);
        assert_eq!(c.end_to_end(WS).unwrap().n, 1);
        assert_eq!(c.ratios(WS), [(1, 1.2)]);
        assert!((c.speedup().unwrap().total.median - 1.2).abs() < 1e-9);
        let mut failed = leg(HTTP, WARM_UP, 1.0);
        failed.status = RunStatus::Failed;
        failed.error = Some("boom".into());
        c.update(failed);
        assert_eq!(
            c.error().as_deref(),
            Some("HTTP stateless run (warm-up): boom")
        );
    }

    #[test]
    fn a_long_running_leg_takes_its_turn_first_and_has_its_own_speedup() {
        const LONG: ContinuationMode = ContinuationMode::LongRunning;
        let mut c = warmed(Comparison::with_long_running(3, true));
        assert!(
            c.has_long_running() && !Comparison::with_long_running(3, false).has_long_running()
        );
        assert_eq!(c.order(1), [WS, HTTP, LONG]);
        assert_eq!(c.order(2), [HTTP, LONG, WS]);
        assert_eq!(c.order(3), [LONG, WS, HTTP]);
        assert_eq!(
            c.plan().len(),
            12,
            "three legs, a warm-up and three repetitions"
        );
        for (repetition, ws, http, long) in [(1, 100.0, 130.0, 90.0), (2, 110.0, 140.0, 95.0)] {
            c.update(leg(WS, repetition, ws));
            c.update(leg(HTTP, repetition, http));
            c.update(leg(LONG, repetition, long));
        }
        assert_eq!(c.status(), RunStatus::Running, "repetition 3 to go");
        let so_far = c.speedup_of(LONG).unwrap();
        assert_eq!((so_far.counted, so_far.is_final()), (2, false));
        c.update(leg(WS, 3, 120.0));
        c.update(leg(HTTP, 3, 150.0));
        c.update(leg(LONG, 3, 100.0));
        assert_eq!(c.status(), RunStatus::Done);
        let long = c.speedup_of(LONG).unwrap();
        assert!(
            long.describe()
                .starts_with("The long-running response (response.append) was 1.47× faster"),
            "{}",
            long.describe()
        );
        assert!((long.total.median - 140.0 / 95.0).abs() < 1e-9);
        assert_eq!(long.verdict(), crate::agent::Verdict::Faster);
        let ws = c.speedup().unwrap();
        assert!(
            (ws.total.median - 140.0 / 110.0).abs() < 1e-9,
            "the headline is still HTTP ÷ WebSocket"
        );
        assert_eq!(
            Comparison::new(1).speedup_of(LONG),
            None,
            "a comparison without the leg has no speedup for it"
        );
        assert_eq!(leg_name(LONG), "WebSocket long-running");
    }

    #[test]
    fn the_status_covers_every_planned_leg() {
        let mut c = Comparison::new(2);
        assert_eq!(c.status(), RunStatus::Idle);
        c = warmed(c);
        let mut running = leg(WS, 1, 10.0);
        running.status = RunStatus::Running;
        c.update(running);
        assert_eq!(c.status(), RunStatus::Running);
        c.update(leg(WS, 1, 10.0));
        assert_eq!(
            c.legs.len(),
            3,
            "the same leg, updated, after the warm-up's two"
        );
        c.update(leg(HTTP, 1, 12.0));
        c.update(leg(HTTP, 2, 12.0));
        assert_eq!(c.status(), RunStatus::Running, "one leg to go");
        assert_eq!(
            c.speedup().map(|s| (s.counted, s.is_final())),
            Some((1, false)),
            "a first result, from the one repetition with both legs done"
        );
        let mut failed = leg(WS, 2, 10.0);
        failed.status = RunStatus::Failed;
        failed.error = Some("HTTP 500: boom".into());
        c.update(failed);
        assert_eq!(c.status(), RunStatus::Failed);
        assert_eq!(
            c.error().as_deref(),
            Some("WebSocket run (repetition 2): HTTP 500: boom")
        );
    }

    #[test]
    fn the_speedup_is_the_ratio_of_the_medians_and_a_verdict_only_when_the_ranges_separate() {
        use crate::agent::Verdict;
        let mut c = warmed(Comparison::new(3));
        for (repetition, ws, http) in [(1, 100.0, 130.0), (2, 140.0, 150.0), (3, 110.0, 121.0)] {
            c.update(leg(WS, repetition, ws));
            c.update(leg(HTTP, repetition, http));
        }
        assert_eq!(c.status(), RunStatus::Done);
        let spread = c.end_to_end(WS).unwrap();
        assert_eq!(
            (spread.median, spread.min, spread.max),
            (110.0, 100.0, 140.0)
        );
        let speedup = c.speedup().unwrap();
        assert!((speedup.total.median - 130.0 / 110.0).abs() < 1e-9);
        // Every repetition had WebSocket faster, but its slowest run (140 ms) was slower than
        // HTTP's fastest (121 ms): within noise.
        assert_eq!(speedup.verdict(), Verdict::Noise);
        c.update(leg(WS, 2, 115.0));
        assert_eq!(c.speedup().unwrap().verdict(), Verdict::Faster);
        assert_eq!(format_speedup(1.4249), "1.42×");
        assert_eq!(format_speedup(1.0041), "1.004×");
        assert_eq!(format_speedup(0.9978), "0.998×");
        assert_eq!(format_speedup(1.0004), "1.00×");
    }

    #[test]
    fn the_difference_is_explained_part_by_part() {
        use crate::agent::ServerTimings;
        use serde_json::json;
        // A leg of one turn: `api` ms of API work in a 10 ms engine call, `wait` ms of network.
        let leg = |mode, repetition, api: u64, wait: f64| {
            let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
            turn.completed_at = Some(api as f64 + 10.0 + wait);
            turn.server = ServerTimings::parse(&json!({"path": "http", "stages": {},
                "api_us": api * 1000,
                "engine": {"queue_us": 0, "prefill_us": 4000, "decode_us": 6000,
                           "service_total_us": 10_000, "service_ttft_us": 0,
                           "iapi_ttft_us": 0, "iapi_total_us": 10_000}}));
            let run = AgentRun {
                status: RunStatus::Done,
                turns: vec![turn],
                ..AgentRun::default()
            };
            LegSummary::of(mode, repetition, &run)
        };
        let mut c = Comparison::new(1);
        assert_eq!(c.explain(), None);
        c.update(leg(WS, 1, 1, 2.0));
        c.update(leg(HTTP, 1, 9, 3.0));
        let difference = c.difference().unwrap();
        assert_eq!(difference[0], (Part::Api, 8.0));
        assert_eq!(difference[5], (Part::Network, 1.0));
        assert_eq!(
            c.explain().unwrap(),
            "Part by part, HTTP stateless took 9.0 ms more per run than WebSocket (1 run each): \
             API overhead +8.0 ms, frame delivery +1.0 ms; the work both legs share varied run to \
             run: engine +0.00 ms."
        );
        // The parts no run had (no tools, no page work, no link here) are not listed.
        assert!(!c.happened(WS, Part::Link) && c.happened(WS, Part::Engine));
        assert_eq!(signed_ms(-0.4), "−0.40 ms");
        // Three runs whose parts' medians do not add up (API +8, network +1, the runs' medians
        // +13): their means do (+12, +2: the mean runs 14 ms apart).
        let mut c = Comparison::new(3);
        for (repetition, http_api, http_wait) in [(1, 9, 3.0), (2, 9, 7.0), (3, 21, 2.0)] {
            c.update(leg(WS, repetition, 1, 2.0));
            c.update(leg(HTTP, repetition, http_api, http_wait));
        }
        assert_eq!(
            c.explain().unwrap(),
            "Part by part, HTTP stateless took 14.0 ms more per run than WebSocket (means of 3 \
             runs each, which add up): API overhead +12.0 ms, frame delivery +2.0 ms; the work both \
             legs share varied run to run: engine +0.00 ms."
        );
        // One WebSocket run far from the others: the means go one way, the medians the other.
        let mut c = Comparison::new(3);
        for (repetition, ws_wait, http_wait) in [(1, 2.0, 5.0), (2, 2.0, 5.0), (3, 30.0, 5.0)] {
            c.update(leg(WS, repetition, 1, ws_wait));
            c.update(leg(HTTP, repetition, 1, http_wait));
        }
        assert_eq!(
            c.explain().unwrap(),
            "Part by part, HTTP stateless took 6.3 ms less per run than WebSocket (means of 3 \
             runs each, which add up; the median runs differ the other way, +3.0 ms: a run far \
             from the others moves the mean): frame delivery −6.3 ms, API overhead +0.00 ms; the \
             work both legs share varied run to run: engine +0.00 ms."
        );
    }

    #[test]
    fn the_progress_counts_legs_and_the_turns_of_the_leg_under_way() {
        let mut c = Comparison::new(1);
        assert_eq!(
            c.progress(0, Some(41)),
            (0.0, "0 of 4 legs done".to_string())
        );
        c.update(leg(WS, WARM_UP, 1.0));
        let mut running = leg(HTTP, WARM_UP, 1.0);
        running.status = RunStatus::Running;
        c.update(running);
        let (fraction, text) = c.progress(10, Some(40));
        assert!((fraction - 1.25 / 4.0).abs() < 1e-9);
        assert_eq!(
            text,
            "leg 2 of 4 (HTTP stateless, warm-up, not counted): turn 10 of 40"
        );
        c.update(leg(HTTP, WARM_UP, 1.0));
        let mut running = leg(WS, 1, 1.0);
        running.status = RunStatus::Running;
        c.update(running);
        assert_eq!(
            c.progress(3, None).1,
            "leg 3 of 4 (WebSocket, repetition 1): turn 3"
        );
        // Before its first request, no "turn 0".
        assert_eq!(
            c.progress(0, Some(6)).1,
            "leg 3 of 4 (WebSocket, repetition 1): starting"
        );
        let started = AgentRun {
            status: RunStatus::Running,
            ..AgentRun::default()
        };
        assert_eq!(run_progress(&started, Some(6)).1, "starting");
        let mut sweep = Comparison::sweep(&["flagship", "spark"]);
        let mut running = leg(WS, 2, 1.0);
        running.status = RunStatus::Running;
        sweep.update(running);
        assert_eq!(
            sweep.progress(1, Some(6)).1,
            "leg 6 of 6 (WebSocket, point 2 of 2, spark): turn 1 of 6"
        );
    }

    #[test]
    fn a_restored_comparison_has_no_leg_running() {
        let mut c = Comparison::new(3);
        let mut running = leg(WS, 1, 10.0);
        running.status = RunStatus::Running;
        c.update(running);
        let restored = c.restored();
        assert_eq!(restored.status(), RunStatus::Stopped);
    }
}
