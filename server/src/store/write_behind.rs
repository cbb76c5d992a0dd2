//! Persist and bill, off the critical path where the transport allows it.
//!
//! Over HTTP a response is final only once it is stored and billed, so those writes happen before
//! the reply ([`WriteBehindStore::write_now`]). In WebSocket mode `response.completed` goes out
//! first and the writes are queued to one background writer ([`WriteBehindStore::write_later`]),
//! which writes what arrives within [`GROUP_FOR`] of a record together
//! ([`ResponseStore::write_all`]: with SQLite, one transaction on one trip to its thread).
//! Nothing queued is lost or invisible: a queued response is readable at once (reads consult the
//! queue before the database), a delete cancels its queued write, and on shutdown
//! [`WriteBehindStore::drain`] writes everything queued before the process exits.
//!
//! "Readable at once" holds inside one process. When replicas share the store (PostgreSQL), a
//! client that saw `response.completed` from one replica may continue on another, or the first
//! may be killed before its queue is written: there the WebSocket path writes before the
//! terminal event instead ([`WriteMode::Durable`], `--ws-writes`), so a response whose
//! `completed` a client has seen is committed to the shared database. A write the database
//! refuses as unavailable is not dropped: it stays readable on this replica and is retried in
//! the background ([`RETRY_FOR`]) until the database is back.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tether_protocol::Item;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{LedgerEntry, ResponseStore, StoreError, StoredResponse, Writes, items_with_ids};
use crate::metrics::StageHistograms;
use crate::timing::{PathKind, Stage, StageTimings};
use crate::traces::WriteSpans;

/// The writes one response needs.
#[derive(Debug, Clone)]
pub struct Record {
    /// The response to store, when it asked for `store: true`.
    pub stored: Option<StoredResponse>,
    pub bill: LedgerEntry,
    /// Where the writes' spans go when the response is traced and written apart from it
    /// (WebSocket mode); over HTTP they are stages of the response itself.
    pub trace: Option<WriteSpans>,
}

/// Queued stored responses by id, readable until written.
type Pending = Arc<tokio::sync::Mutex<HashMap<String, StoredResponse>>>;

/// When the WebSocket path's writes happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Queued just before the terminal event and written after it, off the critical path:
    /// readable at once in this process, lost if it is killed before the queue is written.
    Behind,
    /// Written (committed) before the terminal event is sent: a response whose `completed` a
    /// client has seen survives its replica's SIGKILL and is found by every other replica.
    Durable,
}

/// How long writes the database refuses as unavailable are retried in the background, from the
/// first refusal of an outage; past it, each queued write is tried once more and, refused again,
/// given up (and logged).
pub const RETRY_FOR: Duration = Duration::from_secs(30);

