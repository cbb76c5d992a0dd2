//! WebSocket mode on `GET /v1/responses`: one task per connection.
//!
//! The connection is accepted by [`upgrade`] (who may connect, what the connection is given).
//! It is split so a slow response never blocks reading: this module's reader decodes
//! frames and answers bad ones at once; the [`lanes`] run the requests (a second request while
//! one runs is queued, not rejected), each one a [`turn`] against the connection cache; and the
//! [`writer`] owns the socket's sending half. When the client goes away the reader ends, the
//! lanes are aborted (generation stops) and everything the connection held — its cache
//! included — is dropped. When the connection reaches its lifetime, the requests already
//! queued finish, then an error frame says why it ends.

mod continuations;
mod control;
mod lanes;
mod queue;
mod quiet;
mod turn;
mod undecodable;
mod upgrade;
mod writer;

pub use upgrade::upgrade;

use std::ops::ControlFlow;

use axum::extract::ws::{CloseFrame, Message};
use futures_util::{Sink, Stream, StreamExt};
use tether_protocol::{ClientFrame, DecodeError, ServerEvent, decode_client_frame_with};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::AppState;
use crate::error::ApiFailure;
use crate::lifecycle::ConnectionGuard;
use crate::pipeline::{Disconnected, RequestOptions};
use lanes::{LaneRefusal, Lanes};
use quiet::{Check, Quiet};
use turn::send_error;
use undecodable::Undecodable;

/// Serves one connection until the client closes it: reads and decodes frames, answers a bad one
/// at once with an error frame, and hands requests to their lanes.
///
/// Generic over the socket so a test can drive it with channels instead of a network (the tests
/// below do).
pub async fn handle_socket<S, E>(
    socket: S,
    state: AppState,
    options: RequestOptions,
    place: ConnectionGuard,
) where
    S: Stream<Item = Result<Message, E>> + Sink<Message> + Send + 'static,
    E: std::error::Error + 'static,
{
    state.metrics.ws_connected();
    let (sink, mut stream) = socket.split();
    let (mut reader, writer) = Reader::open(&state, options, sink);
    let ending = reader.read(&mut stream).await;
    // The reader's end drops its senders: the writer sends what is queued, then the close frame.
    reader.end(ending).await;
    let _ = writer.await;
    state.metrics.ws_disconnected();
    drop(place);
}

/// The reading half of a connection: the lanes it hands requests to, the channels to the
/// writer, and the client's quiet times. Each step of reading is a method; the connection goes
/// on while one returns `Continue` and ends for the reason a `Break` carries.
struct Reader {
    state: AppState,
    lanes: Lanes,
    /// Events for the writer. They travel boxed: tokio allocates a channel's first block (32
    /// slots) at once, and 32 inline 888-byte `ServerEvent`s made every idle connection ~10 KiB
    /// heavier (BENCHMARKS.md, "Load": 23.9 → 13.8 KiB a connection).
    out_tx: mpsc::Sender<Box<ServerEvent>>,
    /// The close frame the writer ends with, when the reader chose one (a message over the size
    /// limit: 1009); otherwise a close frame without a code.
    close_tx: Option<oneshot::Sender<CloseFrame>>,
    /// Asks the writer to ping the client.
    ping_tx: mpsc::Sender<()>,
    quiet: Quiet,
}

impl Reader {
    /// The reader of a connection, and the writer it starts on `sink`.
    fn open<K>(state: &AppState, options: RequestOptions, sink: K) -> (Reader, JoinHandle<()>)
    where
        K: Sink<Message> + Unpin + Send + 'static,
    {
        let (out_tx, out_rx) = mpsc::channel::<Box<ServerEvent>>(256);
        let (close_tx, close_rx) = oneshot::channel::<CloseFrame>();
        let (ping_tx, ping_rx) = mpsc::channel::<()>(1);
        let meter = options.conditions.meter.clone();
        let writer = writer::spawn(sink, out_rx, ping_rx, close_rx, meter);
        let reader = Reader {
            state: state.clone(),
            lanes: Lanes::new(state.clone(), out_tx.clone(), options),
            out_tx,
            close_tx: Some(close_tx),
            ping_tx,
            quiet: Quiet::new(state),
        };
        (reader, writer)
    }

