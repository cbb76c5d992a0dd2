//! Background responses (`background: true` with `store: true`, HTTP only; docs/protocol.md
//! §12): the request is answered at once with the response `queued`, and the response runs on
//! the server whether or not anyone is connected — `in_progress`, then its terminal status —
//! its events recorded (`crate::background`) for anyone who streams it, its state written to
//! the store for anyone who polls it. `POST /v1/responses/{id}/cancel` stops it: it ends
//! `cancelled` with the output it had — at once on this server, within [`CANCEL_WATCH`] when the
//! cancel reached another one (it asks through the store).
//!
//! While it runs, its server holds a lease on it in the store, renewed every [`RENEW_EVERY`]
//! ([`crate::store::BackgroundStore`]); when it ends, its events are kept there, so any replica
//! can stream it again. A server that dies leaves the lease to run out: [`sweep`]
//! — at start (every lease, when the store is this process's alone) and every [`RENEW_EVERY`] —
//! ends each such response `failed` (`server_error`, saying the server stopped), so none stays
//! `queued` or `in_progress`.

use std::sync::Arc;
use std::time::Duration;

use tether_protocol::{ApiError, Item, Response, ResponseStatus, ServerEvent, StreamEvent};
use tokio::sync::mpsc;

use super::{Prepared, generate};
use crate::AppState;
use crate::background::Run;
use crate::error::ApiFailure;
use crate::ids::unix_now;
use crate::store::StoredResponse;

/// How long a lease lasts past its last renewal.
pub const LEASE: Duration = Duration::from_secs(30);
/// How often a running response renews its lease, and how often [`sweep`] looks.
pub const RENEW_EVERY: Duration = Duration::from_secs(10);
/// How often a running response looks for a cancel asked for through another server.
pub const CANCEL_WATCH: Duration = Duration::from_secs(1);

/// The message a response whose server stopped ends with.
pub const ORPHANED: &str = "The server running this background response stopped (it was \
     restarted or killed) before the response finished; create it again.";

/// Background mode needs the response stored: refused otherwise, naming `store`.
pub fn check(stores: bool) -> Result<(), ApiFailure> {
    if stores {
        Ok(())
    } else {
        Err(ApiFailure::bad_request(
            None,
            "Background mode (background: true) requires store: true: a background response \
             is read back from the store.",
            Some("store"),
        ))
    }
}

/// Starts `prepared` in the background and returns its `queued` snapshot, already stored.
pub async fn start(
    state: &AppState,
    prepared: Prepared,
) -> Result<(Response, Arc<Run>), ApiFailure> {
    let context = &prepared.context;
    let project = context.project.as_str().to_string();
    let id = context.response_id.clone();
    let mut queued = Response::in_progress(id.clone(), unix_now(), &context.request);
    queued.status = ResponseStatus::Queued;
    let row = StoredResponse {
        project: project.clone(),
        response: queued.clone(),
        added_input: prepared.added_input.clone(),
        parent_id: prepared.stored_parent.clone(),
    };
    state
        .store
        .lease(&project, &id, unix_now() + LEASE.as_secs())
        .await?;
    state.store.put(&row).await?;
    let run = state.background.start(&id, &project);
    let task_state = state.clone();
    let task_run = run.clone();
    tokio::spawn(async move {
        execute(&task_state, prepared, row, &task_run).await;
        task_run.end();
        // Its events, for any replica to stream it again; the lease goes with them.
        let (events, _, _) = task_run.after(None);
        let events = serde_json::to_string(&events).ok();
        if let Err(error) = task_state.store.finish_run(&id, events.as_deref()).await {
            tracing::warn!("keeping the events of {id}: {error} (its lease runs out)");
        }
    });
    Ok((queued, run))
}

