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
pub mod js;
pub mod settings;
pub mod storage;
pub mod transport;

use leptos::prelude::*;
use tether_protocol::{ClientFrame, ResponseCreate};

use crate::agent::{LastRun, RunStatus, Turn};
use crate::components::{AgentView, AnswerView};
use crate::settings::{Settings, ws_responses_url};
use crate::storage::Restored;
use crate::transport::ws::WsClient;
use tether_sandbox::Vfs;

/// What the page was opened with, shared by its views.
#[derive(Clone)]
pub struct PageContext {
    /// The settings every run uses.
    pub settings: RwSignal<Settings>,
    /// Messages about the page's state (unusable storage, bad URL parameters, a reset).
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
}

impl PageContext {
    /// Defaults, kept nowhere: a view mounted on its own (tests).
    pub fn standalone() -> Self {
        PageContext {
            settings: RwSignal::new(Settings::default()),
            notices: RwSignal::new(Vec::new()),
            embed: false,
            autorun: false,
            persist: false,
            last_run: StoredValue::new(None),
            files: StoredValue::new(None),
        }
    }

    /// The page as `localStorage` and the URL say.
    pub fn from_restored(restored: Restored) -> Self {
        let embed = restored.params.embed;
        PageContext {
            settings: RwSignal::new(restored.settings),
            notices: RwSignal::new(restored.notices),
            embed,
            autorun: restored.params.autorun,
            // An embedded demo must not overwrite the visitor's own playground state.
            persist: !embed,
            last_run: StoredValue::new(if embed { None } else { restored.last_run }),
            files: StoredValue::new(if embed { None } else { restored.files }),
        }
    }
}

/// Milliseconds since the page loaded (`performance.now()`), the clock of every timing shown.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
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
enum View {
    Chat,
    Agent,
}

/// The app shell: a header, the view tabs, and the chosen view; or, embedded, the agent view
/// alone. `agent` builds the agent view (by default in place: [`AgentLoader::direct`]).
#[component]
pub fn App(#[prop(optional)] agent: AgentLoader) -> impl IntoView {
    let page = PageContext::from_restored(Restored::load());
    if page.persist {
        let settings = page.settings;
        let notices = page.notices;
        // Kept when the user changes something, not on load: URL parameters hold for one load.
        Effect::new(move |first: Option<()>| {
            let json = settings.with(Settings::to_json);
            if first.is_some()
                && let Err(why) = storage::save(storage::SETTINGS_KEY, &json)
            {
                notices.update(|n| n.push(format!("The settings were not kept: {why}")));
            }
        });
    }
    let embed = page.embed;
    let autorun = page.autorun;
    provide_context(page);
    if embed {
        return view! {
            <main class="playground embed" data-testid="embed">
                {agent_view(agent)}
            </main>
        }
        .into_any();
    }
    let view = RwSignal::new(if autorun { View::Agent } else { View::Chat });
    let tab = move |which: View, label: &'static str, test_id: &'static str| {
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
                data-testid=test_id
                aria-selected=move || (view.get() == which).to_string()
                on:click=move |_| view.set(which)
                on:pointerenter=move |_| preload()
                on:focus=move |_| preload()
            >
                {label}
            </button>
        }
    };
    view! {
        <main class="playground">
            <header>
                <h1>"Tether playground"</h1>
                <p class="tagline">
                    {move || match view.get() {
                        View::Chat => {
                            "One prompt, one WebSocket turn: the server streams its answer token by token."
                        }
                        View::Agent => {
                            "An agent loop in the page: the model's tool calls run in a sandbox here, over WebSocket or HTTP."
                        }
                    }}
                </p>
            </header>
            <nav class="tabs" role="tablist">
                {tab(View::Chat, "Chat", "tab-chat")} {tab(View::Agent, "Agent", "tab-agent")}
            </nav>
            {move || match view.get() {
                View::Chat => view! { <ChatView /> }.into_any(),
                View::Agent => agent_view(agent).into_any(),
            }}
        </main>
    }
    .into_any()
}

/// The chat view: a prompt form and the streaming answer with its timings, over one WebSocket
/// reused for every prompt.
#[component]
fn ChatView() -> impl IntoView {
    let turn = RwSignal::new(Turn::default());
    let prompt = RwSignal::new(String::from(
        "Why does WebSocket mode make agent loops faster?",
    ));
    let client = StoredValue::new_local(None::<WsClient>);
    let settings = use_context::<PageContext>()
        .unwrap_or_else(PageContext::standalone)
        .settings;

    let send = move || {
        let text = prompt.get_untracked();
        if text.trim().is_empty() || turn.with_untracked(|t| t.status == RunStatus::Running) {
            return;
        }
        let connected = client.with_value(|c| c.as_ref().is_some_and(WsClient::is_open));
        if !connected {
            let (base, key) = settings.with_untracked(|s| {
                (
                    page_origin_url().and_then(|origin| s.base_url(&origin)),
                    s.api_key.clone(),
                )
            });
            let opened = base.and_then(|base| {
                let url = ws_responses_url(&base, &key);
                WsClient::connect(&url, move |incoming| {
                    turn.update(|t| t.on_incoming(incoming, now_ms()))
                })
            });
            match opened {
                Ok(new_client) => client.set_value(Some(new_client)),
                Err(error) => {
                    turn.set(Turn::failed(format!("cannot open the WebSocket: {error}")));
                    return;
                }
            }
        }
        let model = settings.with_untracked(|s| s.profile.clone());
        let frame = ClientFrame::ResponseCreate(Box::new(ResponseCreate::new(model, text)));
        turn.set(Turn::start(now_ms()));
        let sent = client.with_value(|c| match c {
            Some(c) => c.send(frame.to_json()),
            None => Err("not connected".to_string()),
        });
        if let Err(error) = sent {
            turn.update(|t| t.fail(format!("cannot send: {error}")));
        }
    };

    view! {
        <section class="chat-view">
            <form
                class="prompt"
                on:submit=move |ev| {
                    ev.prevent_default();
                    send();
                }
            >
                <label for="prompt">"Prompt"</label>
                <textarea
                    id="prompt"
                    data-testid="prompt"
                    rows="3"
                    prop:value=move || prompt.get()
                    on:input=move |ev| prompt.set(event_target_value(&ev))
                    on:keydown=move |ev| {
                        if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                            ev.prevent_default();
                            send();
                        }
                    }
                ></textarea>
                <button
                    type="submit"
                    data-testid="send"
                    disabled=move || turn.with(|t| t.status == RunStatus::Running)
                >
                    "Send"
                </button>
                <span class="hint">"Ctrl+Enter sends"</span>
            </form>
            <AnswerView turn=turn />
        </section>
    }
}
