//! The SQLite store: one database file (`DIR/tether.sqlite3`, WAL) or an in-memory database,
//! its schema versioned by `user_version` and migrated at open.
//!
//! The connection sits behind a mutex: every call is short, synchronous work run on the blocking
//! pool ([`SqliteStore::run`]), so an async mutex would buy nothing, and a panic while it is
//! held cannot leave SQLite inconsistent (transactions roll back).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use rusqlite::{Connection, OptionalExtension, params};
use tether_protocol::Item;

use super::{
    LedgerEntry, ResponseStore, StoreError, StoredResponse, WriteTimes, Writes, items_with_ids,
};

/// The schema migrations, in SQLite's dialect (`super::migrations`); the index + 1 is the version
/// recorded in `user_version`.
fn migrations() -> impl Iterator<Item = &'static str> {
    super::migrations::MIGRATIONS.iter().map(|m| m.sqlite)
}

/// SQLite-backed store.
#[derive(Clone)]
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
}

impl SqliteStore {
    /// Opens (creating if needed) `DIR/tether.sqlite3`, or an in-memory database for `:memory:`.
    pub fn open(data_dir: &Path) -> Result<Self, StoreError> {
        if data_dir == Path::new(":memory:") {
            return Self::open_file(data_dir);
        }
        std::fs::create_dir_all(data_dir).map_err(|e| {
            rusqlite::Error::InvalidPath(data_dir.join(format!("(cannot create: {e})")))
        })?;
        Self::open_file(&data_dir.join("tether.sqlite3"))
    }

    /// Opens (creating if needed) the database file `path` (`sqlite://PATH`; its directory must
    /// exist), or an in-memory database for `:memory:`.
    pub fn open_file(path: &Path) -> Result<Self, StoreError> {
        let connection = if path == Path::new(":memory:") {
            Connection::open_in_memory()?
        } else {
            let connection = Connection::open(path)?;
            // WAL lets readers proceed while a write commits; NORMAL sync is durable across
            // process crashes, which is what a response store needs.
            connection.pragma_update(None, "journal_mode", "WAL")?;
            connection.pragma_update(None, "synchronous", "NORMAL")?;
            connection
        };
        migrate(&connection)?;
        Ok(SqliteStore {
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    /// Runs `work` on the connection, off the async workers.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let connection = self.connection.clone();
        tokio::task::spawn_blocking(move || work(&mut connection.lock()))
            .await
            .map_err(|e| StoreError::Database(format!("store task failed: {e}")))?
    }

    /// The schema version (`user_version`): how many migrations have been applied.
    pub fn schema_version(&self) -> Result<usize, StoreError> {
        let version: i64 =
            self.connection
                .lock()
                .pragma_query_value(None, "user_version", |row| row.get(0))?;
        Ok(usize::try_from(version).unwrap_or(0))
    }
}

fn get(
    connection: &Connection,
    project: &str,
    id: &str,
) -> Result<Option<StoredResponse>, StoreError> {
    let row = connection
        .query_row(
            "SELECT response_json, added_input_json, parent_id FROM responses
             WHERE id = ?1 AND project = ?2",
            params![id, project],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get(2)?,
                ))
            },
        )
        .optional()?;
    let Some((response_json, input_json, parent_id)) = row else {
        return Ok(None);
    };
    Ok(Some(StoredResponse {
        project: project.to_string(),
        response: serde_json::from_str(&response_json)?,
        added_input: serde_json::from_str(&input_json)?,
        parent_id,
    }))
}

/// What a stored response's row needs, taken from it on the async side: its JSON and the ids
/// its items are indexed by.
struct ResponseRow {
    id: String,
    project: String,
    parent_id: Option<String>,
    created_at: i64,
    response_json: String,
    input_json: String,
    item_ids: Vec<String>,
}

impl ResponseRow {
    fn of(stored: &StoredResponse) -> Result<Self, StoreError> {
        Ok(ResponseRow {
            id: stored.response.id.clone(),
            project: stored.project.clone(),
            parent_id: stored.parent_id.clone(),
            created_at: stored.response.created_at as i64,
            response_json: serde_json::to_string(&stored.response)?,
            input_json: serde_json::to_string(&stored.added_input)?,
            item_ids: (stored.added_input.iter().chain(&stored.response.output))
                .filter_map(|item| item.id().map(str::to_string))
                .collect(),
        })
    }

