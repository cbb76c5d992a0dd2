//! One `response.create` on a lane: the previous response taken from the connection cache (or
//! not), the pipeline run, the new response cached for the next turn — or an error frame on the
//! lane, with the previous response evicted so a failed continuation is not retried against the
//! same state.

use parking_lot::Mutex;
use tether_protocol::{
    ErrorFrame, Input, ResponseCreate, ResponseStatus, ServerEvent, StreamEvent,
};
use tokio::sync::mpsc;

use crate::AppState;
use crate::cache::ConnectionCache;
use crate::error::{ApiFailure, ErrorKind};
use crate::metrics::{CacheLookup, Transport};
use crate::pipeline::{self, Disconnected, Origin, RequestOptions};

/// Runs `request` against the connection cache and sends its events (or its error) to `out`.
pub async fn serve(
    state: &AppState,
    request: ResponseCreate,
    cache: &Mutex<ConnectionCache>,
    out: &mpsc::Sender<ServerEvent>,
    options: RequestOptions,
) -> Result<(), Disconnected> {
    state.metrics.response_served(Transport::Ws);
    let lane = request.stream_id.clone();
    if let Err(failure) = pipeline::supported(&request) {
        return send_error(out, failure, lane).await;
    }
    let previous = request.previous_response_id.clone();
    // The cache's lock is only held for a lookup or an insert, never across an await.
    let cached = previous
        .as_deref()
        .and_then(|id| cache.lock().take(id))
        .map(Box::new);
    // Items the input references by id, from any response this connection still holds.
    let references = match &request.input {
        Input::Items(items) => pipeline::reference_ids(items),
        Input::Text(_) => Vec::new(),
    };
    let referenced = if references.is_empty() {
        Vec::new()
    } else {
        cache.lock().find_items(&references)
    };
    // The engine replica this connection's earlier responses of the model went to.
    let route = cache.lock().route(&request.model);
    let model = request.model.clone();
    let origin = Origin::WebSocket {
        cached,
        referenced,
        route,
    };
    match pipeline::prepare(state, request, origin, options).await {
        Ok(prepared) => {
            if let Some(lookup) = prepared.lookup {
                state.metrics.cache_lookup(lookup);
            }
            let generated = pipeline::generate(state, prepared, out).await?;
            cache.lock().keep_route(model, generated.replica);
            // A failed response cannot be continued; the one it continued stays evicted. (An
            // incomplete one, cut at `max_output_tokens`, can.)
            if matches!(
                generated.response.status,
                ResponseStatus::Completed | ResponseStatus::Incomplete
            ) {
                // The terminal event is out: rendering the output for the next turn is off the
                // critical path.
                let entry = generated.into_cached();
                cache.lock().put(entry);
            }
            Ok(())
        }
        Err(failure) => {
            if failure.kind == ErrorKind::PreviousResponseNotFound {
                state.metrics.cache_lookup(CacheLookup::Miss);
            }
            // A failed continuation must not be retried against the same cached state.
            if let Some(previous) = previous {
                cache.lock().evict(&previous);
            }
            send_error(out, failure, lane).await
        }
    }
}

/// Sends `failure` as an error frame (with its `status`), on `stream_id`'s lane if it names one.
pub async fn send_error(
    out: &mpsc::Sender<ServerEvent>,
    failure: ApiFailure,
    stream_id: Option<String>,
) -> Result<(), Disconnected> {
    let event = ServerEvent {
        event: StreamEvent::Error(ErrorFrame::websocket(failure.status, failure.error)),
        sequence_number: None,
        stream_id,
        tether_timing: None,
    };
    out.send(event).await.map_err(|_| Disconnected)
}
