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
use crate::settings::{ModelChoices, Settings, TaskLength, TransportChoice};
use browser::BrowserPage;

/// Moves the focus to `button` without scrolling, if it is there.
fn focus(button: NodeRef<html::Button>) {
    if let Some(button) = button.get_untracked() {
        let options = web_sys::FocusOptions::new();
        options.set_prevent_scroll(true);
        let _ = button.focus_with_options(&options);
    }
}

/// Whether the focus is on `button`, on a control that is disabled (the task while a run goes),
/// or nowhere (on `<body>`, where a disabled control leaves it).
fn focus_on_or_lost(button: NodeRef<html::Button>) -> bool {
    let Some(active) = document().active_element() else {
        return true;
    };
    let on_button = button.get_untracked().is_some_and(|button| {
        let button: &web_sys::Element = &button;
        *button == active
    });
    let disabled = active.matches(":disabled").unwrap_or(false);
    let body = document()
        .body()
        .is_some_and(|body| *AsRef::<web_sys::Element>::as_ref(&body) == active);
    on_button || disabled || body
}

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
    let error = move || match shown.get() {
        Shown::Single => run.with(|r| r.error.clone()),
        Shown::Compare => comparison.with(Comparison::error),
    };

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
    // Run disables itself when a run starts, Stop when it ends: the focus goes to the other.
    Effect::new(move |was_running: Option<bool>| {
        let now_running = running();
        if was_running.is_some_and(|was| was != now_running) && focus_follows.get_value() {
            if now_running && focus_on_or_lost(run_button) {
                focus(stop_button);
            } else if !now_running && focus_on_or_lost(stop_button) {
                focus(run_button);
            }
        }
        now_running
    });

    let copy_link = move || {
        let query = settings.with_untracked(Settings::share_query);
        let link = format!("{}?{query}", crate::page_path_url().unwrap_or_default());
        share_link.set(Some((link.clone(), "Copying…".into())));
        leptos::task::spawn_local(async move {
            let outcome = match crate::copy_to_clipboard(&link).await {
                Ok(()) => "Copied to the clipboard.".to_string(),
                Err(why) => format!("Copy it from the field ({why})."),
            };
            share_link.try_set(Some((link, outcome)));
        });
    };

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

    // What a screen reader is told: the status as it changes, the answer or the result at the
    // end; nothing while the run streams.
    let announcement = Memo::new(move |_| match shown.get() {
        Shown::Single => run.with(|r| match r.status {
            RunStatus::Idle => String::new(),
            RunStatus::Running => "Running.".to_string(),
            RunStatus::Done => format!(
                "Done in {} turns. {}",
                r.turns.len(),
                r.answer().unwrap_or_default()
            ),
            RunStatus::Failed => format!("Failed: {}", r.error.clone().unwrap_or_default()),
            RunStatus::Stopped => "Stopped.".to_string(),
        }),
        Shown::Compare => comparison.with(|c| match (c.status(), c.speedup()) {
            (RunStatus::Done, _) if c.is_sweep() => format!(
                "Sweep done. {}",
                crate::agent::describe_sweep(c).unwrap_or_default()
            ),
            (RunStatus::Done, Some(speedup)) => format!(
                "Comparison done. {}. {}",
                speedup.describe(),
                c.explain().unwrap_or_default()
            ),
            (RunStatus::Idle, _) => String::new(),
            (RunStatus::Failed, _) => format!("Failed: {}", c.error().unwrap_or_default()),
            (status, _) => format!("Comparison {}.", status.as_str()),
        }),
    });

    let summary = move || settings.with(Settings::summary);
    let long_task = move || settings.with(|s| s.task_length == TaskLength::Long);
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
    // How far along: the legs done and the turns of the leg under way, against the task's.
    let progress = Memo::new(move |_| {
        let expected = settings.with(Settings::expected_turns);
        let turns = run.with(|r| r.turns.len());
        match shown.get() {
            Shown::Compare => comparison.with(|c| c.progress(turns, expected)),
            Shown::Single => run.with(|r| crate::agent::run_progress(r, expected)),
        }
    });
    // A comparison's result, once one the user started is done: into view, and the focus on
    // it (its speedup is far below the button). A single run's result is where it streamed.
    let result = NodeRef::<html::Div>::new();
    Effect::new(move |was: Option<RunStatus>| {
        let now = status.get();
        if was == Some(RunStatus::Running)
            && now == RunStatus::Done
            && shown.get_untracked() == Shown::Compare
            && focus_follows.get_value()
            && let Some(result) = result.get_untracked()
        {
            let options = web_sys::ScrollIntoViewOptions::new();
            options.set_block(web_sys::ScrollLogicalPosition::Start);
            result.scroll_into_view_with_scroll_into_view_options(&options);
            let focus = web_sys::FocusOptions::new();
            focus.set_prevent_scroll(true);
            let _ = result.focus_with_options(&focus);
        }
        now
    });

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
                {(!embed)
                    .then(|| {
                        view! {
                            <label for="task">"Task"</label>
                            <textarea
                                id="task"
                                data-testid="task"
                                rows="3"
                                aria-describedby="task-hint"
                                prop:disabled=move || running() || long_task()
                                prop:value=move || settings.with(|s| s.run_task().to_string())
                                on:input=move |ev| {
                                    let text = event_target_value(&ev);
                                    settings.update(|s| s.task = text);
                                }
                                on:keydown=move |ev| {
                                    if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                                        ev.prevent_default();
                                        start(true);
                                    }
                                }
                            ></textarea>
                            <span id="task-hint" class="hint">
                                {move || {
                                    if long_task() {
                                        "The long rollout's own task (choose the short task to write yours)"
                                    } else {
                                        "Ctrl+Enter runs it"
                                    }
                                }}
                            </span>
                            <ConditionsPanel settings=settings models=models locked=Signal::derive(running) />
                            <SettingsPanel settings=settings locked=Signal::derive(running) />
                        }
                    })}
                {embed
                    .then(|| {
                        let open = move || {
                            format!(
                                "{}?{}",
                                crate::page_path_url().unwrap_or_default(),
                                settings.with(Settings::settings_query),
                            )
                        };
                        view! {
                            <h1 class="embed-title">
                                {move || {
                                    if settings.with(|s| s.transport == TransportChoice::Compare) {
                                        "Live: WebSocket mode against HTTP stateless"
                                    } else {
                                        "Live: an agent run against this server"
                                    }
                                }}
                            </h1>
                            <p class="embed-summary" data-testid="embed-summary">
                                {summary}
                                " · "
                                <a href=open target="_blank" rel="noopener" data-testid="open-in-playground">
                                    "Open in the playground"
                                </a>
                            </p>
                        }
                    })}
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
                {move || {
                    share_link
                        .get()
                        .map(|(link, outcome)| {
                            view! {
                                <div class="share">
                                    <label for="share-link">"Link to these settings (no API key)"</label>
                                    <input
                                        id="share-link"
                                        data-testid="share-link"
                                        readonly
                                        prop:value=link
                                        on:focus=move |ev| {
                                            use wasm_bindgen::JsCast;
                                            if let Some(input) = ev
                                                .target()
                                                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
                                            {
                                                input.select();
                                            }
                                        }
                                    />
                                    <span class="field-note" role="status">{outcome}</span>
                                </div>
                            }
                        })
                }}
            </form>
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
