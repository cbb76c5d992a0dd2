//! How long a run will take, said before it starts, from the conditions chosen: the task's
//! turns and tokens, the profile's rate, the link, the API costs and the repetitions. One
//! formula, stated here and in docs/playground.md, for every leg; the same physics the server
//! simulates, with the server's and the page's own work as measured rates.
//!
//! A leg's turn `t` (of the task's `T`) takes
//!
//! ```text
//! model   TTFT + prefill/token × new_t + output_t ÷ rate     (the engine caches the rest)
//! link    RTT + request_bytes_t × 8 ÷ up + reply_bytes × 8 ÷ down
//! API     api_tokens_t × (API_US_PER_TOKEN + classifier/token) + hop
//! page    PAGE_MS_PER_TURN + the task's tool time a turn
//! ```
//!
//! where `new_t` is what the turn added to the context (the whole first prompt at turn 1),
//! `api_tokens_t` what the API processes — the whole context `context_t` over HTTP stateless,
//! `new_t` over WebSocket — and `request_bytes_t = REQUEST_BYTES + BYTES_PER_TOKEN × api_tokens_t`
//! what the request carries. A comparison is its warm-up (every leg on `instant` with local
//! costs) and its repetitions of every leg, each leg after [`LEG_SETUP_MS`]; a sweep the same over
//! its points' profiles.
//!
//! The task's numbers are its own ([`TaskShape`]: what the long task's and the demo's requests
//! held in a measured run); the server's and the page's rates were measured on the project's
//! 2-core machine (docs/benchmarks.md). A faster or slower machine changes them: the estimate
//! says "about", and the bench (tests/e2e/bench/page-compare.mjs) prints it beside the time the
//! run took.

use crate::agent::sweep::{SWEEP_PROFILES, sweep_profiles};
use crate::agent::{Comparison, ContinuationMode};
use crate::conditions::{ApiCosts, Link};
use crate::profiles::profile;
use crate::settings::{DEFAULT_SCENARIO, Settings, TaskLength};

/// The server's own work per token it processes (rendering, validating, classifying), in
/// microseconds: the HTTP stateless leg's API time over its tokens in the measured runs
/// (0.34 µs on an idle machine, 1.0 µs under other engineers' builds).
pub const API_US_PER_TOKEN: f64 = 0.5;
/// The page's handling of a turn and the browser's delivery of its events, in milliseconds:
/// the measured runs' client-side handling and frame delivery, per turn (17–29 ms).
pub const PAGE_MS_PER_TURN: f64 = 20.0;
/// What starting a leg costs before its clock: its connection, the sandbox's first `node`, the
/// page's bookkeeping between legs, in milliseconds. Measured as itself, the gap from one leg's
/// last response to the next leg's first request in the page's record (the page's bench prints
/// it): 59 ms [55–69] over 14 gaps of two Compares (`instant` and `spark`, the short task,
/// 2026-12-05); 250 ms before, an unmeasured allowance that made a fast Compare's estimate
/// 1.3–1.7× its run.
pub const LEG_SETUP_MS: f64 = 60.0;
/// Bytes every request carries whatever its input: the tools' definitions, the settings, the
/// HTTP head or the frame's envelope.
pub const REQUEST_BYTES: f64 = 4_600.0;
/// Bytes of request JSON per token of conversation it carries.
pub const BYTES_PER_TOKEN: f64 = 2.7;
/// Bytes of a turn's reply: its events.
pub const REPLY_BYTES: f64 = 20_000.0;

/// What a task does, in the numbers its duration depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskShape {
    /// Requests a run makes.
    pub turns: usize,
    /// Turn 1's prompt: the task and the tools' definitions.
    pub first_tokens: f64,
    /// What each later turn adds to the context: the model's last output and its tool output.
    pub added_tokens: f64,
    /// The model's output a turn.
    pub output_tokens: f64,
    /// The tools' time a turn, in the page, in milliseconds.
    pub tool_ms: f64,
}

impl TaskShape {
    /// The context at turn `t` (1-based).
    pub fn context(&self, t: usize) -> f64 {
        self.first_tokens + self.added_tokens * t.saturating_sub(1) as f64
    }

    /// What turn `t` added to the context: the prompt the engine's cache does not hold.
    pub fn new_tokens(&self, t: usize) -> f64 {
        if t <= 1 {
            self.first_tokens
        } else {
            self.added_tokens
        }
    }
}