/// A store whose writes can be queued behind the response.
pub struct WriteBehindStore {
    inner: Arc<dyn ResponseStore>,
    mode: WriteMode,
    histograms: StageHistograms,
    pending: Pending,
    queue: Mutex<Option<mpsc::UnboundedSender<(Record, PathKind)>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

/// Performs `record`'s writes, timing the persist and bill stages (and marking when they began,
/// when `traced`). A stored response is only written while it is still `wanted` (a delete may
/// have cancelled it).
async fn write(
    store: &dyn ResponseStore,
    record: &Record,
    path: PathKind,
    wanted: bool,
    traced: bool,
) -> (Result<(), StoreError>, StageTimings) {
    let mut timings = StageTimings::new(path);
    if traced {
        timings.keep_marks();
    }
    let mut result = Ok(());
    if let Some(stored) = record.stored.as_ref().filter(|_| wanted) {
        let started = Instant::now();
        result = store.put(stored).await;
        timings.record_at(Stage::Persist, started, started.elapsed());
    }
    let started = Instant::now();
    let billed = store.bill(&record.bill).await;
    timings.record_at(Stage::Bill, started, started.elapsed());
    (result.and(billed), timings)
}

/// How long the background writer waits after a record arrives for more to write with it, and
/// how many it writes together at most: at a thousand turns a second, several records to one
/// SQLite transaction and one hand-off to its thread, instead of one each. The wait lengthens
/// the time a queued record is not yet on disk by as much (it is readable throughout).
pub const GROUP_FOR: Duration = Duration::from_millis(5);
pub const GROUP_MAX: usize = 256;

/// Waits for the next records to write and takes them into `batch`: the first, and whatever
/// else arrived within [`GROUP_FOR`] of it (up to [`GROUP_MAX`]). `false` once the queue is
/// closed and empty.
async fn next_group(
    jobs: &mut mpsc::UnboundedReceiver<(Record, PathKind)>,
    batch: &mut Vec<(Record, PathKind)>,
) -> bool {
    if jobs.recv_many(batch, GROUP_MAX).await == 0 {
        return false;
    }
    // Sleeping rather than waiting on the queue: the records sent meanwhile do not wake the
    // writer one by one.
    tokio::time::sleep(GROUP_FOR).await;
    while batch.len() < GROUP_MAX {
        let Ok(job) = jobs.try_recv() else { break };
        batch.push(job);
    }
    true
}

/// The background writer's state.
struct Writer {
    store: Arc<dyn ResponseStore>,
    pending: Pending,
    histograms: StageHistograms,
    /// When the database became unavailable: one outage is retried for RETRY_FOR in all, not
    /// per record, so a long queue (or a shutdown) is not held up record by record.
    outage_since: Option<Instant>,
}

impl Writer {
    /// Writes `batch` (emptying it): together when the store takes them all, else one by one,
    /// so a record the database refuses holds up none of the others.
    async fn write_group(&mut self, batch: &mut Vec<(Record, PathKind)>) {
        if batch.len() > 1 {
            // Held across the writes so a concurrent delete either cancels one or deletes what
            // it wrote, never races it.
            let mut pending = self.pending.lock().await;
            let wanted: Vec<bool> = batch
                .iter()
                .map(|(record, _)| {
                    (record.stored.as_ref()).is_some_and(|s| pending.contains_key(&s.response.id))
                })
                .collect();
            let writes: Vec<Writes<'_>> = (batch.iter().zip(&wanted))
                .map(|((record, _), &wanted)| Writes {
                    stored: record.stored.as_ref().filter(|_| wanted),
                    bill: &record.bill,
                })
                .collect();
            match self.store.write_all(&writes).await {
                Ok(times) => {
                    self.outage_since = None;
                    for ((record, path), times) in batch.drain(..).zip(times) {
                        let mut timings = StageTimings::new(path);
                        if record.trace.is_some() {
                            timings.keep_marks();
                        }
                        if let Some((started, took)) = times.persist {
                            timings.record_at(Stage::Persist, started, took);
                        }
                        timings.record_at(Stage::Bill, times.bill.0, times.bill.1);
                        self.histograms.observe(&timings);
                        if let Some(trace) = &record.trace {
                            trace.record(&timings);
                        }
                        pending.remove(&record.bill.response_id);
                    }
                    return;
                }
                Err(e) => tracing::debug!("writing {} records at once: {e}", batch.len()),
            }
        }
        for (record, path) in batch.drain(..) {
            self.write_one(record, path).await;
        }
    }

    /// Writes one record, retrying it while the database is unavailable (up to [`RETRY_FOR`]
    /// from the outage's start).
    async fn write_one(&mut self, record: Record, path: PathKind) {
        let id = record.bill.response_id.clone();
        let mut pause = Duration::from_millis(100);
        loop {
            // Held across the write (as above), and released between retries, so readers are
            // not held up by an outage.
            let mut pending = self.pending.lock().await;
            let wanted =
                (record.stored.as_ref()).is_some_and(|s| pending.contains_key(&s.response.id));
            let traced = record.trace.is_some();
            let (result, timings) = write(&*self.store, &record, path, wanted, traced).await;
            match result {
                Err(StoreError::Unavailable(e)) => {
                    let since = *self.outage_since.get_or_insert_with(Instant::now);
                    if since.elapsed() < RETRY_FOR {
                        drop(pending);
                        tracing::warn!("writing {id}: {e}; retrying in {pause:?}");
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(Duration::from_secs(2));
                        continue;
                    }
                    tracing::error!("writing {id}: {e}; given up");
                }
                Ok(()) => {
                    self.outage_since = None;
                    self.histograms.observe(&timings);
                    if let Some(trace) = &record.trace {
                        trace.record(&timings);
                    }
                }
                Err(e) => tracing::error!("writing {id} in the background: {e}"),
            }
            pending.remove(&id);
            return;
        }
    }
}

impl WriteBehindStore {
    /// Wraps `inner` and starts the background writer (needs a tokio runtime), writing the
    /// WebSocket path's records behind the response.
    pub fn start(inner: Arc<dyn ResponseStore>, histograms: StageHistograms) -> Self {
        Self::start_with_mode(inner, histograms, WriteMode::Behind)
    }

