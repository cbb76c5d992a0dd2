//! The Tether playground: a Leptos (client-side rendered) app that talks to the Tether server and
//! shows where the time went. Two views: **Chat** (one prompt, one WebSocket turn, its answer
//! streaming in) and **Agent** (a Codex-style loop: the model's tool calls run in a sandbox in the
//! page, over WebSocket mode or HTTP, with a per-turn timeline, or both in compare mode).
//!
//! The page starts from the settings and the last run kept in `localStorage`, overridden by its
//! URL parameters (`transport`, `profile`, `scenario`, `autorun=1`, `embed=1`: see
//! [`settings`]); `embed=1` shows only the agent's run controls, status, totals and timeline,
//! for an iframe, and keeps nothing.
//!
//! State and logic live in plain Rust ([`agent`], [`transport`]) that is tested natively; the
//! components in [`components`] only render it.

pub mod agent;
pub mod components;
pub mod conditions;
pub mod js;
pub mod profiles;
pub mod settings;
pub mod storage;
pub mod transport;

use leptos::prelude::*;

use crate::agent::LastRun;
use crate::components::field::Form;
use crate::components::{AgentView, ChatView, Overview};
use crate::conditions::{ApiCosts, LinkPreset};
use crate::settings::{Field, Inputs, ModelChoices, Settings, UrlProfile, recheck_scenario};
use crate::storage::{Kept, Restored};
use crate::transport::models::{CONDITIONS_REFUSED, fetch_models};
use tether_sandbox::Vfs;

/// What the page was opened with, shared by its views.
#[derive(Clone)]
pub struct PageContext {
    /// The settings every run uses.
    pub settings: RwSignal<Settings>,
    /// What was typed or linked into them, and the values that did not parse: errors at their
    /// fields, and no run starts while one stands.
    pub inputs: RwSignal<Inputs>,
    /// Messages about the page's state (unusable storage, a reset).
    pub notices: RwSignal<Vec<String>>,
    /// `embed=1`: the compact layout; nothing is stored.
    pub embed: bool,
    /// `autorun=1`: the agent run starts on load.
    pub autorun: bool,
    /// Whether settings, files and runs are kept in `localStorage`.
    pub persist: bool,
    /// The last run, shown until the next one (also after switching tabs).
    pub last_run: StoredValue<Option<LastRun>>,
    /// The files the last run left.
    pub files: StoredValue<Option<Vfs>>,
    /// The last run and the files as `localStorage` had them, until the agent view reads them
    /// ([`PageContext::read_kept`]).
    pub kept: StoredValue<Option<Kept>>,
    /// The server's model profiles, loaded when the server or the key changes.
    pub models: RwSignal<ModelChoices>,
    /// The profile the URL asked for, checked once against the server's list.
    pub url_profile: StoredValue<Option<UrlProfile>>,
    /// The agent view starts its run when it opens (the overview's Compare button).
    pub run_on_open: StoredValue<bool>,
    /// The view the page shows.
    pub view: RwSignal<View>,
    /// The next change of the settings is the page's own (the URL's profile checked against
    /// the server's list), not the user's: it is not stored.
    pub quiet: StoredValue<bool>,
    /// The server's refusal of client-chosen conditions (started without
    /// `--allow-client-conditions`), asked with the model list: no run asking for a link or for
    /// API costs starts on such a server, and the conditions say so.
    pub conditions_refused: RwSignal<Option<String>>,
    /// The scenarios the server plays, asked with the model list (`None` until it answers, or
    /// from a server that does not say).
    pub scenarios: RwSignal<Option<Vec<String>>>,
    /// The scenario the URL gave, so that an unknown one is said as the URL's.
    pub url_scenario: StoredValue<Option<String>>,
    /// Whether the URL gave the link or the API costs: conditions a visitor chose, which the
    /// page never changes by itself.
    pub url_conditions: bool,
}

