//! One simulated agent: its connection, its conversation, and one turn at a time.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tether_protocol::items::ToolCallOutput;
use tether_protocol::items::ToolOutputContent;
use tether_protocol::{Input, Item, ResponseCreate, Tool};

use tether_client::{Endpoint, Http, WebSocket};

use super::Shared;
use super::config::{LoadArgs, Transport};
use super::text::filler;
use super::turn::{TurnDone, TurnError, http_turn, ws_turn};

/// The task every conversation starts with.
const TASK: &str = "The tests fail. Find out why and fix it.";

/// What every request of a run has in common, built once.
pub struct RequestTemplate {
    pub model: String,
    pub tools: Vec<Tool>,
    pub metadata: Option<Map<String, Value>>,
    /// Shared by every request (a clone is a count, not a copy).
    pub instructions: Option<Arc<str>>,
}

impl RequestTemplate {
    pub fn new(args: &LoadArgs) -> RequestTemplate {
        let shell: Tool = serde_json::from_value(json!({
            "type": "function", "name": "shell", "description": "Runs a shell command.",
            "parameters": {"type": "object", "required": ["command"],
                "properties": {"command": {"type": "array", "items": {"type": "string"}},
                               "workdir": {"type": "string"}, "timeout_ms": {"type": "integer"}}}
        }))
        .expect("a valid tool");
        let mut metadata = Map::new();
        if let Some(n) = args.output_tokens {
            metadata.insert("sim_output_tokens".into(), Value::String(n.to_string()));
        }
        if let Some(n) = args.reasoning_tokens {
            metadata.insert("sim_reasoning_tokens".into(), Value::String(n.to_string()));
        }
        RequestTemplate {
            model: args.model.clone(),
            tools: vec![shell],
            metadata: (!metadata.is_empty()).then_some(metadata),
            instructions: (args.instructions_tokens > 0).then(|| {
                filler(
                    "You are a coding agent. Project guide:",
                    args.instructions_tokens,
                )
                .into()
            }),
        }
    }
}

/// An agent's connection; both boxed, so that an agent without one stays small.
enum Conn {
    Ws(Box<WebSocket>),
    Http(Box<Http>),
}

/// How a turn went, for the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnResult {
    /// The model called the tool: its output is ready after the tool time.
    ToolCall,
    /// The conversation's last turn (the model's answer): a new conversation follows.
    Answer,
    Failed,
}

pub struct Agent {
    id: usize,
    transport: Transport,
    shared: Arc<Shared>,
    conn: Option<Conn>,
    /// The whole conversation so far (kept only when a request may need it: stateless HTTP,
    /// and WebSocket mode with --churn and no --store).
    conversation: Vec<Item>,
    keep_context: bool,
    previous: Option<String>,
    /// The next request's new input.
    pending: Vec<Item>,
    /// Whether the server lost the connection cache since the last response (a reconnect):
    /// without --store the next request must carry the full context.
    cache_lost: bool,
    /// Turns done in this conversation.
    turn: usize,
    conversation_index: usize,
    turns_on_connection: usize,
}

impl Agent {
    pub fn new(id: usize, shared: Arc<Shared>) -> Agent {
        let transport = shared.args.transport.of_client(id);
        let keep_context = match transport {
            Transport::Http => true,
            Transport::Ws => shared.args.churn.is_some() && !shared.args.store,
            _ => false,
        };
        let mut agent = Agent {
            id,
            transport,
            shared,
            conn: None,
            conversation: Vec::new(),
            keep_context,
            previous: None,
            pending: Vec::new(),
            cache_lost: false,
            turn: 0,
            conversation_index: 0,
            turns_on_connection: 0,
        };
        agent.start_conversation();
        agent
    }

    pub fn id(&self) -> usize {
        self.id
    }

    fn endpoint(&self) -> &Endpoint {
        &self.shared.endpoint
    }

    fn start_conversation(&mut self) {
        self.conversation.clear();
        self.previous = None;
        self.pending = vec![Item::user_text(TASK)];
        self.turn = 0;
        self.cache_lost = false;
    }

    /// Opens the connection if there is none; a failure is counted.
    pub async fn connect(&mut self) -> bool {
        let still_open = match &self.conn {
            Some(Conn::Http(http)) => http.is_connected(),
            Some(Conn::Ws(_)) => true,
            None => false,
        };
        if still_open {
            return true;
        }
        let started = std::time::Instant::now();
        let result = match self.transport {
            Transport::Ws => WebSocket::connect(self.endpoint())
                .await
                .map(|ws| Conn::Ws(Box::new(ws))),
            _ => {
                let mut http = Box::new(Http::new(self.endpoint()));
                http.connect().await.map(|()| Conn::Http(http))
            }
        };
        match result {
            Ok(conn) => {
                self.shared.stats.connect.record(started.elapsed());
                // A new connection has an empty cache: the conversation goes on from the store
                // (--store) or with the full context.
                if self.previous.is_some() {
                    self.cache_lost = true;
                }
                self.conn = Some(conn);
                self.turns_on_connection = 0;
                true
            }
            Err(error) => {
                self.shared.stats.error(&TurnError::from(error));
                false
            }
        }
    }

