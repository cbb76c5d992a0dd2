//! The agent loop: a task prompt goes out with the sandbox's tools; every tool call that comes
//! back runs in the sandbox, in order; the outputs go out as the next turn; until the model
//! answers without calling a tool, the turn limit is reached, or the user stops the run.
//!
//! How a conversation continues is the [`ContinuationMode`]: over WebSocket only the new items
//! go out with `previous_response_id` (the server's connection cache holds the rest, `store:false`
//! as Codex sends); over WebSocket's v1 beta, one long-running response for the whole run, which
//! pauses with `response.done` at each tool call and resumes on `response.append` with the
//! outputs; over HTTP either chained through the store (`store:true` + `previous_response_id`)
//! or stateless (the full conversation every turn, `store:false`).
//!
//! A run over WebSocket can be steered (`response.steer`, sent by the page beside the loop:
//! [`super::steer`]): the loop records the server's answers, and when a steer ends a response
//! (`response.incomplete`, `steered`) it reads the automatic successor as the next turn.
//!
//! Nothing here touches the DOM or a clock: time comes from the [`Agent`]'s clock, state goes
//! out through `observe`, so the loop runs natively in tests against a replayed transport. The
//! loop is a few named steps on a `Runner` — play a turn ([`super::play`]; sending it again once
//! on a new connection), decide what follows it, answer its calls — and what it carries from
//! turn to turn is a [`Thread`](super::thread::Thread), whose rules are tested there.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use serde_json::Value;
use tether_protocol::{
    Input, Item, ResponseCreate, Tool,
    items::{ToolCallOutput, ToolOutputContent},
};
use tether_sandbox::{ApplyPatchForm, ChangeKind, ChangeSet, Sandbox, ToolResult};

use crate::agent::files::{FileChangeRecord, FileSnapshot};
use crate::agent::play::{Observed, Sending, TurnError, TurnOutput, play_turn};
use crate::agent::record::{AgentRun, Entry, Resume};
use crate::agent::steer;
use crate::agent::thread::{Thread, TurnEnd};
use crate::agent::{RunStatus, StopSignal};
use crate::transport::{Transport, TransportKind};

/// How the loop carries the conversation from one turn to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, PartialOrd, Ord)]
pub enum ContinuationMode {
    /// WebSocket mode: new items + `previous_response_id`, `store:false`.
    #[default]
    WebSocket,
    /// WebSocket, v1 beta: one long-running response per run. The first turn is a
    /// `response.create`; the response pauses with `response.done` at each client tool call, and
    /// each turn after sends the tool outputs as `response.append`; it ends with
    /// `response.completed`.
    LongRunning,
    /// HTTP through the store: new items + `previous_response_id`, `store:true`.
    HttpChained,
    /// HTTP without server state: the full conversation every turn, `store:false`.
    HttpStateless,
}

impl ContinuationMode {
    pub const ALL: [ContinuationMode; 4] = [
        ContinuationMode::WebSocket,
        ContinuationMode::LongRunning,
        ContinuationMode::HttpChained,
        ContinuationMode::HttpStateless,
    ];

    /// The stable name the UI's selector and tests use.
    pub fn as_str(self) -> &'static str {
        match self {
            ContinuationMode::WebSocket => "ws",
            ContinuationMode::LongRunning => "ws-append",
            ContinuationMode::HttpChained => "http-chained",
            ContinuationMode::HttpStateless => "http-stateless",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == name)
    }

    /// A human label.
    pub fn label(self) -> &'static str {
        match self {
            ContinuationMode::WebSocket => "WebSocket (previous_response_id, store:false)",
            ContinuationMode::LongRunning => {
                "WebSocket long-running (v1 response.append, one response per run)"
            }
            ContinuationMode::HttpChained => "HTTP chained (previous_response_id, store:true)",
            ContinuationMode::HttpStateless => "HTTP stateless (full input, store:false)",
        }
    }

    /// The transport this mode runs on.
    pub fn transport_kind(self) -> TransportKind {
        match self {
            ContinuationMode::WebSocket | ContinuationMode::LongRunning => TransportKind::WebSocket,
            _ => TransportKind::Http,
        }
    }

    fn chains(self) -> bool {
        self != ContinuationMode::HttpStateless
    }

    fn stores(self) -> bool {
        self == ContinuationMode::HttpChained
    }
}

/// The settings of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    pub model: String,
    pub mode: ContinuationMode,
    /// Requests at most; reaching it fails the run.
    pub max_turns: usize,
    /// Sent as `metadata.scenario`: the server's simulator picks a scripted agent scenario.
    pub scenario: Option<String>,
    pub instructions: Option<String>,
    pub apply_patch_form: ApplyPatchForm,
    /// `prompt_cache_key`: which of the engine's prompt caches the run's prompts share.
    pub prompt_cache_key: Option<String>,
}

