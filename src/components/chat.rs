//! The chat view: a prompt form and the streaming answer with its timings. What the form does —
//! the connection, kept for every prompt, and the turn — is the [`ChatSession`]'s; this renders
//! it, and gives it the page: the WebSocket ([`WsClient`]), `performance.now()`,
//! `requestAnimationFrame` and the answer's signal.

use std::rc::Rc;

use leptos::prelude::*;
use tether_client::Endpoint;

use crate::agent::{
    ChatBrowser, ChatConnection, ChatScreen, ChatSession, ChatTarget, RunStatus, Turn,
};
use crate::components::AnswerView;
use crate::settings::Field;
use crate::transport::ws::{Incoming, WsClient};
use crate::{PageContext, now_ms, page_origin_url};

/// The page as the chat session sees it.
struct ChatPage {
    /// The answer on screen; gone once the view is (its writes are then dropped).
    turn: RwSignal<Turn>,
}

impl ChatConnection for WsClient {
    fn send(&self, text: String) -> Result<(), String> {
        WsClient::send(self, text)
    }

    fn is_open(&self) -> bool {
        WsClient::is_open(self)
    }
}

impl ChatBrowser for ChatPage {
    fn connect(
        &self,
        endpoint: Endpoint,
        deliver: Box<dyn Fn(Incoming)>,
    ) -> Box<dyn ChatConnection> {
        Box::new(WsClient::connect(endpoint, deliver))
    }

    fn now_ms(&self) -> f64 {
        now_ms()
    }

    fn next_frame(&self, frame: Box<dyn FnOnce()>) {
        request_animation_frame(frame);
    }
}

impl ChatScreen for ChatPage {
    fn show(&self, turn: Turn) {
        self.turn.try_set(turn);
    }
}

/// The chat view (`data-testid="prompt"`, `send`, and the [`AnswerView`]'s).
#[component]
pub fn ChatView() -> impl IntoView {
    let turn = RwSignal::new(Turn::default());
    let prompt = RwSignal::new(String::from(
        "Why does WebSocket mode make agent loops faster?",
    ));
    let context = use_context::<PageContext>().unwrap_or_else(PageContext::standalone);
    let settings = context.settings;
    let form = context.form();
    let page = Rc::new(ChatPage { turn });
    let session = StoredValue::new_local(ChatSession::new(page.clone(), page));
    // A Server URL the Agent tab holds in error is this view's too: it is said here, and
    // nothing is sent to another server in its place.
    let server_error = move || form.error(Field::ServerUrl);
    let target = move || {
        settings.with(
            |s| match page_origin_url().and_then(|origin| s.base_url(&origin)) {
                Ok(base) => format!("To {base}, model {} (the Agent tab's settings).", s.profile),
                Err(why) => why,
            },
        )
    };

    let send = move || {
        if server_error().is_some() {
            return;
        }
        let target = settings.with_untracked(|s| ChatTarget {
            base: page_origin_url().and_then(|origin| s.base_url(&origin)),
            api_key: s.api_key.clone(),
            model: s.profile.clone(),
        });
        session.with_value(|session| session.send(&prompt.get_untracked(), target));
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
                    aria-describedby="prompt-hint"
                    prop:value=move || prompt.get()
                    on:input=move |ev| prompt.set(event_target_value(&ev))
                    on:keydown=move |ev| {
                        if ev.key() == "Enter" && (ev.ctrl_key() || ev.meta_key()) {
                            ev.prevent_default();
                            send();
                        }
                    }
                ></textarea>
                // aria-disabled, not disabled: a disabled button would drop the focus to <body>
                // while the answer streams (a second send is ignored until it is done).
                <button
                    type="submit"
                    data-testid="send"
                    aria-disabled=move || turn.with(|t| t.status == RunStatus::Running).to_string()
                >
                    "Send"
                </button>
                // A send while the answer streams is not taken: the hint says so, and the
                // prompt stays in the box.
                <span id="prompt-hint" class="hint" data-testid="prompt-hint">
                    {move || {
                        if turn.with(|t| t.status == RunStatus::Running) {
                            // Short: one line on a phone, as the hint it replaces.
                            "Streaming: Send works again once it is done."
                        } else {
                            "Ctrl+Enter sends"
                        }
                    }}
                </span>
            </form>
            <p class="hint" data-testid="chat-target">{target}</p>
            {move || {
                server_error()
                    .map(|error| {
                        view! {
                            <p class="error" role="alert" data-testid="chat-blocked">
                                {format!(
                                    "Nothing is sent until the Agent tab's Server URL is fixed: {error}"
                                )}
                            </p>
                        }
                    })
            }}
            <AnswerView turn=turn />
        </section>
    }
}
