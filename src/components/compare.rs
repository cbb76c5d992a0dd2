//! Compare mode's results: both legs' totals side by side, their per-turn durations, and the
//! speedup (`data-testid="speedup"`) once both are done.

use leptos::prelude::*;

use crate::agent::{
    Comparison, Precision, RunStatus, RunTotals, format_duration, format_speedup, turn_durations,
};
use crate::components::totals::totals_cells;

const ROWS: [&str; 6] = [
    "End to end",
    "Turns",
    "Tokens in",
    "Cached tokens",
    "Tokens out",
    "Tokens/s",
];

/// Both legs of `comparison`.
#[component]
pub fn CompareView(
    /// The comparison to show.
    #[prop(into)]
    comparison: Signal<Comparison>,
) -> impl IntoView {
    let speedup = move || {
        comparison.with(|c| match (c.speedup(), c.status()) {
            (Some(speedup), _) => format_speedup(speedup),
            (None, RunStatus::Running) => "measuring…".to_string(),
            (None, _) => "–".to_string(),
        })
    };
    let totals = move || {
        comparison.with(|c| {
            let ws = totals_cells(&RunTotals::of(&c.ws));
            let http = totals_cells(&RunTotals::of(&c.http));
            ROWS.iter()
                .zip(ws.into_iter().zip(http))
                .map(|(name, (ws, http))| {
                    view! {
                        <tr>
                            <th scope="row">{*name}</th>
                            <td>{ws}</td>
                            <td>{http}</td>
                        </tr>
                    }
                })
                .collect_view()
        })
    };
    let turns = move || {
        comparison.with(|c| {
            let ws = turn_durations(&c.ws);
            let http = turn_durations(&c.http);
            (0..ws.len().max(http.len()))
                .map(|i| {
                    let leg = |durations: &[Option<f64>]| {
                        format_duration(durations.get(i).copied().flatten(), Precision::WholeMs)
                    };
                    view! {
                        <tr data-testid="compare-turn">
                            <th scope="row">{i + 1}</th>
                            <td>{leg(&ws)}</td>
                            <td>{leg(&http)}</td>
                        </tr>
                    }
                })
                .collect_view()
        })
    };
    view! {
        <section class="compare" data-testid="compare" aria-label="Comparison">
            <p class="speedup-line">
                "Speedup (HTTP end to end ÷ WebSocket end to end): "
                <strong data-testid="speedup">{speedup}</strong>
            </p>
            <div class="table-scroll">
                <table class="compare-totals">
                    <thead>
                        <tr>
                            <th scope="col"></th>
                            <th scope="col">"WebSocket"</th>
                            <th scope="col">"HTTP stateless"</th>
                        </tr>
                    </thead>
                    <tbody>{totals}</tbody>
                </table>
            </div>
            <details class="compare-turns" open>
                <summary>"Per-turn durations (response + tools)"</summary>
                <div class="table-scroll">
                    <table>
                        <thead>
                            <tr>
                                <th scope="col">"Turn"</th>
                                <th scope="col">"WebSocket"</th>
                                <th scope="col">"HTTP stateless"</th>
                            </tr>
                        </thead>
                        <tbody>{turns}</tbody>
                    </table>
                </div>
            </details>
        </section>
    }
}
