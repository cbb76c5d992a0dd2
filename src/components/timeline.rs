//! The per-turn timeline: for every request, when it was sent, when the first event, the first
//! and the last token and the terminal event came back, how long its tools ran, its tokens —
//! what the engine's prompt cache held and what the WebSocket connection's cache saved the API
//! from tokenizing again — and the server's own account: its stages and its split between the
//! API and the engine; a turn of the long-running design says it resumed the response
//! (`response.append`) and paused it (`response.done`), and every steer sent during a turn is a
//! row under it, with what the server answered.
//!
//! The table sits in a box of fixed height that scrolls (and takes the keyboard focus to do so):
//! a turn added while a run streams never pushes what is below it. Each turn's rows re-render
//! only when that turn changed.

use leptos::prelude::*;

use crate::agent::{
    Precision, Resume, RunStatus, SentAs, ServerTimings, SteerRecord, TurnRecord, format_duration,
};
use crate::components::RunView;

/// A time the page measured of a turn.
fn ms(value: Option<f64>) -> String {
    format_duration(value, Precision::WholeMs)
}

fn how_sent(turn: &TurnRecord) -> String {
    let base = match (turn.sent_as, &turn.previous_response_id, &turn.response_id) {
        (SentAs::Append, _, Some(id)) => {
            format!("response.append: {} item(s) to {id}", turn.input_items)
        }
        (SentAs::Append, _, None) => format!("response.append: {} item(s)", turn.input_items),
        (SentAs::Successor, Some(id), _) => {
            format!(
                "nothing — the server's successor of {id}, with {} steer(s)",
                turn.input_items
            )
        }
        (SentAs::Successor, None, _) => "nothing — the server's successor".to_string(),
        (SentAs::Create, Some(id), _) => format!("{} new item(s) after {id}", turn.input_items),
        (SentAs::Create, None, _) => format!("{} item(s), full input", turn.input_items),
    };
    let ended = if turn.paused {
        " — paused (response.done)"
    } else if turn.steered {
        " — ended by a steer"
    } else {
        ""
    };
    let stored = if turn.store { ", store" } else { "" };
    let resumed = match turn.resumed {
        None => "",
        Some(Resume::PreviousResponse) => " — reconnected, resent chained",
        Some(Resume::FullContext) => " — reconnected, resent full context",
        Some(Resume::Failed) => " — connection lost, and sending it again failed",
    };
    format!("{base}{stored}{ended}{resumed}")
}

/// The steers sent during a turn, each with what the server answered.
fn steer_rows(steers: Memo<Vec<SteerRecord>>) -> impl IntoView {
    move || {
        steers.with(|steers| {
            steers
                .iter()
                .map(|steer| {
                    let outcome = steer.outcome.as_str();
                    let answered = steer
                        .answered_at
                        .map(|at| format!(" · answered in {}", ms(Some(at - steer.sent_at))))
                        .unwrap_or_default();
                    view! {
                        <tr class=format!("steer-row steer-{outcome}") data-testid="timeline-steer">
                            <td></td>
                            <td colspan="8">
                                {format!(
                                    "response.steer “{}” → {}{answered}",
                                    steer.text,
                                    steer.outcome.describe(),
                                )}
                            </td>
                        </tr>
                    }
                })
                .collect_view()
        })
    }
}

