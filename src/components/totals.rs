//! A run's totals: end-to-end time, turns, tokens in (cached) and out, output tokens per second.

use leptos::prelude::*;

use crate::agent::{AgentRun, Precision, RunTotals, format_duration};

fn seconds(ms: Option<f64>) -> String {
    format_duration(ms, Precision::Seconds)
}

fn rate(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |v| format!("{v:.0}"))
}

fn cached(totals: &RunTotals) -> String {
    match totals.cached_share() {
        Some(share) => format!("{} ({:.0}%)", totals.cached_tokens, share * 100.0),
        None => totals.cached_tokens.to_string(),
    }
}

/// The totals of `run` as a definition list (`data-testid="totals"`).
#[component]
pub fn TotalsView(
    /// The run to add up.
    #[prop(into)]
    run: Signal<AgentRun>,
) -> impl IntoView {
    let totals = Memo::new(move |_| run.with(RunTotals::of));
    view! {
        <dl class="totals" data-testid="totals">
            <div>
                <dt>"End to end"</dt>
                <dd data-testid="total-time">{move || seconds(totals.get().end_to_end_ms)}</dd>
            </div>
            <div>
                <dt>"Tokens in"</dt>
                <dd data-testid="total-input">{move || totals.get().input_tokens}</dd>
            </div>
            <div>
                <dt>"Cached"</dt>
                <dd data-testid="total-cached">{move || cached(&totals.get())}</dd>
            </div>
            <div>
                <dt>"Tokens out"</dt>
                <dd data-testid="total-output">{move || totals.get().output_tokens}</dd>
            </div>
            <div>
                <dt>"Tokens/s"</dt>
                <dd data-testid="total-rate">{move || rate(totals.get().tokens_per_second())}</dd>
            </div>
        </dl>
    }
}

/// The compare table's cells for one leg's totals.
pub(crate) fn totals_cells(totals: &RunTotals) -> [String; 6] {
    [
        seconds(totals.end_to_end_ms),
        totals.turns.to_string(),
        totals.input_tokens.to_string(),
        cached(totals),
        totals.output_tokens.to_string(),
        rate(totals.tokens_per_second()),
    ]
}
