//! The agent view: the task and the settings, Run and Stop; then the run's status, its totals
//! and where its time went, its timeline, conversation and details — or, in compare mode, the
//! comparison's results and both legs side by side. What Run, Stop, Reset and leaving the page do
//! is the agent [`Session`]'s; this component hands it the page ([`BrowserPage`]) and renders
//! what it writes. The settings, the files and the last run are kept in `localStorage` (not by
//! an embedded view).
//!
//! While a single run streams over a WebSocket transport, the Steer box sends `response.steer`
//! for the response under way ([`SteerBox`]; the session sends it).
//!
//! For the keyboard: Ctrl+Enter in the task runs it; when Run or Stop disables itself, the focus
//! moves to the button that is now enabled. A screen reader hears the status, the final answer
//! or the comparison's result — never the stream itself.

mod browser;
mod focus;
mod share;
mod status;
mod task;

use std::rc::Rc;

use leptos::html;
use leptos::prelude::*;

use crate::PageContext;
use crate::agent::{Comparison, RunStatus, SWEEP_PROFILES, Session, Shown};
use crate::components::settings::SettingsPanel;
use crate::components::steer::SteerBox;
use crate::components::{
    BreakdownView, CompareView, ConditionsPanel, Conversation, LegsView, RunDetails, RunView,
    Timeline, TimelineDefinitions, TotalsView, TurnChart,
};
use crate::settings::{ModelChoices, TransportChoice};
use browser::BrowserPage;
use share::ShareLink;
use status::RunStatusLine;
use task::{EmbedTitle, TaskField};

