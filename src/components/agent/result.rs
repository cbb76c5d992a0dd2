//! What the agent view shows of a run, under its status: a single run's totals, breakdown,
//! per-turn chart, timeline, Steer box, conversation and details — or a comparison's results
//! (the chart right under the speedup, so that it is in sight while the legs run), its legs,
//! and the details of the leg that ran last.

use leptos::prelude::*;

use crate::agent::{Comparison, ContinuationMode};
use crate::components::steer::SteerBox;
use crate::components::{
    BreakdownView, CompareView, Conversation, LegsView, RunDetails, RunView, Timeline,
    TimelineDefinitions, TotalsView, TurnChart,
};

/// A single run.
#[component]
pub fn SingleResult(
    run: RunView,
    /// The transport a steer would go over (`None`: none can).
    steer_mode: Signal<Option<ContinuationMode>>,
    on_steer: Callback<String, Result<(), String>>,
    /// An embedded demo: no Steer box, no conversation, no details.
    embed: bool,
) -> impl IntoView {
    view! {
        <TotalsView run=run />
        <BreakdownView run=run />
        <TurnChart
            legs=vec![("This run".to_string(), run)]
            caption="Time per turn, split into its parts (what the server modelled rather than measured in grey, outlined, on top), and the context the model read"
        />
        <h2 class="timeline-heading">"Timeline"</h2>
        <Timeline run=run />
        {(!embed)
            .then(|| {
                view! {
                    <SteerBox run=run mode=steer_mode on_steer=on_steer />
                    <TimelineDefinitions />
                    <Conversation run=run />
                    <RunDetails run=run />
                }
            })}
    }
}

/// A comparison (or a sweep).
#[component]
pub fn ComparedResult(
    comparison: RwSignal<Comparison>,
    /// The leg that ran last, for its files and events.
    run: RunView,
    ws: RunView,
    http: RunView,
    long_running: RunView,
    /// An embedded demo: no conversations, no details.
    embed: bool,
) -> impl IntoView {
    view! {
        <CompareView comparison=comparison ws=ws http=http />
        <h2>"The legs (latest repetition of each)"</h2>
        <LegsView comparison=comparison ws=ws http=http long_running=long_running embed=embed />
        {(!embed)
            .then(|| {
                view! {
                    <h2>"Files and events of the leg that ran last"</h2>
                    <RunDetails run=run />
                }
            })}
    }
}