    /// Writes the row and its items' index entries (inside the caller's transaction).
    fn insert(&self, connection: &Connection) -> Result<(), StoreError> {
        // Writing the same response again (a retried write) replaces it; another project's
        // response with the same id is never overwritten (as in PostgreSQL).
        let owner: Option<String> = connection
            .prepare_cached("SELECT project FROM responses WHERE id = ?1")?
            .query_row(params![self.id], |row| row.get(0))
            .optional()?;
        if owner.is_some_and(|owner| owner != self.project) {
            return Err(StoreError::Database(format!(
                "response id {} is already stored in another project",
                self.id
            )));
        }
        let mut index = connection.prepare_cached(
            "INSERT OR IGNORE INTO items (item_id, response_id, project) VALUES (?1, ?2, ?3)",
        )?;
        for item_id in &self.item_ids {
            index.execute(params![item_id, self.id, self.project])?;
        }
        connection
            .prepare_cached(
                "INSERT OR REPLACE INTO responses
                 (id, parent_id, created_at, response_json, added_input_json, project)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                self.id,
                self.parent_id,
                self.created_at,
                self.response_json,
                self.input_json,
                self.project
            ])?;
        Ok(())
    }
}

/// Appends `entry` to the usage ledger, unless its response is billed already.
fn insert_bill(connection: &Connection, entry: &LedgerEntry) -> Result<(), StoreError> {
    // Prepared once per connection (a row every turn), not parsed again each time.
    connection
        .prepare_cached(
            "INSERT OR IGNORE INTO usage_ledger (response_id, model, transport, input_tokens,
             cached_tokens, cache_write_tokens, output_tokens, recorded_at, project)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?
        .execute(params![
            entry.response_id,
            entry.model,
            entry.transport,
            entry.input_tokens as i64,
            entry.cached_tokens as i64,
            entry.cache_write_tokens as i64,
            entry.output_tokens as i64,
            entry.recorded_at as i64,
            entry.project
        ])?;
    Ok(())
}

