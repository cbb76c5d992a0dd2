//! The Files view: the sandbox's file tree as it is after the latest tool call, the selected
//! file's content, and every change a tool call made with its unified diff. The tree's files are
//! buttons (Tab / Enter), the selection is marked with `aria-current`.

use leptos::prelude::*;

use crate::agent::{FileBody, FileChangeRecord};
use crate::components::RunView;

/// A unified diff with its lines marked as added, removed, hunk header or context.
fn diff_view(diff: &str) -> impl IntoView + use<> {
    diff.lines()
        .map(|line| {
            let class = if line.starts_with("+++") || line.starts_with("---") {
                "diff-file"
            } else if line.starts_with("@@") {
                "diff-hunk"
            } else if line.starts_with('+') {
                "diff-add"
            } else if line.starts_with('-') {
                "diff-del"
            } else {
                "diff-ctx"
            };
            view! { <span class=class>{format!("{line}\n")}</span> }
        })
        .collect_view()
}

fn change_view(change: &FileChangeRecord) -> impl IntoView + use<> {
    let diff = match &change.diff {
        Some(diff) => {
            view! { <pre class="diff" data-testid="diff" tabindex="0">{diff_view(diff)}</pre> }
                .into_any()
        }
        None => view! { <p class="muted">"binary content: no diff"</p> }.into_any(),
    };
    view! {
        <li class="change" data-testid="file-change">
            <div class="change-head">
                <span class=format!("change-kind {}", change.kind_name())>{change.kind_name()}</span>
                <span class="change-path">{change.path.clone()}</span>
                <span class="muted">
                    {format!("turn {} · {} · {}", change.turn, change.tool, change.call_id)}
                </span>
            </div>
            {diff}
        </li>
    }
}

/// The file tree, viewer and change list of `run` (`data-testid="files"`, `file-tree`,
/// `file-view`, `diff`).
#[component]
pub fn FilesView(
    /// The run whose sandbox files to show.
    run: RunView,
) -> impl IntoView {
    let selected = RwSignal::new(None::<String>);
    let files = Memo::new(move |_| run.with(|r| r.files.clone()));
    let rows = Memo::new(move |_| files.with(|f| f.rows()));
    // The log is shared and only grows: copy it out when its length (or the run) changes, not
    // on every publication.
    let change_log = Memo::new(move |_| run.with(|r| (r.changes.clone(), r.changes.len())));
    let changes = Memo::new(move |_| change_log.with(|(log, _)| log.to_vec()));
    let body = move || {
        let path = selected.get()?;
        let body = files.with(|f| f.files.get(&path).cloned());
        Some((path, body))
    };

    view! {
        <section class="files" data-testid="files" aria-label="Sandbox files">
            <div class="files-main">
                <nav class="file-tree" data-testid="file-tree" aria-label="File tree">
                    {move || {
                        rows.with(Vec::is_empty).then(|| {
                            view! {
                                <p class="empty-note" data-testid="files-empty">
                                    "No files yet: the run's project appears here when it starts."
                                </p>
                            }
                        })
                    }}
                    <ul>
                        <For
                            each=move || rows.get()
                            key=|row| (row.path.clone(), row.is_file)
                            children=move |row| {
                                let indent = format!("padding-left: {}rem", row.depth as f64 * 0.9);
                                if row.is_file {
                                    let path = row.path.clone();
                                    let current = row.path.clone();
                                    let changed = row.path.clone();
                                    view! {
                                        <li style=indent>
                                            <button
                                                type="button"
                                                class="file"
                                                class:changed=move || {
                                                    changes.with(|c| c.iter().any(|c| c.path == changed))
                                                }
                                                aria-current=move || {
                                                    (selected.get().as_deref() == Some(current.as_str()))
                                                        .then_some("true")
                                                }
                                                title=row.path.clone()
                                                on:click=move |_| selected.set(Some(path.clone()))
                                            >
                                                {row.name.clone()}
                                            </button>
                                        </li>
                                    }
                                        .into_any()
                                } else {
                                    view! {
                                        <li style=indent class="dir">
                                            {format!("{}/", row.name)}
                                        </li>
                                    }
                                        .into_any()
                                }
                            }
                        />
                    </ul>
                </nav>
                <section
                    class="file-view"
                    data-testid="file-view"
                    aria-live="polite"
                    aria-label="File content"
                    tabindex="0"
                >
                    {move || match body() {
                        None => view! { <p class="muted">"Select a file to see its content."</p> }.into_any(),
                        Some((path, None)) => view! {
                            <p class="muted">{format!("{path} no longer exists.")}</p>
                        }
                            .into_any(),
                        Some((path, Some(body))) => {
                            let content = match &*body {
                                FileBody::Text(text) => text.clone(),
                                FileBody::Binary(size) => format!("(binary, {size} bytes)"),
                            };
                            view! {
                                <h3 class="file-path">{path}</h3>
                                <pre class="file-content">{content}</pre>
                            }
                                .into_any()
                        }
                    }}
                </section>
            </div>
            <h3>"Changes"</h3>
            <Show
                when=move || changes.with(|c| !c.is_empty())
                fallback=move || {
                    // A run kept from an earlier visit has its calls' changes named in the
                    // conversation but not their diffs, which are not kept.
                    let kept = run.with(|r| r.tool_calls().any(|c| !c.changes.is_empty()));
                    let said = if kept {
                        "This run's diffs are not kept between visits: its calls above name what \
                         they changed, and the tree shows the files it left."
                    } else {
                        "No tool call has changed a file yet."
                    };
                    view! { <p class="muted" data-testid="changes-none">{said}</p> }
                }
            >
                <ol class="changes-list">
                    {move || changes.with(|c| c.iter().map(change_view).collect_view())}
                </ol>
            </Show>
        </section>
    }
}
