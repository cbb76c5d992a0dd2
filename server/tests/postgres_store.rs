//! The PostgreSQL store's own migrations against a real PostgreSQL server (a throwaway cluster
//! this test starts and stops: `postgres_cluster`): from an empty database, from the previous
//! schema and from an older one, with several replicas migrating at once, and a newer schema
//! refused. What every store promises is `store_contract.rs`'s, held against SQLite too. Each
//! test has a database of its own.

mod postgres_cluster;
mod store_fixtures;

use std::sync::OnceLock;

use postgres_cluster::Cluster;
use store_fixtures::{entry, ids, question, stored};
use tether_server::store::migrations::MIGRATIONS;
use tether_server::store::{
    BackgroundStore, ConversationStore, PostgresOptions, PostgresStore, ResponseStore,
};

static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();

fn cluster() -> Option<&'static Cluster> {
    CLUSTER
        .get_or_init(|| Cluster::start("postgres_store"))
        .as_ref()
}

/// A store on a fresh database, or `None` (skipped) without PostgreSQL.
async fn fresh_store() -> Option<(PostgresStore, String)> {
    let cluster = cluster()?;
    let url = cluster.fresh_database("store").await;
    let store = PostgresStore::connect(&url, &PostgresOptions::default())
        .await
        .unwrap();
    Some((store, url))
}

