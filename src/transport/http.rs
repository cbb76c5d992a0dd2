//! HTTP as a [`Transport`]: each turn is a `POST /v1/responses` with `stream: true`, on
//! `tether-client`'s [`Http`] — `fetch`'s streaming body decoded as Server-Sent Events while it
//! arrives (so the time to first token is measured the same way as over WebSocket), a request
//! that got no answer or a body that broke off named with its URL.
//!
//! Each streamed response is read by a task of its own ([`spawn_stream`]), which hands its
//! frames on; dropping the turn (the next request, a reconnect, the run's end) cancels the body
//! at once, so the server is done with it.

use futures::StreamExt;
use futures::channel::mpsc::{UnboundedReceiver, unbounded};
use futures::channel::oneshot;
use futures::future::{Either, LocalBoxFuture, select};
use tether_client::{Endpoint, Error, Frame, Http};
use tether_protocol::ResponseCreate;

use crate::transport::client::received;
use crate::transport::{Received, Transport, TransportError, TransportKind};

/// What a stream's task hands on, in order: `Answered` (or `Ended` with why not), then frames,
/// then `Ended`.
#[derive(Debug)]
enum Delivery {
    /// The server answered 200 and the body streams.
    Answered,
    Frame(Frame),
    /// The request failed, the body broke off, or it ended (`None`: at its end).
    Ended(Option<Error>),
}

/// One streamed response being read.
struct Stream {
    frames: UnboundedReceiver<Delivery>,
    /// Dropped to cancel the body.
    _cancel: oneshot::Sender<()>,
}

/// Posts `body` to `endpoint` on a task of its own, which hands the answer and every frame of
/// the body on until the body ends or the returned stream is dropped (which cancels the body).
fn spawn_stream(endpoint: &Endpoint, body: Vec<u8>) -> Stream {
    let (delivered, frames) = unbounded();
    let (cancel, mut cancelled) = oneshot::channel::<()>();
    let mut http = Http::new(endpoint);
    wasm_bindgen_futures::spawn_local(async move {
        let deliver = |delivery| delivered.unbounded_send(delivery).is_ok();
        let mut stream = match http.stream_body(body).await {
            Ok(stream) => stream,
            Err(error) => {
                deliver(Delivery::Ended(Some(error)));
                return;
            }
        };
        if !deliver(Delivery::Answered) {
            return;
        }
        loop {
            let read = {
                let next = std::pin::pin!(stream.next());
                match select(next, &mut cancelled).await {
                    Either::Left((read, _)) => read,
                    // Dropping the stream cancels the body's reader.
                    Either::Right(_) => return,
                }
            };
            let delivery = match read {
                Ok(Some(frame)) => Delivery::Frame(frame),
                Ok(None) => Delivery::Ended(None),
                Err(error) => Delivery::Ended(Some(error)),
            };
            let last = matches!(delivery, Delivery::Ended(_));
            if !deliver(delivery) || last {
                return;
            }
        }
    });
    Stream {
        frames,
        _cancel: cancel,
    }
}

/// `POST /v1/responses` with a streaming SSE body.
pub struct HttpTransport {
    endpoint: Endpoint,
    /// Opens the kept-alive connection before the first turn ([`Transport::ready`]).
    warm_up: Http,
    stream: Option<Stream>,
}

impl HttpTransport {
    /// A transport posting to `endpoint` (made by [`super::client::endpoint`], which asks for
    /// the server's per-stage timings on the terminal event).
    pub fn new(endpoint: Endpoint) -> Self {
        HttpTransport {
            warm_up: Http::new(&endpoint),
            endpoint,
            stream: None,
        }
    }

    async fn delivery(&mut self) -> Result<Delivery, TransportError> {
        let Some(stream) = self.stream.as_mut() else {
            return Err(TransportError::Closed("no response is streaming".into()));
        };
        let next = stream.frames.next().await;
        match next {
            Some(Delivery::Ended(error)) => {
                self.stream = None;
                Err(match error {
                    Some(error) => error.into(),
                    None => {
                        TransportError::Closed("the stream ended before a terminal event".into())
                    }
                })
            }
            Some(delivery) => Ok(delivery),
            None => {
                self.stream = None;
                Err(TransportError::Closed("the stream was dropped".into()))
            }
        }
    }
}

impl Transport for HttpTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Http
    }

    fn send<'a>(
        &'a mut self,
        _request: &'a ResponseCreate,
        body: &'a str,
    ) -> LocalBoxFuture<'a, Result<(), TransportError>> {
        Box::pin(async move {
            // The last turn's body, if still open, is cancelled first.
            self.stream = None;
            self.stream = Some(spawn_stream(&self.endpoint, body.as_bytes().to_vec()));
            loop {
                if let Delivery::Answered = self.delivery().await? {
                    return Ok(());
                }
            }
        })
    }

    fn next_event(&mut self) -> LocalBoxFuture<'_, Result<Received, TransportError>> {
        Box::pin(async move {
            loop {
                if let Delivery::Frame(frame) = self.delivery().await? {
                    return received(frame);
                }
            }
        })
    }

    fn reconnect(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            self.stream = None;
            Ok(())
        })
    }

    fn ready(&mut self) -> LocalBoxFuture<'_, Result<(), TransportError>> {
        // `GET /v1/models`: cheap, authenticated like every request, read to its end so the
        // connection goes back to the browser's pool for the first turn.
        Box::pin(async move { self.warm_up.connect().await.map_err(TransportError::from) })
    }
}
