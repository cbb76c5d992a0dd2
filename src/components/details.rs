//! Below the timeline, the run in detail: a tab group with the sandbox's files ([`FilesView`])
//! and the event inspector ([`Inspector`]). Only the chosen panel is mounted, so the hidden one
//! costs nothing while a run streams. Tabs follow the WAI-ARIA pattern: Left/Right (and
//! Home/End) move between them, the panel is labelled by its tab.

use leptos::prelude::*;

use crate::components::RunView;
use crate::components::files::FilesView;
use crate::components::inspector::Inspector;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Panel {
    Files,
    Events,
}

impl Panel {
    const ALL: [Panel; 2] = [Panel::Files, Panel::Events];

    fn id(self) -> &'static str {
        match self {
            Panel::Files => "files",
            Panel::Events => "events",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Panel::Files => "Files",
            Panel::Events => "Events",
        }
    }
}

/// The Files and Events tabs of `run` (tabs `details-tab-files`, `details-tab-events`).
#[component]
pub fn RunDetails(
    /// The run to show in detail.
    run: RunView,
) -> impl IntoView {
    let panel = RwSignal::new(Panel::Files);
    let focus_tab = |which: Panel| {
        crate::focus_id(&format!("details-tab-{}", which.id()));
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let at = Panel::ALL
            .iter()
            .position(|p| *p == panel.get_untracked())
            .unwrap_or(0);
        let last = Panel::ALL.len() - 1;
        let next = match ev.key().as_str() {
            "ArrowRight" => (at + 1) % Panel::ALL.len(),
            "ArrowLeft" => (at + last) % Panel::ALL.len(),
            "Home" => 0,
            "End" => last,
            _ => return,
        };
        ev.prevent_default();
        panel.set(Panel::ALL[next]);
        focus_tab(Panel::ALL[next]);
    };
    let tab = move |which: Panel| {
        view! {
            <button
                type="button"
                role="tab"
                class="tab"
                id=format!("details-tab-{}", which.id())
                data-testid=format!("details-tab-{}", which.id())
                aria-controls="details-panel"
                aria-selected=move || (panel.get() == which).to_string()
                tabindex=move || if panel.get() == which { "0" } else { "-1" }
                on:click=move |_| panel.set(which)
            >
                {which.label()}
            </button>
        }
    };
    view! {
        <section class="run-details">
            <div class="tabs" role="tablist" aria-label="Run details" on:keydown=on_key>
                {Panel::ALL.map(tab).collect_view()}
            </div>
            <div
                id="details-panel"
                role="tabpanel"
                aria-labelledby=move || format!("details-tab-{}", panel.get().id())
            >
                {move || match panel.get() {
                    Panel::Files => view! { <FilesView run=run /> }.into_any(),
                    Panel::Events => view! { <Inspector run=run /> }.into_any(),
                }}
            </div>
        </section>
    }
}