impl AgentConfig {
    pub fn new(model: impl Into<String>, mode: ContinuationMode) -> Self {
        AgentConfig {
            model: model.into(),
            mode,
            max_turns: 20,
            scenario: None,
            instructions: None,
            apply_patch_form: ApplyPatchForm::Freeform,
            prompt_cache_key: None,
        }
    }
}

/// The state of a run while the loop changes it, shared with whoever shows it: a frame callback
/// reads the latest state between two events instead of the observer copying it on every event.
/// The loop only borrows it inside synchronous steps, never across an `await`.
#[derive(Clone, Default)]
pub struct SharedRun(Rc<RefCell<AgentRun>>);

impl SharedRun {
    /// A shared state holding `run`.
    pub fn new(run: AgentRun) -> Self {
        SharedRun(Rc::new(RefCell::new(run)))
    }

    /// Puts `run` in place of the state.
    pub fn replace(&self, run: AgentRun) {
        *self.0.borrow_mut() = run;
    }

    /// A copy of the state as it is now.
    pub fn snapshot(&self) -> AgentRun {
        self.0.borrow().clone()
    }

    /// Reads the state without copying it.
    pub fn with<R>(&self, read: impl FnOnce(&AgentRun) -> R) -> R {
        read(&self.0.borrow())
    }

    /// Changes the state from outside the loop (a steer sent from the page): the loop never
    /// holds it across an `await`, so this never meets its borrow.
    pub fn change<R>(&self, change: impl FnOnce(&mut AgentRun) -> R) -> R {
        change(&mut self.0.borrow_mut())
    }
}

/// What a run works with: the server, the tools, the settings, the clock (milliseconds on any
/// monotonic clock) and the stop button.
pub struct Agent<'a> {
    pub transport: &'a mut dyn Transport,
    pub sandbox: &'a mut Sandbox,
    pub config: &'a AgentConfig,
    pub clock: &'a dyn Fn() -> f64,
    pub stop: &'a StopSignal,
}

/// Runs `task` to the end and returns the final state (also passed to `observe` after every
/// change). `clock` gives milliseconds on any monotonic clock.
pub async fn run_agent(
    transport: &mut dyn Transport,
    sandbox: &mut Sandbox,
    config: &AgentConfig,
    task: &str,
    clock: &dyn Fn() -> f64,
    stop: &StopSignal,
    observe: &mut dyn FnMut(&AgentRun),
) -> AgentRun {
    let agent = Agent {
        transport,
        sandbox,
        config,
        clock,
        stop,
    };
    run_agent_shared(agent, task, &SharedRun::default(), observe).await
}

/// [`run_agent`] keeping its state in `shared` (reset at the start), where a view can read it
/// at its own pace; `observe` still hears of every change.
pub async fn run_agent_shared(
    agent: Agent<'_>,
    task: &str,
    shared: &SharedRun,
    observe: &mut dyn FnMut(&AgentRun),
) -> AgentRun {
    let mut run = Observed {
        run: &shared.0,
        observe,
    };
    run.change(|run| {
        *run = AgentRun {
            status: RunStatus::Running,
            entries: vec![Entry::Task(task.to_string())],
            files: Arc::new(FileSnapshot::of(agent.sandbox.vfs())),
            ..AgentRun::default()
        }
    });
    let tools = match tools_of(agent.sandbox, agent.config.apply_patch_form) {
        Ok(tools) => tools,
        Err(error) => return end(run, Ended::Failed(error)),
    };
    let mut runner = Runner {
        agent,
        run,
        tools,
        thread: Thread::new(task),
    };
    let ended = runner.run().await;
    end(runner.run, ended)
}

/// How a run ended.
enum Ended {
    /// The model answered without a tool call.
    Done,
    Failed(String),
    /// The stop button.
    Stopped,
}

/// The loop: a turn, the tools it called, the next turn, until an answer, a failure, the stop
/// button or the turn limit.
struct Runner<'a, 'o> {
    agent: Agent<'a>,
    run: Observed<'o>,
    tools: Vec<Tool>,
    thread: Thread,
}