    /// Closes the connection (politely, for WebSocket).
    pub async fn disconnect(&mut self) {
        if let Some(Conn::Ws(ws)) = self.conn.take() {
            ws.close().await;
        }
        if self.previous.is_some() {
            self.cache_lost = true;
        }
    }

    /// Whether the agent has done its fixed share of work (without --duration).
    pub fn finished(&self) -> bool {
        self.conversation_index >= self.shared.args.conversations
    }

    /// Plays one turn: (re)connects if needed, sends the request, reads the response, and
    /// prepares the tool output the next turn sends.
    pub async fn turn(&mut self) -> TurnResult {
        let shared = self.shared.clone();
        let args = &shared.args;
        if let (Some(k), Some(Conn::Ws(_))) = (args.churn, &self.conn)
            && self.turns_on_connection >= k
        {
            self.disconnect().await;
        }
        if !self.connect().await {
            // A failed turn, which ends the conversation like any other failure; back off a
            // little so a dead server is not spun on.
            self.shared.stats.turn_failed();
            self.end_conversation();
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            return TurnResult::Failed;
        }
        let last_turn = self.turn + 1 == args.turns;
        let full_context = match self.transport {
            Transport::Http => true,
            Transport::Ws => self.cache_lost && !args.store,
            _ => false,
        };
        let template = &shared.template;
        let mut request = ResponseCreate::new(template.model.clone(), "");
        request.tools = template.tools.clone();
        request.metadata = template.metadata.clone();
        request.instructions = template.instructions.clone();
        request.tool_choice = Some(Value::String(
            if last_turn { "auto" } else { "required" }.into(),
        ));
        request.store = Some(match self.transport {
            Transport::Ws => args.store,
            Transport::Http => false,
            _ => true,
        });
        if self.transport != Transport::Ws {
            request.stream = Some(true);
        }
        let sent_items = if full_context {
            let mut items = std::mem::take(&mut self.conversation);
            items.append(&mut self.pending);
            items
        } else {
            request.previous_response_id = self.previous.clone();
            std::mem::take(&mut self.pending)
        };
        request.input = Input::Items(sent_items);
        let timeout = args.turn_timeout;
        let outcome = match self.conn.as_mut().expect("connected") {
            Conn::Ws(ws) => ws_turn(ws, &request, timeout).await,
            Conn::Http(http) => http_turn(http, &request, timeout).await,
        };
        let Input::Items(sent) = request.input else {
            unreachable!("input is always items")
        };
        self.turns_on_connection += 1;
        match outcome {
            Ok(done) => self.completed(done, sent, full_context, last_turn),
            Err(error) => {
                self.shared.stats.error(&error);
                self.shared.stats.turn_failed();
                if error.breaks_connection() {
                    self.conn = None;
                }
                self.end_conversation();
                TurnResult::Failed
            }
        }
    }

    fn completed(
        &mut self,
        done: TurnDone,
        sent: Vec<Item>,
        full_context: bool,
        last_turn: bool,
    ) -> TurnResult {
        self.shared.stats.turn_done(&done);
        let output = &done.response.output;
        let calls: Vec<&str> = output
            .iter()
            .filter_map(|item| match item {
                Item::FunctionCall(call) => Some(call.call_id.as_str()),
                _ => None,
            })
            .collect();
        if last_turn {
            self.end_conversation();
            return TurnResult::Answer;
        }
        if calls.is_empty() {
            self.shared
                .stats
                .error(&TurnError::Protocol("no_tool_call".into()));
            self.end_conversation();
            return TurnResult::Answer;
        }
        let args = &self.shared.args;
        self.pending = calls
            .iter()
            .map(|call_id| {
                let label = format!(
                    "[tool output {}/{}/{}]",
                    self.id, self.conversation_index, self.turn
                );
                Item::FunctionCallOutput(ToolCallOutput {
                    id: None,
                    call_id: call_id.to_string(),
                    output: ToolOutputContent::Text(filler(&label, args.tool_output_tokens)),
                    status: None,
                })
            })
            .collect();
        if full_context {
            // `sent` is the whole conversation before this response.
            self.conversation = sent;
        } else if self.keep_context {
            self.conversation.extend(sent);
        }
        if self.keep_context || full_context {
            self.conversation.extend(done.response.output);
        }
        self.previous = Some(done.response.id);
        self.cache_lost = false;
        self.turn += 1;
        TurnResult::ToolCall
    }

    fn end_conversation(&mut self) {
        self.conversation_index += 1;
        self.start_conversation();
    }
}
