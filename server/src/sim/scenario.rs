//! Scripted agent scenarios: data files (JSON, under `server/scenarios/`) that say what the
//! model does turn by turn — messages, tool calls (several at once for parallel calls),
//! failures — with conditions to branch on what the tools returned.
//!
//! The cursor is not stored anywhere: it is replayed from the conversation itself. The model's
//! earlier turns are found in the conversation, and the scenario's choice at each of them is
//! re-evaluated against the conversation as it was then. So two connections never share a
//! cursor, and a continuation over the connection cache, over the store, or with the whole
//! input sent again (stateless HTTP) all land on the same step. A continuation does not replay
//! the whole conversation again: the scenario remembers where the replay stood for its recent
//! responses ([`Replay`]) and resumes from there over the new items only.
//!
//! Format (see `server/scenarios/README.md`):
//!
//! ```json
//! {"name": "n", "description": "…",
//!  "steps": [{"id": "s", "when": [{"output_contains": "FAIL"}], "message": "…",
//!             "calls": [{"tool": "shell", "arguments": {…}}, {"tool": "apply_patch", "input": "…"}],
//!             "fail": "server_error", "goto": "other-step"}],
//!  "on_exhausted": {"message": "…"} | {"fail": "server_error"} | "loop"}
//! ```

use std::hash::{DefaultHasher, Hash, Hasher};
use std::num::NonZeroUsize;

use lru::LruCache;
use parking_lot::Mutex;
use regex::Regex;
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};
use tether_protocol::{Callable, Item, Role, Tool, callable_tools};

use super::output::{Output, ToolCallPlan};
use crate::items;
use crate::model::{Context, FailureKind, ModelEvent};

/// A scripted scenario.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub steps: Vec<Step>,
    #[serde(default)]
    pub on_exhausted: Exhaustion,
    /// Where the replay stood for recent responses.
    #[serde(skip)]
    replays: Replays,
}

/// How many responses' replays a scenario remembers.
const REMEMBERED_REPLAYS: usize = 4096;

#[derive(Debug)]
struct Replays(Mutex<LruCache<String, Replay>>);

impl Default for Replays {
    fn default() -> Self {
        Replays(Mutex::new(LruCache::new(
            NonZeroUsize::new(REMEMBERED_REPLAYS).expect("non-zero"),
        )))
    }
}

/// Where the replay of a conversation stood after the items a response was generated from.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Replay {
    /// Items replayed.
    items: usize,
    /// The last of them, fingerprinted: a request resumes only a conversation it extends.
    last: u64,
    /// The tools offered (conditions read them).
    tools: u64,
    cursor: usize,
    /// Model turns found.
    turns: usize,
    /// Whether the last item replayed belongs to a model turn.
    in_turn: bool,
    /// The latest user message replayed.
    last_user: Option<usize>,
}
/// One model turn of a scenario.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// A name for `goto`.
    #[serde(default)]
    pub id: Option<String>,
    /// Every condition must hold for the step to play; otherwise the next step is tried.
    #[serde(default)]
    pub when: Vec<Condition>,
    /// A reasoning summary (first).
    #[serde(default)]
    pub reasoning: Option<String>,
    /// An assistant message (before the calls, if any).
    #[serde(default)]
    pub message: Option<String>,
    /// Tool calls, all in this turn.
    #[serde(default)]
    pub calls: Vec<Call>,
    /// The turn fails with this error (after the message and calls, if any).
    #[serde(default)]
    pub fail: Option<FailureKind>,
    /// Where the scenario continues after this step (default: the next step).
    #[serde(default)]
    pub goto: Option<String>,
}

/// A tool call of a step.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    pub tool: String,
    /// JSON arguments of a function tool.
    #[serde(default)]
    pub arguments: Option<Value>,
    /// Raw input of a custom tool; sent as `{"input": …}` when the tool is a function.
    #[serde(default)]
    pub input: Option<String>,
}

