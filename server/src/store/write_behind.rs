//! Persist and bill, off the critical path where the transport allows it.
//!
//! Over HTTP a response is final only once it is stored and billed, so those writes happen before
//! the reply ([`WriteBehindStore::write_now`]). In WebSocket mode `response.completed` goes out
//! first and the writes are queued to one background writer ([`WriteBehindStore::write_later`]).
//! Nothing queued is lost or invisible: a queued response is readable at once (reads consult the
//! queue before the database), a delete cancels its queued write, and on shutdown
//! [`WriteBehindStore::drain`] writes everything queued before the process exits.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use tether_protocol::Item;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{LedgerEntry, ResponseStore, StoreError, StoredResponse, items_with_ids};
use crate::metrics::StageHistograms;
use crate::timing::{PathKind, Stage, StageTimings};

/// The writes one response needs.
#[derive(Debug, Clone)]
pub struct Record {
    /// The response to store, when it asked for `store: true`.
    pub stored: Option<StoredResponse>,
    pub bill: LedgerEntry,
}

/// Queued stored responses by id, readable until written.
type Pending = Arc<tokio::sync::Mutex<HashMap<String, StoredResponse>>>;

/// A store whose writes can be queued behind the response.
pub struct WriteBehindStore {
    inner: Arc<dyn ResponseStore>,
    pending: Pending,
    queue: Mutex<Option<mpsc::UnboundedSender<(Record, PathKind)>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

/// Performs `record`'s writes, timing the persist and bill stages. A stored response is only
/// written while it is still `wanted` (a delete may have cancelled it).
async fn write(
    store: &dyn ResponseStore,
    record: &Record,
    path: PathKind,
    wanted: bool,
) -> (Result<(), StoreError>, StageTimings) {
    let mut timings = StageTimings::new(path);
    let mut result = Ok(());
    if let Some(stored) = record.stored.as_ref().filter(|_| wanted) {
        let started = Instant::now();
        result = store.put(stored).await;
        timings.record(Stage::Persist, started.elapsed());
    }
    let started = Instant::now();
    let billed = store.bill(&record.bill).await;
    timings.record(Stage::Bill, started.elapsed());
    (result.and(billed), timings)
}

impl WriteBehindStore {
    /// Wraps `inner` and starts the background writer (needs a tokio runtime).
    pub fn start(inner: Arc<dyn ResponseStore>, histograms: StageHistograms) -> Self {
        let pending: Pending = Arc::default();
        let (queue, mut jobs) = mpsc::unbounded_channel::<(Record, PathKind)>();
        let (store, queued) = (inner.clone(), pending.clone());
        let writer = tokio::spawn(async move {
            while let Some((record, path)) = jobs.recv().await {
                let id = record.bill.response_id.clone();
                // Held across the write so a concurrent delete either cancels it or deletes
                // what it wrote, never races it.
                let mut pending = queued.lock().await;
                let wanted = record
                    .stored
                    .as_ref()
                    .is_some_and(|s| pending.contains_key(&s.response.id));
                let (result, timings) = write(&*store, &record, path, wanted).await;
                pending.remove(&id);
                drop(pending);
                match result {
                    Ok(()) => histograms.observe(&timings),
                    Err(e) => tracing::error!("writing {id} in the background: {e}"),
                }
            }
        });
        WriteBehindStore {
            inner,
            pending,
            queue: Mutex::new(Some(queue)),
            writer: Mutex::new(Some(writer)),
        }
    }

    /// Writes now (the HTTP path), adding the persist and bill stages to `timings`.
    pub async fn write_now(&self, record: Record, timings: &mut StageTimings) {
        let id = record.bill.response_id.clone();
        let (result, written) = write(&*self.inner, &record, timings.path, true).await;
        timings.stages.extend(written.stages);
        if let Err(e) = result {
            tracing::error!("writing {id}: {e}");
        }
    }

    /// Queues the writes (the WebSocket path); a stored response is readable at once.
    pub async fn write_later(&self, record: Record, path: PathKind) {
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
            let (result, _) = write(&*self.inner, &record, path, true).await;
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
}
