//! The per-turn timeline: for every request, when it was sent, when the first event, the first
//! and the last token and the terminal event came back, how long its tools ran, and what the
//! server reported about tokens and its cache.

use leptos::prelude::*;

use crate::agent::{AgentRun, Resume, TurnRecord};

fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |ms| format!("{ms:.0} ms"))
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

fn row(turn: &TurnRecord) -> impl IntoView + use<> {
    let tokens = format!(
        "{} ({} cached) / {}",
        turn.input_tokens, turn.cached_tokens, turn.output_tokens
    );
    let tool = if turn.tool_ms > 0.0 {
        format!("{:.1} ms", turn.tool_ms)
    } else {
        "–".to_string()
    };
    view! {
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
    }
}

/// One row per turn of `run`.
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
            <tbody>{move || run.with(|r| r.turns.iter().map(row).collect_view())}</tbody>
        </table>
    }
}
