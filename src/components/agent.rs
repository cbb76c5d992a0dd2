//! The agent view: the task and the settings, Run and Stop; then the run's status, its totals
//! and where its time went, its timeline, conversation and details — or, in compare mode, the
//! comparison's results and both legs side by side. What Run, Stop, Reset and leaving the page do
//! is the agent [`Session`]'s; this component hands it the page ([`BrowserPage`]) and renders
//! what it writes. The settings, the files and the last run are kept in `localStorage` (not by
//! an embedded view).
//!
//! While a single run streams over a WebSocket transport, the Steer box sends `response.steer`
//! for the response under way ([`crate::components::steer::SteerBox`]; the session sends it).
//!
//! A run the user starts is brought into sight: the buttons at the top of the window, its
//! progress and (in a comparison) the per-turn chart under them. For the keyboard: Ctrl+Enter in
//! the task runs it; when Run or Stop disables itself, the focus moves to the button that is now
//! enabled. A screen reader hears the status, the final answer or the comparison's result —
//! never the stream itself.

mod browser;
mod controls;
mod focus;
mod lifecycle;
mod result;
mod share;
mod status;
mod task;

use std::rc::Rc;

use leptos::html;
use leptos::prelude::*;

use crate::PageContext;
use crate::agent::{RunStatus, SWEEP_PROFILES, Session, Shown, sweep_profiles};
use crate::components::ConditionsPanel;
use crate::components::conditions::conditions_refused;
use crate::components::field::InputErrors;
use crate::components::settings::SettingsPanel;
use browser::BrowserPage;
use controls::RunControls;
use lifecycle::SharedSession;
use result::{ComparedResult, SingleResult};
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
        page.check_scenario();
        page
    });
    page.read_kept();
    let (settings, embed) = (page.settings, page.embed);
    let form = page.form();
    let origin = StoredValue::new(crate::page_origin_url().unwrap_or_default());
    let views = BrowserPage::opening(&page);
    let (shown, run, comparison) = (views.shown, views.run, views.comparison);
    let (ws, http, long_running) = (views.ws, views.http, views.long_running);
    let status = views.status();
    let running = Signal::derive(move || status.get() == RunStatus::Running);
    let session: SharedSession = StoredValue::new_local(Session::new(Rc::new(views), page.persist));
    lifecycle::tie_to_the_page(session);

    let share_link = RwSignal::new(None::<(String, String)>);
    let run_button = NodeRef::<html::Button>::new();
    let stop_button = NodeRef::<html::Button>::new();
    let controls = NodeRef::<html::Div>::new();
    let result = NodeRef::<html::Div>::new();
    // Whether the user started the run (Run, Ctrl+Enter, the overview's button, Sweep) and so
    // the view brings its progress into sight and the focus follows the buttons; an autorun (an
    // embedded demo) does neither.
    let focus_follows = StoredValue::new(false);
    focus::follow_the_buttons(status, run_button, stop_button, focus_follows);
    focus::bring_the_progress(status, controls, focus_follows);
    focus::bring_the_result(status, shown, result, focus_follows);

    // Nothing starts on a value the page did not understand: the errors are shown at their
    // fields and by the buttons, and Run takes the focus to the first (an autorun just waits).
    // An embedded run shows no conditions to say a refusal at: it runs, and the server's
    // refusal is its error (a docs page's demos each end, so the next one starts).
    let refused = page.conditions_refused;
    let start = move |by_user: bool| {
        if !form.check(by_user.then_some("")) {
            return;
        }
        let current = settings.get_untracked();
        if !embed && conditions_refused(refused, &current, by_user.then_some("")) {
            return;
        }
        let started = session.with_value(|s| s.start(current, &origin.get_value()));
        if let Some(run) = started {
            focus_follows.set_value(by_user);
            leptos::task::spawn_local(run);
        }
    };
    let start_sweep = move || {
        if !form.check(Some("")) {
            return;
        }
        let current = settings.get_untracked();
        if conditions_refused(refused, &current, Some("")) {
            return;
        }
        // Each point as often as a comparison repeats, so that it has a spread.
        let profiles = sweep_profiles(&SWEEP_PROFILES, current.repetitions);
        let started =
            session.with_value(|s| s.start_sweep(current, &origin.get_value(), &profiles));
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
    let copy_link = move || share::copy_link(settings, share_link);
    // The overview's button asked for this run, or a shared link opened on its own page: the
    // view follows it, as after Run, so its progress is in sight from the first second. An
    // embedded demo's autorun (`embed=1`) leaves the focus and the scroll of the docs page alone.
    let asked = page.take_run_on_open();
    if page.autorun || asked {
        lifecycle::start_when_settled(page.models, move || start(asked || !embed));
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
    let models = page.models;

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
                    view! {
                        <TaskField form=form running=running on_run=Callback::new(start) />
                        <ConditionsPanel
                            form=form
                            models=models
                            refused=page.conditions_refused
                            locked=running
                        />
                        <SettingsPanel form=form locked=running scenarios=page.scenarios />
                    }
                        .into_any()
                }}
                <RunControls
                    settings=settings
                    understood=Signal::derive(move || {
                        // Nor is there one while the server refuses the conditions asked for
                        // (an embed runs and says the refusal as its error).
                        form.blocking().is_empty()
                            && (embed
                                || refused.with(Option::is_none)
                                || !settings.with(crate::Settings::asks_for_conditions))
                    })
                    running=running
                    run_button=run_button
                    stop_button=stop_button
                    controls=controls
                    on_stop=Callback::new(move |()| {
                        focus_follows.set_value(true);
                        stop();
                    })
                    on_sweep=Callback::new(move |()| start_sweep())
                    on_copy=Callback::new(move |()| copy_link())
                    on_reset=Callback::new(move |()| reset())
                    embed=embed
                />
                <InputErrors form=form />
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
                            <SingleResult
                                run=run
                                steer_mode=steer_mode
                                on_steer=on_steer
                                embed=embed
                            />
                        }
                    }
                >
                    <ComparedResult
                        comparison=comparison
                        run=run
                        ws=ws
                        http=http
                        long_running=long_running
                        embed=embed
                    />
                </Show>
            </div>
        </section>
    }
}