/// Said when the page, on a server that refuses client-chosen conditions, runs what the server
/// does instead of its own default conditions (which nobody chose).
pub const SERVER_CONDITIONS_CHOSEN: &str = "This server does not take client-chosen conditions \
     (it was started without --allow-client-conditions), so the page runs what it does: the same \
     machine, its own API costs. The default comparison's home uplink and hosted costs need a \
     server that takes them (cargo xtask run starts one).";

impl PageContext {
    /// Defaults, kept nowhere: a view mounted on its own (tests).
    pub fn standalone() -> Self {
        PageContext {
            settings: RwSignal::new(Settings::default()),
            inputs: RwSignal::new(Inputs::default()),
            notices: RwSignal::new(Vec::new()),
            embed: false,
            autorun: false,
            persist: false,
            last_run: StoredValue::new(None),
            files: StoredValue::new(None),
            kept: StoredValue::new(None),
            models: RwSignal::new(ModelChoices::Loading),
            url_profile: StoredValue::new(None),
            run_on_open: StoredValue::new(false),
            view: RwSignal::new(View::Agent),
            quiet: StoredValue::new(false),
            conditions_refused: RwSignal::new(None),
            scenarios: RwSignal::new(None),
            url_scenario: StoredValue::new(None),
            url_conditions: false,
        }
    }

    /// The page as `localStorage` and the URL say.
    pub fn from_restored(restored: Restored) -> Self {
        let embed = restored.params.embed;
        let mut notices = restored.notices;
        // A run a reload cut off is said, shown in the agent view, and not followed by another
        // started by itself (an embedded page keeps nothing, so never has one).
        let interrupted = restored.interrupted.filter(|_| !embed);
        if let Some(cut) = &interrupted {
            let mut notice = format!(
                "The last run was interrupted: the page was reloaded or left while it ran \
                 ({cut}). The Agent tab shows it as it stood."
            );
            if restored.params.autorun {
                notice.push_str(" autorun=1 did not start another one: press Run to start one.");
            }
            notices.push(notice);
        }
        // What the URL gave that the page does not read (a typo of a parameter, a flag's value
        // that is not one) is said, and nothing starts on a link the page did not understand.
        let unread = &restored.params.unread;
        if !unread.is_empty() {
            let started =
                if restored.params.autorun || unread.iter().any(|u| u.starts_with("autorun=")) {
                    " The autorun started nothing: the form shows what a run would use."
                } else {
                    " Left out: the form shows what a run would use."
                };
            notices.push(format!(
                "The URL gave what this page does not read — {}.{started}",
                unread.join("; ")
            ));
        }
        let autorun = restored.params.autorun && interrupted.is_none() && unread.is_empty();
        let url_conditions = [
            Field::Link,
            Field::RttMs,
            Field::UpMbit,
            Field::DownMbit,
            Field::ApiCosts,
        ]
        .into_iter()
        .any(|field| restored.params.value(field).is_some());
        PageContext {
            settings: RwSignal::new(restored.settings),
            inputs: RwSignal::new(restored.inputs),
            notices: RwSignal::new(notices),
            embed,
            autorun,
            // An embedded demo must not overwrite the visitor's own playground state.
            persist: !embed,
            last_run: StoredValue::new(None),
            files: StoredValue::new(None),
            kept: StoredValue::new((!embed).then_some(restored.kept)),
            models: RwSignal::new(ModelChoices::Loading),
            url_profile: StoredValue::new(restored.url_profile),
            run_on_open: StoredValue::new(false),
            view: RwSignal::new(if autorun || embed || interrupted.is_some() {
                View::Agent
            } else {
                View::Overview
            }),
            quiet: StoredValue::new(false),
            conditions_refused: RwSignal::new(None),
            scenarios: RwSignal::new(None),
            url_scenario: StoredValue::new(
                restored
                    .params
                    .value(Field::Scenario)
                    .map(|s| s.trim().to_string()),
            ),
            url_conditions,
        }
    }

