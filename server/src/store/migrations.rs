//! The store's schema, one list of versioned migrations for both databases: migration `i`
//! (0-based) takes a database from schema version `i` to `i + 1`, in SQLite's dialect and in
//! PostgreSQL's. Both implementations apply the ones a database lacks when they open it, each in
//! a transaction with the version it reaches (SQLite in `user_version`, PostgreSQL in the
//! `tether_schema_version` table), so the two schemas cannot drift apart: a new migration is one
//! more entry here, with both texts, tested from the previous version on both.

/// One schema change, in each database's SQL.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// What it does, for logs and errors.
    pub name: &'static str,
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

/// Every migration, oldest first; the schema version of a database is how many it has applied.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        name: "responses",
        sqlite: "CREATE TABLE responses (
            id TEXT PRIMARY KEY,
            parent_id TEXT,
            created_at INTEGER NOT NULL,
            response_json TEXT NOT NULL,
            added_input_json TEXT NOT NULL
        );",
        // Response ids are random (96 bits, `crate::ids`): the primary key makes a collision
        // between replicas an error rather than a second row.
        postgres: "CREATE TABLE responses (
            id TEXT PRIMARY KEY,
            parent_id TEXT,
            created_at BIGINT NOT NULL,
            response_json TEXT NOT NULL,
            added_input_json TEXT NOT NULL
        );",
    },
    Migration {
        name: "usage ledger",
        sqlite: "CREATE TABLE usage_ledger (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            response_id TEXT NOT NULL,
            model TEXT NOT NULL,
            transport TEXT NOT NULL,
            input_tokens INTEGER NOT NULL,
            cached_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            recorded_at INTEGER NOT NULL
        );",
        postgres: "CREATE TABLE usage_ledger (
            seq BIGSERIAL PRIMARY KEY,
            response_id TEXT NOT NULL,
            model TEXT NOT NULL,
            transport TEXT NOT NULL,
            input_tokens BIGINT NOT NULL,
            cached_tokens BIGINT NOT NULL,
            output_tokens BIGINT NOT NULL,
            recorded_at BIGINT NOT NULL
        );",
    },
    // Where each stored item is, by its id, so an `item_reference` resolves without a
    // `previous_response_id`; filled from the responses already stored.
    // An id may be in several responses (an input item resent, a referenced item copied into
    // the input that referenced it): one row per response holding it.
    Migration {
        name: "item index",
        sqlite: "CREATE TABLE items (
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
        postgres: "CREATE TABLE items (
            item_id TEXT NOT NULL,
            response_id TEXT NOT NULL,
            PRIMARY KEY (item_id, response_id)
        );
        CREATE INDEX items_by_response ON items (response_id);
        INSERT INTO items (item_id, response_id)
            SELECT item.value ->> 'id', responses.id
            FROM responses, jsonb_array_elements(responses.added_input_json::jsonb) AS item(value)
            WHERE item.value ->> 'id' IS NOT NULL
            ON CONFLICT DO NOTHING;
        INSERT INTO items (item_id, response_id)
            SELECT item.value ->> 'id', responses.id
            FROM responses,
                 jsonb_array_elements(COALESCE(responses.response_json::jsonb -> 'output',
                                               '[]'::jsonb)) AS item(value)
            WHERE item.value ->> 'id' IS NOT NULL
            ON CONFLICT DO NOTHING;",
    },
    // The engine's prompt cache writes, billed apart from the tokens read from it; lines
    // recorded before the cache existed wrote nothing.
    Migration {
        name: "prompt cache writes",
        sqlite: "ALTER TABLE usage_ledger ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;",
        postgres: "ALTER TABLE usage_ledger ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;",
    },
    // Tenancy: every row belongs to a project (rows from before belong to `default`, the
    // project of a server without keys); and a response is billed once, which the unique index
    // enforces across every replica sharing the database.
    Migration {
        name: "projects, billed once",
        sqlite: "ALTER TABLE responses ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
        ALTER TABLE items ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
        ALTER TABLE usage_ledger ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
        DELETE FROM usage_ledger
            WHERE seq NOT IN (SELECT MIN(seq) FROM usage_ledger GROUP BY response_id);
        CREATE UNIQUE INDEX usage_ledger_once ON usage_ledger (response_id);",
        postgres: "ALTER TABLE responses ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
        ALTER TABLE items ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
        ALTER TABLE usage_ledger ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
        DELETE FROM usage_ledger
            WHERE seq NOT IN (SELECT MIN(seq) FROM usage_ledger GROUP BY response_id);
        CREATE UNIQUE INDEX usage_ledger_once ON usage_ledger (response_id);",
    },
    // Conversations (`/v1/conversations`): their metadata and the lock a running response holds
    // (`store::conversations`), and their items in order (`seq`).
    Migration {
        name: "conversations",
        sqlite: "CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            metadata_json TEXT NOT NULL,
            locked_by TEXT,
            locked_until INTEGER
        );
        CREATE TABLE conversation_items (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL,
            project TEXT NOT NULL,
            item_id TEXT NOT NULL,
            item_json TEXT NOT NULL
        );
        CREATE INDEX conversation_items_by_conversation
            ON conversation_items (conversation_id, seq);
        CREATE INDEX conversation_items_by_id ON conversation_items (conversation_id, item_id);",
        postgres: "CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            metadata_json TEXT NOT NULL,
            locked_by TEXT,
            locked_until BIGINT
        );
        CREATE TABLE conversation_items (
            seq BIGSERIAL PRIMARY KEY,
            conversation_id TEXT NOT NULL,
            project TEXT NOT NULL,
            item_id TEXT NOT NULL,
            item_json TEXT NOT NULL
        );
        CREATE INDEX conversation_items_by_conversation
            ON conversation_items (conversation_id, seq);
        CREATE INDEX conversation_items_by_id ON conversation_items (conversation_id, item_id);",
    },
    // Background responses: until when the server running one vouches for it (`lease_until`,
    // NULL once it ended), whether a cancel reached another replica, and, once it ended, its
    // events for any replica to stream again (`store::background`).
    Migration {
        name: "background runs",
        sqlite: "CREATE TABLE background_runs (
            response_id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            lease_until INTEGER,
            events_json TEXT,
            cancel_requested INTEGER NOT NULL DEFAULT 0
        );",
        postgres: "CREATE TABLE background_runs (
            response_id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            lease_until BIGINT,
            events_json TEXT,
            cancel_requested BOOLEAN NOT NULL DEFAULT FALSE
        );",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_migration_has_both_dialects() {
        for migration in MIGRATIONS {
            assert!(!migration.sqlite.trim().is_empty(), "{}", migration.name);
            assert!(!migration.postgres.trim().is_empty(), "{}", migration.name);
            // SQLite-only syntax must not leak into the PostgreSQL text.
            for sqlite_only in ["INSERT OR", "AUTOINCREMENT", "json_each", "json_extract"] {
                assert!(
                    !migration.postgres.contains(sqlite_only),
                    "{}: {sqlite_only}",
                    migration.name
                );
            }
        }
    }
}
