//! Where WebSocket mode pays off: a sweep over the model's speed at the chosen link and API
//! costs — the claim that as inference gets faster the API's overhead dominates, shown with this
//! server's own measurements. A sweep is a [`Comparison`] whose repetitions are pairs of runs,
//! each on a profile of its own ([`Comparison::sweep`]): after a discarded warm-up of both legs,
//! each point — a profile — is measured as `per_point` pairs of the same task, WebSocket mode
//! and HTTP stateless, the pairs alternating which leg goes first (A B, B A, …). A pair's saving
//! is `1 − WebSocket ÷ HTTP` of their measured times (end to end less the modelled waits, as the
//! comparison's headline); a point shows their median and range, and
//! is a verdict only when its legs' ranges separate over at least three pairs
//! ([`super::verdict`]: one pair a point has no spread to judge by, two are too few). This
//! module reads the points and lays out their plot.

use crate::agent::compare::{COMPARE_HTTP_MODE, Comparison};
use crate::agent::stats::Spread;
use crate::agent::{ContinuationMode, JUDGED_FROM, Ratio, RunStatus, Verdict, nice_ticks};
use crate::conditions::thousands;
use crate::profiles::{ProfileInfo, profile};

/// The profiles a sweep measures, slowest first: 65, 1,000 and 4,000 tokens/s, then no model
/// time at all.
pub const SWEEP_PROFILES: [&str; 4] = ["flagship", "spark", "burst", "instant"];

/// The sweep's repetitions: each of `profiles` `per_point` times in a row (at least once).
pub fn sweep_profiles(profiles: &[&'static str], per_point: usize) -> Vec<&'static str> {
    profiles
        .iter()
        .flat_map(|p| std::iter::repeat_n(*p, per_point.max(1)))
        .collect()
}

/// Where a repetition of a sweep is: its point (1-based, of `points`) and its pair within the
/// point (1-based, of `pairs`).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepAt {
    pub point: usize,
    pub points: usize,
    pub pair: usize,
    pub pairs: usize,
    pub profile: String,
}

impl SweepAt {
    /// `point 2 of 4, spark, pair 1 of 3`; `point 2 of 4, spark` with one pair a point.
    pub fn describe(&self) -> String {
        let at = format!("point {} of {}, {}", self.point, self.points, self.profile);
        if self.pairs > 1 {
            format!("{at}, pair {} of {}", self.pair, self.pairs)
        } else {
            at
        }
    }
}

/// The runs of one point: its profile's repetitions, in order.
fn groups(c: &Comparison) -> Vec<(String, Vec<usize>)> {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, name) in c.sweep.iter().enumerate() {
        match groups.last_mut() {
            Some((last, repetitions)) if last == name => repetitions.push(i + 1),
            _ => groups.push((name.clone(), vec![i + 1])),
        }
    }
    groups
}

impl Comparison {
    /// Where repetition `repetition` of this sweep is; `None` for a comparison that is not a
    /// sweep, and for its warm-up.
    pub fn sweep_point(&self, repetition: usize) -> Option<SweepAt> {
        let groups = groups(self);
        let points = groups.len();
        groups
            .into_iter()
            .enumerate()
            .find_map(|(i, (profile, repetitions))| {
                let pair = repetitions.iter().position(|r| *r == repetition)?;
                Some(SweepAt {
                    point: i + 1,
                    points,
                    pair: pair + 1,
                    pairs: repetitions.len(),
                    profile,
                })
            })
    }
}

/// One point of a sweep: its profile and, once a pair is done, its saving.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    /// 1-based.
    pub point: usize,
    pub profile: &'static ProfileInfo,
    /// The median of its pairs' savings, `1 − WebSocket ÷ HTTP`; `None` before a pair is done.
    pub saving: Option<f64>,
    /// Every done pair's saving: their median, and their range.
    pub savings: Option<Spread>,
    /// Pairs planned for the point.
    pub pairs: usize,
    /// Whether the legs' times separate (faster, slower), or not (within noise).
    pub verdict: Option<Verdict>,
    /// Whether the legs' ranges are apart, however few the pairs (too few to judge by when
    /// the verdict is still noise).
    pub apart: bool,
}

