//! The HTTP side of background responses (docs/protocol.md §12): the answer to a
//! `background: true` create — the `queued` response, or its stream — a stream resumed with
//! `GET /v1/responses/{id}?stream=true&starting_after=N` (live from this server's run, or the
//! events the server that ran it kept in the store once it ended; its terminal event alone when
//! its server stopped before keeping them), and
//! `POST /v1/responses/{id}/cancel`.
//! The run is `pipeline::background`'s.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::response::sse::{KeepAlive, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use futures_util::StreamExt;
use tether_protocol::{ResponseStatus, ServerEvent, StreamEvent};

use super::sse;
use crate::AppState;
use crate::background::Run;
use crate::error::ApiFailure;
use crate::pipeline::{self, Prepared};
use crate::store::StoreError;
use crate::store::background::RunEvents;
use crate::tenancy::Project;

/// How long a cancel waits for the run to stop before answering with what is stored.
const CANCEL_WAIT: Duration = Duration::from_secs(5);
/// How often a cancel of a response another server runs reads it back.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// Starts `prepared` in the background: answers the `queued` response, or (`streaming`) its
/// events from the first one on.
pub async fn create(
    state: &AppState,
    prepared: Prepared,
    streaming: bool,
) -> Result<HttpResponse, ApiFailure> {
    let (queued, run) = pipeline::background::start(state, prepared).await?;
    if streaming {
        Ok(sse(run, None))
    } else {
        Ok(Json(queued).into_response())
    }
}

/// `GET /v1/responses/{id}?stream=true[&starting_after=N]`: the events of a background response
/// after sequence number `N` (all of them without it), then the rest as they happen.
pub async fn resume(
    state: &AppState,
    project: &Project,
    id: &str,
    starting_after: Option<u64>,
) -> Result<HttpResponse, ApiFailure> {
    if let Some(run) = state.background.find(project.as_str(), id) {
        return Ok(sse(run, starting_after));
    }
    match state.store.get(project.as_str(), id).await? {
        None => Err(ApiFailure::response_not_found(id)),
        Some(stored) if !stored.response.background => Err(ApiFailure::bad_request(
            None,
            "Only responses created with background: true can be streamed again; retrieve \
             this one without stream=true.",
            Some("stream"),
        )),
        // Another server runs it, or ran it: its events, once it has ended.
        Some(_) => Ok(kept(
            state.clone(),
            project.clone(),
            id.to_string(),
            starting_after,
        )),
    }
}

/// How often a stream of a response another server runs looks for its events.
const KEPT_POLL: Duration = Duration::from_millis(250);

