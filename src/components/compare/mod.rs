//! Compare mode's results, in the order a reader needs them: the speedup — measured on this
//! machine first, then with the modelled waits —, coloured only when the repetitions separate
//! the legs ([`SpeedupHeadline`]); the per-turn chart of both legs, which grows as they run; why
//! it came out so, the difference part by part and what the server applied ([`WhyLines`]); each
//! leg's median and range ([`LegTotals`]); every repetition ([`RepetitionsTable`]); and, below,
//! the latest run of each leg ([`LegsView`]). A sweep shows its plot in place of the speedup.

mod headline;
mod legs;
mod repetitions;
mod totals;
mod why;

use leptos::prelude::*;

use crate::agent::{Comparison, ContinuationMode, WARM_UP};
use crate::components::{RunView, SweepChart, TurnChart};
use headline::SpeedupHeadline;
pub use legs::LegsView;
use repetitions::RepetitionsTable;
use totals::LegTotals;
use why::WhyLines;

/// The results of `comparison` (`data-testid="compare"`).
#[component]
pub fn CompareView(
    /// The comparison to show.
    #[prop(into)]
    comparison: Signal<Comparison>,
    /// The latest WebSocket run, for the chart.
    ws: RunView,
    /// The latest HTTP run, for the chart.
    http: RunView,
) -> impl IntoView {
    let is_sweep = Memo::new(move |_| comparison.with(Comparison::is_sweep));
    let has_long = Memo::new(move |_| comparison.with(Comparison::has_long_running));
    let long_line = move || {
        has_long.get().then(|| {
            view! {
                <SpeedupHeadline comparison=comparison leg=ContinuationMode::LongRunning />
            }
        })
    };
    // Which run of each leg the chart draws: its latest repetition's, or its warm-up, which is
    // no result.
    let which = Signal::derive(move || {
        comparison.with(|c| {
            Comparison::MODES
                .iter()
                .map(|mode| match c.latest(*mode) {
                    Some(leg) if leg.repetition == WARM_UP => {
                        // Short enough for a phone's panel; the repetitions table says on what.
                        " — warm-up, not a result".to_string()
                    }
                    Some(leg) => match c.sweep_point(leg.repetition) {
                        Some(at) => format!(" — {}", at.describe()),
                        None => format!(" — repetition {} of {}", leg.repetition, c.repetitions),
                    },
                    None => String::new(),
                })
                .collect::<Vec<_>>()
        })
    });
    let tables = move || {
        let long_running = has_long.get();
        view! {
            {(!is_sweep.get()).then(|| view! { <LegTotals comparison=comparison long_running=long_running /> })}
            <RepetitionsTable comparison=comparison long_running=long_running />
        }
    };
    view! {
        <section class="compare" data-testid="compare" aria-label="Comparison">
            <Show
                when=move || is_sweep.get()
                fallback=move || view! { <SpeedupHeadline comparison=comparison leg=ContinuationMode::WebSocket /> }
            >
                <SweepChart comparison=comparison />
            </Show>
            <TurnChart
                legs=vec![("WebSocket".to_string(), ws), ("HTTP stateless".to_string(), http)]
                which=which
                caption="Each leg's latest run, turn by turn on the same scales: the time of every turn split into its parts (what the server modelled rather than measured in grey, outlined, on top), and the context the model read (the line). HTTP re-sends the whole context each turn; WebSocket only the new part."
            />
            <WhyLines comparison=comparison />
            {long_line}
            {tables}
        </section>
    }
}
