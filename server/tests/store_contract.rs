//! What every `ResponseStore` promises, held once and run against each implementation: SQLite
//! (a file, as `--data-dir` opens it) and PostgreSQL (a throwaway cluster this test starts and
//! stops: `postgres_cluster`; skipped without its binaries). Both are opened the way the server
//! opens them (`store::open` with a `StoreUrl`). What only one implementation has — its
//! migrations, a schema from an older version — stays with it (`store/sqlite.rs`,
//! `postgres_store.rs`).

mod postgres_cluster;
mod store_fixtures;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use postgres_cluster::Cluster;
use store_fixtures::{entry, ids, question, stored, texts};
use tether_protocol::{Item, ItemStatus};
use tether_server::store::background::RunEvents;
use tether_server::store::{
    self, Conversation, ItemPage, Listing, Lock, PostgresOptions, ResponseStore, StoreError,
    StoreUrl,
};

/// Where a contract runs: a fresh, empty store of one implementation.
enum Backend {
    Sqlite(PathBuf),
    Postgres(String),
}

static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();

impl Backend {
    fn sqlite() -> Backend {
        let dir = std::env::temp_dir().join(format!("tether-contract-{}", rand::random::<u64>()));
        Backend::Sqlite(dir.join("tether.db"))
    }

    /// `None` (the test is skipped, as it says) without PostgreSQL's binaries.
    async fn postgres() -> Option<Backend> {
        let cluster = CLUSTER
            .get_or_init(|| Cluster::start("store_contract"))
            .as_ref()?;
        Some(Backend::Postgres(cluster.fresh_database("contract").await))
    }

    fn url(&self) -> StoreUrl {
        match self {
            Backend::Sqlite(path) => StoreUrl::Sqlite(path.clone()),
            Backend::Postgres(url) => StoreUrl::Postgres(url.clone()),
        }
    }

    /// Opens the store, as a server starting on it does (again after a restart: the same
    /// data).
    async fn open(&self) -> Arc<dyn ResponseStore> {
        store::open(&self.url(), &PostgresOptions::default())
            .await
            .unwrap()
    }