/// The events another server kept for response `id` after `after`, as SSE, once it has ended;
/// a response that ended without them (its server stopped) ends the stream with its terminal
/// event alone ([`terminal_only`]).
fn kept(state: AppState, project: Project, id: String, after: Option<u64>) -> HttpResponse {
    let events = async_events(state, project, id, after);
    let stream = futures_util::stream::once(events).flat_map(|events| {
        futures_util::stream::iter(
            events
                .into_iter()
                .map(|event| Ok::<_, Infallible>(sse::encode(&sse::flat_error(event)))),
        )
    });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn async_events(
    state: AppState,
    project: Project,
    id: String,
    after: Option<u64>,
) -> Vec<ServerEvent> {
    loop {
        match state.store.run_events(project.as_str(), &id).await {
            Ok(RunEvents::Kept(json)) => {
                let events: Vec<ServerEvent> = serde_json::from_str(&json).unwrap_or_default();
                return events
                    .into_iter()
                    .filter(|event| match (after, event.sequence_number) {
                        (None, _) => true,
                        (Some(after), Some(n)) => n > after,
                        (Some(_), None) => false,
                    })
                    .collect();
            }
            // Its server still runs it — or has sent its last event and is keeping them. (One
            // that stopped loses the lease to a sweep, which ends it `Gone`.)
            Ok(RunEvents::Running) => {}
            Ok(RunEvents::Gone) => match terminal_only(&state, &project, &id, after).await {
                Ok(Some(events)) => return events,
                Ok(None) => {}
                Err(error) => tracing::warn!("reading {id}: {error}"),
            },
            Err(error) => tracing::warn!("reading the events of {id}: {error}"),
        }
        tokio::time::sleep(KEPT_POLL).await;
    }
}

/// What a response whose events were not kept streams, numbered after `after` (the first event
/// when resumed from the start): its terminal event, from the store — for one its server's stop
/// ended (`failed`, [`pipeline::background::sweep`]), `response.failed` with the stored error —
/// so a client resuming it learns how it ended. A cancelled one streams nothing (a cancel ends a
/// stream without a terminal event), nor one deleted meanwhile. `None` while it has not ended.
async fn terminal_only(
    state: &AppState,
    project: &Project,
    id: &str,
    after: Option<u64>,
) -> Result<Option<Vec<ServerEvent>>, StoreError> {
    let Some(stored) = state.store.get(project.as_str(), id).await? else {
        return Ok(Some(Vec::new()));
    };
    let response = stored.response;
    let event = match response.status {
        ResponseStatus::Queued | ResponseStatus::InProgress => return Ok(None),
        ResponseStatus::Cancelled => return Ok(Some(Vec::new())),
        ResponseStatus::Completed => StreamEvent::Completed { response },
        ResponseStatus::Incomplete => StreamEvent::Incomplete { response },
        ResponseStatus::Failed => StreamEvent::Failed { response },
    };
    Ok(Some(vec![ServerEvent {
        event,
        sequence_number: Some(after.map_or(0, |n| n + 1)),
        stream_id: None,
        tether_timing: None,
    }]))
}

/// `POST /v1/responses/{id}/cancel`: a background response still running stops and ends
/// `cancelled` with the output it had; one that has ended is answered as it is (cancelling
/// twice is harmless). Only background responses can be cancelled.
pub async fn cancel(
    state: &AppState,
    project: &Project,
    id: &str,
) -> Result<HttpResponse, ApiFailure> {
    if let Some(run) = state.background.find(project.as_str(), id)
        && run.cancel()
    {
        let _ = tokio::time::timeout(CANCEL_WAIT, async {
            while !run.ended() {
                run.changed().await;
            }
        })
        .await;
    }
    let Some(mut stored) = state.store.get(project.as_str(), id).await? else {
        return Err(ApiFailure::response_not_found(id));
    };
    if !stored.response.background {
        return Err(ApiFailure::bad_request(
            None,
            "Only responses created with the 'background' parameter set to true can be \
             cancelled.",
            None,
        ));
    }
    let running = |stored: &crate::store::StoredResponse| {
        matches!(
            stored.response.status,
            ResponseStatus::Queued | ResponseStatus::InProgress
        )
    };
    // Another server runs it: asked through the store, it stops within a second; the answer is
    // the response as it ends (completed, if it finished first).
    if running(&stored) && state.store.request_cancel(project.as_str(), id).await? {
        let deadline = tokio::time::Instant::now() + CANCEL_WAIT;
        while running(&stored) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(CANCEL_POLL).await;
            match state.store.get(project.as_str(), id).await? {
                Some(now) => stored = now,
                None => return Err(ApiFailure::response_not_found(id)),
            }
        }
    }
    Ok(Json(stored.response).into_response())
}

/// The events of `run` after `after`, then the rest as they come, as SSE; the stream ends with
/// the run.
fn sse(run: Arc<Run>, after: Option<u64>) -> HttpResponse {
    let start = (run, after, VecDeque::<ServerEvent>::new(), false);
    let stream = futures_util::stream::unfold(
        start,
        |(run, mut after, mut buffered, mut done)| async move {
            loop {
                if let Some(event) = buffered.pop_front() {
                    after = event.sequence_number.or(after);
                    let sse = sse::encode(&sse::flat_error(event));
                    return Some((Ok::<_, Infallible>(sse), (run, after, buffered, done)));
                }
                if done {
                    return None;
                }
                let (events, ended, changed) = run.after(after);
                if events.is_empty() {
                    if ended {
                        return None;
                    }
                    changed.await;
                    continue;
                }
                buffered.extend(events);
                done = ended;
            }
        },
    );
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}
