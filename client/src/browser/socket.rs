//! The page's WebSocket, directly on web-sys, under [`crate::WebSocket`] (through
//! [`super::ws::WsConnection`]).
//!
//! Each received frame costs the page what the browser charges to hand it over (a task per
//! frame) plus what the page does with it, so this does as little as it can per frame: the
//! `message` handler only queues the frame's data and wakes the one task reading it; the reader
//! takes every queued frame in turn and converts each to a Rust string only when it reads it.
//! No channel, no task per frame, no copy before it is needed.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::Closure;
use web_sys::{BinaryType, CloseEvent, MessageEvent, WebSocket};

use super::js_error_text;

/// How a socket ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// Whether it had opened first: if not, the upgrade failed (the browser says no more).
    pub opened: bool,
    pub code: u16,
    pub reason: String,
}

impl Ended {
    /// In words: `closed by the server (1000: run finished)`.
    pub fn describe(&self) -> String {
        let reason = if self.reason.is_empty() {
            String::new()
        } else {
            format!(": {}", self.reason)
        };
        match self.code {
            1000 => format!("closed by the server ({}{reason})", self.code),
            1006 => "the connection was lost (1006, no close frame)".to_string(),
            code => format!("closed ({code}{reason})"),
        }
    }
}

/// What reading gives.
pub enum Next {
    Text(String),
    /// A binary frame, which the protocol does not use.
    Binary,
    Ended(Ended),
}

#[derive(Default)]
struct Shared {
    opened: Cell<bool>,
    ended: RefCell<Option<Ended>>,
    queue: RefCell<VecDeque<JsValue>>,
    waker: RefCell<Option<Waker>>,
}

impl Shared {
    fn wake(&self) {
        if let Some(waker) = self.waker.borrow_mut().take() {
            waker.wake();
        }
    }

    fn wait(&self, cx: &Context<'_>) {
        let mut slot = self.waker.borrow_mut();
        if !slot.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            *slot = Some(cx.waker().clone());
        }
    }
}

/// The socket's event handlers, kept alive as long as it is.
struct Handlers {
    _open: Closure<dyn FnMut(JsValue)>,
    _message: Closure<dyn FnMut(MessageEvent)>,
    _close: Closure<dyn FnMut(CloseEvent)>,
}

/// An open (or opening) WebSocket; closed with 1000 when dropped.
pub struct Socket {
    ws: WebSocket,
    shared: Rc<Shared>,
    _handlers: Handlers,
}

impl Socket {
    /// Starts opening `url`, offering `protocols` (`Sec-WebSocket-Protocol`; none when empty);
    /// the error is the browser's (a malformed URL, a blocked port, a malformed protocol).
    pub fn open(url: &str, protocols: &[String]) -> Result<Socket, String> {
        let ws = if protocols.is_empty() {
            WebSocket::new(url)
        } else {
            let offered = js_sys::Array::new();
            for protocol in protocols {
                offered.push(&JsValue::from_str(protocol));
            }
            WebSocket::new_with_str_sequence(url, &offered)
        }
        .map_err(|e| js_error_text(&e))?;
        ws.set_binary_type(BinaryType::Arraybuffer);
        let shared = Rc::new(Shared::default());
        let on_open = {
            let shared = shared.clone();
            Closure::<dyn FnMut(JsValue)>::new(move |_| {
                shared.opened.set(true);
                shared.wake();
            })
        };
        let on_message = {
            let shared = shared.clone();
            Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
                shared.queue.borrow_mut().push_back(event.data());
                shared.wake();
            })
        };
        let on_close = {
            let shared = shared.clone();
            Closure::<dyn FnMut(CloseEvent)>::new(move |event: CloseEvent| {
                shared.ended.borrow_mut().get_or_insert(Ended {
                    opened: shared.opened.get(),
                    code: event.code(),
                    reason: event.reason(),
                });
                shared.wake();
            })
        };
        use wasm_bindgen::JsCast;
        ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        Ok(Socket {
            ws,
            shared,
            _handlers: Handlers {
                _open: on_open,
                _message: on_message,
                _close: on_close,
            },
        })
    }

    /// Ready once the socket is open, or once it ended without opening.
    pub fn poll_open(&self, cx: &Context<'_>) -> Poll<Result<(), Ended>> {
        if let Some(ended) = self.shared.ended.borrow().clone() {
            return Poll::Ready(Err(ended));
        }
        if self.shared.opened.get() {
            return Poll::Ready(Ok(()));
        }
        self.shared.wait(cx);
        Poll::Pending
    }

    /// Waits until the socket is open (or ended without opening).
    pub async fn opened(&self) -> Result<(), Ended> {
        std::future::poll_fn(|cx| self.poll_open(cx)).await
    }

    /// The next frame, in order; once every frame is read, how the socket ended.
    pub fn poll_next(&self, cx: &Context<'_>) -> Poll<Next> {
        if let Some(data) = self.shared.queue.borrow_mut().pop_front() {
            return Poll::Ready(match data.as_string() {
                Some(text) => Next::Text(text),
                None => Next::Binary,
            });
        }
        if let Some(ended) = self.shared.ended.borrow().clone() {
            return Poll::Ready(Next::Ended(ended));
        }
        self.shared.wait(cx);
        Poll::Pending
    }

    /// The next frame.
    pub async fn next(&self) -> Next {
        std::future::poll_fn(|cx| self.poll_next(cx)).await
    }

    /// Sends a text frame; only once open.
    pub fn send(&self, text: &str) -> Result<(), String> {
        if !self.is_open() {
            return Err(match self.ended() {
                Some(ended) => ended.describe(),
                None => "the WebSocket is not open yet".into(),
            });
        }
        self.ws.send_with_str(text).map_err(|e| js_error_text(&e))
    }

    /// Open and not ended.
    pub fn is_open(&self) -> bool {
        self.shared.opened.get() && self.shared.ended.borrow().is_none()
    }

    /// How the socket ended, if it has.
    pub fn ended(&self) -> Option<Ended> {
        self.shared.ended.borrow().clone()
    }

    /// Closes with `code` and `reason`; what arrives after is dropped.
    pub fn close(&self, code: u16, reason: &str) {
        // Closing a socket that is closing or closed changes nothing.
        let _ = self.ws.close_with_code_and_reason(code, reason);
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onclose(None);
        // 1000: a normal close; the server may free the connection's cache.
        let _ = self
            .ws
            .close_with_code_and_reason(1000, "closed by the client");
    }
}