fn migrate(connection: &Connection) -> Result<(), StoreError> {
    let version: i64 = connection.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let applied = usize::try_from(version).unwrap_or(0);
    for (index, migration) in migrations().enumerate().skip(applied) {
        let tx = connection.unchecked_transaction()?;
        tx.execute_batch(migration)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl ResponseStore for SqliteStore {
    async fn put(&self, stored: &StoredResponse) -> Result<(), StoreError> {
        let row = ResponseRow::of(stored)?;
        self.run(move |connection| {
            let tx = connection.transaction()?;
            row.insert(&tx)?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn write_all(&self, writes: &[Writes<'_>]) -> Result<Vec<WriteTimes>, StoreError> {
        let rows = writes
            .iter()
            .map(|write| {
                let row = write.stored.map(ResponseRow::of).transpose()?;
                Ok((row, write.bill.clone()))
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        self.run(move |connection| {
            let tx = connection.transaction()?;
            let mut times = Vec::with_capacity(rows.len());
            for (row, bill) in &rows {
                let persist = match row {
                    Some(row) => {
                        let started = Instant::now();
                        row.insert(&tx)?;
                        Some((started, started.elapsed()))
                    }
                    None => None,
                };
                let started = Instant::now();
                insert_bill(&tx, bill)?;
                times.push(WriteTimes {
                    persist,
                    bill: (started, started.elapsed()),
                });
            }
            let started = Instant::now();
            tx.commit()?;
            // The commit is every write's: each bill carries an equal share of it.
            let share = started.elapsed() / u32::try_from(times.len().max(1)).unwrap_or(u32::MAX);
            for time in &mut times {
                time.bill.1 += share;
            }
            Ok(times)
        })
        .await
    }

    async fn find_items(&self, project: &str, ids: &[String]) -> Result<Vec<Item>, StoreError> {
        let (project, ids) = (project.to_string(), ids.to_vec());
        self.run(move |connection| {
            let mut holders = Vec::new();
            {
                // Any response holding the item will do: the item is the same in each.
                let mut lookup = connection.prepare(
                    "SELECT response_id FROM items WHERE item_id = ?1 AND project = ?2 LIMIT 1",
                )?;
                for id in &ids {
                    if let Some(response_id) = lookup
                        .query_row(params![id, project], |row| row.get::<_, String>(0))
                        .optional()?
                        && !holders.contains(&response_id)
                    {
                        holders.push(response_id);
                    }
                }
            }
            let mut found = Vec::new();
            for response_id in holders {
                if let Some(stored) = get(connection, &project, &response_id)? {
                    found.extend(items_with_ids(&stored, &ids));
                }
            }
            Ok(found)
        })
        .await
    }

    async fn get(&self, project: &str, id: &str) -> Result<Option<StoredResponse>, StoreError> {
        let (project, id) = (project.to_string(), id.to_string());
        self.run(move |connection| get(connection, &project, &id))
            .await
    }

    async fn delete(&self, project: &str, id: &str) -> Result<bool, StoreError> {
        let (project, id) = (project.to_string(), id.to_string());
        self.run(move |connection| {
            let tx = connection.transaction()?;
            let deleted = tx.execute(
                "DELETE FROM responses WHERE id = ?1 AND project = ?2",
                params![id, project],
            )? > 0;
            if deleted {
                tx.execute("DELETE FROM items WHERE response_id = ?1", params![id])?;
            }
            tx.commit()?;
            Ok(deleted)
        })
        .await
    }

    async fn bill(&self, entry: &LedgerEntry) -> Result<(), StoreError> {
        let entry = entry.clone();
        self.run(move |connection| insert_bill(connection, &entry))
            .await
    }

    async fn ledger(&self, response_id: &str) -> Result<Vec<LedgerEntry>, StoreError> {
        let response_id = response_id.to_string();
        self.run(move |connection| {
            let mut statement = connection.prepare(
                "SELECT model, transport, input_tokens, cached_tokens, output_tokens, recorded_at,
                 cache_write_tokens, project FROM usage_ledger WHERE response_id = ?1 ORDER BY seq",
            )?;
            let rows = statement.query_map(params![response_id], |row| {
                let transport: String = row.get(1)?;
                Ok(LedgerEntry {
                    response_id: response_id.clone(),
                    model: row.get(0)?,
                    transport: match transport.as_str() {
                        "http" => "http",
                        "sse" => "sse",
                        _ => "ws",
                    },
                    input_tokens: row.get::<_, i64>(2)? as u64,
                    cached_tokens: row.get::<_, i64>(3)? as u64,
                    cache_write_tokens: row.get::<_, i64>(6)? as u64,
                    output_tokens: row.get::<_, i64>(4)? as u64,
                    recorded_at: row.get::<_, i64>(5)? as u64,
                    project: row.get(7)?,
                })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_protocol::{ItemStatus, Response, ResponseCreate};

    fn response(id: &str, answer: &str) -> Response {
        let mut response = Response::in_progress(id, 1, &ResponseCreate::new("m", "x"));
        response.output.push(Item::assistant_text(
            format!("msg_{id}"),
            answer,
            ItemStatus::Completed,
        ));
        response
    }

    fn question(id: &str) -> Item {
        let mut question = Item::user_text("q1");
        if let Item::Message(message) = &mut question {
            message.id = Some(id.into());
        }
        question
    }

    fn stored(project: &str, id: &str, input: Vec<Item>, parent: Option<&str>) -> StoredResponse {
        StoredResponse {
            project: project.into(),
            response: response(id, &format!("a-{id}")),
            added_input: input,
            parent_id: parent.map(str::to_string),
        }
    }

    fn temp_dir() -> std::path::PathBuf {
        std::env::temp_dir().join(format!("tether-store-{}", rand::random::<u64>()))
    }

    fn ids(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|id| id.to_string()).collect()
    }

    #[tokio::test]
    async fn items_are_found_by_id_and_indexed_when_an_older_database_opens() {
        let dir = temp_dir();
        {
            let store = SqliteStore::open(&dir).unwrap();
            store
                .put(&stored("default", "r1", vec![question("msg_q1")], None))
                .await
                .unwrap();
            let found = store
                .find_items("default", &ids(&["msg_r1", "msg_q1", "msg_none"]))
                .await
                .unwrap();
            let mut found: Vec<_> = found.iter().filter_map(Item::id).collect();
            found.sort_unstable();
            assert_eq!(found, ["msg_q1", "msg_r1"]);
            // As a database of schema version 2 (before the item index, the prompt cache's
            // writes, tenancy, conversations and background leases): the migrations fill the
            // index from the responses.
            store
                .connection
                .lock()
                .execute_batch(
                    "DROP TABLE background_runs;
                     DROP TABLE conversation_items;
                     DROP TABLE conversations;
                     DROP INDEX usage_ledger_once;
                     DROP TABLE items;
                     ALTER TABLE usage_ledger DROP COLUMN project;
                     ALTER TABLE responses DROP COLUMN project;
                     ALTER TABLE usage_ledger DROP COLUMN cache_write_tokens;
                     PRAGMA user_version = 2;",
                )
                .unwrap();
        }
        let store = SqliteStore::open(&dir).unwrap();
        assert_eq!(
            store.schema_version().unwrap(),
            super::super::migrations::MIGRATIONS.len()
        );
        let find = |wanted: &'static [&'static str]| {
            let store = store.clone();
            async move { store.find_items("default", &ids(wanted)).await.unwrap() }
        };
        assert_eq!(find(&["msg_r1"]).await.len(), 1);
        assert_eq!(find(&["msg_q1"]).await.len(), 1);
        // The migrated index rows belong to their response: deleting it forgets them.
        assert!(store.delete("default", "r1").await.unwrap());
        assert!(find(&["msg_r1", "msg_q1"]).await.is_empty());
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    // What every store promises (chains, projects, the ledger, the item index) is held against
    // this one and PostgreSQL alike in `server/tests/store_contract.rs`, on a file; here, that
    // the in-memory database the tests use works too.
    #[tokio::test]
    async fn an_in_memory_store_keeps_what_it_is_given() {
        let store = SqliteStore::open(Path::new(":memory:")).unwrap();
        assert!(store.get("p", "r1").await.unwrap().is_none());
        let r1 = stored("p", "r1", vec![question("msg_q1")], None);
        store.put(&r1).await.unwrap();
        assert_eq!(store.get("p", "r1").await.unwrap(), Some(r1));
    }
}
