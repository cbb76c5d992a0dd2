//! The agent view's buttons: Run (a comparison's "Run comparison") and Sweep model speed, each
//! saying how long it will take under the chosen conditions before it starts
//! ([`crate::agent::estimate_run`]; nothing for a task the page does not know, or while a value
//! in the form is not understood — the settings still hold the last good one), Stop, and —
//! outside an embedded demo — Copy link and Reset.

use leptos::html;
use leptos::prelude::*;

use crate::agent::{estimate_run, estimate_sweep, format_estimate};
use crate::settings::{Settings, TransportChoice};

/// ` · about 2 min 20 s` (`data-testid="<id>"`, the milliseconds in `data-ms`), or nothing.
fn estimate(ms: Option<f64>, id: &'static str) -> impl IntoView {
    ms.map(|ms| {
        view! {
            <span class="estimate" data-testid=id data-ms=format!("{ms:.0}")>
                {format!(" · {}", format_estimate(ms))}
            </span>
        }
    })
}

/// Run (`run`, its estimate `run-estimate`), Stop (`stop`), Sweep model speed (`sweep`,
/// `sweep-estimate`), Copy link (`copy-link`), Reset (`reset`). Run submits the form.
#[component]
pub fn RunControls(
    settings: RwSignal<Settings>,
    /// Every value in the form parsed: only then is there a run to estimate.
    understood: Signal<bool>,
    running: Signal<bool>,
    run_button: NodeRef<html::Button>,
    stop_button: NodeRef<html::Button>,
    /// Where the controls are, for the view to bring them into sight when a run starts.
    controls: NodeRef<html::Div>,
    on_stop: Callback<()>,
    on_sweep: Callback<()>,
    on_copy: Callback<()>,
    on_reset: Callback<()>,
    /// An embedded demo: no Copy link, no Reset.
    embed: bool,
) -> impl IntoView {
    let compare = move || settings.with(|s| s.transport == TransportChoice::Compare);
    view! {
        <div class="controls" node_ref=controls>
            <button type="submit" data-testid="run" node_ref=run_button disabled=running>
                {move || if compare() { "Run comparison" } else { "Run" }}
                {move || {
                    estimate(understood.get().then(|| settings.with(estimate_run)).flatten(), "run-estimate")
                }}
            </button>
            <button
                type="button"
                data-testid="stop"
                node_ref=stop_button
                disabled=move || !running.get()
                on:click=move |_| on_stop.run(())
            >
                "Stop"
            </button>
            <button
                type="button"
                data-testid="sweep"
                class="secondary"
                disabled=running
                title="WebSocket mode against HTTP stateless at each model speed, under these conditions, each point as often as a comparison repeats"
                on:click=move |_| on_sweep.run(())
            >
                "Sweep model speed"
                {move || {
                    estimate(understood.get().then(|| settings.with(estimate_sweep)).flatten(), "sweep-estimate")
                }}
            </button>
            {(!embed)
                .then(|| {
                    view! {
                        <button type="button" data-testid="copy-link" on:click=move |_| on_copy.run(())>
                            "Copy link"
                        </button>
                        <button
                            type="button"
                            data-testid="reset"
                            class="secondary"
                            disabled=running
                            on:click=move |_| on_reset.run(())
                        >
                            "Reset"
                        </button>
                    }
                })}
        </div>
    }
}