/// The server's stage timings: a stacked bar of its overhead stages (generation, the model's
/// own time, would dwarf them), every stage as text, and the API/engine split.
fn server_view(
    server: Option<&ServerTimings>,
    completed: bool,
    paused: bool,
    run_over: bool,
) -> impl IntoView + use<> {
    let Some(server) = server.cloned() else {
        let note = if paused {
            "server stages: with the whole response, on its last turn"
        } else if completed {
            "server stages: not reported"
        } else if run_over {
            // Stopped, failed or reloaded before it completed: they will not come.
            "server stages: none, the turn did not complete"
        } else {
            "server stages: when the response completes"
        };
        return view! { <span class="server-none" data-testid="server-timing">{note}</span> }
            .into_any();
    };
    let overhead = server.overhead_ms();
    let segments = server
        .overhead()
        .map(|(name, ms)| {
            let share = if overhead > 0.0 {
                ms * 100.0 / overhead
            } else {
                0.0
            };
            view! {
                <span
                    class=format!("stage stage-{name}")
                    style=format!("width: {share:.2}%")
                    title=format!("{name} {}", format_duration(ms, Precision::BySize))
                ></span>
            }
        })
        .collect_view();
    let split = server.split();
    view! {
        <span
            class="stage-bar"
            role="img"
            aria-label=format!(
                "server overhead {} before generation",
                format_duration(overhead, Precision::BySize)
            )
        >
            {segments}
        </span>
        <span class="server-text" data-testid="server-timing">
            {format!("server: {}", server.summary())}
        </span>
        {split.map(|split| view! { <span class="server-split" data-testid="server-split">{split}</span> })}
    }
    .into_any()
}

/// `2,048 (1,920 cached) / 40`: input tokens, the engine's prompt-cache hits, output tokens;
/// `–` while no usage has come (a turn under way, or one that failed before its end).
fn tokens(turn: &TurnRecord) -> String {
    let no_usage = turn.input_tokens == 0 && turn.output_tokens == 0;
    if no_usage && turn.completed_at.is_none() {
        return "–".to_string();
    }
    let count = |n: u64| crate::conditions::thousands(n as f64);
    format!(
        "{} ({} cached) / {}",
        count(turn.input_tokens),
        count(turn.cached_tokens),
        count(turn.output_tokens)
    )
}

/// A turn's memo.
type TurnMemo = Memo<Option<TurnRecord>>;

/// The two rows of one turn, built once: each cell is bound to what it shows, so the turn under
/// way updates a few text nodes per frame rather than being rebuilt.
fn turn_rows(
    turn: TurnMemo,
    steers: Memo<Vec<SteerRecord>>,
    run_over: Memo<bool>,
) -> impl IntoView {
    let cell = move |read: fn(&TurnRecord) -> String| {
        move || turn.with(|t| t.as_ref().map(read).unwrap_or_default())
    };
    let resumed = move || turn.with(|t| t.as_ref().is_some_and(|t| t.resumed.is_some()));
    // The server's part changes once, when the response completes.
    let server = Memo::new(move |_| {
        turn.with(|t| {
            t.as_ref().map(|t| {
                (
                    t.server.clone(),
                    t.completed_at.is_some(),
                    t.paused,
                    run_over.get(),
                )
            })
        })
    });
    view! {
        <tr data-testid="timeline-row" class:resumed=resumed>
            <td>{cell(|t| t.number.to_string())}</td>
            <td class="sent">{cell(how_sent)}</td>
            <td>{cell(|t| ms(t.first_event_ms()))}</td>
            <td data-testid="turn-ttft">{cell(|t| ms(t.ttft_ms()))}</td>
            <td>{cell(|t| ms(t.streaming_ms()))}</td>
            <td>{cell(|t| ms(t.response_ms()))}</td>
            <td>
                {cell(|t| format_duration(t.tools_ms(), Precision::TenthMs))}
            </td>
            <td data-testid="turn-tokens">{cell(tokens)}</td>
            <td data-testid="turn-reused">
                {cell(|t| {
                    t.reused_by_connection()
                        .map_or_else(|| "–".to_string(), |n| crate::conditions::thousands(n as f64))
                })}
            </td>
        </tr>
        <tr class="server-row">
            <td></td>
            <td colspan="8" class="server-timing">
                {move || {
                    server
                        .with(|s| {
                            s.as_ref()
                                .map(|(server, done, paused, over)| {
                                    server_view(server.as_ref(), *done, *paused, *over)
                                })
                        })
                }}
            </td>
        </tr>
        {steer_rows(steers)}
    }
}

