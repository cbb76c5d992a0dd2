//! The agent session's page in the browser: WebSocket-mode and HTTP transports, a sandbox whose
//! `node` runs in a Web Worker, `performance.now()`, `requestAnimationFrame`, `localStorage`, and
//! the views the session writes to and the components render.

use leptos::prelude::*;
use tether_sandbox::{Sandbox, Vfs};

use crate::agent::{
    Browser, Comparison, ContinuationMode, Endpoint, FileSnapshot, LastRun, Memory, RunStatus,
    Screen, SharedRun, Shown,
};
use crate::components::RunView;
use crate::js::WorkerRuntime;
use crate::settings::{Inputs, Settings};
use crate::storage;
use crate::transport::http::HttpTransport;
use crate::transport::ws::WsTransport;
use crate::transport::{self, Transport};

/// The page as the agent view's session sees it. The view's own signals may be gone (a tab
/// switch) while a run winds down: writes to them are then dropped.
#[derive(Clone, Copy)]
pub struct BrowserPage {
    pub shown: RwSignal<Shown>,
    /// The single run; in a comparison, the leg under way (its files and events).
    pub run: RunView,
    /// The latest run of each leg of a comparison.
    pub ws: RunView,
    pub http: RunView,
    pub long_running: RunView,
    /// The leg [`Screen::refresh`] refreshes besides `run`, if any.
    pub live_leg: StoredValue<Option<ContinuationMode>>,
    pub comparison: RwSignal<Comparison>,
    pub settings: RwSignal<Settings>,
    /// What was typed into them: a reset drops it with them.
    pub inputs: RwSignal<Inputs>,
    pub notices: RwSignal<Vec<String>>,
    pub files: StoredValue<Option<Vfs>>,
    pub last_run: StoredValue<Option<LastRun>>,
}

impl BrowserPage {
    /// The page's views as the agent view opens: what it showed last (the last run, or the
    /// comparison with each leg's latest run), or nothing yet.
    pub fn opening(page: &crate::PageContext) -> BrowserPage {
        let opening = page
            .last_run
            .with_value(|last| Shown::restore(last.as_ref()));
        // In a comparison the details follow the leg that ran last.
        let mut followed = match opening.comparison.legs.last() {
            Some(leg) if opening.shown == Shown::Compare => opening.leg(leg.mode).clone(),
            _ => opening.run.clone(),
        };
        // A kept run comes back without its file tree (the snapshot keeps the conversation);
        // the files it left are kept apart: the Files view shows them, as before the reload.
        if followed.status != RunStatus::Idle
            && followed.files.files.is_empty()
            && let Some(files) = page.files.with_value(|f| f.as_ref().map(FileSnapshot::of))
        {
            followed.files = std::sync::Arc::new(files);
        }
        BrowserPage {
            shown: RwSignal::new(opening.shown),
            run: RunView::new(followed),
            ws: RunView::new(opening.ws.clone()),
            http: RunView::new(opening.http.clone()),
            long_running: RunView::new(opening.long_running.clone()),
            live_leg: StoredValue::new(None),
            comparison: RwSignal::new(opening.comparison),
            settings: page.settings,
            inputs: page.inputs,
            notices: page.notices,
            files: page.files,
            last_run: page.last_run,
        }
    }

    /// The status of what is shown: the single run's, or the whole comparison's.
    pub fn status(&self) -> Memo<crate::agent::RunStatus> {
        let (shown, run, comparison) = (self.shown, self.run, self.comparison);
        Memo::new(move |_| match shown.get() {
            Shown::Single => run.with(|r| r.status),
            Shown::Compare => comparison.with(Comparison::status),
        })
    }

    /// The view of the leg of `mode`.
    pub fn leg(&self, mode: ContinuationMode) -> RunView {
        match mode {
            ContinuationMode::WebSocket => self.ws,
            ContinuationMode::LongRunning => self.long_running,
            _ => self.http,
        }
    }
}

impl Browser for BrowserPage {
    fn open_transport(
        &self,
        mode: ContinuationMode,
        endpoint: &Endpoint,
        api_key: &str,
    ) -> Result<Box<dyn Transport>, String> {
        // Both legs ask for the same conditions the same way: on the URL of the upgrade, of
        // every request, and of the model list that warms HTTP or explains a failed upgrade.
        let client = transport::client::endpoint(&endpoint.base, api_key, &endpoint.conditions)
            .map_err(|error| error.to_string())?;
        Ok(match mode {
            ContinuationMode::WebSocket => Box::new(WsTransport::new(client)),
            ContinuationMode::LongRunning => Box::new(WsTransport::new(
                transport::client::with_append_beta(client),
            )),
            ContinuationMode::HttpChained | ContinuationMode::HttpStateless => {
                Box::new(HttpTransport::new(client))
            }
        })
    }

    fn sandbox(&self, files: Vfs) -> Sandbox {
        Sandbox::new(files).with_js_runtime(Box::new(WorkerRuntime))
    }

    fn now_ms(&self) -> f64 {
        crate::now_ms()
    }

    fn random_u32(&self) -> u32 {
        (js_sys::Math::random() * f64::from(u32::MAX)) as u32
    }

    fn next_frame(&self, frame: Box<dyn FnOnce()>) {
        request_animation_frame(frame);
    }
}

impl Memory for BrowserPage {
    fn files(&self) -> Option<Vfs> {
        self.files.try_get_value().flatten()
    }

    fn keep_files(&self, files: Option<Vfs>) {
        self.files.try_set_value(files);
    }

    fn keep_last_run(&self, last: Option<LastRun>) {
        self.last_run.try_set_value(last);
    }

    fn store(&self, key: &str, json: &str) -> Result<(), String> {
        storage::save(key, json)
    }

    fn remove(&self, key: &str) {
        storage::remove(key);
    }

    fn clear_store(&self) {
        storage::clear();
    }
}

impl Screen for BrowserPage {
    fn show(&self, shown: Shown) {
        self.shown.try_set(shown);
    }

    fn show_run(&self, run: &SharedRun) {
        self.live_leg.try_set_value(None);
        self.run.attach(run);
    }

    fn show_leg(&self, mode: ContinuationMode, run: &SharedRun) {
        self.live_leg.try_set_value(Some(mode));
        self.leg(mode).attach(run);
        self.run.attach(run);
    }

    fn refresh(&self) {
        self.run.changed();
        if let Some(mode) = self.live_leg.try_get_value().flatten() {
            self.leg(mode).changed();
        }
    }

    fn show_comparison(&self, comparison: &Comparison) {
        self.comparison.try_set(comparison.clone());
    }

    fn notice(&self, message: String) {
        self.notices.try_update(|n| n.push(message));
    }

    fn clear_notices(&self) {
        self.notices.try_set(Vec::new());
    }

    fn show_settings(&self, settings: Settings) {
        self.settings.try_set(settings);
        self.inputs.try_set(Inputs::default());
    }
}