    /// [`WriteBehindStore::start`], with the WebSocket path's writes done as `mode` says.
    pub fn start_with_mode(
        inner: Arc<dyn ResponseStore>,
        histograms: StageHistograms,
        mode: WriteMode,
    ) -> Self {
        let pending: Pending = Arc::default();
        let (queue, mut jobs) = mpsc::unbounded_channel::<(Record, PathKind)>();
        let (store, queued, observed) = (inner.clone(), pending.clone(), histograms.clone());
        let writer = tokio::spawn(async move {
            let mut writer = Writer {
                store,
                pending: queued,
                histograms: observed,
                outage_since: None,
            };
            let mut batch = Vec::with_capacity(GROUP_MAX);
            while next_group(&mut jobs, &mut batch).await {
                writer.write_group(&mut batch).await;
            }
        });
        WriteBehindStore {
            inner,
            mode,
            histograms,
            pending,
            queue: Mutex::new(Some(queue)),
            writer: Mutex::new(Some(writer)),
        }
    }

    /// When this store writes the WebSocket path's records.
    pub fn mode(&self) -> WriteMode {
        self.mode
    }

    /// Writes now (the HTTP path), adding the persist and bill stages to `timings`.
    /// A write the database refuses as unavailable is queued for the background writer, which
    /// retries it.
    pub async fn write_now(&self, record: Record, timings: &mut StageTimings) {
        let id = record.bill.response_id.clone();
        let traced = timings.marks.is_some() || record.trace.is_some();
        let (result, written) = write(&*self.inner, &record, timings.path, true, traced).await;
        if let (Some(trace), Ok(())) = (&record.trace, &result) {
            trace.record(&written);
        }
        timings.absorb(written);
        match result {
            Ok(()) => {}
            Err(StoreError::Unavailable(e)) => {
                tracing::warn!("writing {id}: {e}; queued to retry");
                self.enqueue(record, timings.path).await;
            }
            Err(e) => tracing::error!("writing {id}: {e}"),
        }
    }

    /// The WebSocket path's writes, called just before the terminal event is sent: queued
    /// ([`WriteMode::Behind`]; a stored response is readable at once), or done now
    /// ([`WriteMode::Durable`]; queued to retry if the database is unavailable).
    pub async fn write_later(&self, record: Record, path: PathKind) {
        if self.mode == WriteMode::Durable {
            let mut timings = StageTimings::new(path);
            self.write_now(record, &mut timings).await;
            self.histograms.observe(&timings);
            return;
        }
        self.enqueue(record, path).await;
    }

    /// Queues the writes for the background writer; a stored response is readable at once.
    async fn enqueue(&self, record: Record, path: PathKind) {
        if let Some(stored) = &record.stored {
            self.pending
                .lock()
                .await
                .insert(stored.response.id.clone(), stored.clone());
        }
        let refused = match self.queue.lock().as_ref() {
            Some(queue) => queue.send((record, path)).err().map(|e| e.0.0),
            None => Some(record),
        };
        // Draining for shutdown: nobody takes new work, so write it in place.
        if let Some(record) = refused {
            let traced = record.trace.is_some();
            let (result, written) = write(&*self.inner, &record, path, true, traced).await;
            if let (Some(trace), Ok(())) = (&record.trace, &result) {
                trace.record(&written);
            }
            if let Some(stored) = &record.stored {
                self.pending.lock().await.remove(&stored.response.id);
            }
            if let Err(e) = result {
                tracing::error!("writing {} during shutdown: {e}", record.bill.response_id);
            }
        }
    }