/// A condition on the conversation at the turn a step would play.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Condition {
    /// The tool outputs that end the conversation contain this text.
    OutputContains(String),
    /// The tool outputs that end the conversation match this regular expression.
    OutputMatches(#[serde(deserialize_with = "regex")] Regex),
    /// A tool of this name is offered.
    ToolOffered(String),
    /// The last user message contains this text.
    UserSays(String),
    /// This is the model's turn number N in the conversation (from 0).
    Turn(usize),
    /// The turn number is at least N.
    MinTurn(usize),
    Not(Box<Condition>),
}

/// What happens when no step is left.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Exhaustion {
    /// Answer with this message.
    Message(String),
    /// Fail with this error.
    Fail(FailureKind),
    /// Start again at the first step.
    Loop,
}

/// The answer when a scenario has nothing left to play and says nothing itself.
const EXHAUSTED: &str = "The scenario has no more steps.";

impl Default for Exhaustion {
    fn default() -> Self {
        Exhaustion::Message(EXHAUSTED.into())
    }
}

fn regex<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Regex, D::Error> {
    let pattern = String::deserialize(deserializer)?;
    Regex::new(&pattern).map_err(serde::de::Error::custom)
}

/// The conversation as it was at one model turn.
struct View<'a> {
    items: &'a [Item],
    turn: usize,
    tools: &'a [Tool],
    /// Which of `items` is the latest user message.
    last_user: Option<usize>,
}

impl View<'_> {
    /// The tool outputs that end the conversation, joined by newlines.
    fn trailing_outputs(&self) -> String {
        let start = self
            .items
            .iter()
            .rposition(|item| !is_tool_output(item))
            .map_or(0, |i| i + 1);
        self.items[start..]
            .iter()
            .map(|item| items::body(item).into_owned())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Condition {
    fn holds(&self, view: &View<'_>) -> bool {
        match self {
            Condition::OutputContains(text) => view.trailing_outputs().contains(text.as_str()),
            Condition::OutputMatches(regex) => regex.is_match(&view.trailing_outputs()),
            Condition::ToolOffered(name) => find_tool(view.tools, name).is_some(),
            Condition::UserSays(text) => view
                .last_user
                .and_then(|index| match &view.items[index] {
                    Item::Message(m) => Some(m.content.text()),
                    _ => None,
                })
                .is_some_and(|said| said.contains(text.as_str())),
            Condition::Turn(n) => view.turn == *n,
            Condition::MinTurn(n) => view.turn >= *n,
            Condition::Not(inner) => !inner.holds(view),
        }
    }
}

/// An item's type and the length and beginning of its text: enough to tell a conversation's
/// item from another in the same place, without reading the whole item.
fn fingerprint(item: &Item) -> u64 {
    let body = items::body(item);
    let mut hasher = DefaultHasher::new();
    item.type_name().hash(&mut hasher);
    body.len().hash(&mut hasher);
    body.get(..body.floor_char_boundary(64)).hash(&mut hasher);
    hasher.finish()
}

fn is_tool_output(item: &Item) -> bool {
    matches!(
        item,
        Item::FunctionCallOutput(_) | Item::CustomToolCallOutput(_)
    )
}

/// Whether the model produced `item` (so it belongs to a model turn).
fn is_model_item(item: &Item) -> bool {
    match item {
        Item::Message(m) => m.role == Role::Assistant,
        Item::FunctionCall(_) | Item::CustomToolCall(_) | Item::Reasoning(_) => true,
        _ => false,
    }
}

/// How a tool is offered: a function (maybe in a namespace) or a custom tool.
enum Offered<'a> {
    Function { namespace: Option<&'a str> },
    Custom,
}

/// How the tool named `name` is offered, if it is.
fn find_tool<'a>(tools: &'a [Tool], name: &str) -> Option<Offered<'a>> {
    callable_tools(tools)
        .into_iter()
        .find(|callable| callable.name() == name)
        .map(|callable| match callable.tool {
            Callable::Function(_) => Offered::Function {
                namespace: callable.namespace,
            },
            Callable::Custom(_) => Offered::Custom,
        })
}

