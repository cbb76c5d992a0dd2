//! The persistent store of `store:true` responses and the usage ledger, behind
//! [`ResponseStore`]: [`sqlite`] is the implementation, and [`write_behind`] wraps it so the
//! WebSocket path can answer before its writes land.
//!
//! A stored row keeps the Response object (with its output) and the items this response added
//! to the conversation. When the previous response is stored too, that is only the request's new
//! input and `parent_id` links the chain; otherwise it is the whole logical input and the chain
//! starts here. Loading a context walks the chain from the newest row to the oldest.
//!
//! Every stored row belongs to a project (`crate::tenancy`), and every read names the project
//! it is for. A failure becomes an [`ApiFailure`] through `?`: 503 while the database is
//! unavailable, 500 otherwise.

pub mod sqlite;
pub mod write_behind;

pub use sqlite::SqliteStore;
pub use write_behind::{Record, WriteBehindStore};

use tether_protocol::{Item, Response};

use crate::error::ApiFailure;

/// What the store keeps of one response.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResponse {
    /// The project it belongs to (`crate::tenancy`): only that project sees it.
    pub project: String,
    pub response: Response,
    /// The items this response added before its output (see the module docs).
    pub added_input: Vec<Item>,
    /// The stored response this one continues, if any.
    pub parent_id: Option<String>,
}

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be reached (down, restarting, out of connections): the request may
    /// succeed later, and is answered 503.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    #[error("database error: {0}")]
    Database(String),
    #[error("stored data is corrupt: {0}")]
    Corrupt(#[from] serde_json::Error),
    #[error("the chain of {0} is longer than {MAX_CHAIN} responses or loops")]
    ChainTooLong(String),
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        StoreError::Database(error.to_string())
    }
}

/// The API's answer to a store failure: logged, and 503 (retry later) when the database is
/// unavailable, else 500 — its cause is the operator's business, not the client's.
impl From<StoreError> for ApiFailure {
    fn from(error: StoreError) -> Self {
        tracing::error!("store: {error}");
        match error {
            StoreError::Unavailable(_) => ApiFailure::new(
                503,
                tether_protocol::ApiError::server(
                    "The response store is unavailable; retry the request.",
                ),
            ),
            _ => ApiFailure::internal("the response store failed"),
        }
    }
}

/// The longest chain `load_context` walks; a guard against cycles in corrupt data.
pub const MAX_CHAIN: usize = 100_000;

/// One line of the usage ledger: what a response cost, for billing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    pub project: String,
    pub response_id: String,
    pub model: String,
    /// `http`, `sse` or `ws`.
    pub transport: &'static str,
    pub input_tokens: u64,
    /// Read from the engine's prompt cache.
    pub cached_tokens: u64,
    /// Written to the engine's prompt cache.
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
    pub recorded_at: u64,
}

/// Persists responses and the usage ledger. Every read is scoped to a project: another
/// project's response is not there.
#[async_trait::async_trait]
pub trait ResponseStore: Send + Sync + 'static {
    async fn put(&self, stored: &StoredResponse) -> Result<(), StoreError>;
    /// Appends a usage line (every completed response is billed, stored or not). A response is
    /// billed once: a second line for the same response id is ignored.
    async fn bill(&self, entry: &LedgerEntry) -> Result<(), StoreError>;
    /// The ledger lines of a response, oldest first.
    async fn ledger(&self, response_id: &str) -> Result<Vec<LedgerEntry>, StoreError>;
    async fn get(&self, project: &str, id: &str) -> Result<Option<StoredResponse>, StoreError>;
    /// Deletes a response; `false` if there was none (in this project).
    async fn delete(&self, project: &str, id: &str) -> Result<bool, StoreError>;

    /// The stored items of this project with these ids (an input item or an output item of any
    /// of its stored responses), in no particular order; ids it does not hold are left out.
    async fn find_items(&self, project: &str, ids: &[String]) -> Result<Vec<Item>, StoreError>;

    /// Whether the store can serve requests now (readiness).
    async fn ready(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// The full logical context after response `id`: every ancestor's added input and output,
    /// oldest first, then this response's added input and output. `None` if `id` is not stored
    /// in `project`.
    async fn load_context(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<(Response, Vec<Item>)>, StoreError> {
        let Some(newest) = self.get(project, id).await? else {
            return Ok(None);
        };
        let mut chain = vec![newest];
        while let Some(parent) = chain.last().and_then(|s| s.parent_id.clone()) {
            if chain.len() >= MAX_CHAIN {
                return Err(StoreError::ChainTooLong(id.to_string()));
            }
            match self.get(project, &parent).await? {
                Some(stored) => chain.push(stored),
                // A deleted ancestor ends the chain: what remains is still a valid context.
                None => break,
            }
        }
        let response = chain[0].response.clone();
        let mut items = Vec::new();
        for stored in chain.into_iter().rev() {
            items.extend(stored.added_input);
            items.extend(stored.response.output);
        }
        Ok(Some((response, items)))
    }
}

/// The items of `stored` (input, then output) whose id is one of `ids`. (A stored input holds
/// no `item_reference`: the pipeline resolves them first.)
pub fn items_with_ids(stored: &StoredResponse, ids: &[String]) -> Vec<Item> {
    stored
        .added_input
        .iter()
        .chain(&stored.response.output)
        .filter(|item| {
            item.id()
                .is_some_and(|id| ids.iter().any(|wanted| wanted == id))
        })
        .cloned()
        .collect()
}