/// The agent page: task (`data-testid="task"`), settings ([`SettingsPanel`]), Run (`run`),
/// Stop (`stop`), Copy link (`copy-link`), Reset (`reset`); status (`run-status`: idle,
/// running, done, failed or stopped — for a comparison, of every leg), turn count
/// (`turn-count`), error (`error`), what a screen reader is told (`announce`), totals and the
/// breakdown, compare results with `speedup`, conversation and timeline. Reads its settings from
/// the [`PageContext`] (defaults when there is none).
#[component]
pub fn AgentView() -> impl IntoView {
    let page = use_context::<PageContext>().unwrap_or_else(|| {
        let page = PageContext::standalone();
        page.load_models();
        page
    });
    page.read_kept();
    let settings = page.settings;
    let notices = page.notices;
    let embed = page.embed;
    let origin = StoredValue::new(crate::page_origin_url().unwrap_or_default());
    let models = page.models;

    let opening = page
        .last_run
        .with_value(|last| Shown::restore(last.as_ref()));
    let shown = RwSignal::new(opening.shown);
    // In a comparison the details follow the leg that ran last.
    let followed = match opening.comparison.legs.last() {
        Some(leg) if opening.shown == Shown::Compare => opening.leg(leg.mode).clone(),
        _ => opening.run.clone(),
    };
    let run = RunView::new(followed);
    let ws = RunView::new(opening.ws.clone());
    let http = RunView::new(opening.http.clone());
    let long_running = RunView::new(opening.long_running.clone());
    let comparison = RwSignal::new(opening.comparison);
    let share_link = RwSignal::new(None::<(String, String)>);
    let browser = BrowserPage {
        shown,
        run,
        ws,
        http,
        long_running,
        live_leg: StoredValue::new(None),
        comparison,
        settings,
        notices,
        files: page.files,
        last_run: page.last_run,
    };
    let session = StoredValue::new_local(Session::new(Rc::new(browser), page.persist));

    let status = Memo::new(move |_| match shown.get() {
        Shown::Single => run.with(|r| r.status),
        Shown::Compare => comparison.with(Comparison::status),
    });
    let running = move || status.get() == RunStatus::Running;

    let run_button = NodeRef::<html::Button>::new();
    let stop_button = NodeRef::<html::Button>::new();
    // Whether the user started the run (Run, Ctrl+Enter) and so the focus follows the buttons;
    // an autorun (an embedded demo) never takes the focus.
    let focus_follows = StoredValue::new(false);

    let start = move |by_user: bool| {
        let current = settings.get_untracked();
        let started = session.with_value(|s| s.start(current, &origin.get_value()));
        if let Some(run) = started {
            focus_follows.set_value(by_user);
            leptos::task::spawn_local(run);
        }
    };
    let start_sweep = move || {
        let current = settings.get_untracked();
        let started =
            session.with_value(|s| s.start_sweep(current, &origin.get_value(), &SWEEP_PROFILES));
        if let Some(run) = started {
            focus_follows.set_value(true);
            leptos::task::spawn_local(run);
        }
    };
    let stop = move || session.with_value(Session::stop);
    let reset = move || {
        if session.with_value(Session::reset) {
            share_link.set(None);
        }
    };
    focus::follow_the_buttons(status, run_button, stop_button, focus_follows);
    let copy_link = move || share::copy_link(settings, share_link);

    // Leaving the view stops its run (the transport closes when the loop returns).
    on_cleanup(move || {
        session.try_with_value(Session::stop);
    });
    // A reload or a navigation away: the session keeps a run under way for the next load.
    let hidden = window_event_listener(leptos::ev::pagehide, move |_| {
        session.try_with_value(Session::page_hidden);
    });
    on_cleanup(move || hidden.remove());

    // The overview's button asked for this run: the focus follows it, as after Run. An autorun
    // from the URL (an embedded demo) leaves the focus alone.
    let asked = page.take_run_on_open();
    if page.autorun || asked {
        // Start once the page has settled — the model list answered (or failed) and a frame
        // drawn — so the first turn's timings are not the page's own start-up work (measured:
        // an autorun at the first frame made a WebSocket turn 1 wait ~120–300 ms longer for its
        // first event than the same turn started from an idle page).
        let started = StoredValue::new(false);
        Effect::new(move |_| {
            let settled = !matches!(models.get(), ModelChoices::Loading);
            if settled && !started.get_value() {
                started.set_value(true);
                request_animation_frame(move || start(asked));
            }
        });
    }

    // What a steer would steer: the single run shown, over the transport it runs on.
    let steer_mode = Signal::derive(move || match shown.get() {
        Shown::Single => settings.with(|s| s.transport.mode()),
        Shown::Compare => None,
    });
    let on_steer = Callback::new(move |text: String| {
        let mode = steer_mode.get_untracked();
        session.with_value(|s| s.steer(&text, mode))
    });
    let is_compare = move || shown.get() == Shown::Compare;
    let result = NodeRef::<html::Div>::new();
    focus::bring_the_result(status, shown, result, focus_follows);

    view! {
        <section class="agent-view" class:embed=embed>
            // The page checks the values itself and says what is wrong (a link out of the
            // server's bounds), rather than the browser refusing to submit without a word.
            <form
                class="prompt agent-form"
                novalidate
                on:submit=move |ev| {
                    ev.prevent_default();
                    start(true);
                }
            >
                {if embed {
                    view! { <EmbedTitle settings=settings /> }.into_any()
                } else {
                    let running = Signal::derive(running);
                    view! {
                        <TaskField settings=settings running=running on_run=Callback::new(start) />
                        <ConditionsPanel settings=settings models=models locked=running />
                        <SettingsPanel settings=settings locked=running />
                    }
                        .into_any()
                }}
                <div class="controls">
                    <button type="submit" data-testid="run" node_ref=run_button disabled=running>
                        {move || {
                            if settings.with(|s| s.transport == TransportChoice::Compare) {
                                "Run comparison"
                            } else {
                                "Run"
                            }
                        }}
                    </button>
                    <button
                        type="button"
                        data-testid="stop"
                        node_ref=stop_button
                        disabled=move || !running()
                        on:click=move |_| {
                            focus_follows.set_value(true);
                            stop();
                        }
                    >
                        "Stop"
                    </button>
                    <button
                        type="button"
                        data-testid="sweep"
                        class="secondary"
                        disabled=running
                        title="WebSocket mode against HTTP stateless at each model speed, under these conditions"
                        on:click=move |_| start_sweep()
                    >
                        "Sweep model speed"
                    </button>
                    {(!embed)
                        .then(|| {
                            view! {
                                <button type="button" data-testid="copy-link" on:click=move |_| copy_link()>
                                    "Copy link"
                                </button>
                                <button
                                    type="button"
                                    data-testid="reset"
                                    class="secondary"
                                    disabled=running
                                    on:click=move |_| reset()
                                >
                                    "Reset"
                                </button>
                            }
                        })}
                </div>
                <ShareLink shared=share_link />
            </form>
            <RunStatusLine
                shown=shown
                run=run
                comparison=comparison
                settings=settings
                status=status
            />
            <div
                class="result"
                class:single=move || !is_compare()
                node_ref=result
                tabindex="-1"
                data-testid="result"
            >
            <Show
                when=is_compare
                fallback=move || {
                    view! {
                        <TotalsView run=run />
                        <BreakdownView run=run />
                        <TurnChart
                            legs=vec![("This run".to_string(), run)]
                            caption="Time per turn, split into its parts, and the context the model read"
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
            >
                <CompareView comparison=comparison />
                <TurnChart
                    legs=vec![("WebSocket".to_string(), ws), ("HTTP stateless".to_string(), http)]
                    caption="Each leg's latest run, turn by turn on the same scales: the time of every turn split into its parts, and the context the model read (the line). HTTP re-sends the whole context each turn; WebSocket only the new part."
                />
                <h2>"The legs (latest repetition of each)"</h2>
                <LegsView
                    comparison=comparison
                    ws=ws
                    http=http
                    long_running=long_running
                    embed=embed
                />
                {(!embed)
                    .then(|| {
                        view! {
                            <h2>"Files and events of the leg that ran last"</h2>
                            <RunDetails run=run />
                        }
                    })}
            </Show>
            </div>
        </section>
    }
}