/// Runs the response to its end, or to a cancel: events into `run`, the lease renewed, the
/// store kept up to date (the pipeline writes the final state of a finished response).
async fn execute(state: &AppState, prepared: Prepared, mut row: StoredResponse, run: &Run) {
    // Stored `in_progress` before the engine is asked: the pipeline's final write comes later.
    row.response.status = ResponseStatus::InProgress;
    if let Err(error) = state.store.put(&row).await {
        tracing::warn!("storing {} in progress: {error}", row.response.id);
    }
    let (out, mut events) = mpsc::channel::<Box<ServerEvent>>(256);
    let generating = generate(state, prepared, &out);
    tokio::pin!(generating);
    let mut renew = tokio::time::interval(RENEW_EVERY);
    renew.tick().await;
    let mut watch = tokio::time::interval(CANCEL_WATCH);
    watch.tick().await;
    let mut seen = Seen {
        row,
        output: Vec::new(),
    };
    loop {
        tokio::select! {
            biased;
            () = run.changed(), if !run.cancel_requested() => {}
            event = events.recv() => {
                if let Some(event) = event {
                    seen.take(run, *event);
                }
            }
            _ = &mut generating => {
                // It has finished (and stored the response): its last events are queued.
                while let Ok(event) = events.try_recv() {
                    seen.take(run, *event);
                }
                return;
            }
            _ = renew.tick() => {
                let until = unix_now() + LEASE.as_secs();
                let (project, id) = (&seen.row.project, &seen.row.response.id);
                if let Err(error) = state.store.lease(project, id, until).await {
                    tracing::warn!("renewing the lease of {id}: {error}");
                }
            }
            _ = watch.tick() => {
                // A cancel that reached another server is asked for in the store.
                if state.store.cancel_requested(&seen.row.response.id).await.unwrap_or(false) {
                    run.cancel();
                }
            }
        }
        if run.cancel_requested() {
            // Returning drops the generation, which stops the engine; the response keeps the
            // output it had.
            let mut row = seen.row;
            // A response that finished meanwhile (its final write is in) stays as it ended.
            if let Ok(Some(current)) = state.store.get(&row.project, &row.response.id).await
                && !matches!(
                    current.response.status,
                    ResponseStatus::Queued | ResponseStatus::InProgress | ResponseStatus::Cancelled
                )
            {
                return;
            }
            row.response.status = ResponseStatus::Cancelled;
            row.response.output = seen.output;
            if let Err(error) = state.store.put(&row).await {
                tracing::error!("storing the cancelled {}: {error}", row.response.id);
            }
            return;
        }
    }
}

/// What a background run has seen of its response so far.
struct Seen {
    row: StoredResponse,
    output: Vec<Item>,
}

impl Seen {
    /// Records `event` in `run`.
    fn take(&mut self, run: &Run, mut event: ServerEvent) {
        match &mut event.event {
            // The stream begins `queued`, as the response did.
            StreamEvent::Created { response } => response.status = ResponseStatus::Queued,
            StreamEvent::OutputItemDone { item, .. } => self.output.push(item.clone()),
            _ => {}
        }
        run.push(event);
    }
}

/// Ends every background response whose lease ran out before now — every one, with `all` —
/// `failed`, saying its server stopped, and ends the lease (no events are kept: they were in
/// the stopped server's memory). Returns how many it ended.
pub async fn sweep(state: &AppState, all: bool) -> usize {
    let now = if all { u64::MAX } else { unix_now() };
    let expired = match state.store.expired_leases(now).await {
        Ok(expired) => expired,
        Err(error) => {
            tracing::warn!("looking for background responses whose server stopped: {error}");
            return 0;
        }
    };
    let mut ended = 0;
    for (project, id) in expired {
        // One of ours still running (a lease renewal that failed) is not an orphan.
        if state
            .background
            .find(&project, &id)
            .is_some_and(|run| !run.ended())
        {
            continue;
        }
        match state.store.get(&project, &id).await {
            Ok(Some(mut stored))
                if matches!(
                    stored.response.status,
                    ResponseStatus::Queued | ResponseStatus::InProgress
                ) =>
            {
                stored.response.status = ResponseStatus::Failed;
                stored.response.error = Some(ApiError::server(ORPHANED));
                if let Err(error) = state.store.put(&stored).await {
                    tracing::warn!("ending the orphaned {id}: {error}");
                    continue;
                }
                ended += 1;
            }
            Ok(_) => {}
            Err(error) => {
                tracing::warn!("reading the orphaned {id}: {error}");
                continue;
            }
        }
        if let Err(error) = state.store.finish_run(&id, None).await {
            tracing::warn!("releasing the lease of {id}: {error}");
        }
    }
    if ended > 0 {
        tracing::warn!("{ended} background response(s) ended failed: their server had stopped");
    }
    ended
}
