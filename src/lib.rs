//! The Tether playground: a Leptos (client-side rendered) app that talks to the Tether server and
//! shows where the time went. Two views: **Chat** (one prompt, one WebSocket turn, its answer
//! streaming in) and **Agent** (a Codex-style loop: the model's tool calls run in a sandbox in the
//! page, over WebSocket mode or HTTP, with a per-turn timeline).
//!
//! State and logic live in plain Rust ([`agent`], [`transport`]) that is tested natively; the
//! components in [`components`] only render it.

pub mod agent;
pub mod components;
pub mod js;
pub mod transport;

use leptos::prelude::*;
use tether_protocol::{ClientFrame, ResponseCreate};

use crate::agent::{RunStatus, Turn};
use crate::components::{AgentView, AnswerView};
use crate::transport::ws::{WsClient, responses_url};

/// The model name the playground asks for; the server accepts any.
pub const MODEL: &str = "tether-sim";

/// Milliseconds since the page loaded (`performance.now()`), the clock of every timing shown.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// The protocol (`http:`/`https:`) and host of the server that served this page.
pub fn page_origin() -> Result<(String, String), String> {
    let location = web_sys::window().ok_or("no window")?.location();
    let protocol = location.protocol().map_err(|_| "no location.protocol")?;
    let host = location.host().map_err(|_| "no location.host")?;
    Ok((protocol, host))
}

/// The WebSocket URL of the server that served this page.
fn page_responses_url() -> Result<String, String> {
    let (protocol, host) = page_origin()?;
    Ok(responses_url(&protocol, &host))
}

/// Which view the page shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum View {
    Chat,
    Agent,
}

/// The app shell: a header, the view tabs, and the chosen view.
#[component]
pub fn App() -> impl IntoView {
    let view = RwSignal::new(View::Chat);
    let tab = move |which: View, label: &'static str, test_id: &'static str| {
        view! {
            <button
                type="button"
                role="tab"
                class="tab"
                data-testid=test_id
                aria-selected=move || (view.get() == which).to_string()
                on:click=move |_| view.set(which)
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
                View::Agent => view! { <AgentView /> }.into_any(),
            }}
        </main>
    }
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

    let send = move || {
        let text = prompt.get_untracked();
        if text.trim().is_empty() || turn.with_untracked(|t| t.status == RunStatus::Running) {
            return;
        }
        let connected = client.with_value(|c| c.as_ref().is_some_and(WsClient::is_open));
        if !connected {
            let opened = page_responses_url().and_then(|url| {
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
        let frame = ClientFrame::ResponseCreate(Box::new(ResponseCreate::new(MODEL, text)));
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
