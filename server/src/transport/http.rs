//! The HTTP side of the Responses API: `POST /v1/responses` (JSON, or SSE with `stream:true`),
//! `GET`/`DELETE /v1/responses/{id}`, `GET /v1/responses/{id}/input_items`,
//! `POST /v1/responses/{id}/cancel`, `GET /v1/models` (the endpoints that stop before the
//! engine are in [`super::dry_run`], background mode's in [`super::background`]).
//!
//! Every request runs the same pipeline as WebSocket mode, without a connection cache: the
//! previous context always comes from the store. Errors use the API's JSON error shape
//! (`{"error":{"message","type","param","code"}}`) with the matching status. The handlers never
//! look at `Accept`: the official SDKs send `application/json` even when they stream.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};
use tether_link::LinkHandle;
use tether_protocol::{Item, ResponseStatus, ServerEvent, StreamEvent, decode_request};
use tokio::sync::mpsc;

use super::{background, link, options, server_headers, sse, trace_context};
use crate::AppState;
use crate::conditions::Conditions;
use crate::error::ApiFailure;
use crate::metrics::Transport;
use crate::pipeline::{self, Origin};
use crate::tenancy::Project;

/// `POST /v1/responses`.
pub async fn create(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Extension(conditions): Extension<Conditions>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<HttpResponse, ApiFailure> {
    let value: Value = serde_json::from_slice(&body).map_err(|e| {
        ApiFailure::bad_request(
            None,
            format!("The request body is not valid JSON: {e}"),
            None,
        )
    })?;
    let request = decode_request(value).map_err(|e| ApiFailure::new(400, e.to_api_error()))?;
    pipeline::supported(&request, pipeline::Via::Http)?;
    let streaming = request.stream == Some(true);
    let announced = server_headers::for_response(&state, &headers, &request.model);
    let in_background = request.background == Some(true);
    if in_background {
        pipeline::background::check(request.stores())?;
    }
    let meter = conditions.meter.clone();
    let mut options = options::for_http(&headers, project, conditions)?;
    options.trace = trace_context::from_headers(&state, &headers, request.client_metadata.as_ref());
    let prepared = pipeline::prepare(&state, request, Origin::Http, options).await?;
    if in_background {
        state.metrics.response_served(if streaming {
            Transport::Sse
        } else {
            Transport::Http
        });
        let mut reply = background::create(&state, prepared, streaming).await?;
        reply.headers_mut().extend(announced);
        return Ok(reply);
    }
    let (out, mut events) = mpsc::channel::<Box<ServerEvent>>(256);
    if streaming {
        state.metrics.response_served(Transport::Sse);
        let task_state = state.clone();
        tokio::spawn(async move {
            // A client that hangs up ends the stream; there is nobody to report that to.
            let _ = pipeline::generate(&task_state, prepared, &out).await;
        });
        let stream = SseEvents {
            events,
            meter,
            held: None,
        };
        let mut reply = Sse::new(stream)
            .keep_alive(KeepAlive::default())
            .into_response();
        reply.headers_mut().extend(announced);
        Ok(reply)
    } else {
        state.metrics.response_served(Transport::Http);
        // Keeps the status of an `error` event: a failed response is answered with it.
        let drain = tokio::spawn(async move {
            let mut status = None;
            let mut timing = None;
            while let Some(event) = events.recv().await {
                if let StreamEvent::Error(frame) = &event.event {
                    status = frame.status;
                }
                timing = event.tether_timing.or(timing);
            }
            (status, timing)
        });
        let generated = pipeline::generate(&state, prepared, &out)
            .await
            .map_err(|_| ApiFailure::internal("the response was abandoned"))?;
        drop(out);
        let (status, timing) = drain.await.unwrap_or_default();
        let response = generated.response;
        match (&response.status, &response.error) {
            (ResponseStatus::Failed, Some(error)) => {
                Err(ApiFailure::new(status.unwrap_or(500), error.clone()))
            }
            _ => {
                let body = serde_json::to_vec(&response).map_err(|e| {
                    ApiFailure::internal(format!("cannot encode the response: {e}"))
                })?;
                let mut timing = timing;
                if let (Some(summary), Some(meter)) = (timing.as_mut(), &meter) {
                    link::finish_value(summary, meter, body.len());
                }
                let mut reply = (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    body,
                )
                    .into_response();
                reply.headers_mut().extend(announced);
                // The JSON body stays exactly the API's; the summary travels in a header.
                if let Some(value) = timing.and_then(|t| t.to_string().parse().ok()) {
                    reply.headers_mut().insert("x-tether-timing", value);
                }
                Ok(reply)
            }
        }
    }
}

/// The events of a streamed response as SSE. On a request with an emulated link, an event whose
/// timing summary waits for the way down is held back one poll, so the HTTP server flushes the
/// events before it to the socket (the link's account then holds them), and gets it as it goes.
struct SseEvents {
    events: mpsc::Receiver<Box<ServerEvent>>,
    meter: Option<LinkHandle>,
    held: Option<Box<ServerEvent>>,
}

impl futures_util::Stream for SseEvents {
    type Item = Result<Event, std::convert::Infallible>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let event = match self.held.take() {
            Some(event) => event,
            None => match self.events.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(event)) => {
                    if self.meter.is_some() && link::wants_download(&event) {
                        self.held = Some(event);
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                    event
                }
            },
        };
        let mut event = sse::flat_error(*event);
        if let Some(meter) = &self.meter
            && link::wants_download(&event)
        {
            link::finish_summary(&mut event, meter, sse_bytes);
        }
        Poll::Ready(Some(Ok(sse::encode(&event))))
    }
}