#[tokio::test]
async fn an_empty_database_gets_every_migration_once() {
    let Some((store, url)) = fresh_store().await else {
        return;
    };
    assert_eq!(store.schema_version().await.unwrap(), MIGRATIONS.len());
    // Opening it again applies nothing more.
    let again = PostgresStore::connect(&url, &PostgresOptions::default())
        .await
        .unwrap();
    assert_eq!(again.schema_version().await.unwrap(), MIGRATIONS.len());
    let client = postgres_cluster::client(&url).await;
    let rows = client
        .query(
            "SELECT version, name FROM tether_schema_version ORDER BY version",
            &[],
        )
        .await
        .unwrap();
    let recorded: Vec<(i32, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    let expected: Vec<(i32, String)> = MIGRATIONS
        .iter()
        .enumerate()
        .map(|(i, m)| (i as i32 + 1, m.name.to_string()))
        .collect();
    assert_eq!(recorded, expected);
    store.ready().await.unwrap();
}

#[tokio::test]
async fn replicas_starting_together_migrate_once() {
    let Some(cluster) = cluster() else {
        return;
    };
    let url = cluster.fresh_database("together").await;
    let starts = (0..4).map(|_| {
        let url = url.clone();
        tokio::spawn(async move {
            PostgresStore::connect(&url, &PostgresOptions::default())
                .await
                .map(|_| ())
        })
    });
    for start in starts {
        start.await.unwrap().unwrap();
    }
    let client = postgres_cluster::client(&url).await;
    let count: i64 = client
        .query_one("SELECT count(*) FROM tether_schema_version", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(count as usize, MIGRATIONS.len());
}

/// The schema version before the migration named `name`.
fn before(name: &str) -> usize {
    MIGRATIONS
        .iter()
        .position(|migration| migration.name == name)
        .unwrap_or_else(|| panic!("no migration {name}"))
}

/// Writes `stored` as a schema before projects holds a response: no `project` column.
async fn insert_older_row(
    client: &tokio_postgres::Client,
    stored: &tether_server::store::StoredResponse,
) {
    client
        .execute(
            "INSERT INTO responses (id, parent_id, created_at, response_json, added_input_json)
             VALUES ($1, NULL, 1, $2, $3)",
            &[
                &stored.response.id,
                &serde_json::to_string(&stored.response).unwrap(),
                &serde_json::to_string(&stored.added_input).unwrap(),
            ],
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn the_schema_before_projects_is_migrated_with_its_rows() {
    let Some(cluster) = cluster() else {
        return;
    };
    let url = cluster.fresh_database("before_projects").await;
    let previous = before("projects, billed once");
    let options = PostgresOptions::default();
    assert_eq!(
        PostgresStore::create_at_version(&url, &options, previous)
            .await
            .unwrap(),
        previous
    );
    // Rows as the previous schema holds them: no projects, and a response billed twice (what
    // the last migration forbids from now on).
    let client = postgres_cluster::client(&url).await;
    let r1 = stored("default", "r1", vec![question("msg_q1", "q1")], None);
    insert_older_row(&client, &r1).await;
    client
        .batch_execute(
            "INSERT INTO items (item_id, response_id) VALUES ('msg_q1', 'r1'), ('msg_r1', 'r1');
             INSERT INTO usage_ledger (response_id, model, transport, input_tokens,
                 cached_tokens, output_tokens, recorded_at, cache_write_tokens)
             VALUES ('r1', 'm', 'http', 10, 0, 2, 1, 0), ('r1', 'm', 'http', 99, 0, 9, 2, 0);",
        )
        .await
        .unwrap();
    let store = PostgresStore::connect(&url, &options).await.unwrap();
    assert_eq!(store.schema_version().await.unwrap(), MIGRATIONS.len());
    // The rows belong to `default`, the ledger kept the first line, and the item index works.
    assert_eq!(store.get("default", "r1").await.unwrap(), Some(r1));
    let ledger = store.ledger("r1").await.unwrap();
    assert_eq!(ledger.len(), 1);
    assert_eq!(
        (ledger[0].input_tokens, ledger[0].project.as_str()),
        (10, "default")
    );
    assert_eq!(
        store
            .find_items("default", &ids(&["msg_q1", "msg_r1"]))
            .await
            .unwrap()
            .len(),
        2
    );
    // And from now on a second line is ignored.
    store.bill(&entry("default", "r1")).await.unwrap();
    assert_eq!(store.ledger("r1").await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_previous_schema_is_migrated_and_keeps_serving_its_responses() {
    let Some(cluster) = cluster() else {
        return;
    };
    let url = cluster.fresh_database("previous").await;
    let previous = MIGRATIONS.len() - 1;
    let options = PostgresOptions::default();
    assert_eq!(
        PostgresStore::create_at_version(&url, &options, previous)
            .await
            .unwrap(),
        previous
    );
    // A response as the previous schema stores it.
    let client = postgres_cluster::client(&url).await;
    let r1 = stored("p", "r1", vec![question("msg_q1", "q1")], None);
    client
        .execute(
            "INSERT INTO responses (id, parent_id, created_at, response_json, added_input_json,
                 project)
             VALUES ('r1', NULL, 1, $1, $2, 'p')",
            &[
                &serde_json::to_string(&r1.response).unwrap(),
                &serde_json::to_string(&r1.added_input).unwrap(),
            ],
        )
        .await
        .unwrap();
    let store = PostgresStore::connect(&url, &options).await.unwrap();
    assert_eq!(store.schema_version().await.unwrap(), MIGRATIONS.len());
    assert_eq!(store.get("p", "r1").await.unwrap(), Some(r1));
    // What the newest migration added works at once.
    store.lease("p", "r1", 10).await.unwrap();
    assert_eq!(
        store.expired_leases(20).await.unwrap(),
        [("p".to_string(), "r1".to_string())]
    );
}

#[tokio::test]
async fn a_database_from_before_conversations_gets_them() {
    let Some(cluster) = cluster() else {
        return;
    };
    let url = cluster.fresh_database("before_conversations").await;
    let options = PostgresOptions::default();
    PostgresStore::create_at_version(&url, &options, before("conversations"))
        .await
        .unwrap();
    let client = postgres_cluster::client(&url).await;
    let r1 = stored("default", "r1", vec![question("msg_q1", "q1")], None);
    insert_older_row(&client, &r1).await;
    let store = PostgresStore::connect(&url, &options).await.unwrap();
    assert_eq!(store.schema_version().await.unwrap(), MIGRATIONS.len());
    assert_eq!(store.get("default", "r1").await.unwrap(), Some(r1));
    let conversation = tether_server::store::Conversation {
        id: "conv_1".into(),
        project: "default".into(),
        created_at: 1,
        metadata: serde_json::Map::new(),
    };
    store
        .create_conversation(&conversation, &[question("msg_c1", "c1")])
        .await
        .unwrap();
    assert_eq!(
        store.conversation("default", "conv_1").await.unwrap(),
        Some(conversation)
    );
}

#[tokio::test]
async fn items_are_found_by_id_and_indexed_when_an_older_database_opens() {
    let Some(cluster) = cluster() else {
        return;
    };
    let url = cluster.fresh_database("older").await;
    let options = PostgresOptions::default();
    // Schema version 2: before the item index, the prompt cache's writes and tenancy.
    PostgresStore::create_at_version(&url, &options, 2)
        .await
        .unwrap();
    let client = postgres_cluster::client(&url).await;
    let r1 = stored("default", "r1", vec![question("msg_q1", "q1")], None);
    insert_older_row(&client, &r1).await;
    let store = PostgresStore::connect(&url, &options).await.unwrap();
    assert_eq!(store.schema_version().await.unwrap(), MIGRATIONS.len());
    let find = |wanted: &'static [&'static str]| {
        let store = store.clone();
        async move { store.find_items("default", &ids(wanted)).await.unwrap() }
    };
    // The migration filled the index from the stored input and output.
    assert_eq!(find(&["msg_r1"]).await.len(), 1);
    assert_eq!(find(&["msg_q1"]).await.len(), 1);
    assert!(find(&["msg_none"]).await.is_empty());
    // The migrated index rows belong to their response: deleting it forgets them.
    assert!(store.delete("default", "r1").await.unwrap());
    assert!(find(&["msg_r1", "msg_q1"]).await.is_empty());
}

#[tokio::test]
async fn a_newer_schema_is_refused() {
    let Some((store, url)) = fresh_store().await else {
        return;
    };
    drop(store);
    let client = postgres_cluster::client(&url).await;
    client
        .execute(
            "INSERT INTO tether_schema_version (version, name) VALUES ($1, 'from the future')",
            &[&(MIGRATIONS.len() as i32 + 1)],
        )
        .await
        .unwrap();
    let error = PostgresStore::connect(&url, &PostgresOptions::default())
        .await
        .err()
        .expect("refused");
    assert!(
        error.to_string().contains("newer than this server"),
        "{error}"
    );
}
