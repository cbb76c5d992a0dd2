//! The event inspector: every frame the agent loop sent and received, in order — direction, time
//! on the run's clock, turn, type — with its JSON pretty-printed on demand, a text filter (type or
//! JSON), a direction filter, "hide deltas" (so a turn's `response.create` and its end are not
//! buried under its deltas), and Copy buttons for one frame or every frame the filter keeps.
//!
//! At thousands of events a second the log is never copied and never fully rendered: the filter
//! only scans frames added since the previous frame ([`FrameFilter`]), and only the newest
//! [`WINDOW`] matching rows are in the DOM, keyed so that rows already shown are not rebuilt. The
//! stored log keeps everything; the note says how much is shown.

use leptos::prelude::*;

use crate::agent::{
    DirectionFilter, Frame, FrameFilter, FrameLog, Precision, format_duration, pretty_json,
};
use crate::components::RunView;

/// Rows in the DOM at most.
pub const WINDOW: usize = 200;

/// Copies and reports the outcome in `status`.
fn copy(text: String, what: String, status: RwSignal<String>) {
    leptos::task::spawn_local(async move {
        let message = match crate::copy_to_clipboard(&text).await {
            Ok(()) => format!("Copied {what}."),
            Err(error) => format!("Could not copy {what}: {error}"),
        };
        status.try_set(message);
    });
}

/// One frame; its time is shown from `start`, when the run sent its first request.
fn frame_row(index: usize, frame: Frame, start: f64, status: RwSignal<String>) -> impl IntoView {
    let expanded = RwSignal::new(false);
    let json = StoredValue::new(frame.json.clone());
    let pretty = StoredValue::new(None::<String>);
    let direction = frame.direction.as_str();
    let label = format!("frame {}, {} {}", index + 1, direction, frame.kind);
    view! {
        <li class=format!("frame frame-{direction}") data-testid="inspector-row">
            <div class="frame-head">
                <span class="frame-dir">{if direction == "sent" { "↑ sent" } else { "↓ received" }}</span>
                <span class="frame-time" title="since the first request">
                    {format!("+{}", format_duration(frame.at_ms - start, Precision::TenthMs))}
                </span>
                <span class="frame-turn">{format!("turn {}", frame.turn)}</span>
                <span class="frame-kind">{frame.kind}</span>
                <button
                    type="button"
                    class="small"
                    aria-expanded=move || expanded.get().to_string()
                    aria-label=format!("JSON of {label}")
                    on:click=move |_| expanded.update(|e| *e = !*e)
                >
                    {move || if expanded.get() { "Hide JSON" } else { "JSON" }}
                </button>
                <button
                    type="button"
                    class="small"
                    aria-label=format!("Copy {label}")
                    on:click=move |_| copy(json.get_value(), format!("frame {}", index + 1), status)
                >
                    "Copy"
                </button>
            </div>
            <Show when=move || expanded.get()>
                <pre class="frame-json" tabindex="0">
                    {move || {
                        if pretty.with_value(Option::is_none) {
                            pretty.set_value(Some(json.with_value(|j| pretty_json(j))));
                        }
                        pretty.get_value().unwrap_or_default()
                    }}
                </pre>
            </Show>
        </li>
    }
}

/// Every frame of `run`, filterable and copyable (`data-testid="inspector"`, rows
/// `inspector-row`, filter box `inspector-filter`).
#[component]
pub fn Inspector(
    /// The run whose frames to list.
    run: RunView,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let direction = RwSignal::new(DirectionFilter::Both);
    let hide_deltas = RwSignal::new(false);
    let status = RwSignal::new(String::new());
    let filter = StoredValue::new(FrameFilter::default());
    let log = Memo::new(move |_| run.with(|r| r.frames.clone()));
    // (indices shown, matching, total): recomputed per published state, scanning new frames only.
    let window = Memo::new(move |_| {
        let log: FrameLog = log.get();
        // Tracks every publication of the run: new frames arrive without a new log.
        run.track();
        let (text, direction, hide) = (text.get(), direction.get(), hide_deltas.get());
        filter.update_value(|f| f.refresh(&log, &text, direction, hide));
        filter.with_value(|f| (f.newest(WINDOW).to_vec(), f.matches(), log.len()))
    });
    let copy_all = move |_| {
        let log = log.get_untracked();
        let frames: Vec<serde_json::Value> = filter.with_value(|f| {
            log.with(|all| {
                f.all()
                    .iter()
                    .map(|&i| {
                        serde_json::from_str(&all[i].json)
                            .unwrap_or_else(|_| serde_json::Value::String(all[i].json.clone()))
                    })
                    .collect()
            })
        });
        let count = frames.len();
        let text = serde_json::to_string_pretty(&frames).unwrap_or_default();
        copy(text, format!("{count} frame(s)"), status);
    };

    view! {
        <section class="inspector" data-testid="inspector" aria-label="Event inspector">
            <div class="inspector-controls">
                <label>
                    "Filter "
                    <input
                        type="search"
                        data-testid="inspector-filter"
                        placeholder="type or JSON text"
                        prop:value=move || text.get()
                        on:input=move |ev| text.set(event_target_value(&ev))
                    />
                </label>
                <label>
                    "Direction "
                    <select
                        data-testid="inspector-direction"
                        prop:value=move || direction.get().as_str()
                        on:change=move |ev| {
                            if let Some(d) = DirectionFilter::parse(&event_target_value(&ev)) {
                                direction.set(d);
                            }
                        }
                    >
                        <option value="both">"sent and received"</option>
                        <option value="sent">"sent"</option>
                        <option value="received">"received"</option>
                    </select>
                </label>
                <label class="check">
                    <input
                        type="checkbox"
                        data-testid="inspector-hide-deltas"
                        prop:checked=move || hide_deltas.get()
                        on:change=move |ev| hide_deltas.set(event_target_checked(&ev))
                    />
                    "Hide deltas"
                </label>
                <button
                    type="button"
                    data-testid="inspector-copy-all"
                    disabled=move || window.with(|(_, matching, _)| *matching == 0)
                    on:click=copy_all
                >
                    "Copy all (filtered)"
                </button>
            </div>
            <p class="inspector-note" data-testid="inspector-count">
                {move || {
                    window
                        .with(|(shown, matching, total)| {
                            if shown.len() < *matching {
                                format!(
                                    "Showing the newest {} of {matching} matching frames ({total} in all).",
                                    shown.len(),
                                )
                            } else {
                                format!("{matching} of {total} frames.")
                            }
                        })
                }}
            </p>
            <p class="inspector-status" role="status" aria-live="polite" data-testid="copy-status">
                {move || status.get()}
            </p>
            <ol class="frames">
                <For
                    each=move || window.get().0
                    key=|index| *index
                    children=move |index| {
                        let frame = log.with_untracked(|log| log.get(index));
                        let start = run
                            .with_untracked(|r| r.turns.first().map(|t| t.first_sent_at()))
                            .unwrap_or_default();
                        frame.map(|frame| frame_row(index, frame, start, status))
                    }
                />
            </ol>
        </section>
    }
}
