//! The persistent store of `store:true` responses and the usage ledger, behind
//! [`ResponseStore`]: [`sqlite`] for one process, [`postgres`] for replicas sharing one
//! database — the same schema and [`migrations`] — chosen by a [`StoreUrl`] and [`open`]ed at
//! start; [`write_behind`] wraps either so the WebSocket path can answer before its writes land
//! (or, with a shared store, only once they have: [`WriteMode`]).
//!
//! A stored row keeps the Response object (with its output) and the items this response added
//! to the conversation. When the previous response is stored too, that is only the request's new
//! input and `parent_id` links the chain; otherwise it is the whole logical input and the chain
//! starts here. Loading a context walks the chain from the newest row to the oldest.
//!
//! Every stored row belongs to a project (`crate::tenancy`), and every read names the project
//! it is for. A failure becomes an [`ApiFailure`] through `?`: 503 while the database is
//! unavailable, 500 otherwise.

pub mod background;
pub mod conversations;
pub mod migrations;
pub mod postgres;
mod postgres_conversations;
pub mod sqlite;
mod sqlite_conversations;
pub mod write_behind;

pub use background::BackgroundStore;
pub use conversations::{Conversation, ConversationStore, ItemPage, Listing, Lock};

pub use postgres::{PostgresOptions, PostgresStore};
pub use sqlite::SqliteStore;
pub use write_behind::{Record, WriteBehindStore, WriteMode};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// Which database holds the store (`--store URL`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// `sqlite://PATH`: one database file (its directory is created), or `:memory:`.
    Sqlite(PathBuf),
    /// `postgres://…` or `postgresql://…` (libpq's URL): shared by every replica using it.
    Postgres(String),
}

impl StoreUrl {
    /// Reads `sqlite://PATH`, `sqlite://:memory:`, `:memory:`, `postgres://…` or
    /// `postgresql://…`.
    pub fn parse(text: &str) -> Result<StoreUrl, String> {
        let text = text.trim();
        if text == ":memory:" {
            return Ok(StoreUrl::Sqlite(PathBuf::from(":memory:")));
        }
        if let Some(path) = text.strip_prefix("sqlite://") {
            if path.is_empty() {
                return Err("sqlite:// needs a path: sqlite://DIR/tether.sqlite3".into());
            }
            return Ok(StoreUrl::Sqlite(PathBuf::from(path)));
        }
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Ok(StoreUrl::Postgres(text.to_string()));
        }
        Err(format!(
            "unknown store '{text}': use sqlite://PATH, :memory: or postgres://USER@HOST:PORT/DB"
        ))
    }

    /// What `--data-dir DIR` means: `sqlite://DIR/tether.sqlite3`, or memory for `:memory:`.
    pub fn from_data_dir(dir: &Path) -> StoreUrl {
        if dir == Path::new(":memory:") {
            StoreUrl::Sqlite(dir.to_path_buf())
        } else {
            StoreUrl::Sqlite(dir.join("tether.sqlite3"))
        }
    }

    /// Whether other processes may share this store (replicas): then what a client has seen
    /// must already be in the database (`WriteMode::Durable`).
    pub fn is_shared(&self) -> bool {
        matches!(self, StoreUrl::Postgres(_))
    }

    /// The URL for messages, without a password.
    pub fn redacted(&self) -> String {
        match self {
            StoreUrl::Sqlite(path) => format!("sqlite://{}", path.display()),
            StoreUrl::Postgres(url) => match (url.find("://"), url.rfind('@')) {
                (Some(scheme), Some(at)) if at > scheme => {
                    let userinfo = &url[scheme + 3..at];
                    match userinfo.split_once(':') {
                        Some((user, _)) => {
                            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
                        }
                        None => url.clone(),
                    }
                }
                _ => url.clone(),
            },
        }
    }
}

/// Opens the store `url` names: a SQLite file (creating its directory) or a PostgreSQL
/// database (connecting with `postgres`'s pool and retries); either is migrated to the current
/// schema.
pub async fn open(
    url: &StoreUrl,
    postgres: &PostgresOptions,
) -> Result<Arc<dyn ResponseStore>, StoreError> {
    match url {
        StoreUrl::Sqlite(path) => Ok(Arc::new(open_sqlite(path)?)),
        StoreUrl::Postgres(url) => Ok(Arc::new(PostgresStore::connect(url, postgres).await?)),
    }
}

/// Opens the SQLite file `path` (`sqlite://PATH`), creating its directory, or an in-memory
/// database for `:memory:`.
pub fn open_sqlite(path: &Path) -> Result<SqliteStore, StoreError> {
    if path != Path::new(":memory:")
        && let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError::Database(format!("cannot create {}: {e}", dir.display())))?;
    }
    SqliteStore::open_file(path)
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

/// One response's writes in [`ResponseStore::write_all`]: the response to store, if any, and
/// its bill.
#[derive(Debug, Clone, Copy)]
pub struct Writes<'a> {
    pub stored: Option<&'a StoredResponse>,
    pub bill: &'a LedgerEntry,
}

/// When one response's writes in [`ResponseStore::write_all`] began and how long each took
/// (its share of a transaction's commit included).
#[derive(Debug, Clone, Copy)]
pub struct WriteTimes {
    pub persist: Option<(Instant, Duration)>,
    pub bill: (Instant, Duration),
}

