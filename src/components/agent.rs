//! The agent view: the task and the settings, Run and Stop; then the run's status, its totals
//! (or, in compare mode, both legs side by side and the speedup), its conversation and its
//! per-turn timeline. What Run, Stop, Reset and leaving the page do is the agent
//! [`Session`]'s; this component hands it the page ([`BrowserPage`]) and renders the signals it
//! writes. The settings, the files and the last run are kept in `localStorage` (not by an
//! embedded view).

mod browser;

use std::rc::Rc;

use leptos::prelude::*;

use crate::PageContext;
use crate::agent::{Comparison, RunStatus, Session, Shown};
use crate::components::settings::{ModelChoices, SettingsPanel, model_choices};
use crate::components::{CompareView, Conversation, RunDetails, Timeline, TotalsView};
use crate::settings::{Settings, TransportChoice};
use browser::BrowserPage;

/// The agent page: task (`data-testid="task"`), settings ([`SettingsPanel`]), Run (`run`),
/// Stop (`stop`), Copy link (`copy-link`), Reset (`reset`); status (`run-status`: idle,
/// running, done, failed or stopped — for a comparison, of both legs), turn count
/// (`turn-count`), error (`error`), totals, compare results with `speedup`, conversation and
/// timeline. Reads its settings from the [`PageContext`] (defaults when there is none).
#[component]
pub fn AgentView() -> impl IntoView {
    let page = use_context::<PageContext>().unwrap_or_else(PageContext::standalone);
    let settings = page.settings;
    let notices = page.notices;
    let embed = page.embed;
    let origin = StoredValue::new(crate::page_origin_url().unwrap_or_default());
    let models = model_choices(settings, origin.get_value());

    let (initial_shown, initial_run, initial_comparison) = page
        .last_run
        .with_value(|last| Shown::restore(last.as_ref()));
    let shown = RwSignal::new(initial_shown);
    let run = RwSignal::new(initial_run);
    let comparison = RwSignal::new(initial_comparison);
    let share_link = RwSignal::new(None::<(String, String)>);
    let browser = BrowserPage {
        shown,
        run,
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

    let start = move || {
        let current = settings.get_untracked();
        let started = session.with_value(|s| s.start(current, &origin.get_value()));
        if let Some(run) = started {
            leptos::task::spawn_local(run);
        }
    };
    let stop = move || session.with_value(Session::stop);
    let reset = move || {
        if session.with_value(Session::reset) {
            share_link.set(None);
        }
    };

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

    if page.autorun {
        // Start once the page has settled — the model list answered (or failed) and a frame
        // drawn — so the first turn's timings are not the page's own start-up work (measured:
        // an autorun at the first frame made a WebSocket turn 1 wait ~120–300 ms longer for its
        // first event than the same turn started from an idle page).
        let started = StoredValue::new(false);
        Effect::new(move |_| {
            let settled = !matches!(models.get(), ModelChoices::Loading);
            if settled && !started.get_value() {
                started.set_value(true);
                request_animation_frame(start);
            }
        });
    }

    let summary = move || settings.with(Settings::summary);
    let is_compare = move || shown.get() == Shown::Compare;
    let timeline_heading = move || comparison.with(|c| shown.get().timeline_heading(c));

    view! {
        <section class="agent-view" class:embed=embed>
            <Show when=move || !embed && notices.with(|n| !n.is_empty())>
                <ul class="notices" role="status" data-testid="notices">
                    {move || notices.get().into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
                </ul>
            </Show>
            <form
                class="prompt agent-form"
                on:submit=move |ev| {
                    ev.prevent_default();
                    start();
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
                                prop:disabled=running
                                prop:value=move || settings.with(|s| s.task.clone())
                                on:input=move |ev| {
                                    let text = event_target_value(&ev);
                                    settings.update(|s| s.task = text);
                                }
                            ></textarea>
                            <SettingsPanel settings=settings models=models locked=Signal::derive(running) />
                        }
                    })}
                {embed.then(|| view! { <p class="embed-summary" data-testid="embed-summary">{summary}</p> })}
                <div class="controls">
                    <button type="submit" data-testid="run" disabled=running>
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
                        disabled=move || !running()
                        on:click=move |_| stop()
                    >
                        "Stop"
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
            <div class="status-line" aria-live="polite">
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
                <span data-testid="tool-call-count">{move || run.with(|r| r.tool_calls().count())}</span>
            </div>
            <Show when=move || error().is_some()>
                <p class="error" role="alert" data-testid="error">
                    {move || error().unwrap_or_default()}
                </p>
            </Show>
            <Show
                when=is_compare
                fallback=move || view! { <TotalsView run=run /> }
            >
                <CompareView comparison=comparison />
            </Show>
            {(!embed)
                .then(|| {
                    view! {
                        <h2>"Conversation"</h2>
                        <Conversation run=run />
                    }
                })}
            <h2>{timeline_heading}</h2>
            <div class="table-scroll">
                <Timeline run=run />
            </div>
            {(!embed).then(|| view! { <RunDetails run=run /> })}
        </section>
    }
}
