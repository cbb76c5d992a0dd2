//! The chat view: a prompt form and the streaming answer with its timings, over one WebSocket
//! reused for every prompt.
//!
//! The turn is kept where the socket's reader updates it, and the screen takes it at most once
//! per animation frame ([`FrameBatch`]) — at the end at once — so a fast model's many deltas do
//! not each redraw the answer.

use std::cell::RefCell;
use std::rc::Rc;

use leptos::prelude::*;
use tether_protocol::{ClientFrame, ResponseCreate};

use crate::agent::{FrameBatch, RunStatus, Turn};
use crate::components::AnswerView;
use crate::transport::ws::WsClient;
use crate::{PageContext, now_ms, page_origin_url};

/// The chat view (`data-testid="prompt"`, `send`, and the [`AnswerView`]'s).
#[component]
pub fn ChatView() -> impl IntoView {
    let turn = RwSignal::new(Turn::default());
    // The turn as the reader has it; `turn` is its copy on screen.
    let live = StoredValue::new_local(Rc::new(RefCell::new(Turn::default())));
    let batch = StoredValue::new_local(None::<FrameBatch>);
    let prompt = RwSignal::new(String::from(
        "Why does WebSocket mode make agent loops faster?",
    ));
    let client = StoredValue::new_local(None::<WsClient>);
    let settings = use_context::<PageContext>()
        .unwrap_or_else(PageContext::standalone)
        .settings;

    // Publishes the live turn: now if it is over, else at the next animation frame.
    let changed = move || {
        let over = live.with_value(|t| t.borrow().status != RunStatus::Running);
        batch.with_value(|b| {
            if let Some(b) = b {
                if over { b.flush() } else { b.changed() }
            }
        });
    };
    batch.set_value(Some(FrameBatch::new(
        Box::new(request_animation_frame),
        move || {
            let copy = live.with_value(|t| t.borrow().clone());
            turn.try_set(copy);
        },
    )));
    let set = move |next: Turn| {
        live.with_value(|t| *t.borrow_mut() = next);
        changed();
    };

    let send = move || {
        let text = prompt.get_untracked();
        let busy = live.with_value(|t| t.borrow().status == RunStatus::Running);
        if text.trim().is_empty() || busy {
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
                let endpoint = tether_client::Endpoint::new(&base)
                    .map_err(|error| error.to_string())?
                    .with_api_key(key.trim());
                let reader = live.get_value();
                Ok(WsClient::connect(endpoint, move |incoming| {
                    reader.borrow_mut().on_incoming(incoming, now_ms());
                    changed();
                }))
            });
            match opened {
                Ok(new_client) => client.set_value(Some(new_client)),
                Err(error) => {
                    set(Turn::failed(format!("cannot open the WebSocket: {error}")));
                    return;
                }
            }
        }
        let model = settings.with_untracked(|s| s.profile.clone());
        let frame = ClientFrame::ResponseCreate(Box::new(ResponseCreate::new(model, text)));
        set(Turn::start(now_ms()));
        let sent = client.with_value(|c| match c {
            Some(c) => c.send(frame.to_json()),
            None => Err("not connected".to_string()),
        });
        if let Err(error) = sent {
            live.with_value(|t| t.borrow_mut().fail(format!("cannot send: {error}")));
            changed();
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
                <span id="prompt-hint" class="hint">"Ctrl+Enter sends"</span>
            </form>
            <AnswerView turn=turn />
        </section>
    }
}