/// The points of the sweep `c` (none when it is not a sweep).
pub fn sweep_points(c: &Comparison) -> Vec<SweepPoint> {
    let ws = ContinuationMode::WebSocket;
    groups(c)
        .into_iter()
        .enumerate()
        .filter_map(|(i, (name, repetitions))| {
            // What was measured, as the comparison's headline: end to end less the modelled
            // waits (the hosted costs' classifier and hop), when the run says what they were.
            let done = |repetition, mode| {
                let leg = c
                    .leg(repetition, mode)
                    .filter(|l| l.status == RunStatus::Done)?;
                leg.breakdown
                    .and_then(|b| b.measured_ms())
                    .or(leg.end_to_end_ms)
                    .filter(|ms| *ms > 0.0)
            };
            let pairs: Vec<(f64, f64)> = repetitions
                .iter()
                .filter_map(|r| done(*r, ws).zip(done(*r, COMPARE_HTTP_MODE)))
                .collect();
            let savings = Spread::of(pairs.iter().map(|(ws, http)| 1.0 - ws / http));
            let ratio = Spread::of(pairs.iter().map(|p| p.0))
                .zip(Spread::of(pairs.iter().map(|p| p.1)))
                .and_then(|(ws, http)| Ratio::of(ws, http));
            Some(SweepPoint {
                point: i + 1,
                profile: profile(&name)?,
                saving: savings.map(|s| s.median),
                savings,
                pairs: repetitions.len(),
                verdict: ratio.map(|r| r.verdict),
                apart: ratio.is_some_and(|r| r.apart()),
            })
        })
        .collect()
}

/// The sweep in words, once it has a measured point: `WebSocket mode's saving over HTTP
/// stateless, the median of each point's 3 pairs and their range: +2 % (−1 to +4 %, within
/// noise) at 65 tokens/s (flagship), +20 % (18 to 22 %) at 1,000 tokens/s (spark).`
pub fn describe_sweep(c: &Comparison) -> Option<String> {
    let points = sweep_points(c);
    let measured: Vec<String> = points
        .iter()
        .filter_map(|p| {
            let savings = p.savings?;
            let range = savings_range(&savings);
            // Within noise says why, so that a range on one side of zero does not read as
            // a result: the legs' times overlap, or they are apart over too few pairs.
            let judged = match (p.verdict?, savings.n) {
                (_, 1) => "1 pair: no spread to judge by".to_string(),
                (Verdict::Noise, n) if p.apart => {
                    format!("{range}; {n} pairs are too few to judge by, {JUDGED_FROM} can tell")
                }
                (Verdict::Noise, _) => format!("{range}; within noise, the legs' times overlap"),
                _ => range,
            };
            Some(format!(
                "{} ({judged}) {}",
                signed_percent(savings.median),
                at(p.profile)
            ))
        })
        .collect();
    if measured.is_empty() {
        return None;
    }
    let pairs = points.first().map_or(1, |p| p.pairs);
    let basis = if pairs > 1 {
        format!(", the median of each point's {pairs} pairs and their range")
    } else {
        ", one pair a point".to_string()
    };
    let modelled = [ContinuationMode::WebSocket, COMPARE_HTTP_MODE]
        .into_iter()
        .flat_map(|mode| c.done(mode))
        .any(|l| l.modelled_ms().is_some());
    let what = if modelled {
        " measured on this machine (the modelled hosted costs left out, as in the comparison's \
         headline)"
    } else {
        ""
    };
    Some(format!(
        "WebSocket mode's saving over HTTP stateless{what}{basis}: {}.",
        measured.join(", ")
    ))
}

/// The range of a point's savings: `+18 to +22 %`; pairs that print alike are said so, not as
/// a range from a saving to itself: `every pair alike`.
pub fn savings_range(savings: &Spread) -> String {
    let (least, most) = (signed_percent(savings.min), signed_percent(savings.max));
    if least == most {
        "every pair alike".to_string()
    } else {
        format!("{} to {most}", least.trim_end_matches(" %"))
    }
}

/// `+21 %`, `−3 %`.
pub fn signed_percent(share: f64) -> String {
    // Under 1 % a decimal, so that a saving of 0.4 % does not read as none ("+0.4 %", not
    // "0 %"); the sign of what is shown: one that rounds to nothing is "0 %", not "−0 %".
    let percent = share * 100.0;
    let decimals = usize::from(percent.abs() < 0.95);
    let shown = format!("{:.*}", decimals, percent.abs());
    if shown.trim_start_matches(['0', '.']).is_empty() {
        return "0 %".to_string();
    }
    let sign = if percent < 0.0 { '−' } else { '+' };
    format!("{sign}{shown} %")
}

