//! The agent view's session: what Run does — one run over the chosen transport, or a comparison:
//! both legs, warmed, alternated over the repetitions, each from a fresh sample project
//! ([`super::compare`]) — what Stop and Reset do, what the page keeps of a run and when, and what
//! a page closed mid-run leaves for its next load.
//!
//! The browser's part comes in through three small traits, so the session runs natively in tests
//! against replayed transports: [`Browser`] (transports, the sandbox with its JavaScript runtime,
//! the clock, animation frames), [`Memory`] (what the page keeps while it is open and in
//! `localStorage`) and [`Screen`] (what the view shows). The agent view implements them over its
//! signals and only renders.
//!
//! The screen reads a run where the loop keeps it ([`SharedRun`]): a run streaming thousands of
//! events a second is neither copied per event nor per frame; the session only says, at most once
//! per animation frame, that it changed ([`Screen::refresh`]).

use std::cell::RefCell;
use std::rc::Rc;

use futures::future::{LocalBoxFuture, select};
use tether_sandbox::{Sandbox, Vfs, long_task_project, sample_project};

use crate::agent::compare::{LegSummary, WARM_UP};
use crate::agent::frame_batch::FrameBatch;
use crate::agent::frames::{Direction, Frame};
use crate::agent::steer::{record_sent, steer_frame, steer_target};
use crate::agent::{
    Agent, AgentConfig, AgentRun, Comparison, ContinuationMode, LastRun, RunSnapshot, RunStatus,
    SharedRun, Shown, StopSignal, StoredLeg, run_agent_shared,
};
use crate::conditions::{ApiCosts, Conditions};
use crate::settings::{Settings, TaskLength};
use crate::storage::{FILES_KEY, INTERRUPTED_KEY, LAST_RUN_KEY};
use crate::transport::{SideChannel, Transport};

/// The notice a reset leaves.
const RESET_NOTICE: &str =
    "Reset: the settings, the files and the last run are back to their defaults.";

/// What warms the sandbox's JavaScript runtime before a leg's clock starts: the first `node` of
/// a page starts its first Web Worker, measured at 41–62 ms against 20–28 ms for later ones.
const WARM_UP_COMMAND: &str = "node -e 0";

/// Where a run's requests go (`http://host:port`), and the conditions they ask the server for.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    pub base: String,
    pub conditions: Conditions,
}

/// What a run needs from the browser.
pub trait Browser {
    /// Opens the transport `mode` runs on, against the server at `endpoint`, asking for its
    /// conditions.
    fn open_transport(
        &self,
        mode: ContinuationMode,
        endpoint: &Endpoint,
        api_key: &str,
    ) -> Result<Box<dyn Transport>, String>;

    /// A sandbox over `files`, with the page's JavaScript runtime.
    fn sandbox(&self, files: Vfs) -> Sandbox;

    /// Milliseconds on the clock every timing is measured by.
    fn now_ms(&self) -> f64;

    /// A random number (each run's prompt-cache key is made of one).
    fn random_u32(&self) -> u32;

    /// Runs `frame` at the next animation frame.
    fn next_frame(&self, frame: Box<dyn FnOnce()>);
}

/// What the page keeps of its runs: the last run and the files it left, for as long as the page
/// is open (switching tabs rebuilds the view), and in `localStorage` for the next visit.
pub trait Memory {
    /// The files the last run left, if the page has them.
    fn files(&self) -> Option<Vfs>;

    /// Keeps `files` (`None`: forgets them) while the page is open.
    fn keep_files(&self, files: Option<Vfs>);

    /// Keeps `last` (`None`: forgets it) while the page is open.
    fn keep_last_run(&self, last: Option<LastRun>);

    /// Stores `json` under `key` in `localStorage`; the error says why it could not.
    fn store(&self, key: &str, json: &str) -> Result<(), String>;

    /// Forgets what `localStorage` holds under `key`.
    fn remove(&self, key: &str);

    /// Forgets everything the page stored in `localStorage`.
    fn clear_store(&self);
}

/// What the session changes on screen.
pub trait Screen {
    /// Shows a single run or a comparison.
    fn show(&self, shown: Shown);

    /// The single run the status line, the conversation and the timeline follow, where the loop
    /// keeps it.
    fn show_run(&self, run: &SharedRun);

    /// The run a comparison shows for `mode`: its latest repetition.
    fn show_leg(&self, mode: ContinuationMode, run: &SharedRun);

    /// The run under way changed: at most once per animation frame while it streams, and at
    /// once when it ends.
    fn refresh(&self);

    /// The comparison's legs as they stand, when one starts or ends.
    fn show_comparison(&self, comparison: &Comparison);

    /// Adds `message` to the page's notices.
    fn notice(&self, message: String);

    /// Empties the page's notices.
    fn clear_notices(&self);

    /// Puts the settings form at `settings`.
    fn show_settings(&self, settings: Settings);
}

/// A run that failed before its first request.
fn failed_run(error: String) -> AgentRun {
    AgentRun {
        status: RunStatus::Failed,
        error: Some(error),
        ..AgentRun::default()
    }
}

/// A run that has started but not reported yet (so the status says running at once).
fn starting_run() -> AgentRun {
    AgentRun {
        status: RunStatus::Running,
        ..AgentRun::default()
    }
}

/// A leg the comparison was stopped before.
fn stopped_run() -> AgentRun {
    AgentRun {
        status: RunStatus::Stopped,
        ..AgentRun::default()
    }
}

/// The profile a comparison's warm-up runs on: the model takes no time, so warming the page,
/// the connections and the server's code costs seconds, not the task's full length again. The
/// warm-up also asks for `local` API costs: a modelled service is a wait, which warms nothing.
pub const WARM_UP_PROFILE: &str = "instant";

/// What one leg runs: the settings' model (or `profile`: a warm-up's [`WARM_UP_PROFILE`], a
/// sweep point's), turn limit and scenario over `mode`, with a prompt-cache key of its own
/// (`cache_key`), so that every run
/// starts with the engine's prompt cache cold, as every other did: without it the leg that ran
/// first would prefill what the legs after it find cached.
fn leg_config(
    settings: &Settings,
    mode: ContinuationMode,
    profile: Option<&str>,
    cache_key: String,
) -> AgentConfig {
    let profile = profile.unwrap_or(settings.profile.trim());
    let mut config = AgentConfig::new(profile, mode);
    config.max_turns = settings.run_max_turns();
    config.scenario = settings.run_scenario();
    config.prompt_cache_key = Some(cache_key);
    config
}

/// The files a run starts from when it does not keep the last run's: the task's own project.
fn fresh_project(settings: &Settings) -> Vfs {
    match settings.task_length {
        TaskLength::Short => sample_project(),
        TaskLength::Long => long_task_project(),
    }
}

/// Which run a leg is: a single run, or a comparison's leg in a repetition ([`WARM_UP`] for
/// its warm-up).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LegOf {
    Single,
    Compared(usize),
}

