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

type Pending = Arc<Mutex<HashMap<String, StoredResponse>>>;

/// A store whose writes can be queued behind the response.
pub struct WriteBehindStore {
    inner: Arc<dyn ResponseStore>,
    pending: Pending,
    queue: Mutex<Option<mpsc::UnboundedSender<(Record, PathKind)>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

/// Performs `record`'s writes, timing the persist and bill stages. A stored response is only
/// written while it is still `wanted` (a delete may have cancelled it).
fn write(
    store: &dyn ResponseStore,
    record: &Record,
    path: PathKind,
    wanted: impl Fn(&str) -> bool,
) -> (Result<(), StoreError>, StageTimings) {
    let mut timings = StageTimings::new(path);
    let mut result = Ok(());
    if let Some(stored) = record.stored.as_ref().filter(|s| wanted(&s.response.id)) {
        let started = Instant::now();
        result = store.put(stored);
        timings.record(Stage::Persist, started.elapsed());
    }
    let started = Instant::now();
    let billed = store.bill(&record.bill);
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
                let (store, queued) = (store.clone(), queued.clone());
                let id = record.bill.response_id.clone();
                let done = tokio::task::spawn_blocking(move || {
                    // Held across the write so a concurrent delete either cancels it or
                    // deletes what it wrote, never races it.
                    let mut pending = queued.lock();
                    let outcome = write(&*store, &record, path, |id| pending.contains_key(id));
                    pending.remove(&record.bill.response_id);
                    outcome
                })
                .await;
                match done {
                    Ok((Ok(()), timings)) => histograms.observe(&timings),
                    Ok((Err(e), _)) => tracing::error!("writing {id} in the background: {e}"),
                    Err(e) => tracing::error!("writing {id} in the background: task failed: {e}"),
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
        let store = self.inner.clone();
        let path = timings.path;
        let id = record.bill.response_id.clone();
        match tokio::task::spawn_blocking(move || write(&*store, &record, path, |_| true)).await {
            Ok((result, written)) => {
                timings.stages.extend(written.stages);
                if let Err(e) = result {
                    tracing::error!("writing {id}: {e}");
                }
            }
            Err(e) => tracing::error!("writing {id}: task failed: {e}"),
        }
    }

    /// Queues the writes (the WebSocket path); a stored response is readable at once.
    pub fn write_later(&self, record: Record, path: PathKind) {
        if let Some(stored) = &record.stored {
            self.pending
                .lock()
                .insert(stored.response.id.clone(), stored.clone());
        }
        let refused = match self.queue.lock().as_ref() {
            Some(queue) => queue.send((record, path)).err().map(|e| e.0.0),
            None => Some(record),
        };
        // Draining for shutdown: nobody takes new work, so write it in place.
        if let Some(record) = refused {
            let (result, _) = write(&*self.inner, &record, path, |_| true);
            if let Some(stored) = &record.stored {
                self.pending.lock().remove(&stored.response.id);
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

impl ResponseStore for WriteBehindStore {
    fn put(&self, stored: &StoredResponse) -> Result<(), StoreError> {
        self.inner.put(stored)
    }

    fn get(&self, id: &str) -> Result<Option<StoredResponse>, StoreError> {
        if let Some(stored) = self.pending.lock().get(id) {
            return Ok(Some(stored.clone()));
        }
        self.inner.get(id)
    }

    fn find_items(&self, ids: &[String]) -> Result<Vec<Item>, StoreError> {
        // Responses still queued for writing first; then the database, for the ids not found.
        let mut found: Vec<Item> = self
            .pending
            .lock()
            .values()
            .flat_map(|stored| items_with_ids(stored, ids))
            .collect();
        let missing: Vec<String> = ids
            .iter()
            .filter(|id| !found.iter().any(|item| item.id() == Some(id.as_str())))
            .cloned()
            .collect();
        if !missing.is_empty() {
            found.extend(self.inner.find_items(&missing)?);
        }
        Ok(found)
    }

    fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let was_queued = self.pending.lock().remove(id).is_some();
        Ok(self.inner.delete(id)? || was_queued)
    }

    fn bill(&self, entry: &LedgerEntry) -> Result<(), StoreError> {
        self.inner.bill(entry)
    }

    fn ledger(&self, response_id: &str) -> Result<Vec<LedgerEntry>, StoreError> {
        self.inner.ledger(response_id)
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
                response: Response::in_progress(id, 1, &ResponseCreate::new("m", "x")),
                added_input: Vec::new(),
                parent_id: None,
            }),
            bill: LedgerEntry {
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
            store.write_later(record(&format!("r{i}")), PathKind::WsHit);
        }
        assert!(
            store.get("r49").unwrap().is_some(),
            "visible before it is written"
        );
        store.drain().await;
        for i in 0..50 {
            assert!(
                inner.get(&format!("r{i}")).unwrap().is_some(),
                "r{i} reached the database"
            );
            assert_eq!(inner.ledger(&format!("r{i}")).unwrap().len(), 1);
        }
        // After the drain, writes still land (in place).
        store.write_later(record("late"), PathKind::WsHit);
        assert!(inner.get("late").unwrap().is_some());
    }

    #[tokio::test]
    async fn deleting_a_queued_response_cancels_its_write() {
        let inner: Arc<dyn ResponseStore> =
            Arc::new(SqliteStore::open(std::path::Path::new(":memory:")).unwrap());
        let store = WriteBehindStore::start(inner.clone(), StageHistograms::new());
        store.write_later(record("gone"), PathKind::WsMiss);
        assert!(store.delete("gone").unwrap());
        store.drain().await;
        assert!(inner.get("gone").unwrap().is_none());
        assert_eq!(inner.ledger("gone").unwrap().len(), 1, "it is still billed");
    }
}
