//! The agent view's session and the page's life: leaving the view stops its run, a reload or a
//! navigation keeps a run under way for the next load, and a run asked for before the view
//! opened (the overview's button, `autorun=1`) starts once the page has settled.

use leptos::prelude::*;

use crate::agent::Session;
use crate::components::agent::browser::BrowserPage;
use crate::settings::ModelChoices;

/// The session the view's components share.
pub type SharedSession = StoredValue<Session<BrowserPage>, LocalStorage>;

/// Leaving the view stops its run (the transport closes when the loop returns); a reload or a
/// navigation away (`pagehide`) has the session keep a run under way for the next load.
pub fn tie_to_the_page(session: SharedSession) {
    on_cleanup(move || {
        session.try_with_value(Session::stop);
    });
    let hidden = window_event_listener(leptos::ev::pagehide, move |_| {
        session.try_with_value(Session::page_hidden);
    });
    on_cleanup(move || hidden.remove());
}

/// Runs `start` once the page has settled — the model list answered (or failed) and a frame
/// drawn — so the first turn's timings are not the page's own start-up work (measured: an
/// autorun at the first frame made a WebSocket turn 1 wait ~120–300 ms longer for its first
/// event than the same turn started from an idle page).
pub fn start_when_settled(models: RwSignal<ModelChoices>, start: impl Fn() + Copy + 'static) {
    let started = StoredValue::new(false);
    Effect::new(move |_| {
        let settled = !matches!(models.get(), ModelChoices::Loading);
        if settled && !started.get_value() {
            started.set_value(true);
            request_animation_frame(start);
        }
    });
}