    /// The settings and what was typed into them, as a form edits them.
    pub fn form(&self) -> Form {
        Form::new(self.settings, self.inputs)
    }

    /// Loads the server's model list whenever the server or the key changes; the first answer
    /// also checks the profile the URL asked for.
    pub fn load_models(&self) {
        let settings = self.settings;
        let choices = self.models;
        let refused = self.conditions_refused;
        let inputs = self.inputs;
        let url_profile = self.url_profile;
        let quiet = self.quiet;
        let scenarios = self.scenarios;
        let url_scenario = self.url_scenario;
        let notices = self.notices;
        // Whether the page may put the server's own conditions in place of its defaults.
        let may_choose = !self.embed && !self.url_conditions;
        let page_origin = page_origin_url().unwrap_or_default();
        let source =
            Memo::new(move |_| settings.with(|s| (s.server_url.clone(), s.api_key.clone())));
        Effect::new(move |_| {
            let wanted = source.get();
            let (server_url, api_key) = wanted.clone();
            let base = Settings {
                server_url,
                ..Settings::default()
            }
            .base_url(&page_origin);
            choices.set(ModelChoices::Loading);
            // The last server's refusal and scenarios are not this one's: asked again with the
            // list.
            refused.set(None);
            scenarios.set(None);
            leptos::task::spawn_local(async move {
                let (loaded, refusal, played) = match base {
                    Ok(base) => match tether_client::Endpoint::new(&base) {
                        Ok(endpoint) => {
                            match fetch_models(&endpoint.with_api_key(api_key.trim())).await {
                                // Said with the list (an autorun waits for the list).
                                Ok(models) => (
                                    Ok(models.ids),
                                    models
                                        .conditions_refused
                                        .then(|| CONDITIONS_REFUSED.to_string()),
                                    models.scenarios,
                                ),
                                Err(error) => (Err(error), None, None),
                            }
                        }
                        Err(error) => (Err(error.to_string()), None, None),
                    },
                    Err(error) => (Err(error), None, None),
                };
                // The answer of an older source must not replace a newer one.
                if source.try_get_untracked() != Some(wanted) {
                    return;
                }
                // On a server that refuses client-chosen conditions, the page's own default
                // conditions (a link, hosted costs) — nobody's choice — give way to what the
                // server runs, said in a notice and not stored; conditions a visitor chose stay,
                // and are said to be refused where they are. An embedded demo runs as linked.
                let defaults = Settings::default();
                let untouched = settings.with_untracked(|s| {
                    s.link == defaults.link && s.api_costs == defaults.api_costs
                });
                if refusal.is_some() && may_choose && untouched {
                    let mut chosen = settings.get_untracked();
                    chosen.link = LinkPreset::Loopback;
                    chosen.api_costs = ApiCosts::Server;
                    quiet.set_value(true);
                    settings.set(chosen);
                    notices.update(|n| n.push(SERVER_CONDITIONS_CHOSEN.to_string()));
                }
                refused.try_set(refusal);
                // A scenario the server does not play is an error at its field before the list
                // is said (an autorun waiting for the list finds it and does not start); later
                // edits are checked by [`PageContext::check_scenario`].
                settings.with_untracked(|s| {
                    recheck_page_scenario(s, inputs, played.as_deref(), url_scenario);
                });
                scenarios.try_set(played);
                if let Ok(models) = &loaded
                    && let Some(asked) = url_profile.try_update_value(Option::take).flatten()
                {
                    // Only a profile the server does not offer changes the settings, and that
                    // change is the URL's, not the user's: it is not stored. It is an error at
                    // the profile's field, set before the list: an autorun waiting for the list
                    // finds it and does not start.
                    let mut checked = settings.get_untracked();
                    if let Some(error) = asked.check(&mut checked, models) {
                        quiet.set_value(true);
                        settings.set(checked);
                        inputs.update(|i| i.refuse(error));
                    }
                }
                choices.try_set(match loaded {
                    Ok(models) => ModelChoices::Loaded(models),
                    Err(error) => ModelChoices::Failed(error),
                });
            });
        });
    }

