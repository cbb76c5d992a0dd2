//! The chat view's session: a prompt sent as one `response.create` over one WebSocket-mode
//! connection, opened at the first prompt and kept for the next ones (reopened once it ended),
//! and the answer streaming back into a [`Turn`].
//!
//! The browser's part comes in through [`ChatBrowser`] (opening the connection, the clock,
//! animation frames) and the screen through [`ChatScreen`], so the session runs natively in
//! tests; the chat view implements them over the page and its signals, and only renders.
//!
//! The turn is kept where the connection's reader updates it, and the screen gets a copy at
//! most once per animation frame ([`FrameBatch`]) — at the end at once — so a fast model's
//! many deltas do not each redraw the answer.

use std::cell::RefCell;
use std::rc::Rc;

use tether_client::Endpoint;
use tether_protocol::{ClientFrame, ResponseCreate};

use crate::agent::frame_batch::FrameBatch;
use crate::agent::turn::{RunStatus, Turn};
use crate::transport::ws::Incoming;

/// An open (or opening) connection.
pub trait ChatConnection {
    /// Sends a text frame (queued until the socket is open); the error says why it cannot.
    fn send(&self, text: String) -> Result<(), String>;

    /// Whether the connection is still usable: open, or opening.
    fn is_open(&self) -> bool;
}

/// What the session needs from the browser.
pub trait ChatBrowser {
    /// Opens a WebSocket-mode connection to `endpoint`; all it delivers goes to `deliver`, and
    /// one that does not open is said so there ([`Incoming::NotOpened`]).
    fn connect(
        &self,
        endpoint: Endpoint,
        deliver: Box<dyn Fn(Incoming)>,
    ) -> Box<dyn ChatConnection>;

    /// Milliseconds on the clock every timing is measured by.
    fn now_ms(&self) -> f64;

    /// Runs `frame` at the next animation frame.
    fn next_frame(&self, frame: Box<dyn FnOnce()>);
}

/// What the session changes on screen.
pub trait ChatScreen {
    /// Shows `turn`: at most once per animation frame while it streams, at once when it ends.
    fn show(&self, turn: Turn);
}

/// Where a prompt goes.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatTarget {
    /// The server's base URL (`http://host:port`), or why the page has none.
    pub base: Result<String, String>,
    /// Sent with every request; none when blank.
    pub api_key: String,
    /// The model (a speed profile of the simulator).
    pub model: String,
}

/// The chat view's state and what its form does.
pub struct ChatSession {
    browser: Rc<dyn ChatBrowser>,
    /// The turn as the connection's reader has it; the screen shows copies.
    live: Rc<RefCell<Turn>>,
    batch: FrameBatch,
    connection: RefCell<Option<Box<dyn ChatConnection>>>,
}

impl ChatSession {
    pub fn new(browser: Rc<dyn ChatBrowser>, screen: Rc<dyn ChatScreen>) -> ChatSession {
        let live = Rc::new(RefCell::new(Turn::default()));
        let scheduler = browser.clone();
        let shown = live.clone();
        let batch = FrameBatch::new(
            Box::new(move |frame| scheduler.next_frame(frame)),
            move || screen.show(shown.borrow().clone()),
        );
        ChatSession {
            browser,
            live,
            batch,
            connection: RefCell::new(None),
        }
    }

    /// Whether a turn is streaming (a second prompt then waits for it).
    pub fn is_busy(&self) -> bool {
        self.live.borrow().status == RunStatus::Running
    }

    /// Sends `prompt` to `target`: a blank prompt, or one while a turn streams, is ignored; the
    /// connection opens first if none is open. What fails becomes the turn's error.
    pub fn send(&self, prompt: &str, target: ChatTarget) {
        if prompt.trim().is_empty() || self.is_busy() {
            return;
        }
        let connected = self
            .connection
            .borrow()
            .as_ref()
            .is_some_and(|connection| connection.is_open());
        if !connected {
            match self.connect(&target) {
                Ok(connection) => *self.connection.borrow_mut() = Some(connection),
                Err(error) => {
                    self.set(Turn::failed(format!("cannot open the WebSocket: {error}")));
                    return;
                }
            }
        }
        let frame =
            ClientFrame::ResponseCreate(Box::new(ResponseCreate::new(target.model, prompt)));
        self.set(Turn::start(self.browser.now_ms()));
        let sent = match self.connection.borrow().as_ref() {
            Some(connection) => connection.send(frame.to_json()),
            None => Err("not connected".to_string()),
        };
        if let Err(error) = sent {
            self.live.borrow_mut().fail(format!("cannot send: {error}"));
            changed(&self.live, &self.batch);
        }
    }