impl Scenario {
    /// Parses and checks a scenario file.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let scenario: Scenario = serde_json::from_str(text).map_err(|e| e.to_string())?;
        scenario.check()?;
        Ok(scenario)
    }

    fn check(&self) -> Result<(), String> {
        if self.steps.is_empty() {
            return Err(format!("scenario {}: no steps", self.name));
        }
        for (index, step) in self.steps.iter().enumerate() {
            if step.message.is_none()
                && step.calls.is_empty()
                && step.fail.is_none()
                && step.reasoning.is_none()
            {
                return Err(format!(
                    "scenario {}: step {index} has no message, calls or fail",
                    self.name
                ));
            }
            if let Some(target) = &step.goto
                && self.index_of(target).is_none()
            {
                return Err(format!(
                    "scenario {}: step {index} goes to unknown step {target}",
                    self.name
                ));
            }
            for call in &step.calls {
                if call.arguments.is_some() == call.input.is_some() {
                    return Err(format!(
                        "scenario {}: call of {} in step {index} needs exactly one of arguments and input",
                        self.name, call.tool
                    ));
                }
            }
        }
        Ok(())
    }

    fn index_of(&self, id: &str) -> Option<usize> {
        self.steps
            .iter()
            .position(|step| step.id.as_deref() == Some(id))
    }

    /// The step that plays at `view`, searching from `cursor`.
    fn select(&self, cursor: usize, view: &View<'_>) -> Option<usize> {
        let wrap = if matches!(self.on_exhausted, Exhaustion::Loop) {
            0..cursor.min(self.steps.len())
        } else {
            0..0
        };
        (cursor..self.steps.len())
            .chain(wrap)
            .find(|&i| self.steps[i].when.iter().all(|c| c.holds(view)))
    }

    /// The cursor after step `index` played.
    fn after(&self, index: usize) -> usize {
        match &self.steps[index].goto {
            Some(target) => self.index_of(target).unwrap_or(self.steps.len()),
            None => index + 1,
        }
    }

    /// The index of the step that plays now in `context` (`None`: exhausted), replaying the
    /// model's earlier turns: runs of model items, separated by user messages or tool outputs.
    /// A continuation of a response replayed here resumes where that replay stood.
    pub fn current_step(&self, context: &Context) -> Option<usize> {
        let items = &context.items;
        let tools = context.request.tools.as_slice();
        let tools_hash = {
            let mut hasher = DefaultHasher::new();
            serde_json::to_string(tools)
                .unwrap_or_default()
                .hash(&mut hasher);
            hasher.finish()
        };
        let resumed = context
            .request
            .previous_response_id
            .as_deref()
            .and_then(|id| self.replays.0.lock().get(id).copied())
            .filter(|replay| {
                replay.tools == tools_hash
                    && replay.items <= items.len()
                    && replay.items > 0
                    && fingerprint(&items[replay.items - 1]) == replay.last
            });
        let mut replay = resumed.unwrap_or(Replay {
            items: 0,
            last: 0,
            tools: tools_hash,
            cursor: 0,
            turns: 0,
            in_turn: false,
            last_user: None,
        });
        for (index, item) in items.iter().enumerate().skip(replay.items) {
            let model = is_model_item(item);
            if model && !replay.in_turn {
                let view = View {
                    items: &items[..index],
                    turn: replay.turns,
                    tools,
                    last_user: replay.last_user,
                };
                replay.cursor = match self.select(replay.cursor, &view) {
                    Some(index) => self.after(index),
                    None => self.steps.len(),
                };
                replay.turns += 1;
            }
            replay.in_turn = model;
            if matches!(item, Item::Message(m) if m.role == Role::User) {
                replay.last_user = Some(index);
            }
        }
        replay.items = items.len();
        replay.last = items.last().map_or(0, fingerprint);
        let view = View {
            items,
            turn: replay.turns,
            tools,
            last_user: replay.last_user,
        };
        let step = self.select(replay.cursor, &view);
        self.replays
            .0
            .lock()
            .put(context.response_id.clone(), replay);
        step
    }

    /// What the model answers now in `context`; its first message acknowledges what the user
    /// said since the model last wrote one ([`acknowledge`]).
    pub fn plan(&self, context: &Context) -> Vec<Output> {
        let mut outputs = self.scripted(context);
        if let Some(said) = unanswered_user_text(&context.items) {
            acknowledge(&mut outputs, &said);
        }
        outputs
    }

    /// What the script says the model answers now in `context`.
    fn scripted(&self, context: &Context) -> Vec<Output> {
        let Some(index) = self.current_step(context) else {
            return match &self.on_exhausted {
                Exhaustion::Message(text) => vec![Output::Message(text.clone())],
                Exhaustion::Fail(kind) => vec![Output::Fail(*kind)],
                Exhaustion::Loop => vec![Output::Message(EXHAUSTED.into())],
            };
        };
        let step = &self.steps[index];
        let mut outputs = Vec::new();
        if let Some(text) = &step.reasoning {
            outputs.push(Output::Reasoning(text.clone()));
        }
        if let Some(text) = &step.message {
            outputs.push(Output::Message(text.clone()));
        }
        outputs.extend(
            step.calls
                .iter()
                .map(|call| Output::Call(call.plan(&context.request.tools))),
        );
        if let Some(kind) = step.fail {
            outputs.push(Output::Fail(kind));
        }
        outputs
    }
}

