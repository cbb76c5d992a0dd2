//! The lanes of one connection (`stream_id`s, plus the unnamed default lane): each a FIFO queue
//! with one worker running its `response.create`s in order — a second request while one runs
//! is queued, not rejected (docs/protocol.md) — different lanes concurrently, at most
//! [`MAX_IN_FLIGHT`] responses running at once across them, all sharing the connection cache.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tether_protocol::{ApiError, ResponseCreate, ServerEvent};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

use super::turn;
use crate::AppState;
use crate::cache::ConnectionCache;
use crate::error::ApiFailure;
use crate::pipeline::RequestOptions;

/// Requests waiting on one lane; beyond this a `response.create` is refused (429).
const MAX_QUEUED: usize = 64;
/// Responses running at once on one connection, across lanes (docs/protocol.md).
const MAX_IN_FLIGHT: usize = 16;
/// Named lanes (`stream_id`s) one connection may open.
const MAX_LANES: usize = 32;

/// A request refused before it reached a lane, and the lane it named.
pub struct LaneRefusal {
    pub failure: ApiFailure,
    pub stream_id: Option<String>,
}

/// The lanes of one connection and the connection cache they share.
pub struct Lanes {
    state: AppState,
    out: mpsc::Sender<ServerEvent>,
    queues: HashMap<Option<String>, mpsc::Sender<ResponseCreate>>,
    workers: JoinSet<()>,
    in_flight: Arc<Semaphore>,
    cache: Arc<Mutex<ConnectionCache>>,
    options: RequestOptions,
}

impl Lanes {
    pub fn new(state: AppState, out: mpsc::Sender<ServerEvent>, options: RequestOptions) -> Self {
        Lanes {
            state,
            out,
            options,
            queues: HashMap::new(),
            workers: JoinSet::new(),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            cache: Arc::new(Mutex::new(ConnectionCache::default())),
        }
    }

    /// Queues `request` on its lane, opening the lane if needed.
    pub fn submit(&mut self, request: ResponseCreate) -> Result<(), Box<LaneRefusal>> {
        let lane = request.stream_id.clone();
        if let Some(id) = &lane
            && !valid_stream_id(id)
        {
            let failure = ApiFailure::bad_request(
                Some("invalid_stream_id"),
                "stream_id must be 1 to 256 characters of A-Z, a-z, 0-9, '_', '.' or '-'.",
                Some("stream_id"),
            );
            return Err(Box::new(LaneRefusal {
                failure,
                stream_id: None,
            }));
        }
        if !self.queues.contains_key(&lane) {
            let named = self.queues.keys().filter(|k| k.is_some()).count();
            if lane.is_some() && named >= MAX_LANES {
                let failure = ApiFailure::bad_request(
                    Some("websocket_stream_limit_reached"),
                    format!("A connection may open at most {MAX_LANES} named streams."),
                    Some("stream_id"),
                );
                return Err(Box::new(LaneRefusal {
                    failure,
                    stream_id: lane,
                }));
            }
            let (queue, jobs) = mpsc::channel(MAX_QUEUED);
            self.workers.spawn(run_lane(
                self.state.clone(),
                jobs,
                self.out.clone(),
                self.in_flight.clone(),
                self.cache.clone(),
                self.options.clone(),
            ));
            self.queues.insert(lane.clone(), queue);
        }
        match self.queues[&lane].try_send(request) {
            Ok(()) => Ok(()),
            Err(_) => {
                let failure = ApiFailure::new(
                    429,
                    ApiError::invalid_request(
                        Some("too_many_queued_requests"),
                        format!("at most {MAX_QUEUED} responses may wait on one stream"),
                        None,
                    ),
                );
                Err(Box::new(LaneRefusal {
                    failure,
                    stream_id: lane,
                }))
            }
        }
    }

    /// Closes every queue and waits for the queued work to finish.
    pub async fn finish(mut self) {
        self.queues.clear();
        while self.workers.join_next().await.is_some() {}
    }

    /// Stops all work at once (the client is gone).
    pub fn abort(mut self) {
        self.workers.abort_all();
    }
}

/// `stream_id`: 1–256 characters of `[A-Za-z0-9_.-]`.
pub fn valid_stream_id(id: &str) -> bool {
    (1..=256).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// One lane's worker: its requests in order, each once a slot in the connection is free.
async fn run_lane(
    state: AppState,
    mut jobs: mpsc::Receiver<ResponseCreate>,
    out: mpsc::Sender<ServerEvent>,
    in_flight: Arc<Semaphore>,
    cache: Arc<Mutex<ConnectionCache>>,
    options: RequestOptions,
) {
    while let Some(request) = jobs.recv().await {
        let Ok(_slot) = in_flight.acquire().await else {
            return;
        };
        if turn::serve(&state, request, &cache, &out, options.clone())
            .await
            .is_err()
        {
            return;
        }
    }
}
