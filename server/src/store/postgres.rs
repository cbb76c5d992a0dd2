//! The PostgreSQL store (`--store postgres://…`): the store replicas share. Same schema and
//! migrations as SQLite ([`super::migrations`]), its version in the `tether_schema_version`
//! table, applied at start under an advisory lock so replicas starting together migrate once.
//!
//! The client is `tokio-postgres` (the maintained native async driver, no TLS: the database is
//! on loopback or a private network) behind a `deadpool-postgres` pool of `pool_size`
//! connections, each with the server's `statement_timeout`; statements are prepared once per
//! connection. Every write is one statement, so atomic without an explicit transaction and one
//! round trip: a response with its item index rows, a delete with its item rows, a ledger line
//! (`ON CONFLICT (response_id) DO NOTHING`: billed once, whichever replica writes it first). A
//! chain loads in one recursive query rather than one query per ancestor.
//!
//! When the database cannot be reached — down, restarting, out of connections, a statement past
//! its timeout — the store answers [`StoreError::Unavailable`] (the API's 503) and the pool opens
//! new connections once it is back: nothing panics, nothing needs a restart.

use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::{
    Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime, tokio_postgres,
};
use tether_protocol::Item;
use tokio_postgres::NoTls;
use tokio_postgres::error::SqlState;

use super::migrations::MIGRATIONS;
use super::{LedgerEntry, MAX_CHAIN, ResponseStore, StoreError, StoredResponse, items_with_ids};

/// How the store talks to PostgreSQL (the `--store-*` flags).
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// Connections in the pool: requests beyond it wait for one (up to `statement_timeout`).
    pub pool_size: usize,
    /// The longest a statement may run (`statement_timeout`), and the longest a request waits
    /// for a pooled connection; past it the request is answered 503.
    pub statement_timeout: Duration,
    /// The longest one connection attempt may take.
    pub connect_timeout: Duration,
    /// Attempts after the first one when the database cannot be reached at start.
    pub connect_retries: u32,
    /// The pause between those attempts.
    pub connect_retry_delay: Duration,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            pool_size: 16,
            statement_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(5),
            connect_retries: 10,
            connect_retry_delay: Duration::from_secs(1),
        }
    }
}

/// The key of the advisory lock migrations run under ("tether" in ASCII).
const MIGRATION_LOCK: i64 = 0x7465_7468_6572;