/// Persists responses and the usage ledger — and, as a [`ConversationStore`], conversations, as
/// a [`BackgroundStore`] the leases of background responses.
/// Every read is scoped to a project: another project's response is not there.
#[async_trait::async_trait]
pub trait ResponseStore: ConversationStore + BackgroundStore + Send + Sync + 'static {
    async fn put(&self, stored: &StoredResponse) -> Result<(), StoreError>;
    /// Appends a usage line (every completed response is billed, stored or not). A response is
    /// billed once: a second line for the same response id is ignored.
    async fn bill(&self, entry: &LedgerEntry) -> Result<(), StoreError>;
    /// The ledger lines of a response, oldest first.
    async fn ledger(&self, response_id: &str) -> Result<Vec<LedgerEntry>, StoreError>;
    /// Several responses' writes at once (the write-behind queue's): each one's response put
    /// (when it has one) and its bill, returning when each write began and took. All or nothing
    /// is not promised — on an error some may be written — but writing a batch again is safe
    /// (a put replaces, a bill is once). One by one unless the store can do better (SQLite: one
    /// transaction).
    async fn write_all(&self, writes: &[Writes<'_>]) -> Result<Vec<WriteTimes>, StoreError> {
        let mut times = Vec::with_capacity(writes.len());
        for write in writes {
            let persist = match write.stored {
                Some(stored) => {
                    let started = Instant::now();
                    self.put(stored).await?;
                    Some((started, started.elapsed()))
                }
                None => None,
            };
            let started = Instant::now();
            self.bill(write.bill).await?;
            times.push(WriteTimes {
                persist,
                bill: (started, started.elapsed()),
            });
        }
        Ok(times)
    }
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
        let mut seen = std::collections::HashSet::from([id.to_string()]);
        let mut chain = vec![newest];
        while let Some(parent) = chain.last().and_then(|s| s.parent_id.clone()) {
            // A loop (corrupt data) is refused when it closes, not after MAX_CHAIN reads.
            if chain.len() >= MAX_CHAIN || !seen.insert(parent.clone()) {
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
            items.extend(stored.conversation());
        }
        Ok(Some((response, items)))
    }
}

/// The `type` of the marker a long-running response's stored input holds where some of its
/// output came before more input (`{"type": OUTPUTS_MARKER, "count": N}`: the next N output
/// items go here). It never leaves the server, and clients cannot send it (an unknown input
/// type is refused).
pub const OUTPUTS_MARKER: &str = "tether.outputs";

/// A marker: the next `count` output items of the response come here in its conversation.
pub fn outputs_marker(count: usize) -> Item {
    Item::Unknown(serde_json::json!({"type": OUTPUTS_MARKER, "count": count}))
}

impl StoredResponse {
    /// The items this response added to the conversation, in order: its input, with its output
    /// where it came — all of it after the input for an ordinary response; for a long-running
    /// one (paused and resumed with more input), interleaved at the markers.
    pub fn conversation(self) -> Vec<Item> {
        interleave(self.added_input, self.response.output)
    }
}

/// `input` (with [`outputs_marker`]s where output came before more input) and `output`, in the
/// order they happened.
pub fn interleave(input: Vec<Item>, output: Vec<Item>) -> Vec<Item> {
    let mut outputs = output.into_iter();
    let mut items = Vec::with_capacity(input.len() + outputs.len());
    for item in input {
        match &item {
            Item::Unknown(marker) if marker["type"] == OUTPUTS_MARKER => {
                let count = marker["count"].as_u64().unwrap_or(0) as usize;
                items.extend(outputs.by_ref().take(count));
            }
            _ => items.push(item),
        }
    }
    items.extend(outputs);
    items
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_urls_parse() {
        let sqlite = |p: &str| StoreUrl::Sqlite(PathBuf::from(p));
        assert_eq!(StoreUrl::parse(":memory:"), Ok(sqlite(":memory:")));
        assert_eq!(StoreUrl::parse("sqlite://:memory:"), Ok(sqlite(":memory:")));
        assert_eq!(
            StoreUrl::parse("sqlite://data/tether.sqlite3"),
            Ok(sqlite("data/tether.sqlite3"))
        );
        assert_eq!(
            StoreUrl::parse("sqlite:///var/t.db"),
            Ok(sqlite("/var/t.db"))
        );
        assert!(StoreUrl::parse("sqlite://").is_err());
        let pg = StoreUrl::parse("postgresql://tether:pw@127.0.0.1:5432/tether").unwrap();
        assert!(pg.is_shared());
        assert_eq!(
            pg.redacted(),
            "postgresql://tether:***@127.0.0.1:5432/tether"
        );
        assert_eq!(
            StoreUrl::parse("postgres://tether@h/db")
                .unwrap()
                .redacted(),
            "postgres://tether@h/db"
        );
        assert!(!sqlite("x").is_shared());
        let error = StoreUrl::parse("mysql://x").unwrap_err();
        assert!(error.contains("sqlite://PATH"), "{error}");
    }

    #[test]
    fn the_data_dir_is_a_sqlite_file_in_it() {
        assert_eq!(
            StoreUrl::from_data_dir(Path::new("data")),
            StoreUrl::Sqlite(PathBuf::from("data/tether.sqlite3"))
        );
        assert_eq!(
            StoreUrl::from_data_dir(Path::new(":memory:")),
            StoreUrl::Sqlite(PathBuf::from(":memory:"))
        );
    }
}
