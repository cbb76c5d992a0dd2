//! Compare mode's results: the speedup, coloured by what it says, with what it is made of (and,
//! with the long-running leg, its own against HTTP); each
//! leg's median and range over the repetitions, part by part; every repetition's own numbers; and
//! side by side, the latest run of each leg — its status, timeline and conversation.
//!
//! Every table has its rows from the start (a value not measured yet shows `–`), so nothing
//! moves while the legs run; a leg's numbers appear once it is done.

use leptos::prelude::*;

use crate::agent::{
    COMPARE_HTTP_MODE, Comparison, ContinuationMode, Part, Precision, RunStatus, Spread, WARM_UP,
    describe_sweep, explain_why, format_bytes, format_duration, format_speedup, leg_name,
    signed_ms,
};
use crate::components::totals::{cached, rate, reused};
use crate::components::{Conversation, RunView, SweepChart, Timeline, TimelineDefinitions};
use crate::profiles::short_label;

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

const ROWS: [Row; 15] = [
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
    let why = move || {
        comparison.with(|c| {
            if c.is_sweep() {
                describe_sweep(c)
            } else if c.status() == RunStatus::Done {
                explain_why(c, ContinuationMode::WebSocket)
            } else {
                None
            }
        })
    };
    // What the server said it applied, once a leg has reported it.
    let applied = move || {
        comparison.with(|c| {
            let latest = c.legs.iter().rev().find_map(|l| {
                l.conditions
                    .as_ref()
                    .filter(|_| l.repetition != WARM_UP)
                    .map(|a| (a.describe(), a.chosen_by.clone()))
            });
            let exhausted = c.legs.iter().any(|l| l.link_budget_exhausted);
            latest.map(|(described, chosen_by)| {
                let by = if chosen_by == "client" {
                    "as this page asked"
                } else {
                    "the server's own"
                };
                let lifted = if exhausted {
                    " The link's time budget ran out on a leg: its bandwidth limit was lifted for the rest of it."
                } else {
                    ""
                };
                format!("The server applied: {described} ({by}).{lifted}")
            })
        })
    };
    let is_sweep = Memo::new(move |_| comparison.with(Comparison::is_sweep));
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
        // A sweep's points are on different models: their medians would mean nothing.
        if is_sweep.get() {
            return None;
        }
        let long_running = has_long.get();
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
        Some(view! {
            <table class="compare-totals">
                <caption>
                    {move || {
                        comparison
                            .with(|c| {
                                format!(
                                    "Each leg: the median of its runs and their range ({} {}, after a warm-up of every leg that is not counted). Each part's median is taken on its own, so the parts' medians need not add up to the end-to-end median; in one run they do.",
                                    c.repetitions,
                                    if c.is_sweep() { "points, each on its own profile" } else { "repetitions" },
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
        })
    };
    let repetitions = move || {
        let long_running = has_long.get();
        let body = move || {
            comparison.with(|c| {
                let first = if c.warm_up { WARM_UP } else { 1 };
                (first..=c.repetitions)
                    .map(|repetition| {
                        let order = c
                            .order(repetition)
                            .into_iter()
                            .map(leg_name)
                            .collect::<Vec<_>>()
                            .join(", then ");
                        let (name, test_id) = match c.profile_of(repetition) {
                            _ if repetition == WARM_UP => {
                                ("warm-up (not counted)".to_string(), "compare-warm-up")
                            }
                            Some(profile) => (
                                format!("{repetition}: {}", short_label(profile)),
                                "compare-repetition",
                            ),
                            None => (repetition.to_string(), "compare-repetition"),
                        };
                        view! {
                            <tr data-testid=test_id class:warm-up=repetition == WARM_UP>
                                <th scope="row">{name}</th>
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
                <caption>"Every repetition: a warm-up of every leg first, not counted; then the legs take turns to go first"</caption>
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
            <Show
                when=move || is_sweep.get()
                fallback=move || {
                    view! {
                        <p class="speedup-line">
                            "Speedup (HTTP's median end to end ÷ WebSocket's): "
                            <strong data-testid="speedup" class=move || format!("speedup verdict-{}", verdict())>
                                {speedup_text}
                            </strong>
                        </p>
                        <p class="speedup-said" data-testid="speedup-text">{said}</p>
                    }
                }
            >
                <SweepChart comparison=comparison />
            </Show>
            <p class="speedup-why" data-testid="speedup-why">{why}</p>
            <p class="speedup-explained" data-testid="speedup-explained">{explained}</p>
            <p class="conditions-applied" data-testid="conditions-applied">{applied}</p>
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
                Some(leg) if leg.repetition == WARM_UP => {
                    format!("{name} — warm-up (not counted)")
                }
                Some(leg) if c.is_sweep() => format!(
                    "{name} — point {} of {}: {}",
                    leg.repetition,
                    c.repetitions,
                    c.profile_of(leg.repetition).unwrap_or_default()
                ),
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
        {(!embed).then(|| view! { <TimelineDefinitions /> })}
    }
}
