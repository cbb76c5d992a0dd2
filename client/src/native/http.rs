//! HTTP over one hyper HTTP/1.1 connection, kept alive and reopened when it breaks: whole
//! replies (JSON, text), a non-streaming `POST /v1/responses`, and a streamed one read as SSE.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

use crate::endpoint::Endpoint;
use crate::error::Error;
use crate::frame::Frame;
use crate::reply::Reply;
use crate::sse::SseFrames;
use crate::turn::{Finished, TurnReader};

/// How long the end of an SSE body may lag behind its terminal event before the connection is
/// given up (and a new one opened for the next request).
const BODY_END_WAIT: Duration = Duration::from_secs(5);

/// An HTTP client of one server: one kept-alive connection, opened at the first request.
///
/// ```no_run
/// # async fn example() -> Result<(), tether_client::Error> {
/// use tether_client::{Endpoint, Http};
/// use tether_protocol::ResponseCreate;
///
/// let mut http = Http::new(&Endpoint::new("http://127.0.0.1:8080")?);
/// // JSON: the whole response at once.
/// let response = http.create(&ResponseCreate::new("spark", "Hello")).await?;
/// // SSE: the same request streamed, read to its terminal event.
/// let finished = http.turn(&ResponseCreate::new("spark", "Hello again")).await?;
/// assert_eq!(finished.response.output_text().is_empty(), response.output_text().is_empty());
/// # Ok(()) }
/// ```
pub struct Http {
    endpoint: Endpoint,
    sender: Option<SendRequest<Full<Bytes>>>,
    /// The last streamed body did not end after its terminal event: do not reuse.
    broken: bool,
}

/// A streamed response being read: its frames, in order, up to the end of the body.
pub struct SseStream<'a> {
    http: &'a mut Http,
    url: String,
    body: Incoming,
    frames: SseFrames,
    ended: bool,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http")
            .field("url", &self.endpoint.url(""))
            .field("connected", &self.is_connected())
            .finish_non_exhaustive()
    }
}

impl Http {
    /// A client of `endpoint`'s server; it connects at the first request.
    pub fn new(endpoint: &Endpoint) -> Http {
        Http {
            endpoint: endpoint.clone(),
            sender: None,
            broken: false,
        }
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Opens the connection now, if none is open (so that a first request's time does not
    /// include the connect).
    pub async fn connect(&mut self) -> Result<(), Error> {
        if self.is_connected() {
            return Ok(());
        }
        let url = self.endpoint.url("");
        let stream = super::connect_tcp(&self.endpoint, &url).await?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|error| Error::Connect {
                url,
                detail: format!("the HTTP handshake failed: {error}"),
                io: None,
            })?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        self.sender = Some(sender);
        self.broken = false;
        Ok(())
    }

    /// Whether a connection is open and reusable.
    pub fn is_connected(&self) -> bool {
        !self.broken && self.sender.as_ref().is_some_and(|s| !s.is_closed())
    }

    /// `method path` with `body` (JSON when given); the reply whatever its status.
    pub async fn request(
        &mut self,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
    ) -> Result<Reply, Error> {
        let (url, response) = self.send(method, path, body, false).await?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_string(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|error| {
                self.sender = None;
                Error::Closed(format!("the reply from {url} broke off: {error}"))
            })?
            .to_bytes()
            .to_vec();
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    /// [`Http::stream`] of a body the caller serialized (it must say `"stream": true`).
    pub async fn stream_body(&mut self, body: Vec<u8>) -> Result<SseStream<'_>, Error> {
        let (url, response) = self.send("POST", "/v1/responses", Some(body), true).await?;
        let status = response.status().as_u16();
        let body = response.into_body();
        if status != 200 {
            let bytes = body
                .collect()
                .await
                .map_err(|error| Error::Closed(format!("the reply from {url} broke off: {error}")))?
                .to_bytes();
            return Err(Error::http(&url, status, &bytes));
        }
        Ok(SseStream {
            http: self,
            url,
            body,
            frames: SseFrames::new(),
            ended: false,
        })
    }

    async fn send(
        &mut self,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
        event_stream: bool,
    ) -> Result<(String, hyper::Response<Incoming>), Error> {
        let url = self.endpoint.url(path);
        self.connect().await?;
        let sender = self.sender.as_mut().expect("connected");
        if sender.ready().await.is_err() {
            // The server closed the kept-alive connection meanwhile: open another.
            self.sender = None;
            self.connect().await?;
        }
        let mut request = hyper::Request::builder()
            .method(method)
            .uri(self.endpoint.request_target(path))
            .header("host", self.endpoint.authority());
        if body.is_some() {
            request = request.header("content-type", "application/json");
        }
        if event_stream {
            request = request.header("accept", "text/event-stream");
        }
        for (name, value) in self.endpoint.request_headers() {
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|error| Error::Protocol(format!("cannot build {method} {url}: {error}")))?;
        let sender = self.sender.as_mut().expect("connected");
        match sender.send_request(request).await {
            Ok(response) => Ok((url, response)),
            Err(error) => {
                self.sender = None;
                Err(Error::Closed(format!("{method} {url}: {error}")))
            }
        }
    }
}

impl SseStream<'_> {
    /// The next event; `Ok(None)` once the body ended.
    pub async fn next(&mut self) -> Result<Option<Frame>, Error> {
        loop {
            if let Some(frame) = self.frames.next_frame() {
                return Ok(Some(frame));
            }
            if self.ended {
                return Ok(None);
            }
            match self.body.frame().await {
                Some(Ok(chunk)) => {
                    if let Ok(data) = chunk.into_data() {
                        self.frames.push(&data);
                    }
                }
                Some(Err(error)) => {
                    self.http.sender = None;
                    return Err(Error::Closed(format!(
                        "the response from {} broke off while it streamed: {error}",
                        self.url
                    )));
                }
                None => {
                    self.ended = true;
                    if self.frames.finish() {
                        return Err(Error::Closed(format!(
                            "the response from {} ended inside an event",
                            self.url
                        )));
                    }
                }
            }
        }
    }

    /// Reads to the terminal event, passing every frame to `observe` first; then reads the
    /// rest of the body so the connection can carry the next request.
    pub async fn finish_with(mut self, mut observe: impl FnMut(&Frame)) -> Result<Finished, Error> {
        let mut reader = TurnReader::new();
        let outcome = loop {
            let Some(frame) = self.next().await? else {
                return Err(Error::Closed(format!(
                    "the response from {} ended before its terminal event",
                    self.url
                )));
            };
            observe(&frame);
            match reader.read(&frame) {
                Ok(None) => {}
                Ok(Some(finished)) => break Ok(finished),
                Err(error) => break Err(error),
            }
        };
        let rest = async { while let Some(Ok(_)) = self.body.frame().await {} };
        if tokio::time::timeout(BODY_END_WAIT, rest).await.is_err() {
            self.http.broken = true;
        }
        outcome
    }
}
