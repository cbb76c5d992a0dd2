//! The writing half of a connection: one task owns the socket's sink and sends the events every
//! lane queues (and the reader's pings), then a close frame.
//!
//! Events already queued behind the first go out in the same flush: at thousands of tokens a
//! second, one write (and one wake-up of the client) per several frames, not per frame.

use axum::extract::ws::{CloseFrame, Message};
use futures_util::{Sink, SinkExt};
use tether_protocol::ServerEvent;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Frames written before one flush, at most.
const WRITE_BATCH: usize = 64;

/// Starts the writer: it sends what arrives on `events` (and a ping for each on `pings`) until
/// every sender of `events` is gone, then the close frame `close` carries (when the reader chose
/// one), else a close frame without a code.
pub fn spawn<S>(
    mut sink: S,
    mut events: mpsc::Receiver<Box<ServerEvent>>,
    mut pings: mpsc::Receiver<()>,
    close: oneshot::Receiver<CloseFrame>,
) -> JoinHandle<()>
where
    S: Sink<Message> + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        'write: loop {
            let event = tokio::select! {
                event = events.recv() => match event {
                    Some(event) => event,
                    None => break,
                },
                Some(()) = pings.recv() => {
                    if sink.send(Message::Ping(Default::default())).await.is_err() {
                        break;
                    }
                    continue;
                }
            };
            if sink
                .feed(Message::Text(event.to_json().into()))
                .await
                .is_err()
            {
                break;
            }
            for _ in 1..WRITE_BATCH {
                let Ok(event) = events.try_recv() else { break };
                if sink
                    .feed(Message::Text(event.to_json().into()))
                    .await
                    .is_err()
                {
                    break 'write;
                }
            }
            if sink.flush().await.is_err() {
                break;
            }
        }
        if let Ok(frame) = close.await {
            let _ = sink.send(Message::Close(Some(frame))).await;
        }
        let _ = sink.close().await;
    })
}
