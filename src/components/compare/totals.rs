//! The per-leg table of a comparison: each leg's median and range over its repetitions, part
//! by part — end to end, then what was measured and what was modelled, then each part —, the
//! bytes, tokens and rates, and HTTP's difference with each WebSocket design. Every row is
//! there from the start (a value not measured yet shows `–`), so nothing moves while the legs
//! run.

use leptos::prelude::*;

use crate::agent::{
    COMPARE_HTTP_MODE, Comparison, ContinuationMode, Part, Precision, Spread, format_bytes,
    format_duration, signed_ms,
};
use crate::components::totals::{cached, rate, reused};
use crate::conditions::counted;

/// A spread of times.
fn spread_ms(spread: Option<Spread>) -> String {
    spread.map_or_else(|| "–".to_string(), |s| s.describe_ms(Precision::BySize))
}

/// A spread of counts: the median, with the range when the runs differ.
fn spread_count(spread: Option<Spread>, show: fn(f64) -> String) -> String {
    match spread {
        None => "–".to_string(),
        Some(s) if s.min == s.max || s.n < 2 => show(s.median),
        Some(s) => format!("{} ({} – {})", show(s.median), show(s.min), show(s.max)),
    }
}

fn whole(value: f64) -> String {
    format!("{value:.0}")
}

/// One row of the per-leg table: a name, how to read a leg, and how to read the difference.
struct Row {
    name: &'static str,
    title: &'static str,
    test_id: &'static str,
    leg: fn(&Comparison, ContinuationMode) -> String,
    /// HTTP's legs against those of a WebSocket design (WebSocket mode, or long-running).
    difference: fn(&Comparison, ContinuationMode) -> String,
}

fn none(_: &Comparison, _: ContinuationMode) -> String {
    String::new()
}

fn part_difference(c: &Comparison, ws: ContinuationMode, part: Part) -> String {
    c.difference_of(ws)
        .and_then(|d| d.into_iter().find(|(p, _)| *p == part))
        .map_or_else(String::new, |(_, ms)| signed_ms(ms))
}

/// The measured time of the done legs of `mode`: end to end, less the modelled waits.
fn measured(c: &Comparison, mode: ContinuationMode) -> Option<Spread> {
    c.spread_of(mode, |l| l.breakdown?.measured_ms())
}

