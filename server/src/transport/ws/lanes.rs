//! The lanes of one connection (`stream_id`s, plus the unnamed default lane): each a FIFO queue
//! with one worker running its `response.create`s in order — a second request while one runs
//! is queued, not rejected (docs/protocol.md) — different lanes concurrently, at most
//! [`MAX_IN_FLIGHT`] responses running at once across them, all sharing the connection cache.

use std::collections::HashMap;
use std::sync::Arc;

use tether_protocol::{ApiError, ResponseCreate, ServerEvent};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

use super::queue::{Jobs, Queue, Waiting};
use super::turn::{self, Connection};
use crate::AppState;
use crate::error::ApiFailure;
use crate::pipeline::RequestOptions;

/// Responses running at once on one connection, across lanes (docs/protocol.md).
const MAX_IN_FLIGHT: usize = 16;
/// Named lanes (`stream_id`s) one connection may open.
const MAX_LANES: usize = 32;

/// A request refused before it reached a lane, and the lane it named.
pub struct LaneRefusal {
    pub failure: ApiFailure,
    pub stream_id: Option<String>,
}

/// The lanes of one connection and what they share (the connection cache, the running
/// responses).
pub struct Lanes {
    state: AppState,
    out: mpsc::Sender<Box<ServerEvent>>,
    queues: HashMap<Option<String>, Queue>,
    waiting: Waiting,
    workers: JoinSet<()>,
    in_flight: Arc<Semaphore>,
    pub connection: Arc<Connection>,
    options: RequestOptions,
}

impl Lanes {
    pub fn new(
        state: AppState,
        out: mpsc::Sender<Box<ServerEvent>>,
        options: RequestOptions,
    ) -> Self {
        Lanes {
            connection: Arc::new(Connection::new(&state)),
            waiting: Waiting::new(state.connection_limits.max_queued),
            state,
            out,
            options,
            queues: HashMap::new(),
            workers: JoinSet::new(),
            in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
        }
    }

    /// What the upgrade asked of every response of the connection.
    pub fn options(&self) -> &RequestOptions {
        &self.options
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
        // The project's rate limits count every `response.create` (docs/server.md).
        if let Err(limited) = self.state.rate_limits.admit(&self.options.project) {
            let failure = crate::transport::rate_limit::failure(&self.options.project, &limited);
            return Err(Box::new(LaneRefusal {
                failure,
                stream_id: lane,
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
            let (queue, jobs) = self.waiting.lane();
            self.workers.spawn(run_lane(
                self.state.clone(),
                jobs,
                self.out.clone(),
                self.in_flight.clone(),
                self.connection.clone(),
                self.options.clone(),
            ));
            self.queues.insert(lane.clone(), queue);
        }
        match self.queues[&lane].push(request) {
            Ok(()) => Ok(()),
            Err(_) => {
                let failure = ApiFailure::new(
                    429,
                    ApiError::invalid_request(
                        Some("too_many_queued_requests"),
                        format!(
                            "at most {} responses may wait on one connection \
                             (--max-queued-requests); wait for one to finish",
                            self.waiting.max()
                        ),
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

    /// Whether a response runs (or waits for its client) or a request waits on the connection.
    pub fn busy(&self) -> bool {
        self.in_flight.available_permits() < MAX_IN_FLIGHT || self.waiting.count() > 0
    }

    /// Closes every queue and waits for the queued work to finish (responses waiting for
    /// their client complete as they stand).
    pub async fn finish(mut self) {
        self.queues.clear();
        self.connection.control.close();
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
    mut jobs: Jobs,
    out: mpsc::Sender<Box<ServerEvent>>,
    in_flight: Arc<Semaphore>,
    connection: Arc<Connection>,
    options: RequestOptions,
) {
    let mut next = None;
    loop {
        let request = match next.take() {
            Some(request) => request,
            None => match jobs.recv().await {
                Some(request) => request,
                None => return,
            },
        };
        let Ok(_slot) = in_flight.acquire().await else {
            return;
        };
        // A request that had not started when the server began shutting down is refused.
        if state.lifecycle.is_draining() {
            let failure = ApiFailure::new(
                503,
                ApiError {
                    code: Some("server_shutting_down".into()),
                    ..ApiError::server(
                        "The server is shutting down; send the request again on a new \
                         connection (to another replica).",
                    )
                },
            );
            if turn::send_error(&out, failure, request.stream_id.clone())
                .await
                .is_err()
            {
                return;
            }
            continue;
        }
        // Boxed: the turn's future is the largest state this task would otherwise hold for
        // the connection's life (~32 KiB); boxed it lives only while a turn runs.
        let turn = Box::pin(turn::serve(
            &state,
            request,
            &connection,
            &out,
            &options,
            &mut jobs,
        ));
        match turn.await {
            Ok(job) => next = job,
            Err(_) => return,
        }
    }
}