    /// Reads `stream` until the connection ends, and says why it ended. The connection's
    /// lifetime is checked between frames (a response already running finishes), as are the
    /// server's shutdown and the client's quiet times.
    async fn read<T, E>(&mut self, stream: &mut T) -> Ending
    where
        T: Stream<Item = Result<Message, E>> + Unpin,
        E: std::error::Error + 'static,
    {
        let lifetime = tokio::time::sleep(self.state.ws_lifetime);
        tokio::pin!(lifetime);
        loop {
            let message = tokio::select! {
                biased;
                _ = &mut lifetime => return Ending::Expired,
                () = self.state.lifecycle.draining() => return Ending::Draining,
                () = self.quiet.tick() => match self.on_quiet() {
                    ControlFlow::Continue(()) => continue,
                    ControlFlow::Break(ending) => return ending,
                },
                message = stream.next() => match message {
                    Some(message) => message,
                    None => return Ending::ClientGone,
                },
            };
            self.quiet.heard();
            if let ControlFlow::Break(ending) = self.on_message(message).await {
                return ending;
            }
        }
    }

    /// A quiet time came due: a client silent for a ping interval is pinged; one that did not
    /// answer is gone; a connection idle for too long ends.
    fn on_quiet(&mut self) -> ControlFlow<Ending> {
        match self.quiet.check(self.lanes.busy()) {
            Check::Fine => ControlFlow::Continue(()),
            Check::Ping => {
                let _ = self.ping_tx.try_send(());
                ControlFlow::Continue(())
            }
            Check::Gone => ControlFlow::Break(Ending::ClientGone),
            Check::Idle => ControlFlow::Break(Ending::Idle),
        }
    }

    /// What one read brought: a frame, or the error that ends the connection.
    async fn on_message<E>(&mut self, message: Result<Message, E>) -> ControlFlow<Ending>
    where
        E: std::error::Error + 'static,
    {
        match message {
            Ok(Message::Text(text)) => self.on_text(text.as_str()).await,
            Ok(Message::Binary(_)) => self.on_binary().await,
            Ok(Message::Close(_)) => ControlFlow::Break(Ending::ClientGone),
            Ok(Message::Ping(_) | Message::Pong(_)) => ControlFlow::Continue(()),
            Err(error) => ControlFlow::Break(self.on_read_error(error).await),
        }
    }

    /// A text frame: a request goes to its lane, a continuation to the response it continues,
    /// and a frame that does not decode is answered.
    async fn on_text(&mut self, text: &str) -> ControlFlow<Ending> {
        let default_model = self.lanes.options().default_model.as_deref();
        let frame = decode_client_frame_with(text, default_model);
        let connection = &self.lanes.connection;
        let out = &self.out_tx;
        let sent = match frame {
            Ok(ClientFrame::ResponseCreate(request)) => match self.lanes.submit(*request) {
                Ok(()) => Ok(()),
                Err(refused) => return self.refuse(*refused).await,
            },
            Ok(ClientFrame::ResponseAppend(frame)) => {
                let append_mode = self.lanes.options().append_mode;
                continuations::append(connection, frame, append_mode, out).await
            }
            Ok(ClientFrame::ResponseInject(frame)) => {
                continuations::inject(connection, frame, out).await
            }
            Ok(ClientFrame::ResponseSteer(frame)) => {
                continuations::steer(connection, frame, out).await
            }
            Err(error) => return self.on_undecodable(text, error).await,
        };
        unless_gone(sent)
    }

    /// A text frame that did not decode, read once for what its answer needs.
    async fn on_undecodable(&mut self, text: &str, error: DecodeError) -> ControlFlow<Ending> {
        match Undecodable::read(text) {
            // A malformed steer is handed back (`response.steer.failed`, `invalid_input`).
            frame if frame.frame_type() == Some("response.steer") => {
                let (target, failed) = continuations::malformed_steer(frame, error);
                let connection = &self.lanes.connection;
                unless_gone(
                    continuations::steer_refused(connection, &target, failed, &self.out_tx).await,
                )
            }
            // A malformed inject is answered with a 400, then the connection closes (the
            // multi-agent beta's rule: its input cannot be handed back).
            frame if frame.frame_type() == Some("response.inject") => {
                let failure = ApiFailure::new(400, error.to_api_error());
                let _ = send_error(&self.out_tx, failure, None).await;
                close(
                    &mut self.close_tx,
                    CLOSE_POLICY,
                    "malformed response.inject",
                );
                ControlFlow::Break(Ending::ClientGone)
            }
            frame => {
                self.refuse(LaneRefusal {
                    failure: ApiFailure::new(400, error.to_api_error()),
                    // A frame that names a valid lane gets its error on that lane, so a client
                    // with several requests in flight knows which one was refused.
                    stream_id: frame.lane(),
                })
                .await
            }
        }
    }