/// The long rollout (`triage-ci-log`), as its requests held in a measured run: 41 turns, a
/// first prompt of the task and the tools' definitions, ~3,000 tokens of log and ~60 of the
/// model's message and call added a turn, the context at ~130k tokens by the last turn.
pub const LONG_TASK: TaskShape = TaskShape {
    turns: 41,
    first_tokens: 6_100.0,
    added_tokens: 3_100.0,
    output_tokens: 62.0,
    tool_ms: 1.0,
};

/// The short demo (`fix-sample-project`), as its requests held in a measured run (a WebSocket
/// run on `instant`, 2026-12-05: 1,098, 1,197, 2,101, 2,306, 2,533 and 2,673 tokens in, 285
/// out — its tests run in `node` twice): six turns, a first prompt of ~1,100 tokens and ~315
/// added a turn. Its tools: 35–42 ms a run, the legs' medians of three Compares (`instant`,
/// `spark`, `flagship`, 2026-12-05), about 6 ms a turn; one earlier single run took 124 ms.
pub const SHORT_TASK: TaskShape = TaskShape {
    turns: 6,
    first_tokens: 1_100.0,
    added_tokens: 315.0,
    output_tokens: 48.0,
    tool_ms: 6.0,
};

/// The conditions a leg runs under, for its estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LegConditions<'a> {
    pub task: &'a TaskShape,
    /// The profile's name (the server's `tether-sim` paces at 1,000 tokens/s unless told).
    pub profile: &'a str,
    pub link: Link,
    pub costs: ApiCosts,
}

/// The hosted preset's classifier, microseconds per scanned token.
const HOSTED_CLASSIFIER_US: f64 = 5.7;
/// The hosted preset's engine hop, milliseconds per call.
const HOSTED_HOP_MS: f64 = 1.0;
/// The rate `tether-sim` paces at unless the server was started with another.
const SERVER_DEFAULT_RATE: f64 = 1_000.0;

/// How long one leg over `mode` takes under `on`, in milliseconds, its setup included.
pub fn leg_ms(mode: ContinuationMode, on: &LegConditions) -> f64 {
    let task = on.task;
    let (ttft, prefill, rate) = match profile(on.profile) {
        Some(p) if p.name == "tether-sim" => (0.0, 0.0, Some(SERVER_DEFAULT_RATE)),
        Some(p) => (p.ttft_ms, p.prefill_ms_per_token, p.tokens_per_second),
        None => (0.0, 0.0, Some(SERVER_DEFAULT_RATE)),
    };
    let (classifier_us, hop_ms) = match on.costs {
        ApiCosts::Hosted => (HOSTED_CLASSIFIER_US, HOSTED_HOP_MS),
        ApiCosts::Local | ApiCosts::Server => (0.0, 0.0),
    };
    // What the request carries, and what the API processes: HTTP stateless the whole context
    // both ways; HTTP chained sends what is new and has the API load and render the rest;
    // WebSocket mode (and its long-running design) both only what is new.
    let (carries_all, processes_all) = match mode {
        ContinuationMode::HttpStateless => (true, true),
        ContinuationMode::HttpChained => (false, true),
        ContinuationMode::WebSocket | ContinuationMode::LongRunning => (false, false),
    };
    let bytes_ms = |bytes: f64, mbit: Option<f64>| mbit.map_or(0.0, |m| bytes * 8.0 / (m * 1e3));
    let turns: f64 = (1..=task.turns)
        .map(|t| {
            let new = task.new_tokens(t);
            let tokens = |all: bool| if all { task.context(t) } else { new };
            let api_tokens = tokens(processes_all);
            let model = ttft + prefill * new + rate.map_or(0.0, |r| task.output_tokens / r * 1e3);
            let request = REQUEST_BYTES + BYTES_PER_TOKEN * tokens(carries_all);
            let link = on.link.rtt_ms
                + bytes_ms(request, on.link.up_mbit)
                + bytes_ms(REPLY_BYTES, on.link.down_mbit);
            let api = api_tokens * (API_US_PER_TOKEN + classifier_us) / 1e3 + hop_ms;
            model + link + api + PAGE_MS_PER_TURN + task.tool_ms
        })
        .sum();
    LEG_SETUP_MS + turns
}

