//! The agent view: the task and the settings, Run and Stop; then the run's status, its totals
//! (or, in compare mode, both legs side by side and the speedup), its conversation and its
//! per-turn timeline. The loop itself is [`crate::agent::run_agent`]; this component only opens
//! the transport, hands the loop a sandbox, and renders each state the loop reports. The settings,
//! the files and the last run are kept in `localStorage` (not by an embedded view).

use leptos::prelude::*;
use tether_sandbox::{Sandbox, Vfs, sample_project};

use crate::agent::{
    AgentConfig, AgentRun, Comparison, ContinuationMode, LastRun, RunSnapshot, RunStatus,
    SharedRun, StopSignal, run_agent_shared,
};
use crate::components::frame_batch::FrameBatch;
use crate::components::settings::{ModelChoices, SettingsPanel, model_choices};
use crate::components::{CompareView, Conversation, RunDetails, Timeline, TotalsView};
use crate::js::WorkerRuntime;
use crate::settings::{Settings, TransportChoice, http_responses_url, ws_responses_url};
use crate::storage;
use crate::transport::Transport;
use crate::transport::http::HttpTransport;
use crate::transport::ws::WsTransport;
use crate::{PageContext, now_ms};

/// Opens the transport `mode` runs on, against the server at `base` (`http://host:port`).
fn open_transport(
    mode: ContinuationMode,
    base: &str,
    api_key: &str,
) -> Result<Box<dyn Transport>, String> {
    Ok(match mode {
        ContinuationMode::WebSocket => Box::new(
            WsTransport::connect(&ws_responses_url(base, api_key)).map_err(|e| e.to_string())?,
        ),
        ContinuationMode::HttpChained | ContinuationMode::HttpStateless => {
            Box::new(HttpTransport::new(&http_responses_url(base)).with_api_key(api_key))
        }
    })
}

/// A run that failed before its first request.
fn failed_run(error: String) -> AgentRun {
    AgentRun {
        status: RunStatus::Failed,
        error: Some(error),
        ..AgentRun::default()
    }
}

/// A run that has started but not reported yet (so `run-status` says running at once).
fn starting_run() -> AgentRun {
    AgentRun {
        status: RunStatus::Running,
        ..AgentRun::default()
    }
}

/// One run of the loop over `mode` from the files `vfs`; returns its final state and the files
/// it left. The state goes to `publish` at most once per animation frame while the run goes,
/// and at once when it ends.
async fn run_leg(
    mode: ContinuationMode,
    settings: &Settings,
    base: &str,
    vfs: Vfs,
    stop: &StopSignal,
    publish: impl Fn(&AgentRun) + 'static,
) -> (AgentRun, Option<Vfs>) {
    let mut config = AgentConfig::new(settings.profile.trim(), mode);
    config.max_turns = settings.max_turns;
    config.scenario = Some(settings.scenario.trim().to_string()).filter(|s| !s.is_empty());
    let mut transport = match open_transport(mode, base, &settings.api_key) {
        Ok(transport) => transport,
        Err(error) => {
            let run = failed_run(format!("cannot open the transport: {error}"));
            publish(&run);
            return (run, None);
        }
    };
    // The clock starts with the connection open: a WebSocket's handshake is paid once per
    // session, not by the first turn (HTTP's kept-alive connection is already open). A failed
    // open shows again at the first send, where the loop reports it.
    let _ = futures::future::select(transport.ready(), stop.stopped()).await;
    let mut sandbox = Sandbox::new(vfs).with_js_runtime(Box::new(WorkerRuntime));
    // One copy of the state and one DOM update per animation frame, not per event.
    let shared = SharedRun::default();
    let latest = shared.clone();
    let batch = FrameBatch::per_animation_frame(move || latest.with(&publish));
    let run = run_agent_shared(
        transport.as_mut(),
        &mut sandbox,
        &config,
        &settings.task,
        &now_ms,
        stop,
        &shared,
        &mut |state| {
            if state.status == RunStatus::Running {
                batch.changed();
            } else {
                batch.flush();
            }
        },
    )
    .await;
    (run, Some(sandbox.into_vfs()))
}