/// A comparison under way: its legs so far, as summaries and as runs.
struct Compared {
    comparison: Comparison,
    /// Every leg that started, in order: its repetition, its mode, its state.
    runs: Vec<(usize, ContinuationMode, SharedRun)>,
}

impl Compared {
    /// The latest run of `mode`, as the page keeps it.
    fn snapshot(&self, mode: ContinuationMode) -> RunSnapshot {
        match self.runs.iter().rev().find(|(_, m, _)| *m == mode) {
            Some((_, _, run)) => run.with(RunSnapshot::of),
            None => RunSnapshot::of(&AgentRun::default()),
        }
    }

    /// The comparison as it stands — a leg under way as the loop has it — as the page keeps it.
    fn last_run(&self) -> LastRun {
        let [ws, http] = Comparison::MODES;
        let long_running = ContinuationMode::LongRunning;
        LastRun::Compare {
            ws: self.snapshot(ws),
            http: self.snapshot(http),
            long_running: self
                .comparison
                .has_long_running()
                .then(|| Box::new(self.snapshot(long_running))),
            repetitions: Some(self.comparison.repetitions),
            legs: self
                .runs
                .iter()
                .map(|(repetition, mode, run)| run.with(|r| StoredLeg::of(*mode, *repetition, r)))
                .collect(),
            sweep: self.comparison.sweep.clone(),
        }
    }
}

/// The run under way.
struct Live {
    stop: StopSignal,
    /// The leg the loop is running and its state as the loop keeps it; `None` between a
    /// comparison's legs.
    leg: Option<SharedRun>,
    /// `None` for a single run.
    compared: Option<Compared>,
    /// Where a steer is sent: the connection of the leg under way, if it has one.
    channel: Option<Rc<dyn SideChannel>>,
}

impl Live {
    /// Where the run under way stands, in words: `a comparison, leg 3 of 8 (HTTP stateless,
    /// repetition 1): turn 2`, `a run, at turn 4`.
    fn where_cut(&self) -> String {
        let turns = self
            .leg
            .as_ref()
            .map_or(0, |leg| leg.with(|r| r.turns.len()));
        match &self.compared {
            Some(compared) if compared.comparison.is_sweep() => {
                format!("a sweep, {}", compared.comparison.progress(turns, None).1)
            }
            Some(compared) => {
                format!(
                    "a comparison, {}",
                    compared.comparison.progress(turns, None).1
                )
            }
            None => format!("a run, at turn {turns}"),
        }
    }

    /// The run as it stands, as the page keeps it.
    fn last_run(&self) -> LastRun {
        match (&self.compared, &self.leg) {
            (Some(compared), _) => compared.last_run(),
            (None, Some(shared)) => LastRun::Single {
                run: shared.with(RunSnapshot::of),
            },
            (None, None) => LastRun::Single {
                run: RunSnapshot::of(&starting_run()),
            },
        }
    }
}

/// One agent view's runs, on the page `P`. Clones share the session.
pub struct Session<P> {
    page: Rc<P>,
    /// Whether runs and files go to `localStorage` (an embedded page keeps nothing).
    persist: bool,
    live: Rc<RefCell<Option<Live>>>,
}

impl<P> Clone for Session<P> {
    fn clone(&self) -> Self {
        Session {
            page: self.page.clone(),
            persist: self.persist,
            live: self.live.clone(),
        }
    }
}

