//! The SQLite store: one database file (`DIR/tether.sqlite3`, WAL) or an in-memory database,
//! its schema versioned by `user_version` and migrated at open.
//!
//! The connection sits behind a mutex: every call is short, synchronous work that the async
//! callers run on the blocking pool, so an async mutex would buy nothing, and a panic while it
//! is held cannot leave SQLite inconsistent (transactions roll back).

use std::path::Path;

use parking_lot::{Mutex, MutexGuard};
use rusqlite::{Connection, OptionalExtension, params};
use tether_protocol::Item;

use super::{LedgerEntry, ResponseStore, StoreError, StoredResponse, items_with_ids};

/// Ordered schema migrations; the index + 1 is the version recorded in `user_version`.
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE responses (
        id TEXT PRIMARY KEY,
        parent_id TEXT,
        created_at INTEGER NOT NULL,
        response_json TEXT NOT NULL,
        added_input_json TEXT NOT NULL
    );",
    "CREATE TABLE usage_ledger (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        response_id TEXT NOT NULL,
        model TEXT NOT NULL,
        transport TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        cached_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        recorded_at INTEGER NOT NULL
    );",
    // Where each stored item is, by its id, so an `item_reference` resolves without a
    // `previous_response_id`; filled from the responses already stored.
    // An id may be in several responses (an input item resent, a referenced item copied into
    // the input that referenced it): one row per response holding it.
    "CREATE TABLE items (
        item_id TEXT NOT NULL,
        response_id TEXT NOT NULL,
        PRIMARY KEY (item_id, response_id)
    );
    CREATE INDEX items_by_response ON items (response_id);
    INSERT OR IGNORE INTO items (item_id, response_id)
        SELECT json_extract(item.value, '$.id'), responses.id
        FROM responses, json_each(responses.added_input_json) AS item
        WHERE json_extract(item.value, '$.id') IS NOT NULL;
    INSERT OR IGNORE INTO items (item_id, response_id)
        SELECT json_extract(item.value, '$.id'), responses.id
        FROM responses, json_each(responses.response_json, '$.output') AS item
        WHERE json_extract(item.value, '$.id') IS NOT NULL;",
    // The engine's prompt cache writes, billed apart from the tokens read from it; lines
    // recorded before the cache existed wrote nothing.
    "ALTER TABLE usage_ledger ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;",
];

/// SQLite-backed store.
pub struct SqliteStore {
    connection: Mutex<Connection>,
}