/// `at 1,000 tokens/s (spark)`, `with no model time (instant)`.
fn at(profile: &ProfileInfo) -> String {
    match profile.tokens_per_second {
        Some(rate) => format!("at {} tokens/s ({})", thousands(rate), profile.name),
        None => format!("with no model time ({})", profile.name),
    }
}

/// A point of the plot, where it goes: its median, and its range as a vertical bar.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotPoint {
    pub x: f64,
    pub y: f64,
    /// The range's ends: the least saving's y and the largest's.
    pub low_y: f64,
    pub high_y: f64,
    pub profile: &'static str,
    pub saving: f64,
    pub savings: Spread,
    pub verdict: Verdict,
    /// Whether its legs' ranges are apart (too few pairs to judge by when still noise).
    pub apart: bool,
    /// Whether the model had a speed (`instant` has none: its point sits past the log axis,
    /// at no model time, where the line to it is not a slope).
    pub paced: bool,
}

/// The sweep's plot: the saving against the model's speed, the speed on a log scale (each
/// profile at its own tokens/s; no model time at the right end).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPlot {
    pub width: f64,
    pub height: f64,
    /// Left, top, right, bottom.
    pub plot: (f64, f64, f64, f64),
    pub points: Vec<PlotPoint>,
    /// Where each profile sits on the speed axis, measured or not: (x, label on two lines —
    /// `4,000` / `tok/s` —, so that neighbours do not overlap on a phone).
    pub speed_ticks: Vec<(f64, [String; 2])>,
    /// The saving axis: (y, label).
    pub saving_ticks: Vec<(f64, String)>,
    /// The y of a saving of 0.
    pub zero: f64,
}

impl SweepPlot {
    /// The plot of the sweep `c` in a `width` × `height` box.
    pub fn layout(c: &Comparison, width: f64, height: f64) -> SweepPlot {
        // Room on the right for half the last tick's label ("no model"), at the plot's edge.
        let (left, top, right, bottom) = (56.0, 16.0, width - 36.0, height - 52.0);
        // 50 to 5,000 tokens/s in log10, then one more step for no model time.
        let (low, high) = (50f64.log10(), 5000f64.log10());
        let unpaced_at = high + 0.45;
        let x_of = |profile: &ProfileInfo| {
            let position = profile.tokens_per_second.map_or(unpaced_at, f64::log10);
            left + (position - low) / (unpaced_at - low) * (right - left)
        };
        let points = sweep_points(c);
        let most = points
            .iter()
            .filter_map(|p| p.savings)
            .fold(0.1f64, |m, s| m.max(s.max));
        let least = points
            .iter()
            .filter_map(|p| p.savings)
            .fold(0.0f64, |m, s| m.min(s.min));
        let up = nice_ticks(most * 100.0, 4);
        let step = up.get(1).copied().unwrap_or(10.0);
        let top_pct = up.last().copied().unwrap_or(10.0);
        // Below zero, the same steps, as far down as the lowest saving.
        let below = (-least * 100.0 / step - 1e-9).ceil().max(0.0) as usize;
        let bottom_pct = -(below as f64) * step;
        let y_of = |pct: f64| top + (top_pct - pct) / (top_pct - bottom_pct) * (bottom - top);
        let plotted = points
            .iter()
            .filter_map(|p| {
                let savings = p.savings?;
                Some(PlotPoint {
                    x: x_of(p.profile),
                    y: y_of(savings.median * 100.0),
                    low_y: y_of(savings.min * 100.0),
                    high_y: y_of(savings.max * 100.0),
                    profile: p.profile.name,
                    saving: savings.median,
                    savings,
                    verdict: p.verdict.unwrap_or(Verdict::Noise),
                    apart: p.apart,
                    paced: p.profile.tokens_per_second.is_some(),
                })
            })
            .collect();
        let speed_ticks = points
            .iter()
            .map(|p| {
                let label = match p.profile.tokens_per_second {
                    Some(rate) => [thousands(rate), "tok/s".to_string()],
                    None => ["no model".to_string(), "time".to_string()],
                };
                (x_of(p.profile), label)
            })
            .collect();
        let saving_ticks = (1..=below)
            .rev()
            .map(|i| -(i as f64) * step)
            .chain(up.iter().copied())
            .map(|pct| (y_of(pct), format!("{} %", signed_whole(pct))))
            .collect();
        SweepPlot {
            width,
            height,
            plot: (left, top, right, bottom),
            points: plotted,
            speed_ticks,
            saving_ticks,
            zero: y_of(0.0),
        }
    }