    /// A binary frame: refused; the connection stays open.
    async fn on_binary(&self) -> ControlFlow<Ending> {
        self.refuse(LaneRefusal {
            failure: ApiFailure::bad_request(
                None,
                "binary frames are not supported; send JSON text frames",
                None,
            ),
            stream_id: None,
        })
        .await
    }

    /// A read failed: the connection ends. A message over the size limit cannot be skipped (its
    /// bytes are still on the wire): the client is told why, then the connection closes with
    /// 1009 (message too big).
    async fn on_read_error<E>(&mut self, error: E) -> Ending
    where
        E: std::error::Error + 'static,
    {
        tracing::debug!("websocket read failed: {error}");
        if is_too_large(&error) {
            let max = self.state.max_frame_bytes;
            let failure = ApiFailure::bad_request(
                Some("message_too_large"),
                format!(
                    "The WebSocket message is larger than this server accepts ({max} bytes, --max-frame-bytes); the connection closes. Reconnect and send a smaller message."
                ),
                None,
            );
            let _ = send_error(&self.out_tx, failure, None).await;
            let reason = format!("message larger than {max} bytes");
            close(&mut self.close_tx, CLOSE_TOO_LARGE, &reason);
        }
        Ending::ClientGone
    }

    /// Answers a frame refused before it reached a lane with an error frame, on the lane it
    /// named.
    async fn refuse(&self, refused: LaneRefusal) -> ControlFlow<Ending> {
        unless_gone(send_error(&self.out_tx, refused.failure, refused.stream_id).await)
    }

    /// Ends the connection for `ending`: the lanes stop at once (the client is gone, or the
    /// connection idled) or finish what they hold (its lifetime passed, the server shuts down),
    /// and the client is told why when it can be. Dropping the reader then lets the writer end.
    async fn end(self, ending: Ending) {
        let Reader {
            state,
            lanes,
            out_tx,
            mut close_tx,
            ..
        } = self;
        match ending {
            Ending::ClientGone => lanes.abort(),
            Ending::Expired => {
                // Let queued work finish, then tell the client why the connection ends: it
                // reconnects and continues with `previous_response_id` (stored) or the full
                // context.
                lanes.finish().await;
                let _ = send_error(&out_tx, lifetime_reached(state.ws_lifetime), None).await;
            }
            Ending::Idle => {
                let failure = ApiFailure::bad_request(
                    Some("websocket_idle_timeout"),
                    "This WebSocket connection was idle (no request, nothing running) for longer \
                     than the server allows (--idle-timeout-seconds). Open a new connection to \
                     continue.",
                    None,
                );
                let _ = send_error(&out_tx, failure, None).await;
                close(&mut close_tx, CLOSE_GOING_AWAY, "idle timeout");
                lanes.abort();
            }
            Ending::Draining => {
                // Running responses finish (or are ended at the deadline: the stream fails
                // them); requests not started yet are refused on their lanes.
                lanes.finish().await;
                close(&mut close_tx, CLOSE_GOING_AWAY, "server shutting down");
            }
        }
    }
}

/// Why a connection's reader stopped.
enum Ending {
    /// The client closed, went away or broke the protocol: everything stops.
    ClientGone,
    /// `--ws-lifetime-seconds` passed.
    Expired,
    /// `--idle-timeout-seconds` passed with nothing running.
    Idle,
    /// The server shuts down.
    Draining,
}

/// Goes on while the client takes what it is sent; ends the connection when it is gone.
fn unless_gone(sent: Result<(), Disconnected>) -> ControlFlow<Ending> {
    match sent {
        Ok(()) => ControlFlow::Continue(()),
        Err(Disconnected) => ControlFlow::Break(Ending::ClientGone),
    }
}

/// Has the writer end with a close frame of `code`.
fn close(close_tx: &mut Option<oneshot::Sender<CloseFrame>>, code: u16, reason: &str) {
    if let Some(close) = close_tx.take() {
        let _ = close.send(CloseFrame {
            code,
            reason: reason.to_string().into(),
        });
    }
}

