//! HTTP in a browser: the same API as the native backend's, over `fetch`. A streamed response
//! is read through the body's reader and decoded as Server-Sent Events while it arrives, so
//! the time to the first token is seen as it is over WebSocket. The browser pools and reuses
//! connections itself.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, ReadableStreamReadResult};

use super::{body_bytes, fetch, js_error_text};
use crate::diagnosis::{broken_stream, unreachable};
use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::frame::Frame;
use crate::reply::Reply;
use crate::sse::SseFrames;
use crate::turn::{Finished, TurnReader};

/// An HTTP client of one server.
pub struct Http {
    endpoint: Endpoint,
    /// A request has been answered: the browser holds a connection to the server.
    connected: bool,
}

/// A streamed response being read: its frames, in order, up to the end of the body; the body
/// is cancelled when this is dropped.
pub struct SseStream<'a> {
    /// Borrowed as the native stream borrows its connection, so that code written against one
    /// backend compiles against the other.
    _http: std::marker::PhantomData<&'a mut Http>,
    url: String,
    reader: Option<ReadableStreamDefaultReader>,
    frames: SseFrames,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http")
            .field("url", &self.endpoint.url(""))
            .field("connected", &self.connected)
            .finish()
    }
}

impl Http {
    pub fn new(endpoint: &Endpoint) -> Http {
        Http {
            endpoint: endpoint.clone(),
            connected: false,
        }
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Opens a connection now — `GET /v1/models`, cheap and authenticated like every request —
    /// so that the first request's time does not include connecting.
    pub async fn connect(&mut self) -> Result<(), Error> {
        if !self.connected {
            self.get("/v1/models").await?;
        }
        Ok(())
    }

    /// Whether a request has been answered (the browser keeps the connection alive).
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// `method path` with `body` (JSON when given); the reply whatever its status.
    pub async fn request(
        &mut self,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Reply, Error> {
        let url = self.endpoint.request_url(path);
        let response = self.send(method, &url, body.as_deref(), false).await?;
        let status = response.status();
        let headers = header_list(&response);
        let body = body_bytes(&response)
            .await
            .map_err(|detail| broken_stream(&url, &detail))?;
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    /// [`Http::stream`] of a body the caller serialized (it must say `"stream": true`).
    pub async fn stream_body(&mut self, body: Vec<u8>) -> Result<SseStream<'_>, Error> {
        let url = self.endpoint.request_url("/v1/responses");
        let response = self.send("POST", &url, Some(&body), true).await?;
        if response.status() != 200 {
            let body = body_bytes(&response).await.unwrap_or_default();
            return Err(Error::http(&url, response.status(), &body));
        }
        let stream = response
            .body()
            .ok_or_else(|| Error::Closed(format!("the response from {url} has no body")))?;
        let reader: ReadableStreamDefaultReader = stream
            .get_reader()
            .dyn_into()
            .map_err(|_| Error::Closed(format!("the body from {url} has no default reader")))?;
        Ok(SseStream {
            _http: std::marker::PhantomData,
            url,
            reader: Some(reader),
            frames: SseFrames::new(),
        })
    }

    async fn send(
        &mut self,
        method: &str,
        url: &str,
        body: Option<&[u8]>,
        event_stream: bool,
    ) -> Result<web_sys::Response, Error> {
        let mut headers = self.endpoint.request_headers();
        if body.is_some() {
            headers.push(("content-type", "application/json".to_string()));
        }
        if event_stream {
            headers.push(("accept", "text/event-stream".to_string()));
        }
        let response = fetch(method, url, &headers, body)
            .await
            .map_err(|detail| unreachable(url, &detail))?;
        self.connected = true;
        Ok(response)
    }
}

/// The response's headers (those CORS lets the page read), names in lower case.
fn header_list(response: &web_sys::Response) -> Vec<(String, String)> {
    let Ok(Some(entries)) = js_sys::try_iter(&response.headers()) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let pair: js_sys::Array = entry.dyn_into().ok()?;
            Some((pair.get(0).as_string()?, pair.get(1).as_string()?))
        })
        .collect()
}

impl SseStream<'_> {
    /// The next event; `Ok(None)` once the body ended.
    pub async fn next(&mut self) -> Result<Option<Frame>, Error> {
        loop {
            if let Some(frame) = self.frames.next_frame() {
                return Ok(Some(frame));
            }
            let Some(reader) = &self.reader else {
                return Ok(None);
            };
            let result = JsFuture::from(reader.read())
                .await
                .map_err(|e| broken_stream(&self.url, &js_error_text(&e)))?;
            let result: ReadableStreamReadResult = result.unchecked_into();
            if result.get_done().unwrap_or(false) {
                self.reader = None;
                if self.frames.finish() {
                    return Err(Error::Closed(format!(
                        "the response from {} ended inside an event",
                        self.url
                    )));
                }
                continue;
            }
            let bytes = js_sys::Uint8Array::new(&result.get_value()).to_vec();
            self.frames.push(&bytes);
        }
    }

    /// Reads to the terminal event, passing every frame to `observe` first; the rest of the
    /// body is cancelled.
    pub async fn finish_with(mut self, mut observe: impl FnMut(&Frame)) -> Result<Finished, Error> {
        let mut reader = TurnReader::new();
        loop {
            let Some(frame) = self.next().await? else {
                return Err(Error::Closed(format!(
                    "the response from {} ended before its terminal event",
                    self.url
                )));
            };
            observe(&frame);
            if let Some(finished) = reader.read(&frame)? {
                return Ok(finished);
            }
        }
    }
}

impl Drop for SseStream<'_> {
    fn drop(&mut self) {
        if let Some(reader) = self.reader.take() {
            // The server is done with this body (or the reader gave up on it): cancelling
            // frees it.
            let _ = reader.cancel();
        }
    }
}