    /// Stops queueing and waits until everything queued is written.
    pub async fn drain(&self) {
        self.queue.lock().take();
        let writer = self.writer.lock().take();
        if let Some(writer) = writer {
            let _ = writer.await;
        }
    }
}

// Conversations are written at once, where they are: nothing of them waits in the queue.
super::conversations::delegate_conversation_store!(WriteBehindStore, inner);
super::background::delegate_background_store!(WriteBehindStore, inner);

#[async_trait::async_trait]
impl ResponseStore for WriteBehindStore {
    async fn put(&self, stored: &StoredResponse) -> Result<(), StoreError> {
        self.inner.put(stored).await
    }

    async fn get(&self, project: &str, id: &str) -> Result<Option<StoredResponse>, StoreError> {
        if let Some(stored) = self.pending.lock().await.get(id) {
            return Ok((stored.project == project).then(|| stored.clone()));
        }
        self.inner.get(project, id).await
    }

    async fn find_items(&self, project: &str, ids: &[String]) -> Result<Vec<Item>, StoreError> {
        // Responses still queued for writing first; then the database, for the ids not found.
        let mut found: Vec<Item> = self
            .pending
            .lock()
            .await
            .values()
            .filter(|stored| stored.project == project)
            .flat_map(|stored| items_with_ids(stored, ids))
            .collect();
        let missing: Vec<String> = ids
            .iter()
            .filter(|id| !found.iter().any(|item| item.id() == Some(id.as_str())))
            .cloned()
            .collect();
        if !missing.is_empty() {
            found.extend(self.inner.find_items(project, &missing).await?);
        }
        Ok(found)
    }

    async fn delete(&self, project: &str, id: &str) -> Result<bool, StoreError> {
        let was_queued = {
            let mut pending = self.pending.lock().await;
            match pending.get(id) {
                Some(stored) if stored.project == project => pending.remove(id).is_some(),
                _ => false,
            }
        };
        Ok(self.inner.delete(project, id).await? || was_queued)
    }

    async fn bill(&self, entry: &LedgerEntry) -> Result<(), StoreError> {
        self.inner.bill(entry).await
    }

    async fn ledger(&self, response_id: &str) -> Result<Vec<LedgerEntry>, StoreError> {
        self.inner.ledger(response_id).await
    }

