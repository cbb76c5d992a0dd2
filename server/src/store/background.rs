//! Background responses in the store (`background: true`): while a server runs one it holds a
//! lease on it, renewed as it runs; a response whose lease ran out — its server was killed or
//! restarted before it ended — is found by [`BackgroundStore::expired_leases`] and ended
//! `failed` by whichever server looks (`pipeline::background`), so none stays `queued` or
//! `in_progress` forever. A cancel that reaches another replica is asked for here
//! ([`BackgroundStore::request_cancel`]); the server running the response looks every second.
//! When one ends, its server keeps its events here
//! ([`BackgroundStore::finish_run`]), so any replica can stream it again. The `background_runs`
//! table of `super::migrations`, on both stores.

use rusqlite::{OptionalExtension, params};

use super::postgres::{db_error, i64_of};
use super::{PostgresStore, SqliteStore, StoreError};

/// Where a background response's events are, for a replica that did not run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEvents {
    /// Its server still runs it (it holds a lease): they come when it ends.
    Running,
    /// It ended, and its server kept them (JSON).
    Kept(String),
    /// None are kept: it ended without them (its server stopped), or is no background run.
    Gone,
}

/// The leases and the kept events of background responses.
#[async_trait::async_trait]
pub trait BackgroundStore: Send + Sync + 'static {
    /// Takes or renews the lease on response `id` of `project` until `until` (Unix seconds).
    async fn lease(&self, project: &str, id: &str, until: u64) -> Result<(), StoreError>;
    /// The response has ended: its lease goes, and `events` (its SSE events as JSON, when its
    /// server had them) are kept for whoever streams it again.
    async fn finish_run(&self, id: &str, events: Option<&str>) -> Result<(), StoreError>;
    /// `(project, id)` of every lease that ran out before `now` — every lease, with `now`
    /// `u64::MAX` (a process that alone owns its store, just started).
    async fn expired_leases(&self, now: u64) -> Result<Vec<(String, String)>, StoreError>;
    /// Where the events of response `id` of `project` are.
    async fn run_events(&self, project: &str, id: &str) -> Result<RunEvents, StoreError>;
    /// Asks the server running response `id` of `project` to cancel it; `false` if none runs it
    /// (no lease).
    async fn request_cancel(&self, project: &str, id: &str) -> Result<bool, StoreError>;
    /// Whether a cancel of response `id` was asked for (the server running it looks).
    async fn cancel_requested(&self, id: &str) -> Result<bool, StoreError>;
}

/// A `background_runs` row's `(lease_until, events_json)` as [`RunEvents`].
fn run_events(row: Option<(Option<i64>, Option<String>)>) -> RunEvents {
    match row {
        Some((Some(_), _)) => RunEvents::Running,
        Some((None, Some(events))) => RunEvents::Kept(events),
        _ => RunEvents::Gone,
    }
}

#[async_trait::async_trait]
impl BackgroundStore for SqliteStore {
    async fn lease(&self, project: &str, id: &str, until: u64) -> Result<(), StoreError> {
        let (project, id) = (project.to_string(), id.to_string());
        self.run(move |connection| {
            connection.execute(
                "INSERT INTO background_runs (response_id, project, lease_until)
                 VALUES (?1, ?2, ?3)
                 ON CONFLICT (response_id) DO UPDATE SET lease_until = excluded.lease_until",
                params![id, project, i64_of(until)],
            )?;
            Ok(())
        })
        .await
    }

    async fn finish_run(&self, id: &str, events: Option<&str>) -> Result<(), StoreError> {
        let (id, events) = (id.to_string(), events.map(str::to_string));
        self.run(move |connection| {
            connection.execute(
                "UPDATE background_runs SET lease_until = NULL, events_json = ?2
                 WHERE response_id = ?1",
                params![id, events],
            )?;
            Ok(())
        })
        .await
    }

