//! The conversation as the agent loop carries it from one turn to the next: every item so far,
//! what the next request adds to it, the response it continues, and how that request goes out
//! (`response.create`, `response.append`, or nothing for a successor the server starts).
//!
//! Plain state with the loop's rules for it — what a turn's record says it sent, how a turn is
//! sent again after a lost connection, what a steered response's successor starts with — so
//! each rule is tested here rather than through a whole run ([`super::run`] drives it).

use tether_protocol::{Input, Item, Response, ResponseCreate};

use crate::agent::record::{Resume, SentAs, TurnRecord};

/// What a long-running response had before this turn resumed it: its output items and its
/// usage so far (`response.done` reports the whole response's), so that a turn records its own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Resumed {
    pub output: usize,
    pub input_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
}

impl Resumed {
    /// Where `response` paused.
    pub fn after(response: &Response) -> Resumed {
        let usage = response.usage.as_ref();
        Resumed {
            output: response.output.len(),
            input_tokens: usage.map_or(0, |u| u.input_tokens),
            cached_tokens: usage.map_or(0, |u| u.input_tokens_details.cached_tokens),
            output_tokens: usage.map_or(0, |u| u.output_tokens),
        }
    }
}

/// How a turn's response ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnEnd {
    /// `response.completed`.
    Completed,
    /// `response.done`: the long-running response paused at client tool calls.
    Paused,
    /// `response.incomplete`, reason `steered`: a successor follows.
    Steered,
}

/// The conversation between turns.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    /// Every item so far: the full context a request without a previous response carries.
    pub items: Vec<Item>,
    /// What the next request adds: the task, then each turn's tool outputs.
    pub new_items: Vec<Item>,
    /// The response the next request continues.
    pub previous: Option<String>,
    /// How the next turn's response is asked for.
    pub sent_as: SentAs,
    /// What a long-running response already had.
    pub resumed: Resumed,
    /// The steers a successor starts with.
    pub steered_inputs: usize,
}

impl Thread {
    /// A conversation that starts with the user's `task`.
    pub fn new(task: &str) -> Thread {
        let items = vec![Item::user_text(task)];
        Thread {
            new_items: items.clone(),
            items,
            previous: None,
            sent_as: SentAs::Create,
            resumed: Resumed::default(),
            steered_inputs: 0,
        }
    }

    /// The record of turn `number`, sending `request` at `now`: an append resumes the same
    /// response, a successor sends its steers and stores nothing.
    pub fn record(&self, number: usize, request: &ResponseCreate, now: f64) -> TurnRecord {
        let mut record = TurnRecord::new(number, request, now);
        record.sent_as = self.sent_as;
        match self.sent_as {
            SentAs::Append => record.response_id = self.previous.clone(),
            SentAs::Successor => {
                record.input_items = self.steered_inputs;
                record.store = false;
            }
            SentAs::Create => {}
        }
        record
    }

    /// After the connection was lost: `request` made fit to send again on a new one, and how.
    /// A stored previous response survives the connection; a cached one, a paused long-running
    /// one or a successor does not, so the full context goes instead.
    pub fn resend(&mut self, request: &mut ResponseCreate) -> Resume {
        let resume = if self.sent_as == SentAs::Create
            && request.previous_response_id.is_some()
            && request.stores()
        {
            Resume::PreviousResponse
        } else {
            request.previous_response_id = None;
            request.input = Input::Items(self.items.clone());
            Resume::FullContext
        };
        self.sent_as = SentAs::Create;
        self.resumed = Resumed::default();
        resume
    }

    /// The turn's output joins the conversation; its tool calls are returned, to be answered.
    pub fn take_output(&mut self, output: Vec<Item>) -> Vec<Item> {
        let calls = output
            .iter()
            .filter(|item| matches!(item, Item::FunctionCall(_) | Item::CustomToolCall(_)))
            .cloned()
            .collect();
        self.items.extend(output);
        calls
    }

    /// The next turn is the successor the server starts for a steered response, with the steers'
    /// `texts` as its input.
    pub fn succeed_with(&mut self, texts: &[String]) {
        self.items.extend(texts.iter().map(Item::user_text));
        self.steered_inputs = texts.len();
        self.new_items.clear();
        self.sent_as = SentAs::Successor;
        self.resumed = Resumed::default();
    }

    /// The next turn answers the tool calls of `response`, which ended as `end`: a paused
    /// long-running response is resumed with `response.append`, anything else continued with a
    /// new `response.create`.
    pub fn answer_calls_of(&mut self, response: &Response, end: TurnEnd, long_running: bool) {
        let paused = end == TurnEnd::Paused;
        self.resumed = if paused {
            Resumed::after(response)
        } else {
            Resumed::default()
        };
        self.sent_as = if long_running && paused {
            SentAs::Append
        } else {
            SentAs::Create
        };
        self.new_items.clear();
    }

