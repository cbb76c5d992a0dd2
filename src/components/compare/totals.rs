//! The per-leg table of a comparison: each leg's median and range over its repetitions, part
//! by part — what was measured, what was modelled and both together, then each part —, the
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

/// `2,683,092`: a count, its thousands apart.
fn whole(value: f64) -> String {
    crate::conditions::thousands(value)
}

/// One row of the per-leg table: a name, a note and what the row measures.
struct Row {
    name: &'static str,
    title: &'static str,
    test_id: &'static str,
    measure: Measure,
}

/// What a row measures, which says how to read a leg and HTTP's difference with a WebSocket
/// design (WebSocket mode, or long-running).
#[derive(Clone, Copy)]
enum Measure {
    /// A part of the breakdown: its spread, and the difference as
    /// [`Comparison::difference_of`] has it.
    Part(Part),
    /// A time: its spread, and the difference of the medians.
    Time(fn(&Comparison, ContinuationMode) -> Option<Spread>),
    /// Anything else, shown for each leg with no difference.
    Leg(fn(&Comparison, ContinuationMode) -> String),
}

impl Measure {
    /// What a leg of `mode` shows.
    fn leg(self, c: &Comparison, mode: ContinuationMode) -> String {
        match self {
            Measure::Part(part) if !c.happened(mode, part) => none(part),
            Measure::Part(part) => spread_ms(c.part(mode, part)),
            Measure::Time(time) => spread_ms(time(c, mode)),
            Measure::Leg(leg) => leg(c, mode),
        }
    }

    /// HTTP's legs against those of `ws`; empty when there is none (yet).
    fn difference(self, c: &Comparison, ws: ContinuationMode) -> String {
        match self {
            Measure::Part(part) if !c.happened(ws, part) => String::new(),
            Measure::Part(part) => c
                .difference_of(ws)
                .and_then(|d| d.into_iter().find(|(p, _)| *p == part))
                .map_or_else(String::new, |(_, ms)| signed_ms(ms)),
            Measure::Time(time) => match (time(c, ws), time(c, COMPARE_HTTP_MODE)) {
                (Some(ws), Some(http)) => signed_ms(http.median - ws.median),
                _ => String::new(),
            },
            Measure::Leg(_) => String::new(),
        }
    }
}

/// What a part that took no time in any run shows: why it did not happen, not "0.00 ms".
fn none(part: Part) -> String {
    part.absent().unwrap_or("– (none)").to_string()
}

/// The measured time of the done legs of `mode`: end to end, less the modelled waits.
fn measured(c: &Comparison, mode: ContinuationMode) -> Option<Spread> {
    c.spread_of(mode, |l| l.breakdown?.measured_ms())
}