impl Runner<'_, '_> {
    async fn run(&mut self) -> Ended {
        for number in 1..=self.agent.config.max_turns {
            if self.agent.stop.is_stopped() {
                return Ended::Stopped;
            }
            let turn = match self.play(number).await {
                Ok(turn) => turn,
                Err(ended) => return ended,
            };
            let TurnOutput {
                items,
                end,
                response,
            } = turn;
            let calls = self.thread.take_output(items);
            if self.is_followed_by_a_successor(&response.id, end, &calls) {
                let texts = self.run.change(|run| {
                    // What the steered response called will not run: its successor answers
                    // instead.
                    run.stop_pending_calls();
                    steer::apply_to_successor(run, &response.id, number + 1)
                });
                self.thread.succeed_with(&texts);
                continue;
            }
            if calls.is_empty() {
                return Ended::Done;
            }
            let long_running = self.agent.config.mode == ContinuationMode::LongRunning;
            self.thread.answer_calls_of(&response, end, long_running);
            if let Err(ended) = self.answer(number, &calls).await {
                return ended;
            }
        }
        Ended::Failed(format!(
            "stopped after {} turns without a final answer (max turns)",
            self.agent.config.max_turns
        ))
    }

    /// Plays turn `number`, sending it once more on a new connection if the first one is lost.
    async fn play(&mut self, number: usize) -> Result<TurnOutput, Ended> {
        let thread = &self.thread;
        let mut request = build_request(
            self.agent.config,
            &self.tools,
            thread.previous.clone(),
            &thread.new_items,
            &thread.items,
        );
        let record = thread.record(number, &request, (self.agent.clock)());
        let entries_before = self.run.change(|run| {
            run.turns.push(record);
            run.entries.len()
        });
        // The error that lost the connection, once the turn was sent again.
        let mut lost: Option<String> = None;
        loop {
            let sending = Sending {
                request: &request,
                sent_as: self.thread.sent_as,
                new_items: &self.thread.new_items,
                resumed: self.thread.resumed,
            };
            let played = play_turn(
                &mut *self.agent.transport,
                sending,
                &mut self.run,
                self.agent.clock,
                self.agent.stop,
            )
            .await;
            match played {
                Ok(turn) => {
                    self.thread.previous = self
                        .run
                        .read(|run| run.turns.last().and_then(|t| t.response_id.clone()));
                    return Ok(turn);
                }
                Err(TurnError::Stopped) => return Err(Ended::Stopped),
                Err(TurnError::Transport(error)) if error.is_disconnect() && lost.is_none() => {
                    // Both said, the loss first: the reconnect's error alone ("nothing listens
                    // at …, the WebSocket did not open") hid that one had been open.
                    if let Err(reconnecting) = self.agent.transport.reconnect().await {
                        return Err(Ended::Failed(format!(
                            "the connection was lost mid-turn ({error}), and reconnecting \
                             failed: {reconnecting}"
                        )));
                    }
                    lost = Some(error.to_string());
                    let resume = self.thread.resend(&mut request);
                    let now = (self.agent.clock)();
                    self.run.change(|run| {
                        run.entries.truncate(entries_before);
                        let record = run.turns.last_mut().expect("the turn was pushed");
                        record.restart(&request, now, resume);
                    });
                }
                // Sent again after a loss, it could not be: a WebSocket reconnects as it sends,
                // so a server that is gone shows here.
                Err(TurnError::Transport(error)) if lost.is_some() => {
                    self.run.change(|run| {
                        let record = run.turns.last_mut().expect("the turn was pushed");
                        record.resumed = Some(Resume::Failed);
                    });
                    let lost = lost.unwrap_or_default();
                    return Err(Ended::Failed(format!(
                        "the connection was lost mid-turn ({lost}), and sending the turn again \
                         failed: {error}"
                    )));
                }
                Err(TurnError::Transport(error)) => return Err(Ended::Failed(error.to_string())),
                Err(TurnError::Response(message)) => return Err(Ended::Failed(message)),
            }
        }
    }

    /// Whether the response `id`, which ended as `end` with `calls`, is followed by an automatic
    /// successor with the steers as its input (the next turn, which sends nothing): a steered
    /// response is, and so is one that completed with steers taken and no call to answer.
    fn is_followed_by_a_successor(&self, id: &str, end: TurnEnd, calls: &[Item]) -> bool {
        match end {
            TurnEnd::Steered => true,
            TurnEnd::Completed => {
                calls.is_empty() && self.run.read(|run| steer::awaits_successor(run, id))
            }
            TurnEnd::Paused => false,
        }
    }

