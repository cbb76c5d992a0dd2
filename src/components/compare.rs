//! Compare mode's results: the speedup, coloured by what it says, with what it is made of (and,
//! with the long-running leg, its own against HTTP); each
//! leg's median and range over the repetitions, part by part; every repetition's own numbers; and
//! side by side, the latest run of each leg — its status, timeline and conversation.
//!
//! Every table has its rows from the start (a value not measured yet shows `–`), so nothing
//! moves while the legs run; a leg's numbers appear once it is done.

use leptos::prelude::*;

use crate::agent::{
    COMPARE_HTTP_MODE, Comparison, ContinuationMode, Part, Precision, RunStatus, Spread,
    format_duration, format_speedup, leg_name, signed_ms,
};
use crate::components::totals::{cached, rate, reused};
use crate::components::{Conversation, RunView, Timeline};

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

const ROWS: [Row; 12] = [
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
        name: "API overhead",
        title: "the server's own work per request (api_us)",
        test_id: "compare-api",
        leg: |c, mode| spread_ms(c.part(mode, Part::Api)),
        difference: |c, ws| part_difference(c, ws, Part::Api),
    },
    Row {
        name: "Engine: queue, prefill, decode",
        title: "the simulated model's time",
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
        name: "Network and frame delivery",
        title: "what is left: the wire, and the browser handing each frame to the page",
        test_id: "compare-network",
        leg: |c, mode| spread_ms(c.part(mode, Part::Network)),
        difference: |c, ws| part_difference(c, ws, Part::Network),
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
        leg: |c, mode| rate(c.spread_of(mode, |l| l.decoding_rate).map(|s| s.median)),
        difference: none,
    },
];

/// One leg of one repetition, in the per-repetition table.
fn repetition_cell(c: &Comparison, repetition: usize, mode: ContinuationMode) -> String {
    match c.leg(repetition, mode) {
        None => "–".to_string(),
        Some(leg) => match leg.status {
            RunStatus::Done => format_duration(leg.end_to_end_ms, Precision::BySize),
            RunStatus::Running => "running…".to_string(),
            other => other.as_str().to_string(),
        },
    }
}

/// HTTP's end-to-end time over the leg `ws`'s in `repetition`, once both are done.
fn repetition_ratio(c: &Comparison, repetition: usize, ws: ContinuationMode) -> String {
    match (c.leg(repetition, ws), c.leg(repetition, COMPARE_HTTP_MODE)) {
        (Some(w), Some(h)) if w.status == RunStatus::Done && h.status == RunStatus::Done => w
            .end_to_end_ms
            .zip(h.end_to_end_ms)
            .filter(|(w, _)| *w > 0.0)
            .map_or_else(|| "–".into(), |(w, h)| format_speedup(h / w)),
        _ => "–".to_string(),
    }
}