    async fn expired_leases(&self, now: u64) -> Result<Vec<(String, String)>, StoreError> {
        self.run(move |connection| {
            let mut statement = connection.prepare(
                "SELECT project, response_id FROM background_runs
                 WHERE lease_until IS NOT NULL AND lease_until < ?1",
            )?;
            let rows =
                statement.query_map(params![i64_of(now)], |row| Ok((row.get(0)?, row.get(1)?)))?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    async fn run_events(&self, project: &str, id: &str) -> Result<RunEvents, StoreError> {
        let (project, id) = (project.to_string(), id.to_string());
        self.run(move |connection| {
            let row = connection
                .query_row(
                    "SELECT lease_until, events_json FROM background_runs
                     WHERE response_id = ?1 AND project = ?2",
                    params![id, project],
                    |row| {
                        Ok((
                            row.get::<_, Option<i64>>(0)?,
                            row.get::<_, Option<String>>(1)?,
                        ))
                    },
                )
                .optional()?;
            Ok(run_events(row))
        })
        .await
    }

    async fn request_cancel(&self, project: &str, id: &str) -> Result<bool, StoreError> {
        let (project, id) = (project.to_string(), id.to_string());
        self.run(move |connection| {
            Ok(connection.execute(
                "UPDATE background_runs SET cancel_requested = 1
                 WHERE response_id = ?1 AND project = ?2 AND lease_until IS NOT NULL",
                params![id, project],
            )? > 0)
        })
        .await
    }

    async fn cancel_requested(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_string();
        self.run(move |connection| {
            Ok(connection
                .query_row(
                    "SELECT cancel_requested FROM background_runs WHERE response_id = ?1",
                    params![id],
                    |row| row.get::<_, bool>(0),
                )
                .optional()?
                .unwrap_or(false))
        })
        .await
    }
}

#[async_trait::async_trait]
impl BackgroundStore for PostgresStore {
    async fn lease(&self, project: &str, id: &str, until: u64) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO background_runs (response_id, project, lease_until)
                 VALUES ($1, $2, $3)
                 ON CONFLICT (response_id) DO UPDATE SET lease_until = EXCLUDED.lease_until",
                &[&id, &project, &i64_of(until)],
            )
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn finish_run(&self, id: &str, events: Option<&str>) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE background_runs SET lease_until = NULL, events_json = $2
                 WHERE response_id = $1",
                &[&id, &events],
            )
            .await
            .map_err(db_error)?;
        Ok(())
    }

    async fn expired_leases(&self, now: u64) -> Result<Vec<(String, String)>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT project, response_id FROM background_runs
                 WHERE lease_until IS NOT NULL AND lease_until < $1",
                &[&i64_of(now)],
            )
            .await
            .map_err(db_error)?;
        Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
    }

    async fn run_events(&self, project: &str, id: &str) -> Result<RunEvents, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT lease_until, events_json FROM background_runs
                 WHERE response_id = $1 AND project = $2",
                &[&id, &project],
            )
            .await
            .map_err(db_error)?;
        Ok(run_events(row.map(|row| (row.get(0), row.get(1)))))
    }

    async fn request_cancel(&self, project: &str, id: &str) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let updated = client
            .execute(
                "UPDATE background_runs SET cancel_requested = TRUE
                 WHERE response_id = $1 AND project = $2 AND lease_until IS NOT NULL",
                &[&id, &project],
            )
            .await
            .map_err(db_error)?;
        Ok(updated > 0)
    }

    async fn cancel_requested(&self, id: &str) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT cancel_requested FROM background_runs WHERE response_id = $1",
                &[&id],
            )
            .await
            .map_err(db_error)?;
        Ok(row.is_some_and(|row| row.get(0)))
    }
}

/// Implements [`BackgroundStore`] for `$store` by handing every call to its field `$inner`.
macro_rules! delegate_background_store {
    ($store:ty, $inner:ident) => {
        #[async_trait::async_trait]
        impl $crate::store::BackgroundStore for $store {
            async fn lease(
                &self,
                project: &str,
                id: &str,
                until: u64,
            ) -> Result<(), $crate::store::StoreError> {
                self.$inner.lease(project, id, until).await
            }
            async fn finish_run(
                &self,
                id: &str,
                events: Option<&str>,
            ) -> Result<(), $crate::store::StoreError> {
                self.$inner.finish_run(id, events).await
            }
            async fn expired_leases(
                &self,
                now: u64,
            ) -> Result<Vec<(String, String)>, $crate::store::StoreError> {
                self.$inner.expired_leases(now).await
            }
            async fn run_events(
                &self,
                project: &str,
                id: &str,
            ) -> Result<$crate::store::background::RunEvents, $crate::store::StoreError> {
                self.$inner.run_events(project, id).await
            }
            async fn request_cancel(
                &self,
                project: &str,
                id: &str,
            ) -> Result<bool, $crate::store::StoreError> {
                self.$inner.request_cancel(project, id).await
            }
            async fn cancel_requested(&self, id: &str) -> Result<bool, $crate::store::StoreError> {
                self.$inner.cancel_requested(id).await
            }
        }
    };
}

pub(crate) use delegate_background_store;