    async fn ready(&self) -> Result<(), StoreError> {
        self.inner.ready().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SqliteStore;
    use tether_protocol::{Response, ResponseCreate};

    fn record(id: &str) -> Record {
        Record {
            stored: Some(StoredResponse {
                project: "p".into(),
                response: Response::in_progress(id, 1, &ResponseCreate::new("m", "x")),
                added_input: Vec::new(),
                parent_id: None,
            }),
            bill: LedgerEntry {
                project: "p".into(),
                response_id: id.into(),
                model: "m".into(),
                transport: "ws",
                input_tokens: 10,
                cached_tokens: 4,
                cache_write_tokens: 0,
                output_tokens: 2,
                recorded_at: 1,
            },
            trace: None,
        }
    }

    #[tokio::test]
    async fn queued_writes_are_readable_at_once_and_drained_on_shutdown() {
        let inner: Arc<dyn ResponseStore> =
            Arc::new(SqliteStore::open(std::path::Path::new(":memory:")).unwrap());
        let store = WriteBehindStore::start(inner.clone(), StageHistograms::new());
        for i in 0..50 {
            store
                .write_later(record(&format!("r{i}")), PathKind::WsHit)
                .await;
        }
        assert!(
            store.get("p", "r49").await.unwrap().is_some(),
            "visible before it is written"
        );
        assert!(
            store.get("q", "r49").await.unwrap().is_none(),
            "and only to its project"
        );
        store.drain().await;
        for i in 0..50 {
            assert!(
                inner.get("p", &format!("r{i}")).await.unwrap().is_some(),
                "r{i} reached the database"
            );
            assert_eq!(inner.ledger(&format!("r{i}")).await.unwrap().len(), 1);
        }
        // After the drain, writes still land (in place).
        store.write_later(record("late"), PathKind::WsHit).await;
        assert!(inner.get("p", "late").await.unwrap().is_some());
    }

    /// A SQLite store whose first `failures` puts find the database unavailable, counting how
    /// many records reach it together.
    struct Flaky {
        store: SqliteStore,
        failures: std::sync::atomic::AtomicU32,
        groups: parking_lot::Mutex<Vec<usize>>,
    }

    crate::store::conversations::delegate_conversation_store!(Flaky, store);
    crate::store::background::delegate_background_store!(Flaky, store);

    #[async_trait::async_trait]
    impl ResponseStore for Flaky {
        async fn put(&self, stored: &StoredResponse) -> Result<(), StoreError> {
            use std::sync::atomic::Ordering;
            if self
                .failures
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok()
            {
                return Err(StoreError::Unavailable("down for the test".into()));
            }
            self.store.put(stored).await
        }
        async fn write_all(
            &self,
            writes: &[Writes<'_>],
        ) -> Result<Vec<super::super::WriteTimes>, StoreError> {
            self.groups.lock().push(writes.len());
            if self.failures.load(std::sync::atomic::Ordering::SeqCst) > 0 {
                return Err(StoreError::Unavailable("down for the test".into()));
            }
            self.store.write_all(writes).await
        }
        async fn bill(&self, entry: &LedgerEntry) -> Result<(), StoreError> {
            self.store.bill(entry).await
        }
        async fn ledger(&self, id: &str) -> Result<Vec<LedgerEntry>, StoreError> {
            self.store.ledger(id).await
        }
        async fn get(&self, project: &str, id: &str) -> Result<Option<StoredResponse>, StoreError> {
            self.store.get(project, id).await
        }
        async fn delete(&self, project: &str, id: &str) -> Result<bool, StoreError> {
            self.store.delete(project, id).await
        }
        async fn find_items(&self, project: &str, ids: &[String]) -> Result<Vec<Item>, StoreError> {
            self.store.find_items(project, ids).await
        }
    }

    fn flaky(failures: u32) -> Arc<Flaky> {
        Arc::new(Flaky {
            store: SqliteStore::open(std::path::Path::new(":memory:")).unwrap(),
            failures: failures.into(),
            groups: Default::default(),
        })
    }

    #[tokio::test]
    async fn durable_writes_are_in_the_database_when_write_later_returns() {
        let inner = flaky(0);
        let store = WriteBehindStore::start_with_mode(
            inner.clone(),
            StageHistograms::new(),
            WriteMode::Durable,
        );
        store.write_later(record("r1"), PathKind::WsHit).await;
        assert!(
            inner.store.get("p", "r1").await.unwrap().is_some(),
            "written, not queued"
        );
        assert_eq!(inner.store.ledger("r1").await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_write_refused_as_unavailable_is_retried_until_it_lands() {
        let inner = flaky(3);
        let store = WriteBehindStore::start_with_mode(
            inner.clone(),
            StageHistograms::new(),
            WriteMode::Durable,
        );
        store.write_later(record("r1"), PathKind::WsHit).await;
        assert!(
            inner.store.get("p", "r1").await.unwrap().is_none(),
            "refused at first"
        );
        assert!(
            store.get("p", "r1").await.unwrap().is_some(),
            "readable on this replica while it waits"
        );
        store.drain().await;
        assert!(
            inner.store.get("p", "r1").await.unwrap().is_some(),
            "landed"
        );
        assert_eq!(
            inner.store.ledger("r1").await.unwrap().len(),
            1,
            "billed once"
        );
    }

    #[tokio::test]
    async fn deleting_a_queued_response_cancels_its_write() {
        let inner: Arc<dyn ResponseStore> =
            Arc::new(SqliteStore::open(std::path::Path::new(":memory:")).unwrap());
        let store = WriteBehindStore::start(inner.clone(), StageHistograms::new());
        store.write_later(record("gone"), PathKind::WsMiss).await;
        assert!(
            !store.delete("q", "gone").await.unwrap(),
            "not another project's to delete"
        );
        assert!(store.delete("p", "gone").await.unwrap());
        store.drain().await;
        assert!(inner.get("p", "gone").await.unwrap().is_none());
        assert_eq!(
            inner.ledger("gone").await.unwrap().len(),
            1,
            "it is still billed"
        );
    }

    // Paused time: the writer's wait ends only once the test has queued everything (the clock
    // advances only when every task is idle, and not while SQLite's blocking call runs).
    #[tokio::test(start_paused = true)]
    async fn records_queued_together_are_written_together_and_one_refused_holds_none_up() {
        let inner = flaky(0);
        // Another project already holds the id `taken`: storing it in `p` is refused.
        let mut theirs = record("taken");
        theirs.stored.as_mut().unwrap().project = "other".into();
        inner.put(theirs.stored.as_ref().unwrap()).await.unwrap();
        let histograms = StageHistograms::new();
        let store = WriteBehindStore::start(inner.clone(), histograms.clone());
        let ids: Vec<String> = (0..40).map(|i| format!("r{i}")).collect();
        let queue = |refused: bool| {
            let (ids, store) = (&ids, &store);
            async move {
                // Queued within GROUP_FOR: the writer takes them together.
                for (i, id) in ids.iter().enumerate() {
                    let mut record = record(id);
                    if i % 4 == 3 {
                        record.stored = None; // `store: false`: billed only
                    }
                    store.write_later(record, PathKind::WsHit).await;
                    // The writer runs in between: without the wait it would take them one by one.
                    tokio::task::yield_now().await;
                    if refused && i == 20 {
                        store
                            .write_later(self::record("taken"), PathKind::WsHit)
                            .await;
                    }
                }
            }
        };
        let written = |bills: u64| {
            let histograms = &histograms;
            async move {
                while histograms.observed(Stage::Bill, PathKind::WsHit) < bills {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        };
        queue(false).await;
        written(40).await;
        assert_eq!(*inner.groups.lock(), [40], "one group, one transaction");
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(
                inner.get("p", id).await.unwrap().is_some(),
                i % 4 != 3,
                "{id} is stored when it asked to be"
            );
            assert_eq!(inner.ledger(id).await.unwrap().len(), 1, "{id} is billed");
        }
        assert_eq!(histograms.observed(Stage::Bill, PathKind::WsHit), 40);
        assert_eq!(histograms.observed(Stage::Persist, PathKind::WsHit), 30);

        // The same again (a retried write replaces, bills once), with a record the database
        // refuses among them: the group falls back to one by one and the others land.
        queue(true).await;
        written(80).await;
        // The refused record's stages are not observed: wait for it to be given up.
        while store.get("p", "taken").await.unwrap().is_some() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(*inner.groups.lock(), [40, 41]);
        for id in &ids {
            assert_eq!(
                inner.ledger(id).await.unwrap().len(),
                1,
                "{id} is billed once"
            );
        }
        assert_eq!(
            inner.get("other", "taken").await.unwrap().unwrap().project,
            "other",
            "the refused write left the other project's response as it was"
        );
        assert!(inner.get("p", "taken").await.unwrap().is_none());
        assert_eq!(histograms.observed(Stage::Bill, PathKind::WsHit), 80);
        assert_eq!(histograms.observed(Stage::Persist, PathKind::WsHit), 60);
        store.drain().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_group_refused_as_unavailable_is_retried_one_by_one_and_lands() {
        let inner = flaky(3);
        let store = WriteBehindStore::start(inner.clone(), StageHistograms::new());
        for i in 0..10 {
            store
                .write_later(record(&format!("r{i}")), PathKind::WsHit)
                .await;
            tokio::task::yield_now().await;
        }
        store.drain().await;
        assert_eq!(*inner.groups.lock(), [10], "tried together first");
        for i in 0..10 {
            let id = format!("r{i}");
            assert!(inner.store.get("p", &id).await.unwrap().is_some(), "{id}");
            assert_eq!(inner.store.ledger(&id).await.unwrap().len(), 1, "{id}");
        }
    }
}