/// The timeline's columns and what each means (shown under the timeline, not in a tooltip).
pub const COLUMNS: [(&str, &str); 9] = [
    ("Turn", "the request's number"),
    (
        "Sent",
        "what went out: “1 new item(s) after resp_…” for a chained turn, “N item(s), full input” for a stateless one",
    ),
    (
        "First event",
        "until response.created: the server has accepted and prepared the request",
    ),
    (
        "First token",
        "until the first delta: the preparation and the model's prefill",
    ),
    ("Streaming", "first to last delta: the model's decoding"),
    ("Response", "until the terminal event"),
    (
        "Tools",
        "the turn's tool calls, run by the sandbox in this page",
    ),
    (
        "Tokens in (cached) / out",
        "usage: input tokens, how many the engine's prompt cache held (the same rule on every transport; prompts under 1,024 tokens are never cached), output tokens",
    ),
    (
        "Reused by the connection",
        "rendered tokens the WebSocket connection's cache supplied, so the API did not tokenize them again (none over HTTP)",
    ),
];

/// `first-event` from `First event`.
fn column_id(name: &str) -> String {
    name.split(' ').next().unwrap_or_default().to_lowercase()
}

/// What each column of the timeline means, and the server's line under each turn.
#[component]
pub fn TimelineDefinitions() -> impl IntoView {
    view! {
        <details class="definitions" data-testid="timeline-definitions" open>
            <summary>"What the timeline's columns mean"</summary>
            <dl>
                {COLUMNS
                    .map(|(name, meaning)| view! { <dt>{name}</dt> <dd>{meaning}</dd> })
                    .collect_view()}
                <dt>"Under each turn"</dt>
                <dd>
                    "the server's own account: its API stages (the bar, in shades of the API's colour) and its split between the API and the engine (queue, prefill, decode)"
                </dd>
            </dl>
        </details>
    }
}

/// Two rows per turn of `run`: what the page measured, then what the server reported. `label`
/// names the box for assistive technology (a comparison shows two).
#[component]
pub fn Timeline(
    /// The run whose turns to show.
    run: RunView,
    /// What the box is called, e.g. "Timeline of the WebSocket leg".
    #[prop(optional, into)]
    label: Option<String>,
) -> impl IntoView {
    let count = Memo::new(move |_| run.with(|r| r.turns.len()));
    let run_over = Memo::new(move |_| run.with(|r| r.status != RunStatus::Running));
    let label = label.unwrap_or_else(|| "Timeline".to_string());
    view! {
        <div class="timeline-box" role="region" aria-label=label tabindex="0">
            <table class="timeline" data-testid="timeline">
                <colgroup>
                    {COLUMNS.map(|(name, _)| view! { <col class=format!("col-{}", column_id(name)) /> }).collect_view()}
                </colgroup>
                <thead>
                    <tr>
                        {COLUMNS.map(|(name, _)| view! { <th scope="col">{name}</th> }).collect_view()}
                    </tr>
                </thead>
                {move || {
                    (count.get() == 0).then(|| {
                        view! {
                            <tbody>
                                <tr>
                                    <td colspan=COLUMNS.len() class="empty-note" data-testid="timeline-empty">
                                        "No turns yet: each request appears here as it is sent."
                                    </td>
                                </tr>
                            </tbody>
                        }
                    })
                }}
                <For
                    each=move || 0..count.get()
                    key=|index| *index
                    children=move |index| {
                        // The previous record is kept (not copied again) while it is unchanged.
                        let turn = Memo::new_owning(move |previous: Option<Option<TurnRecord>>| {
                            run.with(|r| {
                                let now = r.turns.get(index);
                                match previous {
                                    Some(previous) if previous.as_ref() == now => (previous, false),
                                    _ => (now.cloned(), true),
                                }
                            })
                        });
                        let steers = Memo::new(move |_| {
                            run.with(|r| {
                                r.steers
                                    .iter()
                                    .filter(|s| s.turn == index + 1)
                                    .cloned()
                                    .collect::<Vec<_>>()
                            })
                        });
                        view! { <tbody class="turn">{turn_rows(turn, steers, run_over)}</tbody> }
                    }
                />
            </table>
        </div>
    }
}