    /// Checks the scenario against the server's list whenever it changes (typed, or another
    /// server's list): a name the server does not play is an error at its field, as any value
    /// the page did not understand; nothing runs on it.
    pub fn check_scenario(&self) {
        let (settings, inputs, scenarios, url_scenario) = (
            self.settings,
            self.inputs,
            self.scenarios,
            self.url_scenario,
        );
        Effect::new(move |_| {
            let known = scenarios.get();
            settings.with(|s| recheck_page_scenario(s, inputs, known.as_deref(), url_scenario));
        });
    }

    /// Reads the last run and the files kept in `localStorage`, the first time the agent view
    /// opens; what was not usable is said in the notices.
    pub fn read_kept(&self) {
        let Some(kept) = self.kept.try_update_value(Option::take).flatten() else {
            return;
        };
        let read = kept.read();
        // Said once: the next load is not interrupted any more.
        storage::remove(storage::INTERRUPTED_KEY);
        self.last_run.set_value(read.last_run);
        self.files.set_value(read.files);
        if !read.notices.is_empty() {
            self.notices.update(|n| n.extend(read.notices));
        }
    }

    /// Whether the agent view should start its run now that it opens (once).
    pub fn take_run_on_open(&self) -> bool {
        self.run_on_open
            .try_update_value(std::mem::take)
            .unwrap_or(false)
    }
}

/// [`recheck_scenario`] on the page's inputs, the name said as the URL's when the URL gave it.
fn recheck_page_scenario(
    settings: &Settings,
    inputs: RwSignal<Inputs>,
    known: Option<&[String]>,
    url_scenario: StoredValue<Option<String>>,
) {
    let from_url = url_scenario.with_value(|u| u.as_deref() == Some(settings.scenario.trim()));
    let mut checked = inputs.get_untracked();
    if recheck_scenario(&mut checked, settings, known, from_url) {
        inputs.set(checked);
    }
}

/// Milliseconds since the page loaded (`performance.now()`), the clock of every timing shown.
///
/// The loop reads it a few times per received event, so the `Performance` object is looked up
/// once per page, not per reading (`window()` and `performance` are each a call into the page).
pub fn now_ms() -> f64 {
    thread_local! {
        static PERFORMANCE: Option<web_sys::Performance> =
            web_sys::window().and_then(|w| w.performance());
    }
    PERFORMANCE.with(|p| p.as_ref().map_or(0.0, web_sys::Performance::now))
}

/// Takes the focus to the element `id` (which scrolls it into view), if it is on the page;
/// whether it was.
pub fn focus_id(id: &str) -> bool {
    document()
        .get_element_by_id(id)
        .and_then(|element| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(element).ok())
        .map(|element| {
            let _ = element.focus();
        })
        .is_some()
}

/// The origin (`http://host:port`) of the server that served this page.
pub fn page_origin_url() -> Result<String, String> {
    let location = web_sys::window().ok_or("no window")?.location();
    location.origin().map_err(|_| "no location.origin".into())
}

/// This page's URL without its query string or fragment.
pub fn page_path_url() -> Result<String, String> {
    let location = web_sys::window().ok_or("no window")?.location();
    let path = location.pathname().map_err(|_| "no location.pathname")?;
    Ok(format!("{}{path}", page_origin_url()?))
}