/// How long a comparison of `modes` over `repetitions` takes under `on`: the warm-up of every
/// leg on `instant` with local costs, then every leg in every repetition.
pub fn comparison_ms(modes: &[ContinuationMode], repetitions: usize, on: &LegConditions) -> f64 {
    let warm = LegConditions {
        profile: crate::agent::WARM_UP_PROFILE,
        costs: ApiCosts::Local,
        ..*on
    };
    modes
        .iter()
        .map(|mode| leg_ms(*mode, &warm) + repetitions as f64 * leg_ms(*mode, on))
        .sum()
}

/// How long a sweep of `profiles` (one pair a repetition, a profile repeated for every pair of
/// its point) takes under `on`, its warm-up included.
pub fn sweep_ms(profiles: &[&str], on: &LegConditions) -> f64 {
    let pair = [ContinuationMode::WebSocket, ContinuationMode::HttpStateless];
    let warm = comparison_ms(&pair, 0, on);
    let points: f64 = profiles
        .iter()
        .map(|profile| {
            let at = LegConditions { profile, ..*on };
            pair.iter().map(|mode| leg_ms(*mode, &at)).sum::<f64>()
        })
        .sum();
    warm + points
}

/// The task `settings` run, when the page knows its shape: the long rollout, or the short
/// demo's scenario.
pub fn task_of(settings: &Settings) -> Option<&'static TaskShape> {
    match (settings.task_length, settings.run_scenario().as_deref()) {
        (TaskLength::Long, _) => Some(&LONG_TASK),
        (TaskLength::Short, Some(DEFAULT_SCENARIO)) => Some(&SHORT_TASK),
        _ => None,
    }
}

fn conditions_of(settings: &Settings) -> Option<LegConditions<'_>> {
    Some(LegConditions {
        task: task_of(settings)?,
        profile: settings.profile.trim(),
        link: settings.link(),
        costs: settings.api_costs,
    })
}

/// How long Run takes with `settings`: a single run, or a comparison with its warm-up; `None`
/// for a task the page does not know.
pub fn estimate_run(settings: &Settings) -> Option<f64> {
    let on = conditions_of(settings)?;
    Some(match settings.transport.mode() {
        Some(mode) => leg_ms(mode, &on),
        None => {
            let c =
                Comparison::with_long_running(settings.repetitions, settings.compare_long_running);
            comparison_ms(&c.modes, c.repetitions, &on)
        }
    })
}

/// How long Sweep model speed takes with `settings`: each profile as often as a comparison
/// repeats, after the warm-up.
pub fn estimate_sweep(settings: &Settings) -> Option<f64> {
    let on = conditions_of(settings)?;
    Some(sweep_ms(
        &sweep_profiles(&SWEEP_PROFILES, settings.repetitions),
        &on,
    ))
}