/// The user's words the model has not answered: the latest user message since the model's
/// last turn — a steer's input (`response.steer`), or what the user wrote when the agent
/// stopped — when the model has taken a turn at all. Walks back only over the items since that
/// turn (the new input), so a long conversation costs nothing more.
fn unanswered_user_text(items: &[Item]) -> Option<String> {
    let mut said: Option<&tether_protocol::items::Message> = None;
    for item in items.iter().rev() {
        if is_model_item(item) {
            let text = said?;
            let text: String = text
                .content
                .text()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            return (!text.is_empty()).then_some(text);
        }
        if said.is_none()
            && let Item::Message(message) = item
            && message.role == Role::User
        {
            said = Some(message);
        }
    }
    None
}

/// The longest quote of the user's words an acknowledgement carries, in characters.
const QUOTE_CHARS: usize = 200;

/// Makes the first message of `outputs` acknowledge `said` (quoted, cut at [`QUOTE_CHARS`]), or
/// adds one before the calls when the turn has none — so a steer visibly changes the run even
/// where the script does not branch on it.
fn acknowledge(outputs: &mut Vec<Output>, said: &str) {
    let quote = match said.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", &said[..cut]),
        None => said.to_string(),
    };
    let note = format!("Understood: “{quote}”.");
    if let Some(Output::Message(text)) =
        outputs.iter_mut().find(|o| matches!(o, Output::Message(_)))
    {
        *text = format!("{note} {text}");
        return;
    }
    let at = outputs
        .iter()
        .position(|o| !matches!(o, Output::Reasoning(_)))
        .unwrap_or(outputs.len());
    outputs.insert(at, Output::Message(note));
}