/// The results of `comparison` (`data-testid="compare"`, the speedup `speedup`; with the
/// long-running leg, its own `speedup-long-running`).
#[component]
pub fn CompareView(
    /// The comparison to show.
    #[prop(into)]
    comparison: Signal<Comparison>,
) -> impl IntoView {
    let speedup = Memo::new(move |_| comparison.with(Comparison::speedup));
    let long = ContinuationMode::LongRunning;
    let long_speedup = Memo::new(move |_| comparison.with(|c| c.speedup_of(long)));
    let status = Memo::new(move |_| comparison.with(Comparison::status));
    // The columns: the legs, then HTTP's difference with each WebSocket design.
    let has_long = Memo::new(move |_| comparison.with(Comparison::has_long_running));
    let speedup_text = move || match (speedup.get(), status.get()) {
        (Some(speedup), _) => format_speedup(speedup.median),
        (None, RunStatus::Running) => "measuring…".to_string(),
        (None, _) => "–".to_string(),
    };
    let verdict = move || {
        speedup
            .get()
            .map_or("pending", |s| s.verdict.as_str())
            .to_string()
    };
    let said = move || match (speedup.get(), status.get()) {
        (Some(speedup), _) => speedup.describe(),
        (None, RunStatus::Running) => comparison.with(|c| {
            let done = c
                .legs
                .iter()
                .filter(|l| l.status == RunStatus::Done)
                .count();
            format!("{done} of {} legs done.", c.plan().len())
        }),
        (None, RunStatus::Idle) => "Not run yet.".to_string(),
        (None, other) => format!("The comparison {}.", other.as_str()),
    };
    let explained = move || comparison.with(|c| c.explain()).unwrap_or_default();
    let long_line = move || {
        has_long.get().then(|| {
            let text = move || match (long_speedup.get(), status.get()) {
                (Some(speedup), _) => format_speedup(speedup.median),
                (None, RunStatus::Running) => "measuring…".to_string(),
                (None, _) => "–".to_string(),
            };
            let verdict = move || long_speedup.get().map_or("pending", |s| s.verdict.as_str());
            let said = move || long_speedup.get().map(|s| s.describe()).unwrap_or_default();
            let explained = move || comparison.with(|c| c.explain_of(long)).unwrap_or_default();
            view! {
                <p class="speedup-line">
                    "Long-running response (HTTP's median ÷ the long-running design's): "
                    <strong
                        data-testid="speedup-long-running"
                        class=move || format!("speedup verdict-{}", verdict())
                    >
                        {text}
                    </strong>
                </p>
                <p class="speedup-said" data-testid="speedup-long-running-text">{said}</p>
                <p class="speedup-explained">{explained}</p>
            }
        })
    };
    let [ws, http] = Comparison::MODES;
    let totals = move || {
        let long_running = has_long.get();
        let rows = ROWS
            .iter()
            .map(|row| {
                let leg = row.leg;
                let difference = row.difference;
                view! {
                    <tr data-testid=row.test_id>
                        <th scope="row" title=row.title>{row.name}</th>
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
        view! {
            <table class="compare-totals">
                <caption>
                    {move || {
                        comparison
                            .with(|c| {
                                format!(
                                    "Each leg: the median of its runs, and their range ({} repetitions, each leg warmed first)",
                                    c.repetitions,
                                )
                            })
                    }}
                </caption>
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
        }
    };
    let repetitions = move || {
        let long_running = has_long.get();
        let body = move || {
            comparison.with(|c| {
                (1..=c.repetitions)
                    .map(|repetition| {
                        let order = c
                            .order(repetition)
                            .into_iter()
                            .map(leg_name)
                            .collect::<Vec<_>>()
                            .join(", then ");
                        view! {
                            <tr data-testid="compare-repetition">
                                <th scope="row">{repetition}</th>
                                <td>{order}</td>
                                <td>{repetition_cell(c, repetition, ws)}</td>
                                <td>{repetition_cell(c, repetition, http)}</td>
                                {long_running.then(|| view! { <td>{repetition_cell(c, repetition, long)}</td> })}
                                <td>{repetition_ratio(c, repetition, ws)}</td>
                                {long_running.then(|| view! { <td>{repetition_ratio(c, repetition, long)}</td> })}
                            </tr>
                        }
                    })
                    .collect_view()
            })
        };
        view! {
            <table class="compare-repetitions">
                <caption>"Every repetition: the legs take turns to go first"</caption>
                <thead>
                    <tr>
                        <th scope="col">"Repetition"</th>
                        <th scope="col">"Order"</th>
                        <th scope="col">"WebSocket"</th>
                        <th scope="col">"HTTP stateless"</th>
                        {long_running.then(|| view! { <th scope="col">"WebSocket long-running"</th> })}
                        <th scope="col">"Ratio"</th>
                        {long_running.then(|| view! { <th scope="col">"Ratio (long-running)"</th> })}
                    </tr>
                </thead>
                <tbody>{body}</tbody>
            </table>
        }
    };
    view! {
        <section class="compare" data-testid="compare" aria-label="Comparison">
            <p class="speedup-line">
                "Speedup (HTTP's median end to end ÷ WebSocket's): "
                <strong data-testid="speedup" class=move || format!("speedup verdict-{}", verdict())>
                    {speedup_text}
                </strong>
            </p>
            <p class="speedup-said" data-testid="speedup-text">{said}</p>
            <p class="speedup-explained" data-testid="speedup-explained">{explained}</p>
            {long_line}
            <div class="table-scroll" role="region" aria-label="Each leg, median and range" tabindex="0">
                {totals}
            </div>
            <div class="table-scroll" role="region" aria-label="Every repetition" tabindex="0">
                {repetitions}
            </div>
        </section>
    }
}

/// The latest run of each leg, side by side: status, turns, timeline and (collapsed)
/// conversation (`data-testid="leg-ws"`, `leg-http`, `leg-long-running`).
#[component]
pub fn LegsView(
    /// The comparison, for each leg's repetition.
    #[prop(into)]
    comparison: Signal<Comparison>,
    /// The latest WebSocket run.
    ws: RunView,
    /// The latest HTTP run.
    http: RunView,
    /// The latest long-running run, shown when the comparison has that leg.
    long_running: RunView,
    /// Embedded: no conversations.
    #[prop(optional)]
    embed: bool,
) -> impl IntoView {
    let [ws_mode, http_mode] = Comparison::MODES;
    let has_long = Memo::new(move |_| comparison.with(Comparison::has_long_running));
    let leg = move |mode: ContinuationMode, run: RunView, id: &'static str| {
        let name = leg_name(mode);
        let heading = move || {
            comparison.with(|c| match c.latest(mode) {
                Some(leg) => format!(
                    "{name} — repetition {} of {}",
                    leg.repetition, c.repetitions
                ),
                None => name.to_string(),
            })
        };
        let status = Memo::new(move |_| run.with(|r| r.status));
        view! {
            <section class="leg" data-testid=format!("leg-{id}") aria-label=format!("{name} leg")>
                <h3>{heading}</h3>
                <p class="leg-status">
                    <span
                        class=move || format!("status status-{}", status.get().as_str())
                        data-testid="leg-status"
                    >
                        {move || status.get().as_str()}
                    </span>
                    " · Turns: "
                    <span data-testid="leg-turns">{move || run.with(|r| r.turns.len())}</span>
                    " · Tool calls: "
                    <span>{move || run.with(|r| r.tool_call_count())}</span>
                </p>
                <Timeline run=run label=format!("Timeline of the {name} leg") />
                {(!embed)
                    .then(|| {
                        view! {
                            <Conversation
                                run=run
                                closed=true
                                label=format!("Conversation of the {name} leg")
                            />
                        }
                    })}
            </section>
        }
    };
    view! {
        <div class="legs">
            {leg(ws_mode, ws, "ws")}
            {leg(http_mode, http, "http")}
            {move || {
                has_long
                    .get()
                    .then(|| leg(ContinuationMode::LongRunning, long_running, "long-running"))
            }}
        </div>
    }
}