/// `about 2 min 20 s`, `about 45 s`, `about 13 min`: an estimate, rounded as far as it is good.
pub fn format_estimate(ms: f64) -> String {
    let seconds = ms / 1e3;
    if seconds < 5.0 {
        return "a few seconds".to_string();
    }
    if seconds < 10.0 {
        return format!("about {:.0} s", seconds.round());
    }
    if seconds < 60.0 {
        return format!("about {:.0} s", (seconds / 5.0).round() * 5.0);
    }
    if seconds < 600.0 {
        let rounded = (seconds / 10.0).round() as u64 * 10;
        let (min, sec) = (rounded / 60, rounded % 60);
        return if sec == 0 {
            format!("about {min} min")
        } else {
            format!("about {min} min {sec} s")
        };
    }
    format!("about {:.0} min", (seconds / 60.0).round())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::LinkPreset;

    const WS: ContinuationMode = ContinuationMode::WebSocket;
    const HTTP: ContinuationMode = ContinuationMode::HttpStateless;

    fn on<'a>(
        task: &'a TaskShape,
        profile: &'a str,
        link: LinkPreset,
        costs: ApiCosts,
    ) -> LegConditions<'a> {
        LegConditions {
            task,
            profile,
            link: link.link().unwrap(),
            costs,
        }
    }

    #[test]
    fn estimates_read_rounded_as_far_as_they_are_good() {
        assert_eq!(format_estimate(4_000.0), "a few seconds");
        assert_eq!(format_estimate(9_106.0), "about 9 s");
        assert_eq!(format_estimate(43_000.0), "about 45 s");
        assert_eq!(format_estimate(141_000.0), "about 2 min 20 s");
        assert_eq!(format_estimate(120_400.0), "about 2 min");
        assert_eq!(format_estimate(13.4 * 60_000.0), "about 13 min");
    }

    #[test]
    fn the_tasks_shapes_are_the_tasks_the_page_runs() {
        use crate::settings::{LONG_TURNS, SHORT_TURNS, TransportChoice};
        assert_eq!(
            (LONG_TASK.turns, SHORT_TASK.turns),
            (LONG_TURNS, SHORT_TURNS)
        );
        let long = Settings {
            task_length: TaskLength::Long,
            ..Settings::default()
        };
        let short = Settings {
            task_length: TaskLength::Short,
            ..Settings::default()
        };
        assert_eq!(task_of(&long), Some(&LONG_TASK));
        assert_eq!(task_of(&short), Some(&SHORT_TASK));
        let echo = Settings {
            scenario: String::new(),
            ..short
        };
        assert_eq!((task_of(&echo), estimate_run(&echo)), (None, None));
        // A comparison is more than one of its legs; a sweep more than a comparison.
        let compare = Settings {
            transport: TransportChoice::Compare,
            ..long.clone()
        };
        let single = estimate_run(&long).unwrap();
        let compared = estimate_run(&compare).unwrap();
        assert!(compared > 6.0 * single, "{single} {compared}");
        assert!(estimate_sweep(&compare).unwrap() > compared);
    }

    #[test]
    fn a_turn_costs_what_the_formula_says() {
        // One turn of 1,000 new tokens, 100 out, at spark's rate over the home uplink, hosted.
        let task = TaskShape {
            turns: 1,
            first_tokens: 1_000.0,
            added_tokens: 0.0,
            output_tokens: 100.0,
            tool_ms: 5.0,
        };
        let at = on(&task, "spark", LinkPreset::HomeUplink, ApiCosts::Hosted);
        let model = 80.0 + 0.02 * 1_000.0 + 100.0;
        let request = REQUEST_BYTES + BYTES_PER_TOKEN * 1_000.0;
        let link = 40.0 + request * 8.0 / 20e3 + REPLY_BYTES * 8.0 / 100e3;
        let api = 1_000.0 * (API_US_PER_TOKEN + 5.7) / 1e3 + 1.0;
        let expected = LEG_SETUP_MS + model + link + api + PAGE_MS_PER_TURN + 5.0;
        assert!(
            (leg_ms(WS, &at) - expected).abs() < 1e-9,
            "{}",
            leg_ms(WS, &at)
        );
        // On one turn both transports carry the same.
        assert!((leg_ms(HTTP, &at) - expected).abs() < 1e-9);
        // HTTP chained uploads what is new but has the API process all of it.
        let two = TaskShape {
            turns: 2,
            added_tokens: 500.0,
            ..task
        };
        let at = LegConditions { task: &two, ..at };
        let chained = leg_ms(ContinuationMode::HttpChained, &at);
        assert!(leg_ms(WS, &at) < chained && chained < leg_ms(HTTP, &at));
    }

    #[test]
    fn http_pays_for_its_whole_context_every_turn_and_websocket_for_what_is_new() {
        let at = on(
            &LONG_TASK,
            "spark",
            LinkPreset::HomeUplink,
            ApiCosts::Hosted,
        );
        let (ws, http) = (leg_ms(WS, &at), leg_ms(HTTP, &at));
        assert!(http > 2.0 * ws, "{ws} {http}");
        // Local costs and loopback: the model's time is most of either.
        let here = on(&LONG_TASK, "spark", LinkPreset::Loopback, ApiCosts::Local);
        assert!(leg_ms(HTTP, &here) < 1.3 * leg_ms(WS, &here));
        // A longer round trip adds as much to both.
        let far = on(
            &LONG_TASK,
            "spark",
            LinkPreset::OtherContinent,
            ApiCosts::Local,
        );
        let near = on(&LONG_TASK, "spark", LinkPreset::SameRegion, ApiCosts::Local);
        let added = |mode| leg_ms(mode, &far) - leg_ms(mode, &near);
        let rtt = 140.0 * LONG_TASK.turns as f64;
        assert!((added(WS) - rtt).abs() < 0.1 * rtt && (added(HTTP) - rtt).abs() < 0.2 * rtt);
        // A comparison is its warm-up and its repetitions; a sweep its warm-up and its points.
        let one = comparison_ms(&[WS, HTTP], 1, &at);
        let three = comparison_ms(&[WS, HTTP], 3, &at);
        assert!((three - one - 2.0 * (ws + http)).abs() < 1e-6);
        let sweep = sweep_ms(&["spark", "spark"], &at);
        assert!((sweep - (one + ws + http)).abs() < 1e-6);
    }
}