/// Writes `text` to the clipboard; the error says why not (no permission, not a secure page).
pub async fn copy_to_clipboard(text: &str) -> Result<(), String> {
    let clipboard = web_sys::window()
        .ok_or("no window")?
        .navigator()
        .clipboard();
    wasm_bindgen_futures::JsFuture::from(clipboard.write_text(text))
        .await
        .map(|_| ())
        .map_err(|e| {
            e.as_string()
                .or_else(|| {
                    js_sys::Reflect::get(&e, &"message".into())
                        .ok()
                        .and_then(|m| m.as_string())
                })
                .unwrap_or_else(|| "the clipboard refused".into())
        })
}

/// The agent view, or why it could not be loaded.
pub type AgentViewFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<AnyView, String>> + Send>>;

/// Builds the agent view. The page's binary passes one that loads the agent view, the agent
/// loop and the sandbox as a second wasm module the first time the Agent tab opens (see
/// `src/main.rs`); [`AgentLoader::direct`] builds it in place (tests, embedders without the
/// split build).
#[derive(Clone, Copy)]
pub struct AgentLoader {
    /// The view, once its module is loaded.
    pub load: fn() -> AgentViewFuture,
    /// Starts fetching the module, without waiting (the pointer is over the Agent tab).
    pub preload: fn(),
}

impl AgentLoader {
    /// The agent view, compiled into the same module as the page.
    pub fn direct() -> Self {
        AgentLoader {
            load: || Box::pin(async { Ok(view! { <AgentView /> }.into_any()) }),
            preload: || {},
        }
    }
}

impl Default for AgentLoader {
    fn default() -> Self {
        Self::direct()
    }
}

/// The agent view once `loader` has it; until then a line that says it is loading (announced to
/// screen readers), in the place the view will take. A failed load says so and offers a retry.
fn agent_view(loader: AgentLoader) -> impl IntoView {
    let attempt = RwSignal::new(0u32);
    view! {
        <Suspense fallback=|| {
            view! {
                <p class="agent-loading" data-testid="agent-loading" role="status">
                    "Loading the agent and its sandbox…"
                </p>
            }
        }>
            {move || {
                attempt.track();
                Suspend::new(async move {
                    match (loader.load)().await {
                        Ok(view) => view,
                        Err(why) => {
                            view! {
                                <div class="agent-load-failed" role="alert" data-testid="agent-load-error">
                                    <p>"The agent could not be loaded: " {why}</p>
                                    <button type="button" on:click=move |_| attempt.update(|n| *n += 1)>
                                        "Try again"
                                    </button>
                                </div>
                            }
                                .into_any()
                        }
                    }
                })
            }}
        </Suspense>
    }
}

/// Which view the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// What Tether is for, the profiles, a one-click comparison.
    Overview,
    Chat,
    Agent,
}

impl View {
    pub const ALL: [View; 3] = [View::Overview, View::Chat, View::Agent];

    fn id(self) -> &'static str {
        match self {
            View::Overview => "overview",
            View::Chat => "chat",
            View::Agent => "agent",
        }
    }

    fn label(self) -> &'static str {
        match self {
            View::Overview => "Overview",
            View::Chat => "Chat",
            View::Agent => "Agent",
        }
    }

    fn tagline(self) -> &'static str {
        match self {
            View::Overview => {
                "The Responses API's WebSocket mode, end to end: what it saves an agent, run from \
                 this page against this server — a simulated model, an emulated link, and a hosted \
                 API's costs modelled when you choose them."
            }
            View::Chat => {
                "One prompt over one WebSocket: the simulated model streams its answer token by \
                 token."
            }
            View::Agent => {
                "An agent loop in the page: the simulated model's tool calls run in a sandbox \
                 here, over WebSocket mode or HTTP."
            }
        }
    }
}

/// Removes the entry page's loading notice (`#boot` in `index.html`): the app is drawn.
fn remove_boot_notice() {
    if let Some(boot) = document().get_element_by_id("boot") {
        boot.remove();
    }
}