impl SqliteStore {
    /// Opens (creating if needed) `DIR/tether.sqlite3`, or an in-memory database for `:memory:`.
    pub fn open(data_dir: &Path) -> Result<Self, StoreError> {
        let connection = if data_dir == Path::new(":memory:") {
            Connection::open_in_memory()?
        } else {
            std::fs::create_dir_all(data_dir).map_err(|e| {
                rusqlite::Error::InvalidPath(data_dir.join(format!("(cannot create: {e})")))
            })?;
            let connection = Connection::open(data_dir.join("tether.sqlite3"))?;
            // WAL lets readers proceed while a write commits; NORMAL sync is durable across
            // process crashes, which is what a response store needs.
            connection.pragma_update(None, "journal_mode", "WAL")?;
            connection.pragma_update(None, "synchronous", "NORMAL")?;
            connection
        };
        migrate(&connection)?;
        Ok(SqliteStore {
            connection: Mutex::new(connection),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.connection.lock()
    }
}

fn migrate(connection: &Connection) -> Result<(), StoreError> {
    let version: i64 = connection.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let applied = usize::try_from(version).unwrap_or(0);
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(applied) {
        let tx = connection.unchecked_transaction()?;
        tx.execute_batch(migration)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
        tx.commit()?;
    }
    Ok(())
}

impl ResponseStore for SqliteStore {
    fn put(&self, stored: &StoredResponse) -> Result<(), StoreError> {
        let response_json = serde_json::to_string(&stored.response)?;
        let input_json = serde_json::to_string(&stored.added_input)?;
        let connection = self.lock();
        let tx = connection.unchecked_transaction()?;
        {
            let mut index =
                tx.prepare("INSERT OR IGNORE INTO items (item_id, response_id) VALUES (?1, ?2)")?;
            for item in stored.added_input.iter().chain(&stored.response.output) {
                if let Some(item_id) = item.id() {
                    index.execute(params![item_id, stored.response.id])?;
                }
            }
        }
        tx.execute(
            "INSERT OR REPLACE INTO responses (id, parent_id, created_at, response_json, added_input_json)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                stored.response.id,
                stored.parent_id,
                stored.response.created_at as i64,
                response_json,
                input_json
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    fn find_items(&self, ids: &[String]) -> Result<Vec<Item>, StoreError> {
        let mut holders = Vec::new();
        {
            let connection = self.lock();
            // Any response holding the item will do: the item is the same in each.
            let mut lookup =
                connection.prepare("SELECT response_id FROM items WHERE item_id = ?1 LIMIT 1")?;
            for id in ids {
                if let Some(response_id) = lookup
                    .query_row(params![id], |row| row.get::<_, String>(0))
                    .optional()?
                    && !holders.contains(&response_id)
                {
                    holders.push(response_id);
                }
            }
        }
        let mut found = Vec::new();
        for response_id in holders {
            if let Some(stored) = self.get(&response_id)? {
                found.extend(items_with_ids(&stored, ids));
            }
        }
        Ok(found)
    }

    fn get(&self, id: &str) -> Result<Option<StoredResponse>, StoreError> {
        let row = self
            .lock()
            .query_row(
                "SELECT response_json, added_input_json, parent_id FROM responses WHERE id = ?1",
                params![id],
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
            response: serde_json::from_str(&response_json)?,
            added_input: serde_json::from_str(&input_json)?,
            parent_id,
        }))
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let connection = self.lock();
        connection.execute("DELETE FROM items WHERE response_id = ?1", params![id])?;
        Ok(connection.execute("DELETE FROM responses WHERE id = ?1", params![id])? > 0)
    }

    fn bill(&self, entry: &LedgerEntry) -> Result<(), StoreError> {
        self.lock().execute(
            "INSERT INTO usage_ledger (response_id, model, transport, input_tokens, cached_tokens,
             cache_write_tokens, output_tokens, recorded_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                entry.response_id,
                entry.model,
                entry.transport,
                entry.input_tokens as i64,
                entry.cached_tokens as i64,
                entry.cache_write_tokens as i64,
                entry.output_tokens as i64,
                entry.recorded_at as i64
            ],
        )?;
        Ok(())
    }

    fn ledger(&self, response_id: &str) -> Result<Vec<LedgerEntry>, StoreError> {
        let connection = self.lock();
        let mut statement = connection.prepare(
            "SELECT model, transport, input_tokens, cached_tokens, output_tokens, recorded_at,
             cache_write_tokens FROM usage_ledger WHERE response_id = ?1 ORDER BY seq",
        )?;
        let rows = statement.query_map(params![response_id], |row| {
            let transport: String = row.get(1)?;
            Ok(LedgerEntry {
                response_id: response_id.to_string(),
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
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
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

    #[test]
    fn items_are_found_by_id_and_indexed_when_an_older_database_opens() {
        let dir = std::env::temp_dir().join(format!("tether-store-{}", rand::random::<u64>()));
        let ids = |ids: &[&str]| ids.iter().map(|id| id.to_string()).collect::<Vec<_>>();
        {
            let store = SqliteStore::open(&dir).unwrap();
            store
                .put(&StoredResponse {
                    response: response("r1", "a1"),
                    added_input: vec![question("msg_q1")],
                    parent_id: None,
                })
                .unwrap();
            let found = store
                .find_items(&ids(&["msg_r1", "msg_q1", "msg_none"]))
                .unwrap();
            let mut found: Vec<_> = found.iter().filter_map(Item::id).collect();
            found.sort_unstable();
            assert_eq!(found, ["msg_q1", "msg_r1"]);
            // As a database from before the index: the migration fills it from the responses.
            let connection = store.lock();
            connection
                .execute_batch(
                    "DROP TABLE items;
                     ALTER TABLE usage_ledger DROP COLUMN cache_write_tokens;
                     PRAGMA user_version = 2;",
                )
                .unwrap();
        }
        let store = SqliteStore::open(&dir).unwrap();
        assert_eq!(store.find_items(&ids(&["msg_r1"])).unwrap().len(), 1);
        assert_eq!(store.find_items(&ids(&["msg_q1"])).unwrap().len(), 1);
        // An item another response holds too stays found when one of them is deleted.
        store
            .put(&StoredResponse {
                response: response("r2", "a2"),
                added_input: vec![question("msg_q1")],
                parent_id: None,
            })
            .unwrap();
        assert!(store.delete("r2").unwrap());
        assert_eq!(store.find_items(&ids(&["msg_q1"])).unwrap().len(), 1);
        // Deleting the last response holding it forgets it.
        assert!(store.delete("r1").unwrap());
        assert!(
            store
                .find_items(&ids(&["msg_r1", "msg_q1"]))
                .unwrap()
                .is_empty()
        );
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn chains_load_oldest_first_and_survive_a_reopen() {
        let dir = std::env::temp_dir().join(format!("tether-store-{}", rand::random::<u64>()));
        {
            let store = SqliteStore::open(&dir).unwrap();
            store
                .put(&StoredResponse {
                    response: response("r1", "a1"),
                    added_input: vec![Item::user_text("q1")],
                    parent_id: None,
                })
                .unwrap();
            store
                .put(&StoredResponse {
                    response: response("r2", "a2"),
                    added_input: vec![Item::user_text("q2")],
                    parent_id: Some("r1".into()),
                })
                .unwrap();
        }
        let store = SqliteStore::open(&dir).unwrap();
        let (latest, items) = store.load_context("r2").unwrap().unwrap();
        assert_eq!(latest.id, "r2");
        let texts: Vec<String> = items
            .iter()
            .map(|i| match i {
                Item::Message(m) => m.content.text(),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(texts, ["q1", "a1", "q2", "a2"]);
        assert!(store.delete("r2").unwrap());
        assert!(!store.delete("r2").unwrap());
        assert!(store.load_context("r2").unwrap().is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn memory_store_works_and_misses_are_none() {
        let store = SqliteStore::open(Path::new(":memory:")).unwrap();
        assert!(store.get("nope").unwrap().is_none());
    }
}
