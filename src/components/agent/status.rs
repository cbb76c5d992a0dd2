//! Where a run stands, under the agent view's controls: what a screen reader is told
//! (`announce`), the status, turn and tool-call counts, how far along the run is (`progress`) and
//! its error — for a single run, or for a comparison and the leg under way.

use leptos::prelude::*;

use crate::agent::{Comparison, RunStatus, Shown, announce_comparison, announce_run};
use crate::components::RunView;
use crate::settings::Settings;

/// The status of what is shown (`run-status`, `turn-count`, `tool-call-count`, `progress`,
/// `error`, `announce`).
#[component]
pub fn RunStatusLine(
    shown: RwSignal<Shown>,
    run: RunView,
    comparison: RwSignal<Comparison>,
    settings: RwSignal<Settings>,
    status: Memo<RunStatus>,
) -> impl IntoView {
    // The status as it changes, the answer or the result at the end; nothing while it streams.
    let announcement = Memo::new(move |_| match shown.get() {
        Shown::Single => run.with(announce_run),
        Shown::Compare => comparison.with(announce_comparison),
    });
    let error = move || match shown.get() {
        Shown::Single => run.with(|r| r.error.clone()),
        Shown::Compare => comparison.with(Comparison::error),
    };
    // How far along: the legs done and the turns of the leg under way, against the task's.
    let progress = Memo::new(move |_| {
        let expected = settings.with(Settings::expected_turns);
        let turns = run.with(|r| r.turns.len());
        match shown.get() {
            Shown::Compare => comparison.with(|c| c.progress(turns, expected)),
            Shown::Single => run.with(|r| crate::agent::run_progress(r, expected)),
        }
    });
    view! {
        <p class="sr-only" role="status" data-testid="announce">{move || announcement.get()}</p>
        <div class="status-line">
            "Status: "
            <span
                class=move || format!("status status-{}", status.get().as_str())
                data-testid="run-status"
            >
                {move || status.get().as_str()}
            </span>
            " · Turns: "
            <span data-testid="turn-count">{move || run.with(|r| r.turns.len())}</span>
            " · Tool calls: "
            <span data-testid="tool-call-count">{move || run.with(|r| r.tool_call_count())}</span>
        </div>
        // Always there, so nothing moves when a run starts; it says how far along the run is.
        <div class="progress-line" data-testid="progress">
            <progress
                max="1"
                value=move || format!("{:.3}", progress.get().0)
                aria-label="How far along the run is"
                data-testid="progress-bar"
            ></progress>
            <span data-testid="progress-text">{move || progress.get().1}</span>
        </div>
        <Show when=move || error().is_some()>
            <p class="error" role="alert" data-testid="error">
                {move || error().unwrap_or_default()}
            </p>
        </Show>
    }
}