/// The app shell: a header, the view tabs, and the chosen view; or, embedded, the agent view
/// alone. `agent` builds the agent view (by default in place: [`AgentLoader::direct`]).
///
/// The tabs follow the WAI-ARIA tabs pattern: one tab stop (the selected tab), Left/Right and
/// Home/End move between them and select, each names the one panel it controls.
#[component]
pub fn App(#[prop(optional)] agent: AgentLoader) -> impl IntoView {
    let page = PageContext::from_restored(Restored::load());
    remove_boot_notice();
    if page.persist {
        let settings = page.settings;
        let notices = page.notices;
        let quiet = page.quiet;
        // Kept when the user changes something, not on load: URL parameters hold for one load.
        Effect::new(move |first: Option<()>| {
            let json = settings.with(Settings::to_json);
            let the_pages_own = quiet.try_update_value(std::mem::take).unwrap_or(false);
            if first.is_some()
                && !the_pages_own
                && let Err(why) = storage::save(storage::SETTINGS_KEY, &json)
            {
                notices.update(|n| n.push(format!("The settings were not kept: {why}")));
            }
        });
    }
    page.load_models();
    page.check_scenario();
    let embed = page.embed;
    let autorun = page.autorun;
    let notices = page.notices;
    let view = page.view;
    provide_context(page);
    if embed {
        return view! {
            <main class="playground embed" data-testid="embed">
                {agent_view(agent)}
            </main>
        }
        .into_any();
    }
    if !autorun {
        // Fetch the agent's module once the page is up, while the visitor reads: the overview's
        // comparison and the Agent tab need it, and on a slow link it takes seconds.
        set_timeout(agent.preload, std::time::Duration::from_millis(1500));
    }
    let focus_tab = |which: View| {
        focus_id(&format!("tab-{}", which.id()));
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let at = View::ALL
            .iter()
            .position(|v| *v == view.get_untracked())
            .unwrap_or(0);
        let last = View::ALL.len() - 1;
        let next = match ev.key().as_str() {
            "ArrowRight" => (at + 1) % View::ALL.len(),
            "ArrowLeft" => (at + last) % View::ALL.len(),
            "Home" => 0,
            "End" => last,
            _ => return,
        };
        ev.prevent_default();
        view.set(View::ALL[next]);
        focus_tab(View::ALL[next]);
    };
    let tab = move |which: View| {
        // Pointing at or focusing the Agent tab starts fetching its module.
        let preload = move || {
            if which == View::Agent {
                (agent.preload)()
            }
        };
        view! {
            <button
                type="button"
                role="tab"
                class="tab"
                id=format!("tab-{}", which.id())
                data-testid=format!("tab-{}", which.id())
                aria-controls="view-panel"
                aria-selected=move || (view.get() == which).to_string()
                tabindex=move || if view.get() == which { "0" } else { "-1" }
                on:click=move |_| view.set(which)
                on:pointerenter=move |_| preload()
                on:focus=move |_| preload()
            >
                {which.label()}
            </button>
        }
    };
    view! {
        <main class="playground">
            <header>
                <h1>"Tether playground"</h1>
                <p class="tagline">{move || view.get().tagline()}</p>
                <p class="header-links">
                    <a href="docs/">"How WebSocket mode works: the walkthrough, with live demos"</a>
                </p>
            </header>
            <Show when=move || notices.with(|n| !n.is_empty())>
                <ul class="notices" role="status" data-testid="notices">
                    {move || notices.get().into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
                </ul>
            </Show>
            <div class="tabs" role="tablist" aria-label="Views" on:keydown=on_key>
                {View::ALL.map(tab).collect_view()}
            </div>
            <div
                id="view-panel"
                role="tabpanel"
                aria-labelledby=move || format!("tab-{}", view.get().id())
            >
                {move || match view.get() {
                    View::Overview => view! { <Overview /> }.into_any(),
                    View::Chat => view! { <ChatView /> }.into_any(),
                    View::Agent => agent_view(agent).into_any(),
                }}
            </div>
        </main>
    }
    .into_any()
}
