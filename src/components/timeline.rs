//! The per-turn timeline: for every request, when it was sent, when the first event, the first
//! and the last token and the terminal event came back, how long its tools ran, what the server
//! reported about tokens and its cache, and the server's own per-stage timings.

use leptos::prelude::*;

use crate::agent::{AgentRun, Precision, Resume, TurnRecord, format_duration};

/// A time the page measured of a turn.
fn ms(value: Option<f64>) -> String {
    format_duration(value, Precision::WholeMs)
}

fn how_sent(turn: &TurnRecord) -> String {
    let base = match &turn.previous_response_id {
        Some(id) => format!("{} new item(s) after {id}", turn.input_items),
        None => format!("{} item(s), full input", turn.input_items),
    };
    let stored = if turn.store { ", store" } else { "" };
    let resumed = match turn.resumed {
        None => "",
        Some(Resume::PreviousResponse) => " — reconnected, resent chained",
        Some(Resume::FullContext) => " — reconnected, resent full context",
    };
    format!("{base}{stored}{resumed}")
}

/// The server's stage timings: a stacked bar of its overhead stages (generation, the model's
/// own time, would dwarf them) and every stage as text.
fn server_view(turn: &TurnRecord) -> impl IntoView + use<> {
    let Some(server) = turn.server.clone() else {
        let note = if turn.completed_at.is_some() {
            "server stages: not reported"
        } else {
            "server stages: when the response completes"
        };
        return view! { <span class="server-none">{note}</span> }.into_any();
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
        <span class="server-text">{format!("server: {}", server.summary())}</span>
    }
    .into_any()
}

fn turn_rows(turn: &TurnRecord) -> impl IntoView + use<> {
    let tokens = format!(
        "{} ({} cached) / {}",
        turn.input_tokens, turn.cached_tokens, turn.output_tokens
    );
    let tool = format_duration(
        (turn.tool_ms > 0.0).then_some(turn.tool_ms),
        Precision::TenthMs,
    );
    view! {
        <tbody class="turn">
            <tr data-testid="timeline-row" class:resumed=turn.resumed.is_some()>
                <td>{turn.number}</td>
                <td class="sent">{how_sent(turn)}</td>
                <td>{ms(turn.first_event_ms())}</td>
                <td data-testid="turn-ttft">{ms(turn.ttft_ms())}</td>
                <td>{ms(turn.streaming_ms())}</td>
                <td>{ms(turn.response_ms())}</td>
                <td>{tool}</td>
                <td>{tokens}</td>
            </tr>
            <tr class="server-row">
                <td></td>
                <td colspan="7" class="server-timing" data-testid="server-timing">
                    {server_view(turn)}
                </td>
            </tr>
        </tbody>
    }
}

/// Two rows per turn of `run`: what the page measured, then what the server reported of its
/// pipeline stages.
#[component]
pub fn Timeline(
    /// The run whose turns to show.
    #[prop(into)]
    run: Signal<AgentRun>,
) -> impl IntoView {
    view! {
        <table class="timeline" data-testid="timeline">
            <thead>
                <tr>
                    <th>"Turn"</th>
                    <th>"Sent"</th>
                    <th>"First event"</th>
                    <th>"First token"</th>
                    <th>"Streaming"</th>
                    <th>"Response"</th>
                    <th>"Tools"</th>
                    <th>"Tokens in (cached) / out"</th>
                </tr>
            </thead>
            {move || run.with(|r| r.turns.iter().map(turn_rows).collect_view())}
        </table>
    }
}