impl<P: Browser + Memory + Screen + 'static> Session<P> {
    pub fn new(page: Rc<P>, persist: bool) -> Self {
        Session {
            page,
            persist,
            live: Rc::default(),
        }
    }

    /// Whether a run is under way.
    pub fn is_running(&self) -> bool {
        self.live.borrow().is_some()
    }

    /// Run: starts a run of `settings` (against the server at `page_origin` unless the settings
    /// name another) and returns it, to be driven to its end; `None` when nothing starts — a run
    /// is under way, there is no task, or the server URL or the link is unusable (then the view
    /// says so).
    pub fn start(
        &self,
        settings: Settings,
        page_origin: &str,
    ) -> Option<LocalBoxFuture<'static, ()>> {
        self.begin(settings, page_origin, None)
    }

    /// Sweep: WebSocket mode against HTTP stateless on each of `profiles` in turn, under the
    /// settings' task, link and API costs ([`Comparison::sweep`]); otherwise as
    /// [`Session::start`].
    pub fn start_sweep(
        &self,
        settings: Settings,
        page_origin: &str,
        profiles: &[&str],
    ) -> Option<LocalBoxFuture<'static, ()>> {
        self.begin(settings, page_origin, Some(Comparison::sweep(profiles)))
    }

    /// [`Session::start`], or with `sweep` a sweep.
    fn begin(
        &self,
        settings: Settings,
        page_origin: &str,
        sweep: Option<Comparison>,
    ) -> Option<LocalBoxFuture<'static, ()>> {
        if self.is_running() || settings.run_task().trim().is_empty() {
            return None;
        }
        let ready = settings
            .base_url(page_origin)
            .and_then(|base| Ok((base, settings.conditions()?)));
        let endpoint = match ready {
            Ok((base, conditions)) => Endpoint { base, conditions },
            Err(error) => {
                self.page.show(Shown::Single);
                self.page.show_run(&SharedRun::new(failed_run(error)));
                return None;
            }
        };
        let stop = StopSignal::new();
        let session = self.clone();
        let mode = settings.transport.mode().filter(|_| sweep.is_none());
        let compared = match mode {
            Some(_) => {
                self.page.show(Shown::Single);
                self.page.show_run(&SharedRun::new(starting_run()));
                None
            }
            None => {
                let comparison = sweep.unwrap_or_else(|| {
                    Comparison::with_long_running(
                        settings.repetitions,
                        settings.compare_long_running,
                    )
                });
                self.page.show(Shown::Compare);
                self.page.show_comparison(&comparison);
                for mode in Comparison::ALL_MODES {
                    self.page.show_leg(mode, &SharedRun::default());
                }
                Some(Compared {
                    comparison,
                    runs: Vec::new(),
                })
            }
        };
        *self.live.borrow_mut() = Some(Live {
            stop: stop.clone(),
            leg: None,
            compared,
            channel: None,
        });
        Some(match mode {
            Some(mode) => {
                let files = settings
                    .keep_files
                    .then(|| self.page.files())
                    .flatten()
                    .unwrap_or_else(|| fresh_project(&settings));
                Box::pin(async move { session.single(mode, settings, endpoint, files, stop).await })
            }
            None => Box::pin(async move { session.compare(settings, endpoint, stop).await }),
        })
    }

    /// Stop: the run under way ends at its next step.
    pub fn stop(&self) {
        if let Some(live) = self.live.borrow().as_ref() {
            live.stop.stop();
        }
    }

    /// Reset: the default settings, no run, the sample project's files, nothing stored. Refused
    /// while a run is under way; returns whether it reset.
    pub fn reset(&self) -> bool {
        if self.is_running() {
            return false;
        }
        self.page.clear_store();
        let defaults = Settings::default();
        self.page
            .show_comparison(&Comparison::new(defaults.repetitions));
        self.page.show_settings(defaults);
        self.page.show(Shown::Single);
        self.page.show_run(&SharedRun::default());
        for mode in Comparison::ALL_MODES {
            self.page.show_leg(mode, &SharedRun::default());
        }
        self.page.keep_files(None);
        self.page.keep_last_run(None);
        self.page.clear_notices();
        self.page.notice(RESET_NOTICE.to_string());
        true
    }

    /// The page is going away (a reload, a navigation: `pagehide`). A run under way would end
    /// without its end being kept: store it as it stands, so the next load shows it, stopped
    /// ([`RunSnapshot::restore`]).
    pub fn page_hidden(&self) {
        if !self.persist {
            return;
        }
        let Some((last, cut)) = self
            .live
            .borrow()
            .as_ref()
            .map(|live| (live.last_run(), live.where_cut()))
        else {
            return;
        };
        // Nothing can be shown any more if this fails: the page is going away.
        let _ = self.page.store(LAST_RUN_KEY, &last.to_json());
        // The next load says the run was cut off, and does not start another by itself.
        let _ = self.page.store(INTERRUPTED_KEY, &cut);
    }

    /// A single run over `mode`; the files it leaves are kept for the next run that keeps them.
    async fn single(
        self,
        mode: ContinuationMode,
        settings: Settings,
        endpoint: Endpoint,
        files: Vfs,
        stop: StopSignal,
    ) {
        let (done, left) = self
            .leg(mode, LegOf::Single, &settings, &endpoint, files, &stop)
            .await;
        if let Some(left) = left {
            self.keep_files(left);
        }
        self.live.borrow_mut().take();
        self.remember(LastRun::Single {
            run: RunSnapshot::of(&done),
        });
    }

    /// A comparison: every planned leg in order, each from a fresh sample project, until one
    /// does not finish.
    async fn compare(self, settings: Settings, endpoint: Endpoint, stop: StopSignal) {
        let plan = {
            let live = self.live.borrow();
            let compared = live.as_ref().and_then(|live| live.compared.as_ref());
            compared.map_or_else(Vec::new, |c| c.comparison.plan())
        };
        for (repetition, mode) in plan {
            if stop.is_stopped() {
                // The leg that would have run next is stopped before it started.
                let stopped = SharedRun::new(stopped_run());
                self.page.show_leg(mode, &stopped);
                self.record_leg(mode, repetition, &stopped);
                break;
            }
            let (done, _) = self
                .leg(
                    mode,
                    LegOf::Compared(repetition),
                    &settings,
                    &endpoint,
                    fresh_project(&settings),
                    &stop,
                )
                .await;
            if done.status != RunStatus::Done {
                break;
            }
        }
        let Some(Live {
            compared: Some(compared),
            ..
        }) = self.live.borrow_mut().take()
        else {
            unreachable!("a comparison under way has its legs");
        };
        self.remember(compared.last_run());
    }

    /// Records where the leg of `mode` in `repetition` stands, and shows the comparison.
    fn record_leg(&self, mode: ContinuationMode, repetition: usize, run: &SharedRun) {
        let comparison = {
            let mut live = self.live.borrow_mut();
            let Some(compared) = live.as_mut().and_then(|live| live.compared.as_mut()) else {
                return;
            };
            match compared
                .runs
                .iter_mut()
                .find(|(r, m, _)| *r == repetition && *m == mode)
            {
                Some((_, _, known)) => *known = run.clone(),
                None => compared.runs.push((repetition, mode, run.clone())),
            }
            compared
                .comparison
                .update(run.with(|state| LegSummary::of(mode, repetition, state)));
            compared.comparison.clone()
        };
        self.page.show_comparison(&comparison);
    }

    /// One run of the loop over `mode` from `files` — a single run, or a repetition's leg of
    /// the comparison; returns its final state and the files it left (none if the transport did
    /// not open). The screen reads the state where the loop keeps it and is told it changed at
    /// most once per animation frame while the run goes, and at once when it ends.
    async fn leg(
        &self,
        mode: ContinuationMode,
        of: LegOf,
        settings: &Settings,
        endpoint: &Endpoint,
        files: Vfs,
        stop: &StopSignal,
    ) -> (AgentRun, Option<Vfs>) {
        let shared = SharedRun::new(starting_run());
        match of {
            LegOf::Single => self.page.show_run(&shared),
            LegOf::Compared(repetition) => {
                self.page.show_leg(mode, &shared);
                self.record_leg(mode, repetition, &shared);
            }
        }
        // From here a page hidden keeps this leg as the loop has it.
        if let Some(live) = self.live.borrow_mut().as_mut() {
            live.leg = Some(shared.clone());
        }
        let cache_key = format!(
            "tether-playground-{:08x}-{}",
            self.page.random_u32(),
            mode.as_str()
        );
        let profile = match of {
            LegOf::Single => None,
            LegOf::Compared(repetition) => self.live.borrow().as_ref().and_then(|live| {
                let compared = live.compared.as_ref()?;
                compared
                    .comparison
                    .profile_of(repetition)
                    .map(str::to_string)
            }),
        };
        let config = leg_config(settings, mode, profile.as_deref(), cache_key);
        // The warm-up warms code, not waits: no model time, and none of the modelled services'
        // when the page asks for them (asking for nothing stays asking for nothing: a server
        // may not allow client-chosen conditions).
        let warm_up;
        let endpoint = if of == LegOf::Compared(WARM_UP)
            && endpoint.conditions.api_costs == ApiCosts::Hosted
        {
            warm_up = Endpoint {
                conditions: Conditions {
                    api_costs: ApiCosts::Local,
                    ..endpoint.conditions
                },
                ..endpoint.clone()
            };
            &warm_up
        } else {
            endpoint
        };
        let finished = self
            .run_leg(&config, settings, endpoint, files, stop, &shared)
            .await;
        if let Some(live) = self.live.borrow_mut().as_mut() {
            live.leg = None;
        }
        if let LegOf::Compared(repetition) = of {
            self.record_leg(mode, repetition, &shared);
        }
        finished
    }

    /// [`Session::leg`]'s work: open and warm the transport, warm the sandbox, run the loop.
    async fn run_leg(
        &self,
        config: &AgentConfig,
        settings: &Settings,
        endpoint: &Endpoint,
        files: Vfs,
        stop: &StopSignal,
        shared: &SharedRun,
    ) -> (AgentRun, Option<Vfs>) {
        let mode = config.mode;
        let mut transport = match self.page.open_transport(mode, endpoint, &settings.api_key) {
            Ok(transport) => transport,
            Err(error) => {
                let run = failed_run(format!("cannot open the transport: {error}"));
                shared.replace(run.clone());
                self.page.refresh();
                return (run, None);
            }
        };
        if let Some(live) = self.live.borrow_mut().as_mut() {
            live.channel = transport.side_channel();
        }
        // The clock starts with the leg warm: its connection open (a WebSocket's handshake, or
        // HTTP's first request on its kept-alive connection) and the sandbox's JavaScript
        // runtime started once, so that neither leg pays a first time the other does not. A
        // failed open shows again at the first send, where the loop reports it.
        let _ = select(transport.ready(), stop.stopped()).await;
        let mut scratch = self.page.sandbox(Vfs::default());
        let _ = select(Box::pin(scratch.run_shell(WARM_UP_COMMAND)), stop.stopped()).await;
        let mut sandbox = self.page.sandbox(files);
        // One screen update per animation frame, not per event; nothing is copied for it.
        let page = self.page.clone();
        let refresh = self.page.clone();
        let batch = FrameBatch::new(Box::new(move |frame| page.next_frame(frame)), move || {
            refresh.refresh()
        });
        let clock = || self.page.now_ms();
        let agent = Agent {
            transport: transport.as_mut(),
            sandbox: &mut sandbox,
            config,
            clock: &clock,
            stop,
        };
        let run = run_agent_shared(agent, settings.run_task(), shared, &mut |state| {
            if state.status == RunStatus::Running {
                batch.changed();
            } else {
                batch.flush();
            }
        })
        .await;
        if let Some(live) = self.live.borrow_mut().as_mut() {
            live.channel = None;
        }
        (run, Some(sandbox.into_vfs()))
    }

    /// Steer: sends `text` as `response.steer` for the response the single run under way is
    /// streaming ([`steer_target`] says which, or why not) on its connection, and records it in
    /// the run — its frame in the events, the steer in the timeline, where the loop records the
    /// server's answer. The error says why nothing was sent.
    pub fn steer(&self, text: &str, mode: Option<ContinuationMode>) -> Result<(), String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("Type what to steer the run toward first.".into());
        }
        let (shared, channel) = {
            let live = self.live.borrow();
            let Some(live) = live.as_ref() else {
                return Err("No run is under way.".into());
            };
            if live.compared.is_some() {
                return steer_target(&AgentRun::default(), None).map(|_| ());
            }
            (live.leg.clone(), live.channel.clone())
        };
        let Some(shared) = shared else {
            return Err("The run has not started yet.".into());
        };
        let target = shared.with(|run| steer_target(run, mode))?;
        let Some(channel) = channel else {
            return Err("This transport has no connection to send a steer on.".into());
        };
        let frame = steer_frame(&target, text);
        channel
            .send(&frame)
            .map_err(|why| format!("The steer was not sent: {why}"))?;
        let now = self.page.now_ms();
        shared.change(|run| {
            let turn = run.turns.len();
            run.frames.push(Frame {
                direction: Direction::Sent,
                at_ms: now,
                turn,
                kind: "response.steer",
                json: frame,
            });
            record_sent(run, &target, text, now);
        });
        self.page.refresh();
        Ok(())
    }

    /// Keeps the files a run left, for the next run that starts from them.
    fn keep_files(&self, files: Vfs) {
        if self.persist
            && let Err(why) = self.page.store(FILES_KEY, &files.to_json())
        {
            self.page.notice(format!("The files were not kept: {why}"));
        }
        self.page.keep_files(Some(files));
    }

    /// Keeps `last` for the next view and the next visit.
    fn remember(&self, last: LastRun) {
        if self.persist {
            if let Err(why) = self.page.store(LAST_RUN_KEY, &last.to_json()) {
                self.page.notice(format!("The run was not kept: {why}"));
            }
            // It ended after all (a page hidden but kept, and shown again).
            self.page.remove(INTERRUPTED_KEY);
        }
        self.page.keep_last_run(Some(last));
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::collections::{BTreeMap, VecDeque};
    use std::future::Future;
    use std::pin::Pin;

    use futures::executor::{LocalPool, block_on};
    use futures::task::LocalSpawnExt;
    use tether_protocol::{Response, ResponseCreate, ResponseStreamBuilder, Usage};
    use tether_sandbox::{JsEntry, JsOutcome, JsRequest, JsRuntime};

    use super::*;
    use crate::agent::Entry;
    use crate::conditions::LinkPreset;
    use crate::settings::TransportChoice;
    use crate::transport::replay::{ReplayTransport, Script};
    use crate::transport::{Received, TransportError, TransportKind};

    const ORIGIN: &str = "http://127.0.0.1:8080";
    const WS: ContinuationMode = ContinuationMode::WebSocket;
    const HTTP: ContinuationMode = crate::agent::COMPARE_HTTP_MODE;

    /// What happened, in order: transports opened, made ready and sent on, `node` run.
    type Log = Rc<RefCell<Vec<String>>>;

    /// A page whose server is a queue of transports, whose frames run at once, whose `node`
    /// only records that it ran and whose `localStorage` is a map; it records what the session
    /// shows and keeps.
    #[derive(Default)]
    struct FakePage {
        /// Handed out by `open_transport` in order; when none is left, the open fails.
        transports: RefCell<VecDeque<Box<dyn Transport>>>,
        opened: RefCell<Vec<(ContinuationMode, String)>>,
        log: Log,
        clock: Cell<f64>,
        shown: Cell<Option<Shown>>,
        run: RefCell<SharedRun>,
        legs: RefCell<BTreeMap<ContinuationMode, SharedRun>>,
        comparison: RefCell<Comparison>,
        refreshes: Cell<usize>,
        /// A session to stop as soon as a WebSocket leg shows done.
        stop_when_websocket_is_done: RefCell<Option<Session<FakePage>>>,
        notices: RefCell<Vec<String>>,
        settings: RefCell<Option<Settings>>,
        files: RefCell<Option<Vfs>>,
        last_run: RefCell<Option<LastRun>>,
        stored: RefCell<BTreeMap<String, String>>,
        /// Why `localStorage` refuses every write, if it does.
        store_refuses: Option<&'static str>,
    }

    impl FakePage {
        fn serving(transports: impl IntoIterator<Item = Box<dyn Transport>>) -> Rc<FakePage> {
            Rc::new(FakePage {
                transports: RefCell::new(transports.into_iter().collect()),
                ..FakePage::default()
            })
        }

        fn opened_modes(&self) -> Vec<ContinuationMode> {
            self.opened.borrow().iter().map(|(mode, _)| *mode).collect()
        }

        fn stored_last_run(&self) -> Option<LastRun> {
            let stored = self.stored.borrow();
            stored
                .get(LAST_RUN_KEY)
                .map(|json| LastRun::from_json(json).unwrap())
        }

        fn shown_run(&self) -> AgentRun {
            self.run.borrow().snapshot()
        }

        fn leg(&self, mode: ContinuationMode) -> AgentRun {
            self.legs.borrow()[&mode].snapshot()
        }
    }

    /// `node` that records that it ran.
    struct RecordingNode(Log);

    impl JsRuntime for RecordingNode {
        fn run<'a>(
            &'a self,
            request: JsRequest<'a>,
        ) -> Pin<Box<dyn Future<Output = JsOutcome> + 'a>> {
            let what = match request.entry {
                JsEntry::Eval(code) => format!("node -e {code}"),
                JsEntry::File(path) => format!("node {path}"),
            };
            self.0.borrow_mut().push(what);
            Box::pin(async { JsOutcome::default() })
        }
    }

    /// A transport that logs when it is made ready and sent on.
    struct Logged {
        inner: Box<dyn Transport>,
        log: Log,
    }

    impl Transport for Logged {
        fn kind(&self) -> TransportKind {
            self.inner.kind()
        }

        fn send<'a>(
            &'a mut self,
            request: &'a ResponseCreate,
            text: &'a str,
        ) -> LocalBoxFuture<'a, Result<(), TransportError>> {
            self.log.borrow_mut().push("send".into());
            self.inner.send(request, text)
        }

        fn next_event(&mut self) -> LocalBoxFuture<'_, Result<Received, TransportError>> {
            self.inner.next_event()
        }

        fn reconnect(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
            self.inner.reconnect()
        }

        fn ready(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
            self.log.borrow_mut().push("ready".into());
            self.inner.ready()
        }
    }

    impl Browser for FakePage {
        fn open_transport(
            &self,
            mode: ContinuationMode,
            endpoint: &Endpoint,
            _api_key: &str,
        ) -> Result<Box<dyn Transport>, String> {
            self.opened
                .borrow_mut()
                .push((mode, endpoint.conditions.on_url(&endpoint.base)));
            self.log
                .borrow_mut()
                .push(format!("open {}", mode.as_str()));
            let inner = (self.transports.borrow_mut().pop_front())
                .ok_or_else(|| "no server here".to_string())?;
            Ok(Box::new(Logged {
                inner,
                log: self.log.clone(),
            }))
        }

        fn sandbox(&self, files: Vfs) -> Sandbox {
            Sandbox::new(files).with_js_runtime(Box::new(RecordingNode(self.log.clone())))
        }

        fn now_ms(&self) -> f64 {
            self.clock.set(self.clock.get() + 1.0);
            self.clock.get()
        }

        fn random_u32(&self) -> u32 {
            self.log.borrow().len() as u32
        }

        fn next_frame(&self, frame: Box<dyn FnOnce()>) {
            frame();
        }
    }

    impl Memory for FakePage {
        fn files(&self) -> Option<Vfs> {
            self.files.borrow().clone()
        }

        fn keep_files(&self, files: Option<Vfs>) {
            *self.files.borrow_mut() = files;
        }

        fn keep_last_run(&self, last: Option<LastRun>) {
            *self.last_run.borrow_mut() = last;
        }

        fn store(&self, key: &str, json: &str) -> Result<(), String> {
            if let Some(why) = self.store_refuses {
                return Err(why.to_string());
            }
            self.stored.borrow_mut().insert(key.into(), json.into());
            Ok(())
        }

        fn remove(&self, key: &str) {
            self.stored.borrow_mut().remove(key);
        }

        fn clear_store(&self) {
            self.stored.borrow_mut().clear();
        }
    }

    impl Screen for FakePage {
        fn show(&self, shown: Shown) {
            self.shown.set(Some(shown));
        }

        fn show_run(&self, run: &SharedRun) {
            *self.run.borrow_mut() = run.clone();
        }

        fn show_leg(&self, mode: ContinuationMode, run: &SharedRun) {
            self.legs.borrow_mut().insert(mode, run.clone());
            *self.run.borrow_mut() = run.clone();
        }

        fn refresh(&self) {
            self.refreshes.set(self.refreshes.get() + 1);
        }

        fn show_comparison(&self, comparison: &Comparison) {
            *self.comparison.borrow_mut() = comparison.clone();
            if comparison.done(WS).next().is_some()
                && let Some(session) = self.stop_when_websocket_is_done.borrow().as_ref()
            {
                session.stop();
            }
        }

        fn notice(&self, message: String) {
            self.notices.borrow_mut().push(message);
        }

        fn clear_notices(&self) {
            self.notices.borrow_mut().clear();
        }

        fn show_settings(&self, settings: Settings) {
            *self.settings.borrow_mut() = Some(settings);
        }
    }

    /// A server that answers with `text` and no tool call.
    fn answering(mode: ContinuationMode, text: &str) -> Box<dyn Transport> {
        let request = ResponseCreate::new("m", "x");
        let mut b = ResponseStreamBuilder::new(Response::in_progress("resp_1", 1, &request), None);
        let mut events = b.start();
        events.extend(b.begin_message("msg_1"));
        events.push(b.text_delta(text));
        events.extend(b.complete(Usage::new(10, 0, 2, 0), 2));
        let script: Script = events.into_iter().map(Ok).collect();
        Box::new(ReplayTransport::new(mode.transport_kind(), [script]))
    }

    /// A WebSocket server that takes every request and then: never answers (`Silent`), never
    /// finishes its handshake either (`Handshaking`), or drops the connection in the middle of
    /// the first turn and is gone when the page reconnects (`Lost`).
    #[derive(Clone, Copy, PartialEq)]
    enum Stub {
        Silent,
        Handshaking,
        Lost,
    }

    impl Transport for Stub {
        fn kind(&self) -> TransportKind {
            TransportKind::WebSocket
        }

        fn send<'a>(
            &'a mut self,
            _request: &'a ResponseCreate,
            _text: &'a str,
        ) -> LocalBoxFuture<'a, Result<(), TransportError>> {
            Box::pin(async { Ok(()) })
        }

        fn next_event(&mut self) -> LocalBoxFuture<'_, Result<Received, TransportError>> {
            if *self == Stub::Lost {
                Box::pin(async { Err(TransportError::Closed("code 1006".into())) })
            } else {
                Box::pin(futures::future::pending())
            }
        }

        fn reconnect(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
            let lost = *self == Stub::Lost;
            Box::pin(async move {
                if lost {
                    return Err(TransportError::Unreachable {
                        url: "ws://127.0.0.1:9/v1/responses".into(),
                        detail: "the WebSocket did not open".into(),
                    });
                }
                Ok(())
            })
        }

        fn ready(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
            if *self == Stub::Handshaking {
                Box::pin(futures::future::pending())
            } else {
                Box::pin(async { Ok(()) })
            }
        }
    }

    #[test]
    fn a_connection_lost_mid_turn_is_said_before_the_failed_reconnect() {
        let page = FakePage::serving([Box::new(Stub::Lost) as Box<dyn Transport>]);
        let session = Session::new(page.clone(), true);
        let mut pool = LocalPool::new();
        spawn(&pool, &session, over(TransportChoice::Ws));
        pool.run_until_stalled();
        let run = page.shown_run();
        assert_eq!(run.status, RunStatus::Failed);
        assert_eq!(
            run.error.as_deref(),
            Some(
                "the connection was lost mid-turn (the connection closed: code 1006), and \
                 reconnecting failed: nothing listens at ws://127.0.0.1:9/v1/responses: the \
                 WebSocket did not open"
            )
        );
    }

    fn silent() -> Box<dyn Transport> {
        Box::new(Stub::Silent)
    }

    /// The short demo on this machine: no link, the server's own API costs.
    fn demo() -> Settings {
        Settings {
            task_length: TaskLength::Short,
            link: LinkPreset::Loopback,
            api_costs: ApiCosts::Server,
            ..Settings::default()
        }
    }

    fn over(transport: TransportChoice) -> Settings {
        Settings {
            transport,
            profile: "spark".into(),
            ..demo()
        }
    }

    /// A comparison of `repetitions`.
    fn comparing(repetitions: usize) -> Settings {
        Settings {
            repetitions,
            ..over(TransportChoice::Compare)
        }
    }

    fn answer_of(run: &AgentRun) -> Option<&str> {
        run.entries.iter().find_map(|entry| match entry {
            Entry::Assistant(text) => Some(text.as_str()),
            _ => None,
        })
    }

    /// Runs `settings` to its end.
    fn run_to_end(session: &Session<FakePage>, settings: Settings) {
        block_on(session.start(settings, ORIGIN).expect("the run starts"));
    }

    /// Starts `settings` on `pool`, to be driven by `run_until_stalled`.
    fn spawn(pool: &LocalPool, session: &Session<FakePage>, settings: Settings) {
        let run = session.start(settings, ORIGIN).expect("the run starts");
        pool.spawner().spawn_local(run).unwrap();
    }

    #[test]
    fn a_single_run_shows_its_progress_and_keeps_the_run_and_the_files() {
        let page = FakePage::serving([answering(ContinuationMode::HttpChained, "Fixed.")]);
        let kept = Vfs::from_files([("/notes.txt", &b"from the last run"[..])]);
        *page.files.borrow_mut() = Some(kept.clone());
        let session = Session::new(page.clone(), true);
        let settings = Settings {
            keep_files: true,
            ..over(TransportChoice::HttpChained)
        };

        run_to_end(&session, settings);

        assert!(!session.is_running());
        assert_eq!(
            *page.opened.borrow(),
            [(ContinuationMode::HttpChained, ORIGIN.to_string())]
        );
        assert_eq!(page.shown.get(), Some(Shown::Single));
        let run = page.shown_run();
        assert_eq!(run.status, RunStatus::Done);
        assert_eq!(answer_of(&run), Some("Fixed."));
        let sent = run.frames.get(0).unwrap().json;
        assert!(sent.contains(r#""model":"spark""#), "{sent}");
        assert!(
            sent.contains(r#""scenario":"fix-sample-project""#),
            "{sent}"
        );
        assert!(page.legs.borrow().is_empty(), "no comparison");
        assert!(
            page.refreshes.get() > 0,
            "the screen was told of the changes"
        );

        // The run started from the kept files, and what it left is kept.
        let left = page.files.borrow().clone().unwrap();
        assert_eq!(left.to_json(), kept.to_json());
        assert_eq!(page.stored.borrow()[FILES_KEY], kept.to_json());
        let last = LastRun::Single {
            run: RunSnapshot::of(&run),
        };
        assert_eq!(*page.last_run.borrow(), Some(last.clone()));
        assert_eq!(page.stored_last_run(), Some(last));
        assert!(page.notices.borrow().is_empty());
    }

    #[test]
    fn a_run_is_warmed_before_its_clock_starts() {
        let page = FakePage::serving([answering(WS, "Fine.")]);
        let session = Session::new(page.clone(), true);
        run_to_end(&session, over(TransportChoice::Ws));
        // The connection is made ready and the sandbox's `node` started before the first
        // request, whose turn is the first thing timed.
        assert_eq!(
            *page.log.borrow(),
            ["open ws", "ready", "node -e 0", "send"]
        );
    }

    #[test]
    fn a_run_that_does_not_keep_files_starts_from_the_sample_project() {
        let page = FakePage::serving([answering(ContinuationMode::WebSocket, "Fine.")]);
        *page.files.borrow_mut() = Some(Vfs::from_files([("/notes.txt", &b"old"[..])]));
        let session = Session::new(page.clone(), true);
        run_to_end(&session, over(TransportChoice::Ws));
        let left = page.files.borrow().clone().unwrap();
        assert_eq!(left.to_json(), sample_project().to_json());
    }

    #[test]
    fn a_comparison_alternates_the_legs_over_its_repetitions_and_reports_the_speedup() {
        let plan = Comparison::new(3).plan();
        let page = FakePage::serving(plan.iter().map(|(repetition, mode)| {
            let name = if *mode == WS { "WebSocket" } else { "HTTP" };
            answering(
                *mode,
                &format!("Done over {name}, repetition {repetition}."),
            )
        }));
        let session = Session::new(page.clone(), true);

        run_to_end(&session, comparing(3));

        assert_eq!(page.shown.get(), Some(Shown::Compare));
        // A warm-up of both legs, then A B, B A, A B.
        assert_eq!(
            page.opened_modes(),
            [WS, HTTP, WS, HTTP, HTTP, WS, WS, HTTP]
        );
        // Every leg warmed before its first request.
        let log = page.log.borrow().clone();
        let legs: Vec<&[String]> = log.chunk_by(|_, b| !b.starts_with("open")).collect();
        assert_eq!(legs.len(), 8);
        for leg in legs {
            assert_eq!(leg[1..], ["ready", "node -e 0", "send"], "{leg:?}");
        }
        let comparison = page.comparison.borrow().clone();
        assert_eq!(comparison.status(), RunStatus::Done);
        assert_eq!(comparison.legs.len(), 8);
        assert_eq!(
            comparison.end_to_end(WS).unwrap().n,
            3,
            "the warm-up is not counted"
        );
        assert_eq!(
            comparison
                .legs
                .iter()
                .map(|l| (l.repetition, l.mode))
                .collect::<Vec<_>>(),
            plan
        );
        assert!(comparison.speedup().is_some());
        // Each leg shows its latest repetition; the details follow the leg that ran last.
        assert_eq!(
            answer_of(&page.leg(WS)),
            Some("Done over WebSocket, repetition 3.")
        );
        assert_eq!(
            answer_of(&page.leg(HTTP)),
            Some("Done over HTTP, repetition 3.")
        );
        assert_eq!(page.shown_run(), page.leg(HTTP));

        let Some(LastRun::Compare {
            ws,
            http,
            long_running,
            repetitions,
            legs,
            ..
        }) = page.stored_last_run()
        else {
            panic!("the comparison is kept")
        };
        assert_eq!(ws, RunSnapshot::of(&page.leg(WS)));
        assert_eq!(http, RunSnapshot::of(&page.leg(HTTP)));
        assert_eq!(long_running, None, "no long-running leg was asked for");
        assert_eq!((repetitions, legs.len()), (Some(3), 8));
        // A reload shows the same comparison.
        let kept = page.last_run.borrow().clone();
        let reopened = Shown::restore(kept.as_ref()).comparison;
        assert_eq!(reopened, comparison);
        assert!(page.files.borrow().is_none(), "a comparison keeps no files");
    }

    /// The model a run's first request named, and its prompt-cache key.
    fn model_and_key(run: &AgentRun) -> (String, String) {
        let sent: serde_json::Value =
            serde_json::from_str(&run.frames.get(0).expect("a request").json).unwrap();
        let field = |name: &str| sent[name].as_str().unwrap_or_default().to_string();
        (field("model"), field("prompt_cache_key"))
    }

    #[test]
    fn every_leg_asks_for_the_conditions_and_has_a_cache_key_of_its_own() {
        let plan = Comparison::new(1).plan();
        let page = FakePage::serving(plan.iter().map(|(_, mode)| answering(*mode, "Done.")));
        let session = Session::new(page.clone(), true);
        let settings = Settings {
            link: crate::conditions::LinkPreset::HomeUplink,
            api_costs: crate::conditions::ApiCosts::Hosted,
            ..comparing(1)
        };
        run_to_end(&session, settings);
        let link = "http://127.0.0.1:8080?tether_rtt_ms=40&tether_up_mbit=20&tether_down_mbit=100";
        let urls: Vec<String> = page
            .opened
            .borrow()
            .iter()
            .map(|(_, u)| u.clone())
            .collect();
        // The warm-up over the same link without the modelled waits; then the conditions asked.
        assert_eq!(
            urls,
            [
                format!("{link}&tether_api_costs=local"),
                format!("{link}&tether_api_costs=local"),
                format!("{link}&tether_api_costs=hosted"),
                format!("{link}&tether_api_costs=hosted"),
            ]
        );
        // The warm-up ran on the model with no model time; each leg had a key of its own.
        let comparison = page.comparison.borrow().clone();
        assert_eq!(comparison.status(), RunStatus::Done);
        let (ws_model, ws_key) = model_and_key(&page.leg(WS));
        assert_eq!(ws_model, "spark");
        assert!(ws_key.starts_with("tether-playground-") && ws_key.ends_with("-ws"));
        let (_, http_key) = model_and_key(&page.leg(HTTP));
        assert_ne!(ws_key, http_key);
    }

    #[test]
    fn a_comparison_that_asks_for_no_conditions_asks_for_none_in_its_warm_up_either() {
        let plan = Comparison::new(1).plan();
        let page = FakePage::serving(plan.iter().map(|(_, mode)| answering(*mode, "Done.")));
        let session = Session::new(page.clone(), true);
        run_to_end(&session, comparing(1));
        assert!(
            page.opened.borrow().iter().all(|(_, url)| url == ORIGIN),
            "{:?}",
            page.opened.borrow()
        );
    }

    #[test]
    fn a_sweep_runs_each_profile_as_a_pair_after_a_warm_up() {
        let sweep = Comparison::sweep(&["flagship", "burst"]);
        let plan = sweep.plan();
        let page = FakePage::serving(
            plan.iter()
                .map(|(point, mode)| answering(*mode, &format!("point {point}"))),
        );
        let session = Session::new(page.clone(), true);
        let run = session
            .start_sweep(comparing(3), ORIGIN, &["flagship", "burst"])
            .expect("the sweep starts");
        block_on(run);
        assert_eq!(page.opened_modes(), [WS, HTTP, WS, HTTP, HTTP, WS]);
        let comparison = page.comparison.borrow().clone();
        assert!(comparison.is_sweep());
        assert_eq!(comparison.status(), RunStatus::Done);
        assert_eq!(crate::agent::sweep_points(&comparison).len(), 2);
        assert!(
            crate::agent::sweep_points(&comparison)
                .iter()
                .all(|p| p.saving.is_some())
        );
        // The last pair ran on burst; a reload shows the same sweep.
        assert_eq!(model_and_key(&page.leg(WS)).0, "burst");
        let kept = page.last_run.borrow().clone();
        assert_eq!(Shown::restore(kept.as_ref()).comparison, comparison);
    }

    #[test]
    fn a_link_outside_the_bounds_starts_nothing_and_says_why() {
        let page = FakePage::serving([]);
        let session = Session::new(page.clone(), true);
        let mut settings = over(TransportChoice::Ws);
        settings.link = crate::conditions::LinkPreset::Custom;
        settings.custom_link.rtt_ms = 5000.0;
        assert!(session.start(settings, ORIGIN).is_none());
        let run = page.shown_run();
        assert_eq!(run.status, RunStatus::Failed);
        assert!(run.error.unwrap().contains("round-trip time"), "said why");
        assert!(page.opened.borrow().is_empty());
    }

    #[test]
    fn a_failed_first_leg_ends_the_comparison() {
        let page = FakePage::serving([]);
        let session = Session::new(page.clone(), true);

        run_to_end(&session, comparing(3));

        assert_eq!(page.opened_modes(), [WS]);
        let comparison = page.comparison.borrow().clone();
        assert_eq!(comparison.legs.len(), 1, "no other leg started");
        assert_eq!(comparison.status(), RunStatus::Failed);
        assert_eq!(page.leg(WS).status, RunStatus::Failed);
        assert_eq!(
            comparison.error().as_deref(),
            Some("WebSocket run (warm-up): cannot open the transport: no server here")
        );
        let Some(LastRun::Compare { ws, http, .. }) = page.stored_last_run() else {
            panic!("the comparison is kept")
        };
        assert_eq!(ws.restore().status, RunStatus::Failed);
        assert_eq!(http.restore().status, RunStatus::Idle);
    }

    #[test]
    fn stop_during_the_first_leg_stops_the_comparison() {
        let page = FakePage::serving([silent(), answering(HTTP, "never")]);
        let session = Session::new(page.clone(), true);
        let mut pool = LocalPool::new();
        spawn(&pool, &session, comparing(3));

        pool.run_until_stalled();
        assert!(session.is_running());
        assert_eq!(page.comparison.borrow().status(), RunStatus::Running);
        assert_eq!(page.leg(WS).turns.len(), 1, "turn 1 was sent");
        assert!(session.start(over(TransportChoice::Ws), ORIGIN).is_none());

        session.stop();
        pool.run_until_stalled();

        assert!(!session.is_running());
        assert_eq!(page.opened_modes(), [WS]);
        let comparison = page.comparison.borrow().clone();
        assert_eq!(page.leg(WS).status, RunStatus::Stopped);
        assert_eq!(comparison.status(), RunStatus::Stopped);
        assert_eq!(comparison.speedup(), None);
        let Some(LastRun::Compare { ws, .. }) = page.last_run.borrow().clone() else {
            panic!("the comparison is kept")
        };
        assert_eq!(ws.restore().status, RunStatus::Stopped);
    }

    #[test]
    fn a_stop_as_a_leg_ends_keeps_the_next_from_starting() {
        let page = FakePage::serving([
            answering(WS, "Warm-up over WebSocket."),
            answering(HTTP, "Warm-up over HTTP."),
            answering(WS, "Done over WebSocket."),
            answering(HTTP, "never"),
        ]);
        let session = Session::new(page.clone(), true);
        *page.stop_when_websocket_is_done.borrow_mut() = Some(session.clone());

        run_to_end(&session, comparing(3));

        assert_eq!(page.opened_modes(), [WS, HTTP, WS]);
        let comparison = page.comparison.borrow().clone();
        assert_eq!(page.leg(WS).status, RunStatus::Done);
        assert_eq!(page.leg(HTTP).status, RunStatus::Stopped);
        assert_eq!(
            comparison.leg(1, HTTP).map(|l| l.status),
            Some(RunStatus::Stopped)
        );
        assert_eq!(comparison.status(), RunStatus::Stopped);
        // The page held the session: let both go.
        page.stop_when_websocket_is_done.borrow_mut().take();
    }

    #[test]
    fn a_page_hidden_mid_run_keeps_the_run_for_the_next_load_as_stopped() {
        let page = FakePage::serving([silent()]);
        let session = Session::new(page.clone(), true);
        session.page_hidden();
        assert!(page.stored.borrow().is_empty(), "no run, nothing to keep");

        let mut pool = LocalPool::new();
        spawn(&pool, &session, over(TransportChoice::Ws));
        pool.run_until_stalled();
        session.page_hidden();

        let Some(LastRun::Single { run }) = page.stored_last_run() else {
            panic!("the run under way is stored")
        };
        assert_eq!(page.stored.borrow()[INTERRUPTED_KEY], "a run, at turn 1");
        let restored = run.restore();
        assert_eq!(restored.status, RunStatus::Stopped);
        assert_eq!(restored.turns.len(), 1);
        assert_eq!(restored.entries, [Entry::Task(demo().task)]);
        assert!(
            page.last_run.borrow().is_none(),
            "only stored for the next load"
        );
    }

    #[test]
    fn a_page_hidden_during_the_handshake_keeps_a_started_run() {
        let page = FakePage::serving([Box::new(Stub::Handshaking) as Box<dyn Transport>]);
        let session = Session::new(page.clone(), true);
        let mut pool = LocalPool::new();
        spawn(&pool, &session, over(TransportChoice::Ws));
        pool.run_until_stalled();
        session.page_hidden();
        let Some(LastRun::Single { run }) = page.stored_last_run() else {
            panic!("the run under way is stored")
        };
        assert_eq!(run.restore().status, RunStatus::Stopped);
    }

    #[test]
    fn a_page_hidden_during_a_later_leg_keeps_every_leg() {
        let page = FakePage::serving([answering(WS, "Done over WebSocket."), silent()]);
        let session = Session::new(page.clone(), true);
        let mut pool = LocalPool::new();
        spawn(&pool, &session, comparing(3));
        pool.run_until_stalled();
        session.page_hidden();

        let stored = page.stored_last_run();
        let Some(LastRun::Compare { ws, http, .. }) = &stored else {
            panic!("the comparison under way is stored")
        };
        assert_eq!(
            page.stored.borrow()[INTERRUPTED_KEY],
            "a comparison, leg 2 of 8 (HTTP stateless, warm-up, not counted): turn 1"
        );
        let (ws, http) = (ws.restore(), http.restore());
        assert_eq!(ws.status, RunStatus::Done);
        assert_eq!(answer_of(&ws), Some("Done over WebSocket."));
        assert_eq!(http.status, RunStatus::Stopped);
        assert_eq!(http.turns.len(), 1);
        let restored = Shown::restore(stored.as_ref()).comparison;
        assert_eq!(restored.legs.len(), 2);
        assert_eq!(restored.leg(WARM_UP, HTTP).unwrap().turns, 1);
        assert_eq!(restored.status(), RunStatus::Stopped);
    }

    #[test]
    fn an_embedded_page_keeps_its_runs_in_memory_only() {
        let page = FakePage::serving([silent(), answering(ContinuationMode::WebSocket, "Hi.")]);
        let session = Session::new(page.clone(), false);
        let mut pool = LocalPool::new();
        spawn(&pool, &session, over(TransportChoice::Ws));
        pool.run_until_stalled();
        session.page_hidden();
        session.stop();
        pool.run_until_stalled();
        run_to_end(&session, over(TransportChoice::Ws));

        assert!(page.stored.borrow().is_empty());
        assert!(page.last_run.borrow().is_some() && page.files.borrow().is_some());
    }

    #[test]
    fn storage_that_refuses_is_reported_and_the_page_still_keeps_the_run() {
        let page = Rc::new(FakePage {
            transports: RefCell::new([answering(ContinuationMode::WebSocket, "Hi.")].into()),
            store_refuses: Some("the quota is full"),
            ..FakePage::default()
        });
        let session = Session::new(page.clone(), true);
        run_to_end(&session, over(TransportChoice::Ws));
        assert_eq!(
            *page.notices.borrow(),
            [
                "The files were not kept: the quota is full",
                "The run was not kept: the quota is full"
            ]
        );
        assert!(page.last_run.borrow().is_some() && page.files.borrow().is_some());
    }

    #[test]
    fn nothing_starts_without_a_task_or_a_usable_server_url() {
        let page = FakePage::serving([]);
        let session = Session::new(page.clone(), true);
        let untasked = Settings {
            task: "  ".into(),
            ..demo()
        };
        assert!(session.start(untasked, ORIGIN).is_none());
        assert_eq!(page.shown.get(), None, "nothing shown");

        let elsewhere = Settings {
            server_url: "ftp://nowhere".into(),
            ..demo()
        };
        assert!(session.start(elsewhere, ORIGIN).is_none());
        assert_eq!(page.shown.get(), Some(Shown::Single));
        let run = page.shown_run();
        assert_eq!(run.status, RunStatus::Failed);
        assert!(run.error.unwrap().contains("must start with http"));
        assert!(!session.is_running() && page.opened.borrow().is_empty());
    }

    #[test]
    fn reset_forgets_the_run_the_files_and_the_settings() {
        let page = FakePage::serving([answering(ContinuationMode::WebSocket, "Hi."), silent()]);
        let session = Session::new(page.clone(), true);
        run_to_end(&session, over(TransportChoice::Ws));
        page.stored.borrow_mut().insert(
            crate::storage::SETTINGS_KEY.into(),
            over(TransportChoice::Ws).to_json(),
        );
        page.notice("an old notice".into());

        // Refused while a run is under way.
        let mut pool = LocalPool::new();
        spawn(&pool, &session, over(TransportChoice::Ws));
        pool.run_until_stalled();
        assert!(!session.reset());
        assert_eq!(page.stored.borrow().len(), 3);
        session.stop();
        pool.run_until_stalled();

        assert!(session.reset());
        assert!(page.stored.borrow().is_empty(), "localStorage is cleared");
        assert!(page.files.borrow().is_none() && page.last_run.borrow().is_none());
        assert_eq!(*page.settings.borrow(), Some(Settings::default()));
        assert_eq!(page.shown.get(), Some(Shown::Single));
        assert_eq!(page.shown_run(), AgentRun::default());
        assert_eq!(*page.comparison.borrow(), Comparison::default());
        assert_eq!(*page.notices.borrow(), [RESET_NOTICE]);
    }
}
