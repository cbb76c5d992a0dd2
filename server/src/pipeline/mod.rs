//! One request pipeline for both transports: `prepare` builds the context — the previous
//! context (from the connection cache, the store, or nothing) plus the new input — checks it,
//! and runs the stages over what this connection has not processed yet, in named steps
//! (`prepare.rs`); [`generate`] streams the model's answer and records it.
//!
//! The transports differ only in where the previous context comes from ([`Origin`]): HTTP always
//! loads the chain from the store; WebSocket mode first looks in its connection cache, and on a
//! hit only the new items are rendered, validated and classified.

pub mod background;
mod checks;
mod context_management;
pub mod conversation;
mod limit;
mod parameters;
mod prepare;
mod previous;
mod record;
mod references;
mod running;
mod steering;
mod stream;

pub use parameters::{ALLOWED_UNKNOWN, Via, supported};
pub use prepare::prepare;
pub use running::{End, Running, Sampled};
pub use steering::{MAX_PENDING_STEERS, QueuedSteer, Refused, Steering};

use std::sync::Arc;

use tether_protocol::{Item, Response, ResponseCreate, ServerEvent};
use tokio::sync::mpsc;

use crate::AppState;
use crate::cache::{Ancestor, CachedResponse, Checkout};
use crate::conditions::Conditions;
use crate::metrics::CacheLookup;
use crate::model::{Context, FailureKind};
use crate::stages::Reusable;
use crate::tenancy::Project;
use crate::timing::StageTimings;

/// What the client asked of a request besides its body: from the request's headers over HTTP,
/// from the upgrade request's (or URL's) for every response of a WebSocket connection.
#[derive(Debug, Clone, Default)]
pub struct RequestOptions {
    /// The project of the request's API key: it sees only this project's stored responses.
    pub project: Project,
    /// `x-tether-fail`: a failure to force.
    pub forced_failure: Option<FailureKind>,
    /// `x-tether-timing: 1`: attach the timing summary to the terminal event.
    pub report_timing: bool,
    /// `x-responsesapi-include-timing-metrics: true` (WebSocket upgrade): send
    /// `responsesapi.websocket_timing` before each terminal event.
    pub timing_metrics: bool,
    /// `OpenAI-Beta: responses_websockets=2026-02-04` (v1, WebSocket upgrade): a response that
    /// calls client tools pauses with `response.done` and resumes on `response.append`.
    pub append_mode: bool,
    /// `OpenAI-Beta: responses_multi_agent=v1` (WebSocket upgrade): a response with
    /// `multi_agent.enabled` waits at client tool calls for `response.inject`.
    pub multi_agent: bool,
    /// `?model=` on the upgrade URL: the model of a `response.create` that names none.
    pub default_model: Option<String>,
    /// The client's span, when the server exports traces (`--otlp-endpoint`): the response's
    /// span is its child. `None` when traces are off: nothing is kept for them.
    pub trace: Option<crate::traces::Parent>,
    /// The conditions the client chose (`tether_rtt_ms`, `tether_api_costs`, …): the link
    /// the transport applies to the socket, the API-cost preset charged here.
    pub conditions: Conditions,
}

/// Where a request comes from, which decides where its previous context may be found.
pub enum Origin {
    /// HTTP: the store only.
    Http,
    /// WebSocket mode: what the turn took from its connection cache — the previous response if
    /// the cache held it, the items the input's `item_reference`s name, the engine replica the
    /// connection's earlier responses went to.
    WebSocket(Checkout),
}

/// A request ready to generate.
#[derive(Debug)]
pub struct Prepared {
    pub context: Context,
    /// What a stored row for this response records as its added input.
    pub added_input: Vec<Item>,
    /// The previous response, when it is in the store (the chain continues there).
    pub stored_parent: Option<String>,
    /// Where a WebSocket continuation found its previous response.
    pub lookup: Option<CacheLookup>,
    /// The rendered prompt (`usage.input_tokens` is its length) and the compiled tools.
    pub reusable: Reusable,
    /// The responses this one continues on the connection (from the cache entry it took).
    pub lineage: std::collections::VecDeque<Ancestor>,
    /// What each stage cost so far.
    pub timings: StageTimings,
    pub options: RequestOptions,
    /// The conversation the response holds and appends to, when it names one.
    pub conversation: Option<conversation::Bound>,
    /// The compaction item its output begins with, when its context was compacted
    /// (`context_management`).
    pub compacted: Option<Item>,
    /// `include: ["reasoning.encrypted_content"]`: the key and project its reasoning items'
    /// `encrypted_content` is sealed with.
    pub reasoning_seal: Option<(crate::compaction::Sealer, String)>,
}

/// The client went away; the response was abandoned.
#[derive(Debug)]
pub struct Disconnected;

/// The outcome of a generated response.
#[derive(Debug)]
pub struct Generated {
    pub response: Response,
    /// The request it answered, moved out of its context (an automatic successor of a
    /// steered response takes its settings) until a caller takes it.
    pub request: Option<ResponseCreate>,
    /// The whole conversation after the response, for the connection cache.
    pub context: Arc<Vec<Item>>,
    /// The request's rendered prompt and compiled tools, for the connection cache.
    reusable: Reusable,
    /// Output items not rendered onto `reusable` yet.
    pending_outputs: Vec<Item>,
    lineage: std::collections::VecDeque<Ancestor>,
    /// The engine replica that served it (a WebSocket connection keeps it for its next turns).
    pub replica: usize,
    /// The sequence number an event after its terminal one gets (`response.steer.pending`).
    pub next_sequence: u64,
    /// The steers it took (the successor's or the next request's input).
    pub steers: Vec<QueuedSteer>,
}

impl Generated {
    /// The cache entry for this response: the request's rendered prompt extended with the
    /// output's tokens, its compiled tools. Called after the terminal event is sent, off the
    /// critical path.
    pub fn into_cached(self) -> CachedResponse {
        CachedResponse {
            reusable: Some(Reusable {
                rendered: self.reusable.rendered.with_items(&self.pending_outputs),
                compiled: self.reusable.compiled,
            }),
            response: (&self.response).into(),
            context: self.context,
            lineage: self.lineage,
        }
    }
}

/// Generates the response and sends its events to `out`: one engine call, then the terminal
/// event; records it first (the store, the ledger) so a continuation can find it the moment the
/// terminal event arrives: over HTTP written before, in WebSocket mode queued before and
/// written after.
pub async fn generate(
    state: &AppState,
    prepared: Prepared,
    out: &mpsc::Sender<Box<ServerEvent>>,
) -> Result<Generated, Disconnected> {
    let mut running = Running::start(prepared, out).await?;
    let end = match running.sample(state, out).await? {
        Sampled::Failed(status, error) => End::Failed(status, error),
        Sampled::CutShort => End::Incomplete("max_output_tokens"),
        Sampled::Steered => End::Incomplete("steered"),
        Sampled::Answered | Sampled::Called(_) => End::Completed,
    };
    running.finish(state, out, end).await
}