    /// Runs turn `number`'s tool `calls` in the sandbox, in order; their outputs are the next
    /// turn's input.
    async fn answer(&mut self, number: usize, calls: &[Item]) -> Result<(), Ended> {
        for call in calls {
            if self.agent.stop.is_stopped() {
                return Err(Ended::Stopped);
            }
            let clock = self.agent.clock;
            let sandbox = &mut *self.agent.sandbox;
            let started = clock();
            let (call_id, name, result, reply) = match call {
                Item::FunctionCall(call) => (
                    &call.call_id,
                    &call.name,
                    sandbox.call_tool(&call.name, &call.arguments).await,
                    Item::FunctionCallOutput as fn(ToolCallOutput) -> Item,
                ),
                Item::CustomToolCall(call) => (
                    &call.call_id,
                    &call.name,
                    sandbox.call_custom_tool(&call.name, &call.input).await,
                    Item::CustomToolCallOutput as fn(ToolCallOutput) -> Item,
                ),
                _ => unreachable!("filtered to tool calls"),
            };
            let elapsed = clock() - started;
            self.run.change(|run| {
                show_result(run, call_id, &result, elapsed);
                record_changes(run, sandbox, number, call_id, name, &result.changes);
            });
            self.thread.add_tool_output(reply(ToolCallOutput {
                id: None,
                call_id: call_id.clone(),
                output: ToolOutputContent::Text(result.output),
                status: None,
            }));
        }
        Ok(())
    }
}

/// The sandbox's tool definitions as protocol tools.
fn tools_of(sandbox: &Sandbox, form: ApplyPatchForm) -> Result<Vec<Tool>, String> {
    sandbox
        .tool_specs(form)
        .into_iter()
        .map(serde_json::from_value::<Tool>)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the sandbox's tool definitions do not decode: {e}"))
}

fn build_request(
    config: &AgentConfig,
    tools: &[Tool],
    previous: Option<String>,
    new_items: &[Item],
    conversation: &[Item],
) -> ResponseCreate {
    let mut request = ResponseCreate::new(config.model.clone(), "");
    // On the first turn both are the task alone.
    request.input = Input::Items(if config.mode.chains() {
        new_items.to_vec()
    } else {
        conversation.to_vec()
    });
    if config.mode.chains() {
        request.previous_response_id = previous;
    }
    request.store = Some(config.mode.stores());
    request.tools = tools.to_vec();
    request.instructions = config.instructions.as_deref().map(Into::into);
    request.prompt_cache_key = config.prompt_cache_key.clone();
    if let Some(scenario) = &config.scenario {
        let mut metadata = serde_json::Map::new();
        metadata.insert("scenario".into(), Value::String(scenario.clone()));
        request.metadata = Some(metadata);
    }
    request
}

/// Logs the files a tool call changed and takes the tree after it (a cheap update: only the
/// changed files are read).
fn record_changes(
    run: &mut AgentRun,
    sandbox: &Sandbox,
    turn: usize,
    call_id: &str,
    tool: &str,
    changes: &ChangeSet,
) {
    if changes.is_empty() {
        return;
    }
    for change in &changes.changes {
        run.changes.push(FileChangeRecord {
            turn,
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            path: change.path.clone(),
            kind: change.kind,
            diff: change.diff.clone(),
        });
    }
    run.files = Arc::new(run.files.updated(sandbox.vfs(), changes));
}

fn show_result(run: &mut AgentRun, call_id: &str, result: &ToolResult, elapsed: f64) {
    if let Some(record) = run.turns.last_mut() {
        record.tool_ms += elapsed;
        record.tool_runs += 1;
    }
    let entry = run.entries.iter_mut().rev().find_map(|e| match e {
        Entry::ToolCall(call) if call.call_id == call_id => Some(call),
        _ => None,
    });
    if let Some(call) = entry {
        call.output = Some(result.output.clone());
        call.success = Some(result.success);
        call.tool_ms = Some(elapsed);
        call.changes = result
            .changes
            .changes
            .iter()
            .map(|change| {
                let kind = match change.kind {
                    ChangeKind::Added => "added",
                    ChangeKind::Modified => "modified",
                    ChangeKind::Deleted => "deleted",
                };
                format!("{kind} {}", change.path)
            })
            .collect();
    }
}

/// The run's last state: `ended` recorded, and a call it cut off marked as not run.
fn end(mut run: Observed<'_>, ended: Ended) -> AgentRun {
    run.change(|run| {
        match ended {
            Ended::Done => run.status = RunStatus::Done,
            Ended::Failed(message) => {
                run.status = RunStatus::Failed;
                run.error = Some(message);
            }
            Ended::Stopped => run.status = RunStatus::Stopped,
        }
        // A call cut off by a failure or the stop button will not run either.
        if run.status != RunStatus::Done {
            run.stop_pending_calls();
        }
    });
    run.read(AgentRun::clone)
}