    /// A tool's output: part of the conversation, and of what the next request adds.
    pub fn add_tool_output(&mut self, item: Item) {
        self.items.push(item.clone());
        self.new_items.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::Usage;
    use tether_protocol::items::{FunctionCall, ItemStatus, ToolCallOutput, ToolOutputContent};

    fn call(id: &str) -> Item {
        Item::FunctionCall(FunctionCall {
            id: None,
            call_id: id.into(),
            name: "shell".into(),
            arguments: r#"{"command":"ls"}"#.into(),
            namespace: None,
            status: None,
        })
    }

    fn output(id: &str) -> Item {
        Item::FunctionCallOutput(ToolCallOutput {
            id: None,
            call_id: id.into(),
            output: ToolOutputContent::Text("a.js".into()),
            status: None,
        })
    }

    #[test]
    fn a_thread_starts_with_the_task_as_its_only_new_item() {
        let thread = Thread::new("fix the bug");
        assert_eq!(thread.items, [Item::user_text("fix the bug")]);
        assert_eq!(thread.new_items, thread.items);
        assert_eq!((thread.sent_as, thread.previous), (SentAs::Create, None));
    }

    #[test]
    fn records_say_how_the_turn_was_sent() {
        let request = ResponseCreate::new("m", "x");
        let mut thread = Thread::new("x");
        thread.previous = Some("resp_1".into());
        thread.sent_as = SentAs::Append;
        let append = thread.record(2, &request, 5.0);
        assert_eq!(
            (append.sent_as, append.response_id.as_deref()),
            (SentAs::Append, Some("resp_1"))
        );
        thread.sent_as = SentAs::Successor;
        thread.steered_inputs = 2;
        let successor = thread.record(3, &request, 6.0);
        assert_eq!((successor.input_items, successor.store), (2, false));
        assert_eq!(successor.response_id, None);
    }

    #[test]
    fn a_stored_previous_response_is_resent_as_it_was() {
        let mut thread = Thread::new("x");
        let mut request = ResponseCreate::new("m", "x");
        request.previous_response_id = Some("resp_1".into());
        request.store = Some(true);
        let before = request.clone();
        assert_eq!(thread.resend(&mut request), Resume::PreviousResponse);
        assert_eq!(request, before);
    }

    #[test]
    fn anything_else_is_resent_with_the_full_context() {
        let mut thread = Thread::new("x");
        thread.take_output(vec![call("c1")]);
        thread.add_tool_output(output("c1"));
        for (sent_as, store) in [
            (SentAs::Create, false),
            (SentAs::Append, true),
            (SentAs::Successor, true),
        ] {
            thread.sent_as = sent_as;
            thread.resumed.output = 3;
            let mut request = ResponseCreate::new("m", "x");
            request.previous_response_id = Some("resp_1".into());
            request.store = Some(store);
            assert_eq!(
                thread.resend(&mut request),
                Resume::FullContext,
                "{sent_as:?}"
            );
            assert_eq!(request.previous_response_id, None);
            assert_eq!(request.input, Input::Items(thread.items.clone()));
            assert_eq!(
                (thread.sent_as, thread.resumed),
                (SentAs::Create, Resumed::default())
            );
        }
    }

    #[test]
    fn output_joins_the_conversation_and_its_calls_come_back() {
        let mut thread = Thread::new("x");
        let text = Item::assistant_text("msg_1", "looking", ItemStatus::Completed);
        let calls = thread.take_output(vec![text.clone(), call("c1"), call("c2")]);
        assert_eq!(calls, [call("c1"), call("c2")]);
        assert_eq!(thread.items.len(), 4);
        assert_eq!(thread.items[1], text);
    }

    #[test]
    fn a_paused_long_running_response_is_resumed_with_an_append() {
        let mut response = Response::in_progress("resp_l", 1, &ResponseCreate::new("m", "x"));
        response.output = vec![call("c1")];
        response.usage = Some(Usage::new(100, 40, 7, 0));
        let mut thread = Thread::new("x");
        thread.answer_calls_of(&response, TurnEnd::Paused, true);
        assert_eq!(thread.sent_as, SentAs::Append);
        assert_eq!(
            thread.resumed,
            Resumed {
                output: 1,
                input_tokens: 100,
                cached_tokens: 40,
                output_tokens: 7,
            }
        );
        assert!(thread.new_items.is_empty());
        // Completed, or not the long-running design: a new response.create.
        thread.answer_calls_of(&response, TurnEnd::Completed, true);
        assert_eq!(
            (thread.sent_as, thread.resumed),
            (SentAs::Create, Resumed::default())
        );
        thread.answer_calls_of(&response, TurnEnd::Paused, false);
        assert_eq!(thread.sent_as, SentAs::Create);
    }

    #[test]
    fn a_successor_starts_with_the_steers_and_sends_nothing() {
        let mut thread = Thread::new("x");
        thread.succeed_with(&["use tabs".into(), "and tests".into()]);
        assert_eq!(
            (thread.sent_as, thread.steered_inputs),
            (SentAs::Successor, 2)
        );
        assert!(thread.new_items.is_empty());
        assert_eq!(thread.items.last(), Some(&Item::user_text("and tests")));
    }
}