/// The bytes `event` takes on the socket: `event: NAME\ndata: JSON\n\n` in a chunk of the
/// chunked transfer coding (`SIZE\r\n…\r\n`).
fn sse_bytes(event: &ServerEvent) -> usize {
    let text = "event: \ndata: \n\n".len() + event.type_name().len() + event.to_json().len();
    format!("{text:X}").len() + 2 + text + 2
}

/// Query of `GET /v1/responses/{id}`: `stream=true` (with `starting_after`) streams a background
/// response's events again; `include` and `include_obfuscation` add nothing Tether has.
#[derive(Debug, Deserialize)]
pub struct RetrieveQuery {
    stream: Option<bool>,
    starting_after: Option<u64>,
}

/// `GET /v1/responses/{id}`: the stored response — a background one as it stands now — or, with
/// `stream=true`, a background response's events.
pub async fn retrieve(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Path(id): Path<String>,
    Query(query): Query<RetrieveQuery>,
) -> Result<HttpResponse, ApiFailure> {
    if query.stream == Some(true) {
        return background::resume(&state, &project, &id, query.starting_after).await;
    }
    match state.store.get(project.as_str(), &id).await? {
        Some(stored) => Ok(Json(stored.response).into_response()),
        None => Err(ApiFailure::response_not_found(&id)),
    }
}

/// `POST /v1/responses/{id}/cancel`: cancels a background response (`transport::background`);
/// any other response of the project is 400, any other id 404.
pub async fn cancel(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Path(id): Path<String>,
) -> Result<HttpResponse, ApiFailure> {
    background::cancel(&state, &project, &id).await
}

/// `DELETE /v1/responses/{id}`.
pub async fn delete(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Path(id): Path<String>,
) -> Result<HttpResponse, ApiFailure> {
    if state.store.delete(project.as_str(), &id).await? {
        Ok(Json(json!({"id": id, "object": "response", "deleted": true})).into_response())
    } else {
        Err(ApiFailure::response_not_found(&id))
    }
}

/// Query of `GET /v1/responses/{id}/input_items`.
#[derive(Debug, Deserialize)]
pub struct ListQuery {
    limit: Option<usize>,
    order: Option<String>,
    after: Option<String>,
}

/// `GET /v1/responses/{id}/input_items`: the items the response was generated from, newest
/// first by default, `limit` (1–100, default 20) at a time, continuing `after` an item id.
pub async fn input_items(
    State(state): State<AppState>,
    Extension(project): Extension<Project>,
    Path(id): Path<String>,
    Query(query): Query<ListQuery>,
) -> Result<HttpResponse, ApiFailure> {
    let limit = query.limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(ApiFailure::bad_request(
            None,
            "limit must be between 1 and 100.",
            Some("limit"),
        ));
    }
    let descending = match query.order.as_deref() {
        None | Some("desc") => true,
        Some("asc") => false,
        Some(other) => {
            return Err(ApiFailure::bad_request(
                None,
                format!("order must be 'asc' or 'desc', not '{other}'."),
                Some("order"),
            ));
        }
    };
    let Some((response, mut items)) = state.store.load_context(project.as_str(), &id).await? else {
        return Err(ApiFailure::response_not_found(&id));
    };
    // The response's own output is not among its input items (a long-running response's
    // output is interleaved with the input it was resumed with).
    let outputs: Vec<&str> = response.output.iter().filter_map(Item::id).collect();
    items.retain(|item| !item.id().is_some_and(|id| outputs.contains(&id)));
    if descending {
        items.reverse();
    }
    let start = match &query.after {
        Some(after) => match items
            .iter()
            .position(|item| item.id() == Some(after.as_str()))
        {
            Some(position) => position + 1,
            None => {
                return Err(ApiFailure::bad_request(
                    None,
                    format!("No input item with id '{after}' in response '{id}'."),
                    Some("after"),
                ));
            }
        },
        None => 0,
    };
    let page: Vec<_> = items.iter().skip(start).take(limit).collect();
    let has_more = start + page.len() < items.len();
    Ok(Json(json!({
        "object": "list",
        "data": page,
        "first_id": page.first().and_then(|item| item.id()),
        "last_id": page.last().and_then(|item| item.id()),
        "has_more": has_more,
    }))
    .into_response())
}

/// `GET /v1/models`: the default model `tether-sim` and every latency profile, with the list's
/// version as its `ETag` (the `x-models-etag` of every other answer).
pub async fn models(State(state): State<AppState>) -> HttpResponse {
    let data: Vec<Value> = state
        .model
        .model_ids()
        .into_iter()
        .map(|id| json!({"id": id, "object": "model", "created": 1_767_225_600, "owned_by": "tether"}))
        .collect();
    let etag = server_headers::models_etag(&state);
    let mut reply = Json(json!({"object": "list", "data": data})).into_response();
    reply.headers_mut().insert(axum::http::header::ETAG, etag);
    // Whether a client may ask for conditions (the playground says so before a run rather than
    // after a 400).
    reply.headers_mut().insert(
        server_headers::CLIENT_CONDITIONS,
        axum::http::HeaderValue::from_static(if state.allow_client_conditions {
            "allowed"
        } else {
            "refused"
        }),
    );
    // Which scenarios it plays (the playground checks a name before a run rather than after a
    // 400). A name no header can carry leaves the list out rather than shortening it.
    if let Some(names) = state.model.scenario_names()
        && names.iter().all(|name| !name.contains(','))
        && let Ok(value) = axum::http::HeaderValue::from_str(&names.join(","))
    {
        reply.headers_mut().insert(server_headers::SCENARIOS, value);
    }
    reply
}