const ROWS: [Row; 17] = [
    Row {
        name: "End to end",
        title: "first request to the last terminal event (and the last tools)",
        test_id: "compare-end-to-end",
        leg: |c, mode| spread_ms(c.end_to_end(mode)),
        difference: |c, ws| match (c.end_to_end(ws), c.end_to_end(COMPARE_HTTP_MODE)) {
            (Some(ws), Some(http)) => signed_ms(http.median - ws.median),
            _ => String::new(),
        },
    },
    Row {
        name: "Measured: end to end less the modelled waits",
        title: "what this machine spent: the server's work, the simulated model's pacing, the emulated link, the page",
        test_id: "compare-measured",
        leg: |c, mode| spread_ms(measured(c, mode)),
        difference: |c, ws| match (measured(c, ws), measured(c, COMPARE_HTTP_MODE)) {
            (Some(ws), Some(http)) => signed_ms(http.median - ws.median),
            _ => String::new(),
        },
    },
    Row {
        name: "Modelled hosted services (not measured)",
        title: "waits the server modelled with stated parameters: the hosted classifier per scanned token, the engine hop per call; 0 with local costs",
        test_id: "compare-modelled",
        leg: |c, mode| spread_ms(c.part(mode, Part::Modelled)),
        difference: |c, ws| part_difference(c, ws, Part::Modelled),
    },
    Row {
        name: "API overhead (measured)",
        title: "the server's own work per request (api_us, less its modelled classifier)",
        test_id: "compare-api",
        leg: |c, mode| spread_ms(c.part(mode, Part::Api)),
        difference: |c, ws| part_difference(c, ws, Part::Api),
    },
    Row {
        name: "Engine: queue, prefill, decode",
        title: "the simulated model's time, paced by its profile (less the modelled hop)",
        test_id: "compare-engine",
        leg: |c, mode| spread_ms(c.part(mode, Part::Engine)),
        difference: |c, ws| part_difference(c, ws, Part::Engine),
    },
    Row {
        name: "Tools",
        title: "the sandbox in this page",
        test_id: "compare-tools",
        leg: |c, mode| spread_ms(c.part(mode, Part::Tools)),
        difference: |c, ws| part_difference(c, ws, Part::Tools),
    },
    Row {
        name: "Client-side handling",
        title: "this page's measured work: encoding requests, decoding and applying events",
        test_id: "compare-client",
        leg: |c, mode| spread_ms(c.part(mode, Part::Client)),
        difference: |c, ws| part_difference(c, ws, Part::Client),
    },
    Row {
        name: "Link (emulated wire)",
        title: "what the emulated network link added to each turn, as the server reports it",
        test_id: "compare-link",
        leg: |c, mode| spread_ms(c.part(mode, Part::Link)),
        difference: |c, ws| part_difference(c, ws, Part::Link),
    },
    Row {
        name: "Frame delivery and loopback",
        title: "what is left: the loopback wire, the server's socket, the browser handing each frame to the page",
        test_id: "compare-network",
        leg: |c, mode| spread_ms(c.part(mode, Part::Network)),
        difference: |c, ws| part_difference(c, ws, Part::Network),
    },
    Row {
        name: "The parts' medians, added up",
        title: "medians do not add: this sum is not the end-to-end median",
        test_id: "compare-parts-sum",
        leg: |c, mode| {
            Part::ALL
                .iter()
                .map(|p| c.part(mode, *p).map(|s| s.median))
                .sum::<Option<f64>>()
                .map_or_else(|| "–".into(), |ms| format_duration(ms, Precision::BySize))
        },
        difference: none,
    },
    Row {
        name: "Bytes sent",
        title: "the JSON this page sent per run: every request body, or every frame",
        test_id: "compare-sent",
        leg: |c, mode| {
            spread_count(
                c.spread_of(mode, |l| Some(l.sent_bytes as f64)),
                format_bytes,
            )
        },
        difference: none,
    },
    Row {
        name: "Client handling per event",
        title: "the page's measured work per event received, in microseconds",
        test_id: "compare-per-event",
        leg: |c, mode| {
            spread_count(
                c.spread_of(mode, |l| l.breakdown?.client_us_per_event()),
                |us| format!("{us:.0} µs"),
            )
        },
        difference: none,
    },
    Row {
        name: "Turns",
        title: "requests per run",
        test_id: "compare-turns",
        leg: |c, mode| spread_count(c.spread_of(mode, |l| Some(l.turns as f64)), whole),
        difference: none,
    },
    Row {
        name: "Tokens in",
        title: "input tokens, every turn added up",
        test_id: "compare-input",
        leg: |c, mode| spread_count(c.spread_of(mode, |l| Some(l.input_tokens as f64)), whole),
        difference: none,
    },
    Row {
        name: "Cached by the engine",
        title: "the engine's prompt cache: the same rule on every transport; prompts under 1,024 tokens are never cached",
        test_id: "compare-cached",
        leg: |c, mode| {
            c.done(mode)
                .last()
                .map_or_else(|| "–".into(), |l| cached(l.cached_tokens, l.input_tokens))
        },
        difference: none,
    },
    Row {
        name: "Reused by the connection",
        title: "rendered tokens the WebSocket connection's cache supplied, so the API did not tokenize them again (none over HTTP)",
        test_id: "compare-reused",
        leg: |c, mode| {
            c.done(mode)
                .last()
                .map_or_else(|| "–".into(), |l| reused(l.reused_by_connection))
        },
        difference: none,
    },
    Row {
        name: "Output tokens/s (decoding)",
        title: "from each turn's first token to its last",
        test_id: "compare-rate",
        leg: |c, mode| {
            let unpaced = c.done(mode).any(|l| {
                l.conditions
                    .as_ref()
                    .is_some_and(|a| a.tokens_per_second.is_none())
            });
            if unpaced {
                "– (no pacing: instant)".to_string()
            } else {
                rate(c.spread_of(mode, |l| l.decoding_rate).map(|s| s.median))
            }
        },
        difference: none,
    },
];

/// Each leg, median and range (`compare-totals`; a row `compare-<measure>`). A sweep has none:
/// its points are on different models, and their medians would mean nothing.
#[component]
pub fn LegTotals(
    /// The comparison.
    #[prop(into)]
    comparison: Signal<Comparison>,
    /// Whether the long-running design is a leg (a column of its own).
    long_running: bool,
) -> impl IntoView {
    let [ws, http] = Comparison::MODES;
    let long = ContinuationMode::LongRunning;
    let rows = ROWS
        .iter()
        .map(|row| {
            let leg = row.leg;
            let difference = row.difference;
            view! {
                <tr data-testid=row.test_id>
                    <th scope="row">
                        {row.name}
                        <span class="row-note">{row.title}</span>
                    </th>
                    <td>{move || comparison.with(|c| leg(c, ws))}</td>
                    <td>{move || comparison.with(|c| leg(c, http))}</td>
                    {long_running.then(|| view! { <td>{move || comparison.with(|c| leg(c, long))}</td> })}
                    <td>{move || comparison.with(|c| difference(c, ws))}</td>
                    {long_running
                        .then(|| view! { <td>{move || comparison.with(|c| difference(c, long))}</td> })}
                </tr>
            }
        })
        .collect_view();
    let caption = move || {
        comparison.with(|c| {
            format!(
                "Each leg: the median of its runs and their range ({}, after a warm-up of every leg that is not counted). Each part's median is taken on its own, so the parts' medians need not add up to the end-to-end median; in one run they do.",
                counted(c.repetitions, "repetition")
            )
        })
    };
    view! {
        <div class="table-scroll" role="region" aria-label="Each leg, median and range" tabindex="0">
            <table class="compare-totals">
                <caption>{caption}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Measure"</th>
                        <th scope="col">"WebSocket"</th>
                        <th scope="col">"HTTP stateless"</th>
                        {long_running.then(|| view! { <th scope="col">"WebSocket long-running"</th> })}
                        <th scope="col">"HTTP − WebSocket"</th>
                        {long_running.then(|| view! { <th scope="col">"HTTP − long-running"</th> })}
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}
