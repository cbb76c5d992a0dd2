//! Where the agent view puts the keyboard focus and the window: when a run the user started
//! begins, its buttons at the top of the window, so that its progress — and a comparison's chart
//! right under it — are in sight as it goes; when Run or Stop disables itself, the focus on the
//! button that is now enabled (if the focus was on the other one, or lost) — Stop, in sight; when
//! a comparison the user started is done, its result, scrolled into view, with the focus. A
//! shared link's autorun on its own page counts as started by the user; an embedded demo's
//! autorun never moves either.

use leptos::html;
use leptos::prelude::*;

use crate::agent::{RunStatus, Shown};

/// Moves the focus to `element` without scrolling, if it is there.
fn focus(element: &web_sys::HtmlElement) {
    let options = web_sys::FocusOptions::new();
    options.set_prevent_scroll(true);
    let _ = element.focus_with_options(&options);
}

/// Whether the focus is on `button`, on a control that is disabled (the task while a run goes),
/// or nowhere (on `<body>`, where a disabled control leaves it).
fn focus_on_or_lost(button: NodeRef<html::Button>) -> bool {
    let Some(active) = document().active_element() else {
        return true;
    };
    let on_button = button.get_untracked().is_some_and(|button| {
        let button: &web_sys::Element = &button;
        *button == active
    });
    let disabled = active.matches(":disabled").unwrap_or(false);
    let body = document()
        .body()
        .is_some_and(|body| *AsRef::<web_sys::Element>::as_ref(&body) == active);
    on_button || disabled || body
}

/// Run disables itself when a run starts, Stop when it ends: the focus goes to the other, while
/// `follows` (the user started the run).
pub fn follow_the_buttons(
    status: Memo<RunStatus>,
    run_button: NodeRef<html::Button>,
    stop_button: NodeRef<html::Button>,
    follows: StoredValue<bool>,
) {
    Effect::new(move |was_running: Option<bool>| {
        let now_running = status.get() == RunStatus::Running;
        if was_running.is_some_and(|was| was != now_running) && follows.get_value() {
            let (from, to) = if now_running {
                (run_button, stop_button)
            } else {
                (stop_button, run_button)
            };
            if focus_on_or_lost(from)
                && let Some(to) = to.get_untracked()
            {
                focus(&to);
            }
        }
        now_running
    });
}

/// The share of the window's height the progress line may sit below before a starting run
/// scrolls it up: further down, the chart under it would be out of sight.
const PROGRESS_IN_SIGHT: f64 = 0.4;

/// A run the user started begins: unless its buttons and progress are already near the top of
/// the window, scroll the buttons to the top (the overview's button opens the view at the top of
/// its form, the progress ~900 px further down).
pub fn bring_the_progress(
    status: Memo<RunStatus>,
    controls: NodeRef<html::Div>,
    follows: StoredValue<bool>,
) {
    Effect::new(move |was: Option<RunStatus>| {
        let now = status.get();
        if was.is_some_and(|was| was != RunStatus::Running)
            && now == RunStatus::Running
            && follows.get_value()
            && let Some(controls) = controls.get_untracked()
        {
            let height = window()
                .inner_height()
                .ok()
                .and_then(|h| h.as_f64())
                .unwrap_or(0.0);
            let top = controls.get_bounding_client_rect().top();
            if top < 0.0 || top > height * PROGRESS_IN_SIGHT {
                let options = web_sys::ScrollIntoViewOptions::new();
                options.set_block(web_sys::ScrollLogicalPosition::Start);
                controls.scroll_into_view_with_scroll_into_view_options(&options);
            }
        }
        now
    });
}

/// A comparison's result, once one the user started is done: into view, and the focus on it
/// (its speedup is far below the button). A single run's result is where it streamed.
pub fn bring_the_result(
    status: Memo<RunStatus>,
    shown: RwSignal<Shown>,
    result: NodeRef<html::Div>,
    follows: StoredValue<bool>,
) {
    Effect::new(move |was: Option<RunStatus>| {
        let now = status.get();
        if was == Some(RunStatus::Running)
            && now == RunStatus::Done
            && shown.get_untracked() == Shown::Compare
            && follows.get_value()
            && let Some(result) = result.get_untracked()
        {
            let options = web_sys::ScrollIntoViewOptions::new();
            options.set_block(web_sys::ScrollLogicalPosition::Start);
            result.scroll_into_view_with_scroll_into_view_options(&options);
            focus(&result);
        }
        now
    });
}