    /// A second writer beside `store`: another replica's pool for PostgreSQL; for SQLite, which
    /// one process owns, the same store shared by that process's tasks.
    async fn beside(&self, store: &Arc<dyn ResponseStore>) -> Arc<dyn ResponseStore> {
        match self {
            Backend::Sqlite(_) => store.clone(),
            Backend::Postgres(_) => self.open().await,
        }
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Backend::Sqlite(path) = self
            && let Some(dir) = path.parent()
        {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Each contract as two tests, one per implementation.
macro_rules! contract {
    ($name:ident) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn sqlite() {
                super::$name(Backend::sqlite()).await;
            }

            #[tokio::test]
            async fn postgres() {
                if let Some(backend) = Backend::postgres().await {
                    super::$name(backend).await;
                }
            }
        }
    };
}

contract!(chains_load_oldest_first_and_survive_a_restart);
contract!(a_chain_that_loops_is_refused);
contract!(a_long_chain_loads_whole);
contract!(another_project_sees_nothing_overwrites_nothing_and_deletes_nothing);
contract!(writing_a_response_again_is_harmless);
contract!(a_response_is_billed_once_even_by_two_writers_at_once);
contract!(items_are_found_by_id_while_any_response_holds_them);
contract!(a_long_running_response_loads_its_input_and_output_interleaved);
contract!(misses_are_none);
contract!(conversations_keep_their_items_in_order_across_a_restart);
contract!(a_conversation_is_its_projects_alone);
contract!(one_holder_locks_a_conversation_until_it_unlocks_or_its_lease_ends);
contract!(background_leases_expire_and_runs_keep_their_events);

async fn chains_load_oldest_first_and_survive_a_restart(backend: Backend) {
    let store = backend.open().await;
    store
        .put(&stored("p", "r1", vec![Item::user_text("q1")], None))
        .await
        .unwrap();
    store
        .put(&stored("p", "r2", vec![Item::user_text("q2")], Some("r1")))
        .await
        .unwrap();
    store
        .put(&stored("p", "r3", vec![Item::user_text("q3")], Some("r2")))
        .await
        .unwrap();
    drop(store);
    let store = backend.open().await;
    let (latest, items) = store.load_context("p", "r3").await.unwrap().unwrap();
    assert_eq!(latest.id, "r3");
    assert_eq!(texts(&items), ["q1", "a-r1", "q2", "a-r2", "q3", "a-r3"]);
    // A deleted ancestor ends the chain: what remains is still a context.
    assert!(store.delete("p", "r1").await.unwrap());
    let (_, items) = store.load_context("p", "r3").await.unwrap().unwrap();
    assert_eq!(texts(&items), ["q2", "a-r2", "q3", "a-r3"]);
    assert!(store.delete("p", "r3").await.unwrap());
    assert!(!store.delete("p", "r3").await.unwrap(), "deleted once");
    assert!(store.load_context("p", "r3").await.unwrap().is_none());
    assert!(store.get("p", "r3").await.unwrap().is_none());
}

async fn a_chain_that_loops_is_refused(backend: Backend) {
    let store = backend.open().await;
    // Corrupt data: r1 → r2 → r1.
    store
        .put(&stored("p", "r1", vec![], Some("r2")))
        .await
        .unwrap();
    store
        .put(&stored("p", "r2", vec![], Some("r1")))
        .await
        .unwrap();
    // A chain that runs into a loop further back: r0 → r1 → r2 → r1.
    store
        .put(&stored("p", "r0", vec![], Some("r1")))
        .await
        .unwrap();
    for start in ["r1", "r0"] {
        // Refused when the loop closes, not after walking it MAX_CHAIN times (which took 18 s).
        let walk = tokio::time::timeout(Duration::from_secs(5), store.load_context("p", start));
        let error = walk.await.expect("refused at once").expect_err("a loop");
        assert!(
            matches!(error, StoreError::ChainTooLong(_)),
            "{start}: {error}"
        );
    }
}

async fn a_long_chain_loads_whole(backend: Backend) {
    // A long agent session: a thousand responses, each continuing the last.
    let store = backend.open().await;
    let mut parent: Option<String> = None;
    for n in 0..1000 {
        let id = format!("r{n}");
        let input = vec![Item::user_text(format!("q{n}"))];
        store
            .put(&stored("p", &id, input, parent.as_deref()))
            .await
            .unwrap();
        parent = Some(id);
    }
    let load = tokio::time::timeout(Duration::from_secs(20), store.load_context("p", "r999"));
    let (latest, items) = load.await.expect("in time").unwrap().unwrap();
    assert_eq!(latest.id, "r999");
    assert_eq!(items.len(), 2000);
    assert_eq!(texts(&items[..2]), ["q0", "a-r0"]);
    assert_eq!(texts(&items[1998..]), ["q999", "a-r999"]);
}

async fn another_project_sees_nothing_overwrites_nothing_and_deletes_nothing(backend: Backend) {
    let store = backend.open().await;
    store
        .put(&stored("a", "r1", vec![question("msg_q1", "q1")], None))
        .await
        .unwrap();
    assert!(store.get("b", "r1").await.unwrap().is_none());
    assert!(store.load_context("b", "r1").await.unwrap().is_none());
    assert!(
        store
            .find_items("b", &ids(&["msg_q1"]))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(!store.delete("b", "r1").await.unwrap());
    assert!(
        store.get("a", "r1").await.unwrap().is_some(),
        "still there for its owner"
    );
    // The same id from another project does not overwrite it.
    let error = store
        .put(&stored("b", "r1", vec![], None))
        .await
        .expect_err("an id belongs to one project");
    assert!(error.to_string().contains("another project"), "{error}");
    let kept = store.get("a", "r1").await.unwrap().unwrap();
    assert_eq!((kept.project.as_str(), kept.added_input.len()), ("a", 1));
}

async fn writing_a_response_again_is_harmless(backend: Backend) {
    let store = backend.open().await;
    let first = stored("p", "r1", vec![question("msg_q1", "q1")], None);
    store.put(&first).await.unwrap();
    // A retried write (its first reply lost) lands once.
    store.put(&first).await.unwrap();
    assert_eq!(store.get("p", "r1").await.unwrap(), Some(first));
    let found = store.find_items("p", &ids(&["msg_q1"])).await.unwrap();
    assert_eq!(found.len(), 1);
}

async fn a_response_is_billed_once_even_by_two_writers_at_once(backend: Backend) {
    let store = backend.open().await;
    let other = backend.beside(&store).await;
    let line = entry("p", "r1");
    store.bill(&line).await.unwrap();
    store.bill(&line).await.unwrap();
    let mut racing = Vec::new();
    for n in 0..20 {
        let writer = if n % 2 == 0 {
            other.clone()
        } else {
            store.clone()
        };
        let line = entry("p", &format!("race{}", n / 2));
        racing.push(tokio::spawn(async move { writer.bill(&line).await }));
    }
    for bill in racing {
        bill.await.unwrap().unwrap();
    }
    assert_eq!(store.ledger("r1").await.unwrap(), vec![line]);
    for n in 0..10 {
        assert_eq!(other.ledger(&format!("race{n}")).await.unwrap().len(), 1);
    }
}

async fn items_are_found_by_id_while_any_response_holds_them(backend: Backend) {
    let store = backend.open().await;
    store
        .put(&stored("p", "r1", vec![question("msg_q1", "q1")], None))
        .await
        .unwrap();
    let find = |wanted: &'static [&'static str]| {
        let store = store.clone();
        async move {
            let mut found: Vec<String> = store
                .find_items("p", &ids(wanted))
                .await
                .unwrap()
                .iter()
                .filter_map(|item| item.id().map(str::to_string))
                .collect();
            found.sort_unstable();
            found
        }
    };
    // Input and output items alike; ids it does not hold are left out.
    assert_eq!(
        find(&["msg_r1", "msg_q1", "msg_none"]).await,
        ["msg_q1", "msg_r1"]
    );
    // An item another response holds too is one item, and stays found when one is deleted.
    store
        .put(&stored("p", "r2", vec![question("msg_q1", "q1")], None))
        .await
        .unwrap();
    assert_eq!(
        find(&["msg_q1"]).await,
        ["msg_q1"],
        "one item, not one per holder"
    );
    assert!(store.delete("p", "r2").await.unwrap());
    assert_eq!(find(&["msg_q1"]).await, ["msg_q1"]);
    // Deleting the last response holding it forgets it.
    assert!(store.delete("p", "r1").await.unwrap());
    assert!(find(&["msg_r1", "msg_q1"]).await.is_empty());
}

async fn a_long_running_response_loads_its_input_and_output_interleaved(backend: Backend) {
    let store = backend.open().await;
    // A response resumed once (append, inject): its first output came before the second input.
    let mut resumed = stored(
        "p",
        "r1",
        vec![
            Item::user_text("q1"),
            store::outputs_marker(1),
            Item::user_text("q2"),
        ],
        None,
    );
    resumed.response.output.insert(
        0,
        Item::assistant_text("msg_first", "first", ItemStatus::Completed),
    );
    store.put(&resumed).await.unwrap();
    store
        .put(&stored("p", "r2", vec![Item::user_text("q3")], Some("r1")))
        .await
        .unwrap();
    let (_, items) = store.load_context("p", "r2").await.unwrap().unwrap();
    assert_eq!(texts(&items), ["q1", "first", "q2", "a-r1", "q3", "a-r2"]);
}

async fn misses_are_none(backend: Backend) {
    let store = backend.open().await;
    assert!(store.get("default", "nope").await.unwrap().is_none());
    let context = store.load_context("default", "nope").await.unwrap();
    assert!(context.is_none());
    assert!(store.ledger("nope").await.unwrap().is_empty());
    assert!(store.find_items("default", &[]).await.unwrap().is_empty());
    assert!(!store.delete("default", "nope").await.unwrap());
}

fn conversation(project: &str, id: &str) -> Conversation {
    let mut metadata = serde_json::Map::new();
    metadata.insert("topic".into(), serde_json::json!("cats"));
    Conversation {
        id: id.into(),
        project: project.into(),
        created_at: 7,
        metadata,
    }
}

fn page(listing: Listing) -> (Vec<String>, bool) {
    match listing {
        Listing::Page(items, more) => (texts(&items), more),
        other => panic!("not a page: {other:?}"),
    }
}

async fn conversations_keep_their_items_in_order_across_a_restart(backend: Backend) {
    let store = backend.open().await;
    let items: Vec<Item> = (0..3)
        .map(|n| question(&format!("m{n}"), &format!("q{n}")))
        .collect();
    store
        .create_conversation(&conversation("p", "conv_1"), &items)
        .await
        .unwrap();
    let more: Vec<Item> = (3..6)
        .map(|n| question(&format!("m{n}"), &format!("q{n}")))
        .collect();
    assert!(
        store
            .add_conversation_items("p", "conv_1", &more)
            .await
            .unwrap()
    );
    drop(store);
    let store = backend.open().await;
    assert_eq!(
        store.conversation("p", "conv_1").await.unwrap(),
        Some(conversation("p", "conv_1"))
    );
    let all = ItemPage::default();
    let (texts_all, has_more) = page(store.conversation_items("p", "conv_1", &all).await.unwrap());
    assert_eq!(texts_all, ["q0", "q1", "q2", "q3", "q4", "q5"]);
    assert!(!has_more);
    let first = ItemPage {
        limit: Some(2),
        ..ItemPage::default()
    };
    assert_eq!(
        page(
            store
                .conversation_items("p", "conv_1", &first)
                .await
                .unwrap()
        ),
        (vec!["q0".into(), "q1".into()], true)
    );
    let after = ItemPage {
        after: Some("m1".into()),
        limit: Some(3),
        descending: false,
    };
    assert_eq!(
        page(
            store
                .conversation_items("p", "conv_1", &after)
                .await
                .unwrap()
        )
        .0,
        ["q2", "q3", "q4"]
    );
    let newest = ItemPage {
        after: Some("m4".into()),
        limit: Some(10),
        descending: true,
    };
    assert_eq!(
        page(
            store
                .conversation_items("p", "conv_1", &newest)
                .await
                .unwrap()
        ),
        (
            vec!["q3".into(), "q2".into(), "q1".into(), "q0".into()],
            false
        )
    );
    let nowhere = ItemPage {
        after: Some("m9".into()),
        ..ItemPage::default()
    };
    assert_eq!(
        store
            .conversation_items("p", "conv_1", &nowhere)
            .await
            .unwrap(),
        Listing::NoItem
    );
    assert_eq!(
        texts(&[store
            .conversation_item("p", "conv_1", "m2")
            .await
            .unwrap()
            .unwrap()]),
        ["q2"]
    );
    assert!(
        store
            .delete_conversation_item("p", "conv_1", "m2")
            .await
            .unwrap()
    );
    assert!(
        !store
            .delete_conversation_item("p", "conv_1", "m2")
            .await
            .unwrap()
    );
    assert!(
        store
            .conversation_item("p", "conv_1", "m2")
            .await
            .unwrap()
            .is_none()
    );
    let mut metadata = serde_json::Map::new();
    metadata.insert("topic".into(), serde_json::json!("dogs"));
    let updated = store
        .update_conversation("p", "conv_1", &metadata)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(updated.metadata, metadata);
    assert_eq!(updated.created_at, 7);
    assert!(store.delete_conversation("p", "conv_1").await.unwrap());
    assert!(!store.delete_conversation("p", "conv_1").await.unwrap());
    assert_eq!(
        store.conversation_items("p", "conv_1", &all).await.unwrap(),
        Listing::NoConversation
    );
    assert!(
        !store
            .add_conversation_items("p", "conv_1", &more)
            .await
            .unwrap()
    );
}

async fn a_conversation_is_its_projects_alone(backend: Backend) {
    let store = backend.open().await;
    let items = vec![question("m0", "q0")];
    store
        .create_conversation(&conversation("p", "conv_1"), &items)
        .await
        .unwrap();
    assert!(store.conversation("q", "conv_1").await.unwrap().is_none());
    let all = ItemPage::default();
    assert_eq!(
        store.conversation_items("q", "conv_1", &all).await.unwrap(),
        Listing::NoConversation
    );
    assert!(
        store
            .conversation_item("q", "conv_1", "m0")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        !store
            .add_conversation_items("q", "conv_1", &items)
            .await
            .unwrap()
    );
    assert!(
        !store
            .delete_conversation_item("q", "conv_1", "m0")
            .await
            .unwrap()
    );
    assert!(
        store
            .update_conversation("q", "conv_1", &serde_json::Map::new())
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(
        store.lock("q", "conv_1", "r1", u64::MAX / 2).await.unwrap(),
        Lock::Missing
    );
    assert!(!store.delete_conversation("q", "conv_1").await.unwrap());
    assert_eq!(
        page(store.conversation_items("p", "conv_1", &all).await.unwrap()).0,
        ["q0"]
    );
}

async fn one_holder_locks_a_conversation_until_it_unlocks_or_its_lease_ends(backend: Backend) {
    let store = backend.open().await;
    let other = backend.beside(&store).await;
    store
        .create_conversation(&conversation("p", "conv_1"), &[])
        .await
        .unwrap();
    let later = 4_000_000_000;
    assert_eq!(
        store.lock("p", "conv_1", "r1", later).await.unwrap(),
        Lock::Acquired
    );
    assert_eq!(
        other.lock("p", "conv_1", "r2", later).await.unwrap(),
        Lock::Held
    );
    assert_eq!(
        store.lock("p", "conv_1", "r1", later + 1).await.unwrap(),
        Lock::Acquired,
        "its holder renews it"
    );
    other.unlock("conv_1", "r2").await.unwrap();
    assert_eq!(
        other.lock("p", "conv_1", "r2", later).await.unwrap(),
        Lock::Held,
        "not its to give back"
    );
    store.unlock("conv_1", "r1").await.unwrap();
    assert_eq!(
        other.lock("p", "conv_1", "r2", 1).await.unwrap(),
        Lock::Acquired
    );
    // A lease that ended (1 s after the epoch) is taken over.
    assert_eq!(
        store.lock("p", "conv_1", "r3", later).await.unwrap(),
        Lock::Acquired
    );
    assert_eq!(
        store.lock("p", "conv_9", "r3", later).await.unwrap(),
        Lock::Missing
    );
    // Two holders at once: exactly one wins.
    store
        .create_conversation(&conversation("p", "conv_2"), &[])
        .await
        .unwrap();
    let (a, b) = tokio::join!(
        store.lock("p", "conv_2", "a", later),
        other.lock("p", "conv_2", "b", later)
    );
    let mut outcomes = [a.unwrap(), b.unwrap()];
    outcomes.sort_by_key(|lock| *lock == Lock::Held);
    assert_eq!(outcomes, [Lock::Acquired, Lock::Held]);
}

async fn background_leases_expire_and_runs_keep_their_events(backend: Backend) {
    let store = backend.open().await;
    store.lease("p", "r1", 100).await.unwrap();
    store.lease("q", "r2", 300).await.unwrap();
    let mut expired = store.expired_leases(200).await.unwrap();
    expired.sort();
    assert_eq!(expired, [("p".to_string(), "r1".to_string())]);
    store.lease("p", "r1", 400).await.unwrap();
    assert!(
        store.expired_leases(200).await.unwrap().is_empty(),
        "renewed"
    );
    assert_eq!(store.expired_leases(u64::MAX).await.unwrap().len(), 2);
    assert_eq!(
        store.run_events("p", "r1").await.unwrap(),
        RunEvents::Running
    );
    // A cancel asked for through another replica reaches the running one.
    let other = backend.beside(&store).await;
    assert!(!store.cancel_requested("r1").await.unwrap());
    assert!(!other.request_cancel("q", "r1").await.unwrap(), "not q's");
    assert!(other.request_cancel("p", "r1").await.unwrap());
    assert!(store.cancel_requested("r1").await.unwrap());
    assert!(!store.cancel_requested("r9").await.unwrap());
    drop(other);
    store.finish_run("r1", Some("[1,2]")).await.unwrap();
    assert_eq!(
        store.expired_leases(u64::MAX).await.unwrap(),
        [("q".to_string(), "r2".to_string())],
        "an ended run holds no lease"
    );
    // A restart (another replica) reads them; another project does not.
    drop(store);
    let store = backend.open().await;
    assert_eq!(
        store.run_events("p", "r1").await.unwrap(),
        RunEvents::Kept("[1,2]".into())
    );
    assert_eq!(store.run_events("q", "r1").await.unwrap(), RunEvents::Gone);
    assert!(
        !store.request_cancel("p", "r1").await.unwrap(),
        "an ended run is not cancelled"
    );
    store.finish_run("r2", None).await.unwrap();
    assert!(store.expired_leases(u64::MAX).await.unwrap().is_empty());
    assert_eq!(store.run_events("q", "r2").await.unwrap(), RunEvents::Gone);
}
