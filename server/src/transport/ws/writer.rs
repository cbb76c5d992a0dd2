//! The writing half of a connection: one task owns the socket's sink and sends the events every
//! lane queues (and the reader's pings), then a close frame.
//!
//! Events already queued behind the first go out in the same flush: at thousands of tokens a
//! second, one write (and one wake-up of the client) per several frames, not per frame.
//!
//! On a connection with an emulated link, a terminal event's timing summary learns what the
//! way down cost as it is written (`transport/link.rs`): the frames before it are flushed to
//! the socket first, so the link's account holds them.

use axum::extract::ws::{CloseFrame, Message};
use futures_util::{Sink, SinkExt};
use tether_link::LinkHandle;
use tether_protocol::ServerEvent;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::transport::link;

/// Frames written before one flush, at most.
const WRITE_BATCH: usize = 64;

/// Starts the writer: it sends what arrives on `events` (and a ping for each on `pings`) until
/// every sender of `events` is gone, then the close frame `close` carries (when the reader chose
/// one), else a close frame without a code. `link` is the socket's, when the connection asked
/// for one.
pub fn spawn<S>(
    mut sink: S,
    mut events: mpsc::Receiver<Box<ServerEvent>>,
    mut pings: mpsc::Receiver<()>,
    close: oneshot::Receiver<CloseFrame>,
    link: Option<LinkHandle>,
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
            if feed(&mut sink, event, link.as_ref()).await.is_err() {
                break;
            }
            for _ in 1..WRITE_BATCH {
                let Ok(event) = events.try_recv() else { break };
                if feed(&mut sink, event, link.as_ref()).await.is_err() {
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

/// Feeds `event` to the sink as a text frame; a summary waiting for the link's way down gets it
/// first, with the frames before it flushed.
async fn feed<S>(
    sink: &mut S,
    mut event: Box<ServerEvent>,
    link: Option<&LinkHandle>,
) -> Result<(), S::Error>
where
    S: Sink<Message> + Unpin,
{
    if let Some(link) = link
        && link::wants_download(&event)
    {
        sink.flush().await?;
        link::finish_summary(&mut event, link, |event| {
            let payload = event.to_json().len();
            payload + frame_header(payload)
        });
    }
    sink.feed(Message::Text(event.to_json().into())).await
}

/// The header of an unmasked server frame carrying `payload` bytes (RFC 6455, 5.2).
fn frame_header(payload: usize) -> usize {
    match payload {
        0..=125 => 2,
        126..=65_535 => 4,
        _ => 10,
    }
}
