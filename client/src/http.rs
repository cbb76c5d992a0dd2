//! The HTTP calls written once, over the two each backend's [`Http`] implements: `request` (a
//! whole reply: hyper natively, `fetch` in a browser) and `stream_body` (a streamed
//! `POST /v1/responses`, read as Server-Sent Events).

use tether_protocol::{Response, ResponseCreate};

#[cfg(target_arch = "wasm32")]
use crate::browser::{Http, SseStream};
use crate::error::Error;
#[cfg(not(target_arch = "wasm32"))]
use crate::native::{Http, SseStream};
use crate::reply::Reply;
use crate::turn::Finished;
use crate::wire;

impl Http {
    /// `GET path`.
    pub async fn get(&mut self, path: &str) -> Result<Reply, Error> {
        self.request("GET", path, None).await
    }

    /// `POST path` with the JSON `body`.
    pub async fn post_json(
        &mut self,
        path: &str,
        body: impl Into<Vec<u8>>,
    ) -> Result<Reply, Error> {
        self.request("POST", path, Some(body.into())).await
    }

    /// `DELETE path`.
    pub async fn delete(&mut self, path: &str) -> Result<Reply, Error> {
        self.request("DELETE", path, None).await
    }

    /// `POST /v1/responses` without streaming: the response, once it is complete (an error
    /// status is [`Error::Http`]).
    pub async fn create(&mut self, request: &ResponseCreate) -> Result<Response, Error> {
        Ok(self.create_reply(request).await?.0)
    }

    /// [`Http::create`], with the whole reply (its headers: `x-tether-timing`).
    pub async fn create_reply(
        &mut self,
        request: &ResponseCreate,
    ) -> Result<(Response, Reply), Error> {
        let reply = self
            .post_json("/v1/responses", wire::http_body(request, false))
            .await?;
        if !reply.is_success() {
            return Err(Error::http(
                &self.endpoint().responses_url(),
                reply.status,
                &reply.body,
            ));
        }
        Ok((reply.json()?, reply))
    }

    /// `POST /v1/responses` with `stream: true`: the stream, once the server answered 200 (an
    /// error status is [`Error::Http`]).
    pub async fn stream(&mut self, request: &ResponseCreate) -> Result<SseStream<'_>, Error> {
        self.stream_body(wire::http_body(request, true).into_bytes())
            .await
    }

    /// Streams `request` and reads it to its terminal event.
    pub async fn turn(&mut self, request: &ResponseCreate) -> Result<Finished, Error> {
        self.stream(request).await?.finish_with(|_| {}).await
    }
}