    /// The lines between the plot's points.
    pub fn lines(&self) -> SweepLines {
        let paced: Vec<(f64, f64)> = self
            .points
            .iter()
            .filter(|p| p.paced)
            .map(|p| (p.x, p.y))
            .collect();
        let unpaced = self.points.iter().find(|p| !p.paced);
        let to_unpaced = paced
            .last()
            .zip(unpaced)
            .map(|(last, p)| [*last, (p.x, p.y)]);
        SweepLines { paced, to_unpaced }
    }
}

/// The sweep's lines: through the points at a model speed, on the log axis; and the step from
/// the last of them to the point at no model time, which is not on that axis (drawn apart,
/// dashed: the axis does not reach it, so its slope means nothing).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepLines {
    pub paced: Vec<(f64, f64)>,
    pub to_unpaced: Option<[(f64, f64); 2]>,
}

/// `−10`, `0`, `20`.
fn signed_whole(value: f64) -> String {
    if value < 0.0 {
        format!("−{:.0}", -value)
    } else {
        format!("{value:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::compare::{LegSummary, WARM_UP};
    use crate::agent::{AgentRun, TurnRecord};
    use tether_protocol::ResponseCreate;

    const WS: ContinuationMode = ContinuationMode::WebSocket;
    const HTTP: ContinuationMode = COMPARE_HTTP_MODE;

    fn leg(mode: ContinuationMode, repetition: usize, status: RunStatus, ms: f64) -> LegSummary {
        let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
        turn.completed_at = Some(ms);
        let run = AgentRun {
            status,
            turns: vec![turn],
            ..AgentRun::default()
        };
        LegSummary::of(mode, repetition, &run)
    }

    #[test]
    fn a_sweep_warms_up_then_runs_each_profile_as_an_alternating_pair() {
        let sweep = Comparison::sweep(&SWEEP_PROFILES);
        assert!(sweep.is_sweep() && !Comparison::new(3).is_sweep());
        let steps: Vec<(usize, ContinuationMode)> = sweep.plan();
        assert_eq!(
            steps,
            [
                (WARM_UP, WS),
                (WARM_UP, HTTP),
                (1, WS),
                (1, HTTP),
                (2, HTTP),
                (2, WS),
                (3, WS),
                (3, HTTP),
                (4, HTTP),
                (4, WS)
            ]
        );
        assert_eq!(sweep.profile_of(WARM_UP), Some("instant"));
        assert_eq!(sweep.profile_of(1), Some("flagship"));
        assert_eq!(sweep.profile_of(4), Some("instant"));
        assert_eq!(sweep.profile_of(5), None);
        assert_eq!(
            Comparison::new(3).profile_of(2),
            None,
            "the settings' profile"
        );
        let names: Vec<&str> = sweep_points(&sweep)
            .iter()
            .map(|p| p.profile.name)
            .collect();
        assert_eq!(names, SWEEP_PROFILES);
    }

    #[test]
    fn each_point_saves_one_minus_the_ratio_and_the_sweep_tracks_its_progress() {
        let mut sweep = Comparison::sweep(&["flagship", "spark"]);
        assert_eq!(sweep.status(), RunStatus::Idle);
        assert_eq!(sweep.legs_done(), (0, 6));
        for mode in [WS, HTTP] {
            sweep.update(leg(mode, WARM_UP, RunStatus::Done, 10.0));
        }
        sweep.update(leg(WS, 1, RunStatus::Done, 98.0));
        assert_eq!(sweep_points(&sweep)[0].saving, None, "one leg of the pair");
        sweep.update(leg(HTTP, 1, RunStatus::Done, 100.0));
        assert!((sweep_points(&sweep)[0].saving.unwrap() - 0.02).abs() < 1e-9);
        assert_eq!(
            (sweep.status(), sweep.legs_done()),
            (RunStatus::Running, (4, 6))
        );
        sweep.update(leg(HTTP, 2, RunStatus::Done, 100.0));
        sweep.update(leg(WS, 2, RunStatus::Done, 80.0));
        assert_eq!(sweep.status(), RunStatus::Done);
        assert_eq!(
            describe_sweep(&sweep).unwrap(),
            "WebSocket mode's saving over HTTP stateless, one pair a point: +2 % (1 pair: no \
             spread to judge by) at 65 tokens/s (flagship), +20 % (1 pair: no spread to judge \
             by) at 1,000 tokens/s (spark)."
        );
        assert_eq!(sweep_points(&sweep)[1].verdict, Some(Verdict::Noise));
        assert_eq!(describe_sweep(&Comparison::sweep(&["spark"])), None);
        assert_eq!(signed_percent(-0.031), "−3 %");
        assert_eq!(signed_percent(-0.003), "−0.3 %");
        assert_eq!(signed_percent(0.0046), "+0.5 %");
        assert_eq!(signed_percent(0.0004), "0 %");
        assert_eq!(signed_percent(0.0096), "+1 %");
    }

    #[test]
    fn a_point_is_the_measured_time_with_the_modelled_waits_left_out() {
        use crate::agent::ServerTimings;
        // End to end HTTP took 150 ms against 100, but 60 and 10 of them were modelled: what
        // was measured is 90 ms on both sides, a saving of 0, not 33 %.
        let timed = |mode, total: f64, modelled: f64| {
            let mut turn = TurnRecord::new(1, &ResponseCreate::new("m", "x"), 0.0);
            turn.completed_at = Some(total);
            let us = |ms: f64| (ms * 1000.0) as u64;
            turn.server = ServerTimings::parse(&serde_json::json!({"path": "x", "stages": {},
                "modelled": {"classify_us": us(modelled)}, "api_us": us(modelled),
                "engine": {"queue_us": 0, "prefill_us": 0, "decode_us": 0,
                           "service_total_us": 0, "service_ttft_us": 0, "iapi_ttft_us": 0,
                           "iapi_total_us": 0}}));
            let run = AgentRun {
                status: RunStatus::Done,
                turns: vec![turn],
                ..AgentRun::default()
            };
            LegSummary::of(mode, 1, &run)
        };
        let mut sweep = Comparison::sweep(&["spark"]);
        sweep.update(timed(WS, 100.0, 10.0));
        sweep.update(timed(HTTP, 150.0, 60.0));
        let point = &sweep_points(&sweep)[0];
        assert!(point.saving.unwrap().abs() < 1e-9, "{:?}", point.saving);
        assert_eq!(
            describe_sweep(&sweep).unwrap(),
            "WebSocket mode's saving over HTTP stateless measured on this machine (the modelled \
             hosted costs left out, as in the comparison's headline), one pair a point: 0 % (1 \
             pair: no spread to judge by) at 1,000 tokens/s (spark)."
        );
    }

    #[test]
    fn a_point_of_several_pairs_has_a_spread_and_a_verdict_only_when_its_legs_separate() {
        let profiles = sweep_profiles(&["flagship", "spark"], 3);
        assert_eq!(
            profiles,
            [
                "flagship", "flagship", "flagship", "spark", "spark", "spark"
            ]
        );
        let mut sweep = Comparison::sweep(&profiles);
        assert_eq!((sweep.repetitions, sweep.plan().len()), (6, 14));
        assert_eq!(
            sweep.sweep_point(5).unwrap().describe(),
            "point 2 of 2, spark, pair 2 of 3"
        );
        assert_eq!(sweep.sweep_point(WARM_UP), None);
        // flagship: every WebSocket run faster than every HTTP run; spark: one pair the other
        // way round.
        let times = [
            (1, 98.0, 100.0),
            (2, 97.0, 101.0),
            (3, 96.0, 99.0),
            (4, 80.0, 100.0),
            (5, 85.0, 100.0),
            (6, 104.0, 100.0),
        ];
        for (repetition, ws, http) in times {
            sweep.update(leg(WS, repetition, RunStatus::Done, ws));
            sweep.update(leg(HTTP, repetition, RunStatus::Done, http));
        }
        let points = sweep_points(&sweep);
        assert_eq!(points[0].verdict, Some(Verdict::Faster));
        assert_eq!(points[1].verdict, Some(Verdict::Noise));
        let spark = points[1].savings.unwrap();
        assert!((spark.median - 0.15).abs() < 1e-9 && (spark.min + 0.04).abs() < 1e-9);
        assert_eq!(
            describe_sweep(&sweep).unwrap(),
            "WebSocket mode's saving over HTTP stateless, the median of each point's 3 pairs and \
             their range: +3 % (+2 to +4 %) at 65 tokens/s (flagship), +15 % (−4 to +20 %; within \
             noise, the legs' times overlap) at 1,000 tokens/s (spark)."
        );
        // The plot draws each point's range around its median.
        let plot = SweepPlot::layout(&sweep, 600.0, 240.0);
        let p = &plot.points[1];
        assert!(p.high_y < p.y && p.y < p.low_y, "{p:?}");
        assert!(p.low_y > plot.zero, "its least saving is below zero");
        // A restored sweep keeps its pairs.
        assert_eq!(sweep.clone().restored().repetitions, 6);
    }

    /// Two pairs, WebSocket slower in both: a range below zero, but too few pairs to judge
    /// by — said so, not "within noise" beside a one-sided range.
    #[test]
    fn two_pairs_apart_are_too_few_and_say_so() {
        let mut sweep = Comparison::sweep(&["spark", "spark"]);
        for (repetition, ws, http) in [(1, 113.0, 100.0), (2, 119.0, 100.0)] {
            sweep.update(leg(WS, repetition, RunStatus::Done, ws));
            sweep.update(leg(HTTP, repetition, RunStatus::Done, http));
        }
        let point = &sweep_points(&sweep)[0];
        assert_eq!((point.verdict, point.apart), (Some(Verdict::Noise), true));
        assert_eq!(
            describe_sweep(&sweep).unwrap(),
            "WebSocket mode's saving over HTTP stateless, the median of each point's 2 pairs and \
             their range: −16 % (−19 to −13 %; 2 pairs are too few to judge by, 3 can tell) at \
             1,000 tokens/s (spark)."
        );
    }

    #[test]
    fn pairs_alike_are_said_so_not_as_a_range() {
        let mut sweep = Comparison::sweep(&["spark", "spark", "spark"]);
        for repetition in 1..=3 {
            sweep.update(leg(WS, repetition, RunStatus::Done, 97.0));
            sweep.update(leg(HTTP, repetition, RunStatus::Done, 100.0));
        }
        let said = describe_sweep(&sweep).unwrap();
        assert!(
            said.ends_with(": +3 % (every pair alike) at 1,000 tokens/s (spark)."),
            "{said}"
        );
    }

    #[test]
    fn the_plot_puts_faster_models_to_the_right_and_bigger_savings_higher() {
        let mut sweep = Comparison::sweep(&SWEEP_PROFILES);
        let times = [
            1.0, 1.0, 98.0, 100.0, 100.0, 90.0, 75.0, 100.0, 100.0, 110.0,
        ];
        for ((repetition, mode), ms) in sweep.plan().into_iter().zip(times) {
            sweep.update(leg(mode, repetition, RunStatus::Done, ms));
        }
        let plot = SweepPlot::layout(&sweep, 600.0, 240.0);
        let xs: Vec<f64> = plot.points.iter().map(|p| p.x).collect();
        assert!(xs.windows(2).all(|w| w[0] < w[1]), "{xs:?}");
        let (left, top, right, bottom) = plot.plot;
        assert!(xs.iter().all(|x| (left..=right).contains(x)));
        // 2 %, 10 %, 25 %, and −10 % with no model time: below the zero line.
        let ys: Vec<f64> = plot.points.iter().map(|p| p.y).collect();
        assert!(ys[0] > ys[1] && ys[1] > ys[2], "{ys:?}");
        assert!(ys[3] > plot.zero && plot.zero > ys[0]);
        assert!(ys.iter().all(|y| (top - 1e-9..=bottom + 1e-9).contains(y)));
        let labels: Vec<String> = plot.speed_ticks.iter().map(|(_, l)| l.join(" ")).collect();
        assert_eq!(
            labels,
            ["65 tok/s", "1,000 tok/s", "4,000 tok/s", "no model time"]
        );
        let savings: Vec<&str> = plot.saving_ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(savings, ["−10 %", "0 %", "10 %", "20 %", "30 %"]);
        // The line runs through the three model speeds; the step to no model time, past the
        // log axis, is drawn apart.
        let lines = plot.lines();
        let line = &lines.paced;
        assert_eq!(
            line,
            &plot.points[..3]
                .iter()
                .map(|p| (p.x, p.y))
                .collect::<Vec<_>>()
        );
        assert_eq!(lines.to_unpaced, Some([line[2], (xs[3], ys[3])]));
        assert!(!plot.points[3].paced && plot.points[..3].iter().all(|p| p.paced));
        // A sweep with nothing measured still has its axes.
        let empty = SweepPlot::layout(&Comparison::sweep(&SWEEP_PROFILES), 600.0, 240.0);
        assert!(empty.points.is_empty() && empty.speed_ticks.len() == 4);
        assert_eq!(
            empty.lines(),
            SweepLines {
                paced: vec![],
                to_unpaced: None
            }
        );
    }
}