/// Which kind of run the view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    Single,
    Compare,
}

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
    let persist = page.persist;
    let origin = StoredValue::new(crate::page_origin_url().unwrap_or_default());
    let models = model_choices(settings, origin.get_value());

    let (initial_run, initial_comparison, initial_shown) = match page.last_run.get_value() {
        Some(LastRun::Single { ref run }) => (run.restore(), Comparison::default(), Shown::Single),
        Some(LastRun::Compare { ref ws, ref http }) => {
            let comparison = Comparison {
                ws: ws.restore(),
                http: http.restore(),
            };
            let shown = if comparison.http.status == RunStatus::Idle {
                comparison.ws.clone()
            } else {
                comparison.http.clone()
            };
            (shown, comparison, Shown::Compare)
        }
        None => (AgentRun::default(), Comparison::default(), Shown::Single),
    };
    let run = RwSignal::new(initial_run);
    let comparison = RwSignal::new(initial_comparison);
    let shown = RwSignal::new(initial_shown);
    let files = page.files;
    let last_run = page.last_run;
    let stop = StoredValue::new_local(None::<StopSignal>);
    let share_link = RwSignal::new(None::<(String, String)>);

    let status = Memo::new(move |_| match shown.get() {
        Shown::Single => run.with(|r| r.status),
        Shown::Compare => comparison.with(Comparison::status),
    });
    let running = move || status.get() == RunStatus::Running;
    let error = move || match shown.get() {
        Shown::Single => run.with(|r| r.error.clone()),
        Shown::Compare => comparison.with(Comparison::error),
    };
    let note = move |message: String| notices.update(|n| n.push(message));
    let remember = move |last: LastRun| {
        last_run.try_set_value(Some(last.clone()));
        if persist && let Err(why) = storage::save(storage::LAST_RUN_KEY, &last.to_json()) {
            note(format!("The run was not kept: {why}"));
        }
    };

    let start = move || {
        if status.get_untracked() == RunStatus::Running {
            return;
        }
        let current = settings.get_untracked();
        if current.task.trim().is_empty() {
            return;
        }
        let base = match current.base_url(&origin.get_value()) {
            Ok(base) => base,
            Err(error) => {
                shown.set(Shown::Single);
                run.set(failed_run(error));
                return;
            }
        };
        let signal = StopSignal::new();
        stop.set_value(Some(signal.clone()));
        match current.transport.mode() {
            Some(mode) => {
                shown.set(Shown::Single);
                run.set(starting_run());
                let vfs = current
                    .keep_files
                    .then(|| files.get_value())
                    .flatten()
                    .unwrap_or_else(sample_project);
                leptos::task::spawn_local(async move {
                    // `try_set`: the view may be gone (tab switched) while the run winds down.
                    let (done, left) = run_leg(mode, &current, &base, vfs, &signal, move |state| {
                        run.try_set(state.clone());
                    })
                    .await;
                    if let Some(left) = left {
                        if persist
                            && let Err(why) = storage::save(storage::FILES_KEY, &left.to_json())
                        {
                            note(format!("The files were not kept: {why}"));
                        }
                        files.try_set_value(Some(left));
                    }
                    remember(LastRun::Single {
                        run: RunSnapshot::of(&done),
                    });
                });
            }
            None => {
                shown.set(Shown::Compare);
                run.set(starting_run());
                comparison.set(Comparison {
                    ws: starting_run(),
                    http: AgentRun::default(),
                });
                leptos::task::spawn_local(async move {
                    for mode in Comparison::LEGS {
                        if signal.is_stopped() {
                            comparison.try_update(|c| c.leg_mut(mode).status = RunStatus::Stopped);
                            break;
                        }
                        let publish = move |state: &AgentRun| {
                            run.try_set(state.clone());
                            comparison.try_update(|c| *c.leg_mut(mode) = state.clone());
                        };
                        let (done, _) =
                            run_leg(mode, &current, &base, sample_project(), &signal, publish)
                                .await;
                        let finished = done.status == RunStatus::Done;
                        comparison.try_update(|c| *c.leg_mut(mode) = done);
                        if !finished {
                            break;
                        }
                    }
                    if let Some(c) = comparison.try_get_untracked() {
                        remember(LastRun::Compare {
                            ws: RunSnapshot::of(&c.ws),
                            http: RunSnapshot::of(&c.http),
                        });
                    }
                });
            }
        }
    };

    let reset = move || {
        if status.get_untracked() == RunStatus::Running {
            return;
        }
        storage::clear();
        settings.set(Settings::default());
        run.set(AgentRun::default());
        comparison.set(Comparison::default());
        shown.set(Shown::Single);
        files.set_value(None);
        last_run.set_value(None);
        share_link.set(None);
        notices.set(vec![
            "Reset: the settings, the files and the last run are back to their defaults.".into(),
        ]);
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
        stop.try_with_value(|s| s.iter().for_each(StopSignal::stop));
    });

    // A reload or a navigation away ends a running run without its end being remembered: keep
    // it as it stands, so the next load shows it (as stopped, `RunSnapshot::restore`).
    if persist {
        let hidden = window_event_listener(leptos::ev::pagehide, move |_| {
            if status.try_get_untracked() != Some(RunStatus::Running) {
                return;
            }
            let last = match shown.get_untracked() {
                Shown::Single => LastRun::Single {
                    run: RunSnapshot::of(&run.get_untracked()),
                },
                Shown::Compare => comparison.with_untracked(|c| LastRun::Compare {
                    ws: RunSnapshot::of(&c.ws),
                    http: RunSnapshot::of(&c.http),
                }),
            };
            // Nothing can be shown any more if this fails: the page is going away.
            let _ = storage::save(storage::LAST_RUN_KEY, &last.to_json());
        });
        on_cleanup(move || hidden.remove());
    }

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

    let summary = move || {
        settings.with(|s| {
            let scenario = if s.scenario.is_empty() {
                "echo generator".to_string()
            } else {
                format!("scenario {}", s.scenario)
            };
            format!("{} · {} · {scenario}", s.transport.label(), s.profile)
        })
    };
    let is_compare = move || shown.get() == Shown::Compare;
    let timeline_heading = move || match shown.get() {
        Shown::Compare if comparison.with(|c| c.http.status != RunStatus::Idle) => {
            "Timeline (HTTP stateless leg)"
        }
        Shown::Compare => "Timeline (WebSocket leg)",
        Shown::Single => "Timeline",
    };

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
                        on:click=move |_| stop.with_value(|s| s.iter().for_each(StopSignal::stop))
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