const ROWS: [Row; 17] = [
    Row {
        name: "Measured: end to end less the modelled waits",
        title: "what this machine spent: the server's work, the simulated model's pacing, the emulated link, the page",
        test_id: "compare-measured",
        measure: Measure::Time(measured),
    },
    Row {
        name: "Modelled hosted services (not measured)",
        title: "waits the server modelled with stated parameters: the hosted classifier per scanned token, the engine hop per call; none with local costs",
        test_id: "compare-modelled",
        measure: Measure::Part(Part::Modelled),
    },
    Row {
        name: "End to end: measured and modelled",
        title: "first request to the last terminal event (and the last tools)",
        test_id: "compare-end-to-end",
        measure: Measure::Time(Comparison::end_to_end),
    },
    Row {
        name: "API overhead (measured)",
        title: "the server's own work per request (api_us, less its modelled classifier)",
        test_id: "compare-api",
        measure: Measure::Part(Part::Api),
    },
    Row {
        name: "Engine: queue, prefill, decode",
        title: "the simulated model's time, paced by its profile (less the modelled hop)",
        test_id: "compare-engine",
        measure: Measure::Part(Part::Engine),
    },
    Row {
        name: "Tools",
        title: "the sandbox in this page",
        test_id: "compare-tools",
        measure: Measure::Part(Part::Tools),
    },
    Row {
        name: "Client-side handling",
        title: "this page's measured work: encoding requests, decoding and applying events",
        test_id: "compare-client",
        measure: Measure::Part(Part::Client),
    },
    Row {
        name: "Link (emulated wire)",
        title: "what the emulated network link added to each turn, as the server reports it",
        test_id: "compare-link",
        measure: Measure::Part(Part::Link),
    },
    Row {
        name: "Frame delivery and loopback",
        title: "what is left: the loopback wire, the server's socket, the browser handing each frame to the page",
        test_id: "compare-network",
        measure: Measure::Part(Part::Network),
    },
    Row {
        name: "The parts' medians, added up",
        title: "medians do not add: this sum is not the end-to-end median",
        test_id: "compare-parts-sum",
        measure: Measure::Leg(|c, mode| {
            Part::ALL
                .iter()
                .map(|p| c.part(mode, *p).map(|s| s.median))
                .sum::<Option<f64>>()
                .map_or_else(|| "–".into(), |ms| format_duration(ms, Precision::BySize))
        }),
    },
    Row {
        name: "Bytes sent",
        title: "the JSON this page sent per run: every request body, or every frame",
        test_id: "compare-sent",
        measure: Measure::Leg(|c, mode| {
            spread_count(
                c.spread_of(mode, |l| Some(l.sent_bytes as f64)),
                format_bytes,
            )
        }),
    },
    Row {
        name: "Client handling per event",
        title: "the page's measured work per event received, in microseconds",
        test_id: "compare-per-event",
        measure: Measure::Leg(|c, mode| {
            spread_count(
                c.spread_of(mode, |l| l.breakdown?.client_us_per_event()),
                |us| format!("{us:.0} µs"),
            )
        }),
    },
    Row {
        name: "Turns",
        title: "requests per run",
        test_id: "compare-turns",
        measure: Measure::Leg(|c, mode| {
            spread_count(c.spread_of(mode, |l| Some(l.turns as f64)), whole)
        }),
    },
    Row {
        name: "Tokens in",
        title: "input tokens, every turn added up",
        test_id: "compare-input",
        measure: Measure::Leg(|c, mode| {
            spread_count(c.spread_of(mode, |l| Some(l.input_tokens as f64)), whole)
        }),
    },
    Row {
        name: "Cached by the engine",
        title: "the engine's prompt cache: the same rule on every transport; prompts under 1,024 tokens are never cached",
        test_id: "compare-cached",
        measure: Measure::Leg(|c, mode| {
            c.done(mode)
                .last()
                .map_or_else(|| "–".into(), |l| cached(l.cached_tokens, l.input_tokens))
        }),
    },
    Row {
        name: "Reused by the connection",
        title: "rendered tokens the WebSocket connection's cache supplied, so the API did not tokenize them again (none over HTTP)",
        test_id: "compare-reused",
        measure: Measure::Leg(|c, mode| {
            c.done(mode)
                .last()
                .map_or_else(|| "–".into(), |l| reused(l.reused_by_connection))
        }),
    },
    Row {
        name: "Output tokens/s (decoding)",
        title: "from each turn's first token to its last, as the page saw them arrive: within a few % of the profile's rate either way up to 1,000 tokens/s (the frames' own delivery varies); at 4,000 the frames arrive in batches and it can read 15–20 % high",
        test_id: "compare-rate",
        measure: Measure::Leg(|c, mode| {
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
        }),
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
            let measure = row.measure;
            let leg = move |mode| move || comparison.with(|c| measure.leg(c, mode));
            let difference =
                move |design| move || comparison.with(|c| measure.difference(c, design));
            view! {
                <tr data-testid=row.test_id>
                    <th scope="row">
                        {row.name}
                        <span class="row-note">{row.title}</span>
                    </th>
                    <td>{leg(ws)}</td>
                    <td>{leg(http)}</td>
                    {long_running.then(|| view! { <td>{leg(long)}</td> })}
                    <td>{difference(ws)}</td>
                    {long_running.then(|| view! { <td>{difference(long)}</td> })}
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
