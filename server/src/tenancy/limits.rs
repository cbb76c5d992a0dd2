//! Per-project rate limits, off by default: `--rate-limit-requests-per-minute` counts every
//! request that creates a response (`POST /v1/responses`, each `response.create` of a
//! WebSocket connection), `--rate-limit-tokens-per-minute` the tokens the responses used.
//!
//! Each limit is a token bucket per project holding at most the limit, refilled continuously at
//! the limit per minute (60 requests per minute is one more request each second), as the
//! reference service enforces its per-minute limits over shorter periods. A request is admitted
//! while each bucket holds at least one unit, and takes one request.
//!
//! Tokens are charged after the fact: a request's tokens are not known before its input is
//! rendered and its output generated, so each finished response charges its
//! `usage.total_tokens` (what the usage ledger bills; a failed response is not billed) and the
//! bucket may go below zero. While it is below one token, new requests are refused until the
//! refill has paid the debt back. The reference instead estimates a request up front and
//! reconciles; charging the real count afterwards never refuses a request for an estimate, at
//! the cost of letting the request that empties the bucket finish whatever it uses.
//!
//! Buckets live in this process: replicas each enforce the limits on their own share.

use std::collections::HashMap;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use super::Project;

/// What a limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    Requests,
    Tokens,
}

impl Resource {
    /// `requests` or `tokens`: the reference's error `type` and header suffix.
    pub fn name(self) -> &'static str {
        match self {
            Resource::Requests => "requests",
            Resource::Tokens => "tokens",
        }
    }
}

/// One limit as a project stands with it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quota {
    /// The limit per minute.
    pub limit: u64,
    /// Whole units left now.
    pub remaining: u64,
    /// How long until the bucket is full again.
    pub reset: Duration,
}

/// Where a project stands with each limit that is on.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Snapshot {
    pub requests: Option<Quota>,
    pub tokens: Option<Quota>,
}

/// A request refused: which limit, and how long until a request would be admitted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limited {
    pub resource: Resource,
    pub retry_after: Duration,
    pub snapshot: Snapshot,
}

impl Limited {
    /// The quota of the limit that refused.
    pub fn quota(&self) -> Quota {
        match self.resource {
            Resource::Requests => self.snapshot.requests,
            Resource::Tokens => self.snapshot.tokens,
        }
        .expect("a limit that refuses is on")
    }
}

/// The limits and every project's buckets. Projects are the configured ones (or `default`),
/// so the map stays as small as the keys file.
#[derive(Debug, Default)]
pub struct RateLimits {
    requests_per_minute: u64,
    tokens_per_minute: u64,
    buckets: Mutex<HashMap<Project, Buckets>>,
}

#[derive(Debug)]
struct Buckets {
    requests: Bucket,
    tokens: Bucket,
}

/// Nanoseconds in a minute: a bucket counts in units of 1/`MINUTE` of a request or token, so
/// a limit of `n` per minute refills exactly `n` of them each nanosecond, in integers.
const MINUTE: i128 = 60_000_000_000;

/// Units available (below zero: a debt) as of `at`, in 1/[`MINUTE`] units.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    level: i128,
    at: Instant,
}

impl Bucket {
    fn full(limit: u64, now: Instant) -> Self {
        Bucket {
            level: limit as i128 * MINUTE,
            at: now,
        }
    }

    /// Adds what `limit` per minute gave back since the last look, up to `limit`.
    fn refill(&mut self, limit: u64, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_nanos() as i128;
        let limit = limit as i128;
        self.level = self
            .level
            .saturating_add(elapsed.saturating_mul(limit))
            .min(limit * MINUTE);
        self.at = now;
    }

    /// Whether the bucket holds at least one whole unit.
    fn has_one(&self) -> bool {
        self.level >= MINUTE
    }

    fn take(&mut self, units: u64) {
        self.level = self
            .level
            .saturating_sub((units as i128).saturating_mul(MINUTE));
    }

    /// How long until the bucket holds `units` whole units.
    fn until(&self, limit: u64, units: u64) -> Duration {
        let missing = units as i128 * MINUTE - self.level;
        if missing <= 0 || limit == 0 {
            return Duration::ZERO;
        }
        let limit = limit as i128;
        let nanos = (missing + limit - 1) / limit;
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    fn quota(&self, limit: u64) -> Quota {
        Quota {
            limit,
            remaining: u64::try_from(self.level.max(0) / MINUTE).unwrap_or(u64::MAX),
            reset: self.until(limit, limit),
        }
    }
}

impl RateLimits {
    /// Limits of `requests_per_minute` and `tokens_per_minute` per project; 0 turns one off.
    pub fn new(requests_per_minute: u64, tokens_per_minute: u64) -> Self {
        RateLimits {
            requests_per_minute,
            tokens_per_minute,
            buckets: Mutex::default(),
        }
    }

    /// Whether any limit is on.
    pub fn is_on(&self) -> bool {
        self.requests_per_minute > 0 || self.tokens_per_minute > 0
    }