/// PostgreSQL-backed store.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    /// Where it is, without the password, for messages.
    target: String,
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:password@host:port/database?…`, or libpq's
    /// `key=value` form), retrying `connect_retries` times while the database cannot be
    /// reached, and applies the migrations it lacks.
    pub async fn connect(url: &str, options: &PostgresOptions) -> Result<Self, StoreError> {
        let store = Self::open_pool(url, options)?;
        let mut attempt = 0;
        loop {
            match store.migrate_to(MIGRATIONS.len()).await {
                Ok(version) => {
                    tracing::info!("store: PostgreSQL at {} (schema {version})", store.target);
                    return Ok(store);
                }
                Err(StoreError::Unavailable(reason)) if attempt < options.connect_retries => {
                    attempt += 1;
                    tracing::warn!(
                        "store: PostgreSQL at {} is unavailable ({reason}); attempt {} of {} in \
                         {} ms",
                        store.target,
                        attempt + 1,
                        options.connect_retries + 1,
                        options.connect_retry_delay.as_millis()
                    );
                    tokio::time::sleep(options.connect_retry_delay).await;
                }
                Err(StoreError::Unavailable(reason)) => {
                    return Err(StoreError::Unavailable(format!(
                        "cannot reach PostgreSQL at {} after {} attempt(s): {reason}",
                        store.target,
                        attempt + 1
                    )));
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// The pool for `url`, without connecting yet.
    fn open_pool(url: &str, options: &PostgresOptions) -> Result<Self, StoreError> {
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(|e| StoreError::Database(format!("invalid PostgreSQL URL: {e}")))?;
        let timeout_ms = options.statement_timeout.as_millis().max(1);
        let session = format!("-c statement_timeout={timeout_ms}");
        let combined = match config.get_options() {
            Some(theirs) if !theirs.is_empty() => format!("{theirs} {session}"),
            _ => session,
        };
        config.options(combined);
        if config.get_application_name().is_none() {
            config.application_name("tether-server");
        }
        config.connect_timeout(options.connect_timeout);
        // A database that vanished without closing its sockets is noticed within a minute.
        config.keepalives_idle(Duration::from_secs(30));
        let target = describe(&config);
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(options.statement_timeout))
            .create_timeout(Some(options.connect_timeout))
            .recycle_timeout(Some(options.connect_timeout))
            .build()
            .map_err(|e| StoreError::Database(format!("cannot build the connection pool: {e}")))?;
        Ok(PostgresStore { pool, target })
    }

    /// Applies the migrations up to schema version `target` (tests build older schemas with
    /// it); returns the version the database is at.
    pub async fn migrate_to(&self, target: usize) -> Result<usize, StoreError> {
        let mut client = self.client().await?;
        migrate(&mut client, target).await
    }

    /// Connects to `url` and brings its schema to version `target` only: an older database,
    /// for tests of the migrations.
    pub async fn create_at_version(
        url: &str,
        options: &PostgresOptions,
        target: usize,
    ) -> Result<usize, StoreError> {
        Self::open_pool(url, options)?.migrate_to(target).await
    }

    /// The schema version: how many migrations the database has applied.
    pub async fn schema_version(&self) -> Result<usize, StoreError> {
        let client = self.client().await?;
        schema_version(&**client).await
    }

    /// Where the database is (host, port, database, user; no password).
    pub fn target(&self) -> &str {
        &self.target
    }

    pub(super) async fn client(&self) -> Result<deadpool_postgres::Client, StoreError> {
        self.pool.get().await.map_err(pool_error)
    }
}

/// `host:port/database (user)`, for messages: never the password.
fn describe(config: &tokio_postgres::Config) -> String {
    use tokio_postgres::config::Host;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(host)) => host.clone(),
        Some(Host::Unix(path)) => path.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "{host}:{port}/{} (user {})",
        config.get_dbname().unwrap_or("(default)"),
        config.get_user().unwrap_or("(default)")
    )
}

async fn schema_version(client: &impl tokio_postgres::GenericClient) -> Result<usize, StoreError> {
    let exists: bool = client
        .query_one(
            "SELECT to_regclass('tether_schema_version') IS NOT NULL",
            &[],
        )
        .await
        .map_err(db_error)?
        .get(0);
    if !exists {
        return Ok(0);
    }
    let version: i32 = client
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM tether_schema_version",
            &[],
        )
        .await
        .map_err(db_error)?
        .get(0);
    Ok(usize::try_from(version).unwrap_or(0))
}

/// Applies the migrations after the database's version, up to `target`, in one transaction
/// under an advisory lock (replicas starting together wait for the first, then find nothing to
/// do); a failed migration leaves the database as it was. Returns the version reached.
pub async fn migrate(
    client: &mut tokio_postgres::Client,
    target: usize,
) -> Result<usize, StoreError> {
    let target = target.min(MIGRATIONS.len());
    let tx = client.transaction().await.map_err(db_error)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(db_error)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS tether_schema_version (
            version INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
        )",
    )
    .await
    .map_err(db_error)?;
    let applied = schema_version(&tx).await?;
    if applied > MIGRATIONS.len() {
        return Err(StoreError::Database(format!(
            "the database's schema is version {applied}, newer than this server's {}: \
             run a newer tether-server",
            MIGRATIONS.len()
        )));
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().take(target).skip(applied) {
        tx.batch_execute(migration.postgres)
            .await
            .map_err(|e| match db_error(e) {
                StoreError::Database(why) => StoreError::Database(format!(
                    "migration {} ({}): {why}",
                    index + 1,
                    migration.name
                )),
                other => other,
            })?;
        let version = i32::try_from(index + 1).unwrap_or(i32::MAX);
        tx.execute(
            "INSERT INTO tether_schema_version (version, name) VALUES ($1, $2)",
            &[&version, &migration.name],
        )
        .await
        .map_err(db_error)?;
    }
    tx.commit().await.map_err(db_error)?;
    Ok(applied.max(target))
}

/// A driver error as a store error: [`StoreError::Unavailable`] when the database cannot be
/// reached or cannot serve now (a closed connection, a refused or timed-out connect, a server
/// shutting down or starting, too many connections, a statement past its timeout, a conflict
/// worth retrying), else [`StoreError::Database`].
pub(super) fn db_error(error: tokio_postgres::Error) -> StoreError {
    if let Some(db) = error.as_db_error() {
        let code = db.code();
        let class = &code.code()[..2];
        let transient = class == "08"
            || class == "53"
            || [
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
                SqlState::CANNOT_CONNECT_NOW,
                SqlState::QUERY_CANCELED,
                SqlState::T_R_SERIALIZATION_FAILURE,
                SqlState::T_R_DEADLOCK_DETECTED,
            ]
            .contains(code);
        let message = format!("{} ({})", db.message(), code.code());
        return if transient {
            StoreError::Unavailable(message)
        } else {
            StoreError::Database(message)
        };
    }
    // The driver's kinds are private; those that mean the database cannot be reached carry an
    // I/O error as their source (a refused, reset or timed-out connect or read: its connect
    // timeout is an `io::ErrorKind::TimedOut`), or are a closed connection.
    let io = std::error::Error::source(&error)
        .and_then(|source| source.downcast_ref::<std::io::Error>())
        .is_some();
    let message = match std::error::Error::source(&error) {
        Some(source) => format!("{error}: {source}"),
        None => error.to_string(),
    };
    if error.is_closed() || io {
        StoreError::Unavailable(message)
    } else {
        StoreError::Database(message)
    }
}

fn pool_error(error: PoolError) -> StoreError {
    match error {
        PoolError::Backend(error) => db_error(error),
        PoolError::Timeout(kind) => {
            StoreError::Unavailable(format!("no database connection in time ({kind:?})"))
        }
        PoolError::Closed => StoreError::Unavailable("the connection pool is closed".into()),
        other => StoreError::Database(other.to_string()),
    }
}

pub(super) fn i64_of(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub(super) fn u64_of(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// A stored row of `project` from its JSON columns.
fn decode(
    project: &str,
    response_json: &str,
    input_json: &str,
    parent_id: Option<String>,
) -> Result<StoredResponse, StoreError> {
    Ok(StoredResponse {
        project: project.to_string(),
        response: serde_json::from_str(response_json)?,
        added_input: serde_json::from_str(input_json)?,
        parent_id,
    })
}

#[async_trait::async_trait]
impl ResponseStore for PostgresStore {
    async fn put(&self, stored: &StoredResponse) -> Result<(), StoreError> {
        let response_json = serde_json::to_string(&stored.response)?;
        let input_json = serde_json::to_string(&stored.added_input)?;
        let item_ids: Vec<&str> = stored
            .added_input
            .iter()
            .chain(&stored.response.output)
            .filter_map(Item::id)
            .collect();
        let created_at = i64_of(stored.response.created_at);
        let client = self.client().await?;
        // One statement: the row and its item index land together or not at all. Writing the
        // same response again (a retried write) replaces it; another project's response with
        // the same id is never overwritten.
        let statement = client
            .prepare_cached(
                "WITH response AS (
                    INSERT INTO responses
                        (id, parent_id, created_at, response_json, added_input_json, project)
                    VALUES ($1, $2, $3, $4, $5, $6)
                    ON CONFLICT (id) DO UPDATE SET
                        parent_id = EXCLUDED.parent_id,
                        created_at = EXCLUDED.created_at,
                        response_json = EXCLUDED.response_json,
                        added_input_json = EXCLUDED.added_input_json
                    WHERE responses.project = EXCLUDED.project
                    RETURNING id
                ), indexed AS (
                    INSERT INTO items (item_id, response_id, project)
                    SELECT item_id, response.id, $6 FROM unnest($7::text[]) AS item_id, response
                    ON CONFLICT DO NOTHING
                )
                SELECT count(*) FROM response",
            )
            .await
            .map_err(db_error)?;
        let written: i64 = client
            .query_one(
                &statement,
                &[
                    &stored.response.id,
                    &stored.parent_id,
                    &created_at,
                    &response_json,
                    &input_json,
                    &stored.project,
                    &item_ids,
                ],
            )
            .await
            .map_err(db_error)?
            .get(0);
        if written == 0 {
            return Err(StoreError::Database(format!(
                "response id {} is already stored in another project",
                stored.response.id
            )));
        }
        Ok(())
    }

    async fn bill(&self, entry: &LedgerEntry) -> Result<(), StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "INSERT INTO usage_ledger (response_id, model, transport, input_tokens,
                 cached_tokens, cache_write_tokens, output_tokens, recorded_at, project)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                 ON CONFLICT (response_id) DO NOTHING",
            )
            .await
            .map_err(db_error)?;
        client
            .execute(
                &statement,
                &[
                    &entry.response_id,
                    &entry.model,
                    &entry.transport,
                    &i64_of(entry.input_tokens),
                    &i64_of(entry.cached_tokens),
                    &i64_of(entry.cache_write_tokens),
                    &i64_of(entry.output_tokens),
                    &i64_of(entry.recorded_at),
                    &entry.project,
                ],
            )
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn ledger(&self, response_id: &str) -> Result<Vec<LedgerEntry>, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "SELECT model, transport, input_tokens, cached_tokens, output_tokens, recorded_at,
                 cache_write_tokens, project FROM usage_ledger WHERE response_id = $1 ORDER BY seq",
            )
            .await
            .map_err(db_error)?;
        let rows = client
            .query(&statement, &[&response_id])
            .await
            .map_err(db_error)?;
        Ok(rows
            .iter()
            .map(|row| LedgerEntry {
                response_id: response_id.to_string(),
                model: row.get(0),
                transport: match row.get::<_, &str>(1) {
                    "http" => "http",
                    "sse" => "sse",
                    _ => "ws",
                },
                input_tokens: u64_of(row.get(2)),
                cached_tokens: u64_of(row.get(3)),
                output_tokens: u64_of(row.get(4)),
                recorded_at: u64_of(row.get(5)),
                cache_write_tokens: u64_of(row.get(6)),
                project: row.get(7),
            })
            .collect())
    }

    async fn get(&self, project: &str, id: &str) -> Result<Option<StoredResponse>, StoreError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "SELECT response_json, added_input_json, parent_id FROM responses
                 WHERE id = $1 AND project = $2",
            )
            .await
            .map_err(db_error)?;
        let row = client
            .query_opt(&statement, &[&id, &project])
            .await
            .map_err(db_error)?;
        row.map(|row| decode(project, row.get(0), row.get(1), row.get(2)))
            .transpose()
    }

    async fn delete(&self, project: &str, id: &str) -> Result<bool, StoreError> {
        let client = self.client().await?;
        // One statement: the row and its item index rows go together.
        let statement = client
            .prepare_cached(
                "WITH gone AS (
                    DELETE FROM responses WHERE id = $1 AND project = $2 RETURNING id
                ), unindexed AS (
                    DELETE FROM items WHERE response_id IN (SELECT id FROM gone)
                )
                SELECT count(*) FROM gone",
            )
            .await
            .map_err(db_error)?;
        let deleted: i64 = client
            .query_one(&statement, &[&id, &project])
            .await
            .map_err(db_error)?
            .get(0);
        Ok(deleted > 0)
    }

    async fn find_items(&self, project: &str, ids: &[String]) -> Result<Vec<Item>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.client().await?;
        // One holder per item id will do: the item is the same in each.
        let statement = client
            .prepare_cached(
                "SELECT response_json, added_input_json, parent_id FROM responses
                 WHERE project = $1 AND id IN (
                    SELECT DISTINCT ON (item_id) response_id FROM items
                    WHERE project = $1 AND item_id = ANY($2)
                    ORDER BY item_id, response_id
                 )",
            )
            .await
            .map_err(db_error)?;
        let rows = client
            .query(&statement, &[&project, &ids])
            .await
            .map_err(db_error)?;
        let mut found: Vec<Item> = Vec::new();
        for row in rows {
            let stored = decode(project, row.get(0), row.get(1), row.get(2))?;
            for item in items_with_ids(&stored, ids) {
                if !found.iter().any(|seen| seen.id() == item.id()) {
                    found.push(item);
                }
            }
        }
        Ok(found)
    }

    async fn ready(&self) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .simple_query("SELECT 1")
            .await
            .map_err(db_error)
            .map(drop)
    }

    /// The chain in two queries, however long it is, instead of one per ancestor: a recursive
    /// one walks the ids alone (newest first; a deleted ancestor ends it, as in the trait's
    /// walk), then one reads the responses on it. A loop (corrupt data) is refused as soon as an
    /// id comes back; the walk carries no path, so it stays linear in the chain's length.
    async fn load_context(
        &self,
        project: &str,
        id: &str,
    ) -> Result<Option<(tether_protocol::Response, Vec<Item>)>, StoreError> {
        let client = self.client().await?;
        let walk = client
            .prepare_cached(
                "WITH RECURSIVE chain (id, parent_id, depth) AS (
                    SELECT id, parent_id, 1 FROM responses WHERE id = $1 AND project = $2
                  UNION ALL
                    SELECT r.id, r.parent_id, c.depth + 1
                    FROM chain c JOIN responses r ON r.id = c.parent_id AND r.project = $2
                    WHERE c.depth <= $3
                )
                SELECT id FROM chain ORDER BY depth",
            )
            .await
            .map_err(db_error)?;
        let limit = i32::try_from(MAX_CHAIN).unwrap_or(i32::MAX);
        let ids: Vec<String> = client
            .query(&walk, &[&id, &project, &limit])
            .await
            .map_err(db_error)?
            .iter()
            .map(|row| row.get(0))
            .collect();
        let mut seen = std::collections::HashSet::new();
        if ids.len() > MAX_CHAIN || !ids.iter().all(|id| seen.insert(id.as_str())) {
            return Err(StoreError::ChainTooLong(id.to_string()));
        }
        if ids.is_empty() {
            return Ok(None);
        }
        let read = client
            .prepare_cached(
                "SELECT id, response_json, added_input_json, parent_id FROM responses
                 WHERE project = $1 AND id = ANY($2)",
            )
            .await
            .map_err(db_error)?;
        let mut found = std::collections::HashMap::new();
        for row in client
            .query(&read, &[&project, &ids])
            .await
            .map_err(db_error)?
        {
            let stored = decode(project, row.get(1), row.get(2), row.get(3))?;
            found.insert(row.get::<_, String>(0), stored);
        }
        // Newest first; one deleted between the two queries ends the chain there, as a deleted
        // ancestor does.
        let mut chain = Vec::new();
        for id in &ids {
            match found.remove(id) {
                Some(stored) => chain.push(stored),
                None => break,
            }
        }
        let Some(newest) = chain.first() else {
            return Ok(None);
        };
        let response = newest.response.clone();
        let mut items = Vec::new();
        chain.reverse();
        for stored in chain {
            // Its input and output, interleaved where a long-running response took more input.
            items.extend(stored.conversation());
        }
        Ok(Some((response, items)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_described_without_its_password() {
        let config =
            tokio_postgres::Config::from_str("postgres://tether:secret@db.local:6543/responses")
                .unwrap();
        let described = describe(&config);
        assert_eq!(described, "db.local:6543/responses (user tether)");
        assert!(!described.contains("secret"));
    }

    #[test]
    fn a_bad_url_is_refused_before_connecting() {
        let error = PostgresStore::open_pool("postgres://[::1", &PostgresOptions::default())
            .err()
            .expect("refused");
        assert!(
            error.to_string().contains("invalid PostgreSQL URL"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn an_unreachable_database_is_unavailable_after_the_retries() {
        // A port nothing listens on (bound, then released).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let options = PostgresOptions {
            connect_retries: 2,
            connect_retry_delay: Duration::from_millis(10),
            ..PostgresOptions::default()
        };
        let url = format!("postgres://tether@127.0.0.1:{port}/tether");
        let error = PostgresStore::connect(&url, &options)
            .await
            .err()
            .expect("no database there");
        assert!(matches!(error, StoreError::Unavailable(_)), "{error}");
        assert!(error.to_string().contains("after 3 attempt(s)"), "{error}");
    }

    #[tokio::test]
    async fn a_server_that_hangs_up_is_unavailable_by_the_drivers_error_kind() {
        // Accepts the connection and closes it before answering the startup message: the
        // driver reports an I/O error or a closed connection, whatever its message says.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                drop(socket);
            }
        });
        let url = format!("postgres://tether@127.0.0.1:{port}/tether");
        let error = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .err()
            .expect("no database there");
        assert!(
            matches!(db_error(error), StoreError::Unavailable(_)),
            "a hang-up is not the database refusing the request"
        );
    }
}