/// The error frame of a connection that reached `--ws-lifetime-seconds`.
fn lifetime_reached(lifetime: std::time::Duration) -> ApiFailure {
    let seconds = lifetime.as_secs_f64();
    let limit = if seconds >= 60.0 {
        format!("{:.0}-minute", seconds / 60.0)
    } else if seconds.fract() == 0.0 {
        format!("{seconds:.0}-second")
    } else {
        format!("{seconds:.1}-second")
    };
    ApiFailure::bad_request(
        Some("websocket_connection_limit_reached"),
        format!(
            "This WebSocket connection reached its {limit} limit. Open a new connection to continue."
        ),
        None,
    )
}

/// The close code of a connection the server ends (shutting down, idle): RFC 6455 7.4.1's
/// "going away".
const CLOSE_GOING_AWAY: u16 = 1001;

/// The close code for a message larger than the server accepts (RFC 6455, 7.4.1).
const CLOSE_TOO_LARGE: u16 = 1009;
/// The close code for a message that violates the connection's rules (RFC 6455, 7.4.1).
const CLOSE_POLICY: u16 = 1008;

/// Whether a read error is tungstenite's refusal of a message or frame over the size limit
/// (`Error::Capacity`), found in the error or its sources (`axum::Error` wraps it).
fn is_too_large(error: &(dyn std::error::Error + 'static)) -> bool {
    std::iter::successors(Some(error), |error| error.source()).any(|error| {
        matches!(
            error.downcast_ref::<tungstenite::Error>(),
            Some(tungstenite::Error::Capacity(_))
        )
    })
}

#[cfg(test)]
mod tests {
    //! The connection driven through channels instead of a socket (as axum's
    //! `testing-websockets` example does): what the reader, the lanes and the writer do together,
    //! without a network.

    use std::pin::Pin;
    use std::task::{Context, Poll};

    use clap::Parser;
    use serde_json::{Value, json};
    use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

    use super::*;
    use crate::Config;

    /// A socket whose other end is the test: frames the test sends arrive on `incoming`, frames
    /// the server sends go to `outgoing`. A read fails with the error axum's socket gives.
    struct ChannelSocket {
        incoming: UnboundedReceiver<Result<Message, axum::Error>>,
        outgoing: UnboundedSender<Message>,
    }

    impl Stream for ChannelSocket {
        type Item = Result<Message, axum::Error>;

        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            self.incoming.poll_recv(cx)
        }
    }

    impl Sink<Message> for ChannelSocket {
        type Error = mpsc::error::SendError<Message>;

        fn poll_ready(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn start_send(self: Pin<&mut Self>, message: Message) -> Result<(), Self::Error> {
            self.outgoing.send(message)
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }
    }

    /// The next frame the server sent, as JSON.
    async fn next_event(from_server: &mut UnboundedReceiver<Message>) -> Value {
        let message = tokio::time::timeout(std::time::Duration::from_secs(10), from_server.recv())
            .await
            .expect("a frame within 10 s")
            .expect("the connection is open");
        match message {
            Message::Text(text) => serde_json::from_str(text.as_str()).expect("frames are JSON"),
            other => panic!("unexpected frame {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_connection_serves_turns_answers_bad_frames_and_ends_when_the_client_goes() {
        let config = Config::parse_from([
            "tether-server",
            "--data-dir",
            ":memory:",
            "--tokens-per-second",
            "100000",
            "--seed",
            "1",
        ]);
        let state = AppState::new(&config).unwrap();
        let (to_server, incoming) = unbounded_channel();
        let (outgoing, mut from_server) = unbounded_channel();
        let connection = tokio::spawn(handle_socket(
            ChannelSocket { incoming, outgoing },
            state.clone(),
            RequestOptions::default(),
            state.lifecycle.connect().unwrap(),
        ));
        let send = |frame: Value| {
            to_server
                .send(Ok(Message::Text(frame.to_string().into())))
                .unwrap()
        };

        send(
            json!({"type": "response.create", "model": "tether-sim", "input": "hi", "store": false}),
        );
        let id = loop {
            let event = next_event(&mut from_server).await;
            if event["type"] == "response.completed" {
                break event["response"]["id"].as_str().unwrap().to_string();
            }
        };
        // A bad frame gets an error frame; the connection stays usable and the cache holds the
        // first response for a continuation.
        send(json!({"type": "response.nonsense"}));
        let error = next_event(&mut from_server).await;
        assert_eq!(error["type"], "error");
        assert_eq!(error["status"], 400);
        send(
            json!({"type": "response.create", "model": "tether-sim", "input": [],
            "store": false, "previous_response_id": id}),
        );
        loop {
            let event = next_event(&mut from_server).await;
            assert_ne!(event["type"], "error", "{event}");
            if event["type"] == "response.completed" {
                break;
            }
        }
        assert!(
            state
                .metrics
                .render()
                .contains("tether_cache_lookups_total{result=\"hit\"} 1\n")
        );

        // The client goes away: the connection ends and is no longer counted.
        drop(to_server);
        connection.await.unwrap();
        assert!(
            state
                .metrics
                .render()
                .contains("tether_ws_connections_active 0\n")
        );
    }

    /// The test's end of a connection, and the task serving it.
    struct Client {
        state: AppState,
        to_server: UnboundedSender<Result<Message, axum::Error>>,
        from_server: UnboundedReceiver<Message>,
        connection: tokio::task::JoinHandle<()>,
    }

    /// A connection of a server started with `args` (and an in-memory store).
    fn connect(args: &[&str]) -> Client {
        let config = Config::parse_from(
            ["tether-server", "--data-dir", ":memory:"]
                .iter()
                .chain(args),
        );
        let state = AppState::new(&config).unwrap();
        let (to_server, incoming) = unbounded_channel();
        let (outgoing, from_server) = unbounded_channel();
        let connection = tokio::spawn(handle_socket(
            ChannelSocket { incoming, outgoing },
            state.clone(),
            RequestOptions::default(),
            state.lifecycle.connect().unwrap(),
        ));
        Client {
            state,
            to_server,
            from_server,
            connection,
        }
    }

    impl Client {
        fn send(&self, frame: Value) {
            let text = frame.to_string();
            self.to_server.send(Ok(Message::Text(text.into()))).unwrap();
        }

        /// The close frame that ends the connection (`None`: a close without a code), after
        /// which the server sends nothing and the connection's task ends.
        async fn closes(mut self) -> Option<CloseFrame> {
            let frame = match self.from_server.recv().await {
                Some(Message::Close(frame)) => frame,
                None => return None,
                Some(other) => panic!("expected the close, got {other:?}"),
            };
            assert!(self.from_server.recv().await.is_none(), "then nothing");
            self.connection.await.unwrap();
            frame
        }
    }

    /// Asserts `close` is a close frame of `code` for `reason`.
    fn assert_close(close: Option<CloseFrame>, code: u16, reason: &str) {
        let close = close.expect("a close frame with a code");
        assert_eq!((close.code, close.reason.as_str()), (code, reason));
    }

    /// The read error axum gives for a message over the limit.
    fn too_long() -> axum::Error {
        axum::Error::new(tungstenite::Error::Capacity(
            tungstenite::error::CapacityError::MessageTooLong {
                size: 2048,
                max_size: 1024,
            },
        ))
    }

    #[tokio::test]
    async fn a_message_over_the_limit_is_told_then_closed_with_1009() {
        let Client {
            state,
            to_server,
            mut from_server,
            connection,
        } = connect(&["--max-frame-bytes", "1024"]);
        to_server.send(Err(too_long())).unwrap();
        let error = next_event(&mut from_server).await;
        assert_eq!(error["type"], "error", "{error}");
        assert_eq!(error["status"], 400);
        assert_eq!(error["error"]["code"], "message_too_large");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("(1024 bytes, --max-frame-bytes)"),
            "{message}"
        );
        match from_server.recv().await {
            Some(Message::Close(Some(close))) => {
                assert_eq!(close.code, 1009);
                assert_eq!(close.reason.as_str(), "message larger than 1024 bytes");
            }
            other => panic!("expected a close frame with 1009, got {other:?}"),
        }
        assert!(from_server.recv().await.is_none(), "then nothing");
        connection.await.unwrap();
        assert!(
            state
                .metrics
                .render()
                .contains("tether_ws_connections_active 0\n")
        );
    }

    #[tokio::test]
    async fn another_read_error_ends_the_connection_without_a_word() {
        let Client {
            to_server,
            mut from_server,
            connection,
            ..
        } = connect(&["--max-frame-bytes", "1024"]);
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        to_server
            .send(Err(axum::Error::new(tungstenite::Error::Io(reset))))
            .unwrap();
        assert!(
            from_server.recv().await.is_none(),
            "no error frame, no close code"
        );
        connection.await.unwrap();
    }

    #[test]
    fn a_message_too_large_is_told_by_the_error_type_not_its_text() {
        use tungstenite::error::CapacityError;
        // axum's error, tungstenite's own, and its header capacity refusal.
        assert!(is_too_large(&too_long()));
        let bare = tungstenite::Error::Capacity(CapacityError::MessageTooLong {
            size: 2,
            max_size: 1,
        });
        assert!(is_too_large(&bare));
        assert!(is_too_large(&axum::Error::new(
            tungstenite::Error::Capacity(CapacityError::TooManyHeaders)
        )));
        // Other errors are not, whatever they say.
        assert!(!is_too_large(&axum::Error::new(
            tungstenite::Error::ConnectionClosed
        )));
        let said = std::io::Error::other("Message too long: Space limit exceeded");
        assert!(!is_too_large(&said));
        assert!(!is_too_large(&axum::Error::new(said)));
    }

    #[tokio::test]
    async fn bad_frames_are_answered_each_their_own_way() {
        let mut client = connect(&[]);
        // A binary frame: refused, on no lane.
        client
            .to_server
            .send(Ok(Message::Binary(vec![1, 2].into())))
            .unwrap();
        let error = next_event(&mut client.from_server).await;
        assert_eq!(
            (&error["type"], &error["status"]),
            (&json!("error"), &json!(400))
        );
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .contains("binary frames")
        );
        assert!(error.get("stream_id").is_none(), "{error}");
        // A request that does not decode: refused on the lane it names.
        client.send(json!({"type": "response.create", "input": 5, "stream_id": "L1"}));
        let error = next_event(&mut client.from_server).await;
        assert_eq!(
            (&error["type"], &error["stream_id"]),
            (&json!("error"), &json!("L1"))
        );
        // A malformed steer: handed back, naming its target.
        client.send(
            json!({"type": "response.steer", "previous_response_id": "resp_x",
            "input": "hi", "stream_id": "a"}),
        );
        let failed = next_event(&mut client.from_server).await;
        assert_eq!(failed["type"], "response.steer.failed", "{failed}");
        assert_eq!(failed["error"]["code"], "invalid_input");
        assert_eq!(failed["steer"]["input"], "hi");
        assert_eq!(failed["steer"]["previous_response_id"], "resp_x");
        // Pings and pongs are heard, not answered.
        let ping = Message::Ping(Default::default());
        client.to_server.send(Ok(ping)).unwrap();
        // A malformed inject: a 400, then the connection closes with 1008.
        client.send(json!({"type": "response.inject", "input": []}));
        let error = next_event(&mut client.from_server).await;
        assert_eq!(
            (&error["type"], &error["status"]),
            (&json!("error"), &json!(400))
        );
        assert_close(client.closes().await, 1008, "malformed response.inject");
    }

    #[tokio::test]
    async fn a_close_frame_ends_the_connection() {
        let client = connect(&[]);
        client.to_server.send(Ok(Message::Close(None))).unwrap();
        assert!(client.closes().await.is_none());
    }

    #[tokio::test]
    async fn a_silent_client_is_pinged_then_taken_for_gone() {
        let mut client = connect(&[
            "--ping-interval-seconds",
            "0.1",
            "--idle-timeout-seconds",
            "0",
        ]);
        let ping = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            client.from_server.recv(),
        );
        assert!(matches!(ping.await, Ok(Some(Message::Ping(_)))));
        // No pong: gone, without a close code.
        assert!(client.closes().await.is_none());
    }

    #[tokio::test]
    async fn an_idle_connection_is_told_then_closed_with_1001() {
        let mut client = connect(&[
            "--idle-timeout-seconds",
            "0.1",
            "--ping-interval-seconds",
            "0",
        ]);
        let error = next_event(&mut client.from_server).await;
        assert_eq!(error["error"]["code"], "websocket_idle_timeout", "{error}");
        assert_close(client.closes().await, 1001, "idle timeout");
    }

    #[tokio::test]
    async fn a_connection_at_its_lifetime_is_told_why_it_ends() {
        let mut client = connect(&[
            "--ws-lifetime-seconds",
            "0.1",
            "--idle-timeout-seconds",
            "0",
        ]);
        let error = next_event(&mut client.from_server).await;
        assert_eq!(
            error["error"]["code"], "websocket_connection_limit_reached",
            "{error}"
        );
        assert!(client.closes().await.is_none());
    }

    #[tokio::test]
    async fn a_shutdown_closes_the_connection_with_1001() {
        let client = connect(&[]);
        client.state.lifecycle.drain();
        assert_close(client.closes().await, 1001, "server shutting down");
    }
}
