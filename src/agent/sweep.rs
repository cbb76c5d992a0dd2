//! Where WebSocket mode pays off: a sweep over the model's speed at the chosen link and API
//! costs — the claim that as inference gets faster the API's overhead dominates, shown with this
//! server's own measurements. A sweep is a [`Comparison`] whose repetitions are its points, each
//! on a profile of its own ([`Comparison::sweep`]): after a discarded warm-up of both legs, each
//! point is a measured pair of runs of the same task, WebSocket mode and HTTP stateless, the
//! pairs alternating which leg goes first (A B, B A, …). A point's saving is
//! `1 − WebSocket ÷ HTTP` of its pair's end-to-end times. This module reads the points and lays
//! out their plot.

use crate::agent::compare::{COMPARE_HTTP_MODE, Comparison};
use crate::agent::{ContinuationMode, RunStatus, nice_ticks};
use crate::conditions::thousands;
use crate::profiles::{ProfileInfo, profile};

/// The profiles a sweep measures, slowest first: 65, 1,000 and 4,000 tokens/s, then no model
/// time at all.
pub const SWEEP_PROFILES: [&str; 4] = ["flagship", "spark", "burst", "instant"];

/// One point of a sweep: its profile and, once both legs are done, its saving.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    /// 1-based: the comparison's repetition.
    pub point: usize,
    pub profile: &'static ProfileInfo,
    /// `1 − WebSocket ÷ HTTP`.
    pub saving: Option<f64>,
}

/// The points of the sweep `c` (none when it is not a sweep).
pub fn sweep_points(c: &Comparison) -> Vec<SweepPoint> {
    let ws = ContinuationMode::WebSocket;
    c.sweep
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let point = i + 1;
            let done = |mode| {
                c.leg(point, mode)
                    .filter(|l| l.status == RunStatus::Done)?
                    .end_to_end_ms
                    .filter(|ms| *ms > 0.0)
            };
            Some(SweepPoint {
                point,
                profile: profile(name)?,
                saving: done(ws)
                    .zip(done(COMPARE_HTTP_MODE))
                    .map(|(ws, http)| 1.0 - ws / http),
            })
        })
        .collect()
}

/// The sweep in words, once it has a measured point: `WebSocket mode's saving over HTTP
/// stateless: +2 % at 65 tokens/s (flagship), +20 % at 1,000 tokens/s (spark).`
pub fn describe_sweep(c: &Comparison) -> Option<String> {
    let measured: Vec<String> = sweep_points(c)
        .iter()
        .filter_map(|p| Some(format!("{} {}", signed_percent(p.saving?), at(p.profile))))
        .collect();
    if measured.is_empty() {
        return None;
    }
    Some(format!(
        "WebSocket mode's saving over HTTP stateless: {}.",
        measured.join(", ")
    ))
}

/// `+21 %`, `−3 %`.
pub fn signed_percent(share: f64) -> String {
    let sign = if share < 0.0 { '−' } else { '+' };
    format!("{sign}{:.0} %", (share * 100.0).abs())
}

/// `at 1,000 tokens/s (spark)`, `with no model time (instant)`.
fn at(profile: &ProfileInfo) -> String {
    match profile.tokens_per_second {
        Some(rate) => format!("at {} tokens/s ({})", thousands(rate), profile.name),
        None => format!("with no model time ({})", profile.name),
    }
}

/// A point of the plot, where it goes.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotPoint {
    pub x: f64,
    pub y: f64,
    pub profile: &'static str,
    pub saving: f64,
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
    /// Where each profile sits on the speed axis, measured or not: (x, label).
    pub speed_ticks: Vec<(f64, String)>,
    /// The saving axis: (y, label).
    pub saving_ticks: Vec<(f64, String)>,
    /// The y of a saving of 0.
    pub zero: f64,
}

impl SweepPlot {
    /// The plot of the sweep `c` in a `width` × `height` box.
    pub fn layout(c: &Comparison, width: f64, height: f64) -> SweepPlot {
        let (left, top, right, bottom) = (56.0, 16.0, width - 24.0, height - 40.0);
        // 50 to 5,000 tokens/s in log10, then one more step for no model time.
        let (low, high) = (50f64.log10(), 5000f64.log10());
        let unpaced_at = high + 0.45;
        let x_of = |profile: &ProfileInfo| {
            let position = profile.tokens_per_second.map_or(unpaced_at, f64::log10);
            left + (position - low) / (unpaced_at - low) * (right - left)
        };
        let points = sweep_points(c);
        let savings: Vec<f64> = points.iter().filter_map(|p| p.saving).collect();
        let most = savings.iter().fold(0.1f64, |m, s| m.max(*s));
        let least = savings.iter().fold(0.0f64, |m, s| m.min(*s));
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
                let saving = p.saving?;
                Some(PlotPoint {
                    x: x_of(p.profile),
                    y: y_of(saving * 100.0),
                    profile: p.profile.name,
                    saving,
                })
            })
            .collect();
        let speed_ticks = points
            .iter()
            .map(|p| {
                let label = match p.profile.tokens_per_second {
                    Some(rate) => format!("{} tok/s", thousands(rate)),
                    None => "no model time".to_string(),
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
            "WebSocket mode's saving over HTTP stateless: +2 % at 65 tokens/s (flagship), +20 % \
             at 1,000 tokens/s (spark)."
        );
        assert_eq!(describe_sweep(&Comparison::sweep(&["spark"])), None);
        assert_eq!(signed_percent(-0.031), "−3 %");
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
        let labels: Vec<&str> = plot.speed_ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(
            labels,
            ["65 tok/s", "1,000 tok/s", "4,000 tok/s", "no model time"]
        );
        let savings: Vec<&str> = plot.saving_ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(savings, ["−10 %", "0 %", "10 %", "20 %", "30 %"]);
        // A sweep with nothing measured still has its axes.
        let empty = SweepPlot::layout(&Comparison::sweep(&SWEEP_PROFILES), 600.0, 240.0);
        assert!(empty.points.is_empty() && empty.speed_ticks.len() == 4);
    }
}