    /// Counts a request of `project` if both buckets allow it; otherwise refuses it (a refused
    /// request takes nothing). The snapshot is as the request left the buckets.
    pub fn admit(&self, project: &Project) -> Result<Snapshot, Limited> {
        if !self.is_on() {
            return Ok(Snapshot::default());
        }
        self.with_buckets(project, |buckets| {
            let mut waits = Vec::new();
            if self.requests_per_minute > 0 && !buckets.requests.has_one() {
                let wait = buckets.requests.until(self.requests_per_minute, 1);
                waits.push((Resource::Requests, wait));
            }
            if self.tokens_per_minute > 0 && !buckets.tokens.has_one() {
                let wait = buckets.tokens.until(self.tokens_per_minute, 1);
                waits.push((Resource::Tokens, wait));
            }
            match waits.into_iter().max_by_key(|(_, wait)| *wait) {
                Some((resource, retry_after)) => Err(Limited {
                    resource,
                    retry_after,
                    snapshot: self.snapshot_of(buckets),
                }),
                None => {
                    if self.requests_per_minute > 0 {
                        buckets.requests.take(1);
                    }
                    Ok(self.snapshot_of(buckets))
                }
            }
        })
    }

    /// Charges `tokens` a finished response of `project` used.
    pub fn charge(&self, project: &Project, tokens: u64) {
        if self.tokens_per_minute == 0 || tokens == 0 {
            return;
        }
        self.with_buckets(project, |buckets| buckets.tokens.take(tokens));
    }

    /// Where `project` stands, without counting anything.
    pub fn snapshot(&self, project: &Project) -> Snapshot {
        if !self.is_on() {
            return Snapshot::default();
        }
        self.with_buckets(project, |buckets| self.snapshot_of(buckets))
    }

    fn snapshot_of(&self, buckets: &Buckets) -> Snapshot {
        let quota = |bucket: &Bucket, limit: u64| (limit > 0).then(|| bucket.quota(limit));
        Snapshot {
            requests: quota(&buckets.requests, self.requests_per_minute),
            tokens: quota(&buckets.tokens, self.tokens_per_minute),
        }
    }

    /// Runs `f` on `project`'s buckets, refilled to now.
    fn with_buckets<T>(&self, project: &Project, f: impl FnOnce(&mut Buckets) -> T) -> T {
        let now = Instant::now();
        let mut all = self.buckets.lock();
        let buckets = all.entry(project.clone()).or_insert_with(|| Buckets {
            requests: Bucket::full(self.requests_per_minute, now),
            tokens: Bucket::full(self.tokens_per_minute, now),
        });
        buckets.requests.refill(self.requests_per_minute, now);
        buckets.tokens.refill(self.tokens_per_minute, now);
        f(buckets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(name: &str) -> Project {
        Project::new(name)
    }

    #[tokio::test(start_paused = true)]
    async fn requests_refill_at_the_limit_per_minute() {
        let limits = RateLimits::new(2, 0);
        let a = project("a");
        let first = limits.admit(&a).unwrap();
        assert_eq!(first.requests.unwrap().remaining, 1);
        assert_eq!(first.tokens, None);
        assert_eq!(first.requests.unwrap().reset, Duration::from_secs(30));
        limits.admit(&a).unwrap();
        let refused = limits.admit(&a).unwrap_err();
        assert_eq!(refused.resource, Resource::Requests);
        assert_eq!(refused.retry_after, Duration::from_secs(30));
        assert_eq!(refused.quota().remaining, 0);
        assert_eq!(refused.quota().reset, Duration::from_secs(60));
        // Another project has its own buckets.
        limits.admit(&project("b")).unwrap();
        // One request comes back every 30 s; a refused one took nothing.
        tokio::time::advance(Duration::from_secs(29)).await;
        assert!(limits.admit(&a).is_err());
        tokio::time::advance(Duration::from_secs(1)).await;
        limits.admit(&a).unwrap();
        assert!(limits.admit(&a).is_err());
        // Never more than the limit, however long the project waited.
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert_eq!(limits.snapshot(&a).requests.unwrap().remaining, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn tokens_are_charged_afterwards_and_a_debt_is_paid_back() {
        let limits = RateLimits::new(0, 600);
        let a = project("a");
        limits.admit(&a).unwrap();
        limits.charge(&a, 500);
        assert_eq!(limits.snapshot(&a).tokens.unwrap().remaining, 100);
        limits.admit(&a).unwrap();
        // The response that empties the bucket finishes whatever it uses: a debt of 200.
        limits.charge(&a, 300);
        let refused = limits.admit(&a).unwrap_err();
        assert_eq!(refused.resource, Resource::Tokens);
        assert_eq!(refused.quota().remaining, 0);
        // 10 tokens a second: 201 tokens to get back to one.
        assert_eq!(refused.retry_after, Duration::from_millis(20_100));
        assert_eq!(refused.quota().reset, Duration::from_secs(80));
        tokio::time::advance(Duration::from_millis(20_100)).await;
        limits.admit(&a).unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn the_longer_wait_is_reported_when_both_limits_refuse() {
        let limits = RateLimits::new(1, 60);
        let a = project("a");
        limits.admit(&a).unwrap();
        limits.charge(&a, 180);
        let refused = limits.admit(&a).unwrap_err();
        // Requests: one in 60 s; tokens: 121 at one a second.
        assert_eq!(refused.resource, Resource::Tokens);
        assert_eq!(refused.retry_after, Duration::from_secs(121));
        assert_eq!(refused.snapshot.requests.unwrap().remaining, 0);
    }

    #[test]
    fn off_counts_nothing() {
        let limits = RateLimits::new(0, 0);
        assert!(!limits.is_on());
        for _ in 0..1000 {
            assert_eq!(limits.admit(&project("a")), Ok(Snapshot::default()));
        }
        limits.charge(&project("a"), u64::MAX);
        assert!(limits.buckets.lock().is_empty());
    }
}