impl Call {
    /// The call as the offered tool takes it: raw input for a custom tool, JSON arguments for
    /// a function (a tool that is not offered is called as a function).
    fn plan(&self, tools: &[Tool]) -> ToolCallPlan {
        let as_json = || match (&self.arguments, &self.input) {
            (Some(arguments), _) => arguments.to_string(),
            (None, input) => json!({ "input": input }).to_string(),
        };
        match find_tool(tools, &self.tool) {
            Some(Offered::Custom) => ToolCallPlan {
                begin: ModelEvent::BeginCustomToolCall {
                    name: self.tool.clone(),
                    call_id: None,
                },
                input: match (&self.input, &self.arguments) {
                    (Some(input), _) => input.clone(),
                    (None, arguments) => {
                        arguments.as_ref().map(Value::to_string).unwrap_or_default()
                    }
                },
            },
            Some(Offered::Function { namespace }) => ToolCallPlan {
                begin: ModelEvent::BeginFunctionCall {
                    name: self.tool.clone(),
                    namespace: namespace.map(str::to_string),
                    call_id: None,
                },
                input: as_json(),
            },
            None => ToolCallPlan {
                begin: ModelEvent::BeginFunctionCall {
                    name: self.tool.clone(),
                    namespace: None,
                    call_id: None,
                },
                input: as_json(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::ResponseCreate;
    use tether_protocol::items::{ToolCallOutput, ToolOutputContent};

    fn call(name: &str, id: &str) -> Item {
        Item::FunctionCall(tether_protocol::items::FunctionCall {
            id: None,
            call_id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
            namespace: None,
            status: None,
        })
    }

    fn output(id: &str, text: &str) -> Item {
        Item::FunctionCallOutput(ToolCallOutput {
            id: None,
            call_id: id.into(),
            output: ToolOutputContent::Text(text.into()),
            status: None,
        })
    }

    const BRANCHING: &str = r#"{"name": "b", "steps": [
        {"id": "run", "calls": [{"tool": "shell", "arguments": {"cmd": "test"}}]},
        {"id": "red", "when": [{"output_contains": "FAIL"}], "message": "red",
         "calls": [{"tool": "shell", "arguments": {"cmd": "fix"}}], "goto": "run"},
        {"id": "green", "when": [{"not": {"output_contains": "FAIL"}}], "message": "green"}
    ], "on_exhausted": {"fail": "server_error"}}"#;

    fn messages(outputs: &[Output]) -> Vec<&str> {
        outputs
            .iter()
            .filter_map(|o| match o {
                Output::Message(text) => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_cursor_is_replayed_from_the_conversation() {
        let scenario = Scenario::from_json(BRANCHING).unwrap();
        let request = ResponseCreate::new("m", "go");
        let mut items = vec![Item::user_text("go")];
        let at = |items: &[Item]| {
            scenario.current_step(&crate::sim::testing::context_with(
                request.clone(),
                items.to_vec(),
            ))
        };
        assert_eq!(at(&items), Some(0));
        items.extend([call("shell", "c1"), output("c1", "1 FAIL")]);
        assert_eq!(at(&items), Some(1), "a failing run branches to red");
        items.extend([
            Item::assistant_text("m1", "red", tether_protocol::ItemStatus::Completed),
            call("shell", "c-fix"),
            output("c-fix", "fixed"),
        ]);
        assert_eq!(at(&items), Some(0), "red goes back to run");
        items.extend([call("shell", "c2"), output("c2", "all ok")]);
        assert_eq!(at(&items), Some(2), "a passing run branches to green");
        items.push(Item::assistant_text(
            "m2",
            "green",
            tether_protocol::ItemStatus::Completed,
        ));
        assert_eq!(at(&items), None);
        let plan = scenario.plan(&crate::sim::testing::context_with(
            request.clone(),
            items.clone(),
        ));
        assert_eq!(plan, [Output::Fail(FailureKind::ServerError)]);
        items.push(Item::user_text("again"));
        assert_eq!(at(&items), None, "the cursor spans the whole conversation");
    }

    #[test]
    fn a_continuation_resumes_the_replay_and_lands_where_a_whole_replay_does() {
        let scenario = Scenario::from_json(BRANCHING).unwrap();
        let fresh = |items: &[Item]| {
            Scenario::from_json(BRANCHING).unwrap().current_step(
                &crate::sim::testing::context_with(ResponseCreate::new("m", "go"), items.to_vec()),
            )
        };
        let mut items = vec![Item::user_text("go")];
        let mut previous: Option<String> = None;
        let turns = [
            vec![call("shell", "c1"), output("c1", "1 FAIL")],
            vec![
                Item::assistant_text("m1", "red", tether_protocol::ItemStatus::Completed),
                call("shell", "c-fix"),
                output("c-fix", "fixed"),
            ],
            vec![call("shell", "c2"), output("c2", "all ok")],
        ];
        for turn in turns.iter().map(Some).chain([None]) {
            let mut request = ResponseCreate::new("m", "go");
            request.previous_response_id = previous.clone();
            let context = crate::sim::testing::context_with(request, items.clone());
            let step = scenario.current_step(&context);
            assert_eq!(step, fresh(&items), "after {} items", items.len());
            let replay = scenario
                .replays
                .0
                .lock()
                .peek(&context.response_id)
                .copied();
            assert_eq!(replay.map(|r| r.items), Some(items.len()));
            previous = Some(context.response_id.clone());
            if let Some(turn) = turn {
                items.extend(turn.iter().cloned());
            }
        }
        // A request naming a response whose conversation it does not extend replays it all.
        let mut request = ResponseCreate::new("m", "go");
        request.previous_response_id = previous;
        let other = vec![
            Item::user_text("go"),
            call("shell", "c9"),
            output("c9", "FAIL"),
        ];
        let context = crate::sim::testing::context_with(request, other.clone());
        assert_eq!(scenario.current_step(&context), fresh(&other));
    }

    #[test]
    fn loop_wraps_around() {
        let scenario = Scenario::from_json(
            r#"{"name": "l", "steps": [{"message": "a"}, {"message": "b"}], "on_exhausted": "loop"}"#,
        )
        .unwrap();
        let request = ResponseCreate::new("m", "go");
        let mut items = vec![Item::user_text("go")];
        let mut said = Vec::new();
        for i in 0..3 {
            let plan = scenario.plan(&crate::sim::testing::context_with(
                request.clone(),
                items.clone(),
            ));
            let text = messages(&plan)[0].to_string();
            items.push(Item::assistant_text(
                format!("m{i}"),
                &text,
                tether_protocol::ItemStatus::Completed,
            ));
            items.push(output("x", "tool output between turns"));
            said.push(text);
        }
        assert_eq!(said, ["a", "b", "a"]);
    }

    #[test]
    fn the_first_message_after_a_steer_acknowledges_it() {
        let scenario = Scenario::from_json(BRANCHING).unwrap();
        let request = ResponseCreate::new("m", "go");
        let plan = |items: &[Item]| {
            scenario.plan(&crate::sim::testing::context_with(
                request.clone(),
                items.to_vec(),
            ))
        };
        // The task itself is not acknowledged.
        let mut items = vec![Item::user_text("go")];
        assert!(
            messages(&plan(&items)).is_empty(),
            "the first step only calls"
        );
        // A steer after the model's call: the next message quotes it.
        items.extend([
            call("shell", "c1"),
            Item::user_text("  use the\nother   file  "),
            output("c1", "1 FAIL"),
        ]);
        assert_eq!(
            messages(&plan(&items)),
            ["Understood: “use the other file”. red"],
            "the step's message, prefixed"
        );
        // Once answered, no more.
        items.extend([
            Item::assistant_text(
                "m1",
                "Understood: “use the other file”. red",
                tether_protocol::ItemStatus::Completed,
            ),
            call("shell", "c-fix"),
            output("c-fix", "fixed"),
        ]);
        assert!(messages(&plan(&items)).is_empty(), "{:?}", plan(&items));
        // A step without a message gets one, before its calls.
        items.push(Item::user_text("x".repeat(300)));
        let planned = plan(&items);
        let said = messages(&planned);
        assert_eq!(said.len(), 1);
        assert!(said[0].starts_with("Understood: “xxx") && said[0].ends_with("…”."));
        assert_eq!(said[0].chars().filter(|c| *c == 'x').count(), QUOTE_CHARS);
        assert!(matches!(planned[0], Output::Message(_)));
        assert!(matches!(planned[1], Output::Call(_)));
    }

    #[test]
    fn bad_scenarios_are_refused() {
        for bad in [
            r#"{"name": "x", "steps": []}"#,
            r#"{"name": "x", "steps": [{"id": "a"}]}"#,
            r#"{"name": "x", "steps": [{"message": "m", "goto": "nowhere"}]}"#,
            r#"{"name": "x", "steps": [{"message": "m", "when": [{"output_matches": "("}]}]}"#,
            r#"{"name": "x", "steps": [{"calls": [{"tool": "t"}]}]}"#,
            r#"{"name": "x", "steps": [{"message": "m", "typo": 1}]}"#,
        ] {
            assert!(Scenario::from_json(bad).is_err(), "{bad}");
        }
    }
}