    /// A connection to `target`'s server, whose deliveries advance the live turn.
    fn connect(&self, target: &ChatTarget) -> Result<Box<dyn ChatConnection>, String> {
        let base = target.base.as_ref().map_err(String::clone)?;
        let endpoint = Endpoint::new(base)
            .map_err(|error| error.to_string())?
            .with_api_key(target.api_key.trim());
        let (live, batch, clock) = (self.live.clone(), self.batch.clone(), self.browser.clone());
        let deliver = move |incoming| {
            live.borrow_mut().on_incoming(incoming, clock.now_ms());
            changed(&live, &batch);
        };
        Ok(self.browser.connect(endpoint, Box::new(deliver)))
    }

    fn set(&self, turn: Turn) {
        *self.live.borrow_mut() = turn;
        changed(&self.live, &self.batch);
    }
}

/// Publishes the live turn: at once if it is over, else at the next animation frame.
fn changed(live: &RefCell<Turn>, batch: &FrameBatch) {
    if live.borrow().status == RunStatus::Running {
        batch.changed();
    } else {
        batch.flush();
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use tether_protocol::{Response, ResponseStreamBuilder, ServerEvent, Usage};

    use super::*;

    /// Where the test's connection hands what it receives.
    type Deliver = Box<dyn Fn(Incoming)>;

    /// What the test's browser was asked, and the connection it handed out.
    #[derive(Default)]
    struct Page {
        /// The URL and key of every connection opened.
        opened: RefCell<Vec<(String, Option<String>)>>,
        deliver: RefCell<Option<Deliver>>,
        sent: Rc<RefCell<Vec<String>>>,
        open: Rc<Cell<bool>>,
        /// Why a send fails, if it should.
        refuse: Rc<RefCell<Option<String>>>,
        frames: RefCell<Vec<Box<dyn FnOnce()>>>,
        clock: Cell<f64>,
        shown: RefCell<Vec<Turn>>,
    }

    struct Connection {
        sent: Rc<RefCell<Vec<String>>>,
        open: Rc<Cell<bool>>,
        refuse: Rc<RefCell<Option<String>>>,
    }

    impl ChatConnection for Connection {
        fn send(&self, text: String) -> Result<(), String> {
            if let Some(why) = self.refuse.borrow().clone() {
                return Err(why);
            }
            self.sent.borrow_mut().push(text);
            Ok(())
        }

        fn is_open(&self) -> bool {
            self.open.get()
        }
    }

    impl ChatBrowser for Page {
        fn connect(
            &self,
            endpoint: Endpoint,
            deliver: Box<dyn Fn(Incoming)>,
        ) -> Box<dyn ChatConnection> {
            self.opened
                .borrow_mut()
                .push((endpoint.url(""), endpoint.api_key().map(str::to_string)));
            *self.deliver.borrow_mut() = Some(deliver);
            self.open.set(true);
            Box::new(Connection {
                sent: self.sent.clone(),
                open: self.open.clone(),
                refuse: self.refuse.clone(),
            })
        }

        fn now_ms(&self) -> f64 {
            self.clock.get()
        }

        fn next_frame(&self, frame: Box<dyn FnOnce()>) {
            self.frames.borrow_mut().push(frame);
        }
    }

    impl ChatScreen for Page {
        fn show(&self, turn: Turn) {
            self.shown.borrow_mut().push(turn);
        }
    }

    impl Page {
        fn deliver(&self, event: ServerEvent, at: f64) {
            self.clock.set(at);
            (self.deliver.borrow().as_ref().expect("a connection"))(Incoming::Event(Box::new(
                event,
            )));
        }

        fn run_frame(&self) {
            let frames: Vec<_> = self.frames.borrow_mut().drain(..).collect();
            for frame in frames {
                frame();
            }
        }

        fn last_shown(&self) -> Turn {
            self.shown
                .borrow()
                .last()
                .cloned()
                .expect("something shown")
        }
    }

    fn session() -> (Rc<Page>, ChatSession) {
        let page = Rc::new(Page::default());
        let session = ChatSession::new(page.clone(), page.clone());
        (page, session)
    }

    fn target() -> ChatTarget {
        ChatTarget {
            base: Ok("http://127.0.0.1:8080".into()),
            api_key: " sk-1 ".into(),
            model: "spark".into(),
        }
    }

    fn answer(id: &str) -> ResponseStreamBuilder {
        let request = ResponseCreate::new("spark", "hi");
        ResponseStreamBuilder::new(Response::in_progress(id, 1, &request), None)
    }

    #[test]
    fn a_prompt_opens_the_connection_and_the_answer_streams_into_the_turn() {
        let (page, session) = session();
        page.clock.set(100.0);
        session.send("Why?", target());
        assert_eq!(
            *page.opened.borrow(),
            [(
                "http://127.0.0.1:8080".to_string(),
                Some("sk-1".to_string())
            )],
            "the key is trimmed"
        );
        let sent: serde_json::Value = serde_json::from_str(&page.sent.borrow()[0]).unwrap();
        assert_eq!(
            sent,
            serde_json::json!({"type": "response.create", "model": "spark", "input": "Why?"})
        );
        assert!(session.is_busy());

        let mut b = answer("resp_1");
        for event in b.start().into_iter().chain(b.begin_message("msg_1")) {
            page.deliver(event, 110.0);
        }
        for (i, piece) in ["Because", " one", " connection"].iter().enumerate() {
            page.deliver(b.text_delta(piece), 150.0 + 10.0 * i as f64);
        }
        assert!(
            page.shown.borrow().is_empty(),
            "nothing drawn before the animation frame"
        );
        page.run_frame();
        let streaming = page.last_shown();
        assert_eq!(streaming.text, "Because one connection");
        assert_eq!(streaming.status, RunStatus::Running);

        for event in b.complete(Usage::new(4, 0, 3, 0), 2) {
            page.deliver(event, 200.0);
        }
        let done = page.last_shown();
        assert_eq!(done.status, RunStatus::Done, "the end is shown at once");
        assert_eq!(done.response_id.as_deref(), Some("resp_1"));
        assert_eq!(done.ttft_ms(), Some(50.0));
        assert_eq!(done.total_ms(), Some(100.0));
        assert!(!session.is_busy());
    }

    #[test]
    fn the_connection_is_kept_for_the_next_prompt_and_reopened_once_it_ended() {
        let (page, session) = session();
        session.send("one", target());
        let mut b = answer("resp_1");
        for event in b
            .start()
            .into_iter()
            .chain(b.complete(Usage::new(1, 0, 1, 0), 0))
        {
            page.deliver(event, 1.0);
        }
        session.send("two", target());
        assert_eq!(page.opened.borrow().len(), 1, "the same connection");
        assert_eq!(page.sent.borrow().len(), 2);

        page.open.set(false);
        (page.deliver.borrow().as_ref().unwrap())(Incoming::Closed(
            "closed by the server (1001: going away)".into(),
        ));
        assert_eq!(
            page.last_shown().error.as_deref(),
            Some("the connection closed mid-turn: closed by the server (1001: going away)")
        );
        session.send("three", target());
        assert_eq!(page.opened.borrow().len(), 2, "a new connection");
    }

    #[test]
    fn a_blank_prompt_or_one_while_an_answer_streams_is_ignored() {
        let (page, session) = session();
        session.send("  \n", target());
        assert!(page.opened.borrow().is_empty());
        assert!(page.shown.borrow().is_empty());
        session.send("first", target());
        session.send("second", target());
        assert_eq!(
            page.sent.borrow().len(),
            1,
            "the second waits for the first"
        );
    }

    #[test]
    fn what_cannot_open_or_send_fails_the_turn_and_says_why() {
        let (page, session) = session();
        let nowhere = ChatTarget {
            base: Err("no window".into()),
            ..target()
        };
        session.send("hi", nowhere);
        assert_eq!(
            page.last_shown().error.as_deref(),
            Some("cannot open the WebSocket: no window")
        );
        let bad = ChatTarget {
            base: Ok("ftp://h".into()),
            ..target()
        };
        session.send("hi", bad);
        let error = page.last_shown().error.unwrap();
        assert!(
            error.starts_with("cannot open the WebSocket: invalid URL 'ftp://h'"),
            "{error}"
        );
        assert!(page.opened.borrow().is_empty());

        *page.refuse.borrow_mut() = Some("the WebSocket is closed".into());
        session.send("hi", target());
        let failed = page.last_shown();
        assert_eq!(failed.status, RunStatus::Failed);
        assert_eq!(
            failed.error.as_deref(),
            Some("cannot send: the WebSocket is closed")
        );
        assert!(!session.is_busy(), "a failed send leaves the form usable");
    }

    #[test]
    fn a_connection_that_does_not_open_fails_the_turn_with_the_diagnosis() {
        let (page, session) = session();
        session.send("hi", target());
        page.open.set(false);
        (page.deliver.borrow().as_ref().unwrap())(Incoming::NotOpened("401: wrong API key".into()));
        let failed = page.last_shown();
        assert_eq!(
            failed.error.as_deref(),
            Some("cannot open the WebSocket: 401: wrong API key")
        );
        session.send("again", target());
        assert_eq!(page.opened.borrow().len(), 2, "tried again");
    }
}
