//! The agent's conversation: the task, the assistant's text, the input the run was steered with,
//! and each tool call with its arguments and, once the sandbox ran it, its output in a
//! terminal-style block.
//!
//! It is collapsible and sits in a box of fixed height that scrolls: however much a run's tools
//! print, the conversation never pushes what is below it (nor, on a phone, keeps the timeline
//! out of reach). Every block that may scroll takes the keyboard focus.

use leptos::prelude::*;

use crate::agent::{CallKind, Entry, Precision, ToolCallEntry, format_duration};
use crate::components::RunView;

/// What an entry is: its DOM is built once per shape, and what streams into it is bound to its
/// text — so a growing answer or arguments update one text node, not rebuild the entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Task,
    Assistant,
    Call,
    Steer,
}

impl Shape {
    fn of(entry: &Entry) -> Shape {
        match entry {
            Entry::Task(_) => Shape::Task,
            Entry::Assistant(_) => Shape::Assistant,
            Entry::ToolCall(_) => Shape::Call,
            Entry::Steer(_) => Shape::Steer,
        }
    }
}

/// An entry's memo.
type EntryMemo = Memo<Option<Entry>>;

/// Reads the tool call of `entry`.
fn with_call<R: Default>(entry: EntryMemo, read: impl FnOnce(&ToolCallEntry) -> R) -> R {
    entry.with(|e| match e {
        Some(Entry::ToolCall(call)) => read(call),
        _ => R::default(),
    })
}

fn tool_call_view(entry: EntryMemo) -> impl IntoView {
    // What a call is never changes once it began.
    let (name, call_id, kind) = entry.with_untracked(|e| match e {
        Some(Entry::ToolCall(call)) => (call.name.clone(), call.call_id.clone(), call.kind),
        _ => (String::new(), String::new(), CallKind::Function),
    });
    let kind = match kind {
        CallKind::Function => "function call",
        CallKind::Custom => "custom tool call",
    };
    let state = Memo::new(move |_| with_call(entry, |call| call.state()));
    let status_class = move || match state.get() {
        "ok" => "call-status ok",
        "failed" => "call-status bad",
        "stopped" => "call-status stopped",
        _ => "call-status pending",
    };
    let timing = move || {
        with_call(entry, |call| {
            call.tool_ms
                .map(|ms| format_duration(ms, Precision::TenthMs))
                .unwrap_or_default()
        })
    };
    let output = Memo::new(move |_| with_call(entry, |call| call.output.clone()));
    let changes = Memo::new(move |_| with_call(entry, |call| call.changes.join(", ")));
    view! {
        <li class="entry tool-call" data-testid="tool-call" data-state=move || state.get()>
            <div class="call-head">
                <span class="call-name" data-testid="tool-name">{name}</span>
                <span class="call-kind">{kind}</span>
                <span class="call-id">{call_id}</span>
                <span class=status_class data-testid="tool-state">{move || state.get()}</span>
                <span class="call-time">{timing}</span>
            </div>
            <pre class="arguments" data-testid="tool-arguments" tabindex="0">
                {move || with_call(entry, |call| call.arguments.clone())}
            </pre>
            {move || {
                output
                    .get()
                    .map(|output| {
                        view! { <pre class="terminal" data-testid="tool-output" tabindex="0">{output}</pre> }
                    })
            }}
            {move || {
                let changes = changes.get();
                (!changes.is_empty()).then(|| view! { <p class="changes">"Changed: " {changes}</p> })
            }}
        </li>
    }
}

fn entry_view(shape: Shape, entry: EntryMemo) -> AnyView {
    let text = move || {
        entry.with(|e| match e {
            Some(Entry::Task(text) | Entry::Assistant(text) | Entry::Steer(text)) => text.clone(),
            _ => String::new(),
        })
    };
    match shape {
        Shape::Task => view! {
            <li class="entry task">
                <span class="who">"Task"</span>
                <p>{text}</p>
            </li>
        }
        .into_any(),
        Shape::Assistant => view! {
            <li class="entry assistant">
                <span class="who">"Assistant"</span>
                <p data-testid="assistant-text">{text}</p>
            </li>
        }
        .into_any(),
        Shape::Steer => view! {
            <li class="entry steer" data-testid="steer-entry">
                <span class="who">"Steer (user, accepted by the server)"</span>
                <p>{text}</p>
            </li>
        }
        .into_any(),
        Shape::Call => tool_call_view(entry).into_any(),
    }
}

/// Renders every entry of `run`, streaming text and arguments as they grow. Entries are keyed by
/// position and each re-renders only when it changed, so while one entry streams the others keep
/// their DOM (and their scroll position and focus).
#[component]
pub fn Conversation(
    /// The run whose conversation to show.
    run: RunView,
    /// Whether it starts open.
    #[prop(optional)]
    closed: bool,
    /// What the box is called, e.g. "Conversation of the WebSocket leg".
    #[prop(optional, into)]
    label: Option<String>,
) -> impl IntoView {
    let count = Memo::new(move |_| run.with(|r| r.entries.len()));
    let label = label.unwrap_or_else(|| "Conversation".to_string());
    let summary = label.clone();
    view! {
        <details class="conversation-details" open=!closed>
            <summary>
                {summary} " (" {move || count.get()} " entries)"
            </summary>
            <div class="conversation-box" role="region" aria-label=label tabindex="0">
                {move || {
                    (count.get() == 0).then(|| {
                        view! {
                            <p class="empty-note" data-testid="conversation-empty">
                                "Nothing yet: the task, the model's answers and its tool calls \
                                 appear here as the run goes."
                            </p>
                        }
                    })
                }}
                <ol class="conversation" data-testid="conversation">
                    <For
                        each=move || 0..count.get()
                        key=|index| *index
                        children=move |index| {
                            // The previous entry is kept (not copied again) while it is unchanged.
                            let entry = Memo::new_owning(move |previous: Option<Option<Entry>>| {
                                run.with(|r| {
                                    let now = r.entries.get(index);
                                    match previous {
                                        Some(previous) if previous.as_ref() == now => (previous, false),
                                        _ => (now.cloned(), true),
                                    }
                                })
                            });
                            let shape = Memo::new(move |_| entry.with(|e| e.as_ref().map(Shape::of)));
                            move || shape.get().map(|shape| entry_view(shape, entry))
                        }
                    />
                </ol>
            </div>
        </details>
    }
}
