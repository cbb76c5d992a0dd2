//! The agent's conversation: the task, the assistant's text, and each tool call with its
//! arguments and, once the sandbox ran it, its output in a terminal-style block.

use leptos::prelude::*;

use crate::agent::{AgentRun, CallKind, Entry, Precision, ToolCallEntry, format_duration};

fn tool_call_view(call: &ToolCallEntry) -> impl IntoView + use<> {
    let kind = match call.kind {
        CallKind::Function => "function call",
        CallKind::Custom => "custom tool call",
    };
    let (status, status_class) = match call.success {
        None => ("running", "call-status pending"),
        Some(true) => ("ok", "call-status ok"),
        Some(false) => ("failed", "call-status bad"),
    };
    let timing = call
        .tool_ms
        .map(|ms| format_duration(ms, Precision::TenthMs))
        .unwrap_or_default();
    let changes = call.changes.join(", ");
    view! {
        <li class="entry tool-call" data-testid="tool-call">
            <div class="call-head">
                <span class="call-name" data-testid="tool-name">{call.name.clone()}</span>
                <span class="call-kind">{kind}</span>
                <span class="call-id">{call.call_id.clone()}</span>
                <span class=status_class>{status}</span>
                <span class="call-time">{timing}</span>
            </div>
            <pre class="arguments" data-testid="tool-arguments">{call.arguments.clone()}</pre>
            {call.output.clone().map(|output| {
                view! { <pre class="terminal" data-testid="tool-output">{output}</pre> }
            })}
            {(!changes.is_empty()).then(|| view! { <p class="changes">"Changed: " {changes}</p> })}
        </li>
    }
}

fn entry_view(entry: &Entry) -> AnyView {
    match entry {
        Entry::Task(text) => view! {
            <li class="entry task">
                <span class="who">"Task"</span>
                <p>{text.clone()}</p>
            </li>
        }
        .into_any(),
        Entry::Assistant(text) => view! {
            <li class="entry assistant">
                <span class="who">"Assistant"</span>
                <p data-testid="assistant-text">{text.clone()}</p>
            </li>
        }
        .into_any(),
        Entry::ToolCall(call) => tool_call_view(call).into_any(),
    }
}

/// Renders every entry of `run`, streaming text and arguments as they grow. Entries are keyed by
/// position and each re-renders only when it changed, so while one entry streams the others keep
/// their DOM (and their scroll position and focus).
#[component]
pub fn Conversation(
    /// The run whose conversation to show.
    #[prop(into)]
    run: Signal<AgentRun>,
) -> impl IntoView {
    let count = Memo::new(move |_| run.with(|r| r.entries.len()));
    view! {
        <ol class="conversation" data-testid="conversation">
            <For
                each=move || 0..count.get()
                key=|index| *index
                children=move |index| {
                    let entry = Memo::new(move |_| run.with(|r| r.entries.get(index).cloned()));
                    move || entry.with(|e| e.as_ref().map(entry_view))
                }
            />
        </ol>
    }
}
