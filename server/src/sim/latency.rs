//! The latency model: how long a simulated model server takes before the first token (TTFT)
//! and between tokens, per profile, and how a busy server slows down and queues.
//!
//! A [`Profile`] is data (serde, so the admin endpoint can replace it); a [`ProfileSlot`] pairs
//! the current profile with its [`Scheduler`], which admits at most `max_running` sequences and
//! lets at most `max_waiting` more queue for a slot — beyond that a request is refused with
//! 429 `rate_limit_exceeded`, like vLLM behind a bounded queue. Every inter-token delay is
//! recomputed from the current number of running sequences, so a stream slows down while
//! others start and speeds up when they finish.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::RwLock;
use std::time::Duration;

use rand::RngExt;
use rand::rngs::StdRng;
use serde::{Deserialize, Serialize};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::prompt_cache::CacheSettings;
use super::prompt_cache::positions::Sizes;

/// The timing of one model server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Decoding speed of one sequence on an idle server; `null` decodes without any delay.
    pub tokens_per_second: Option<f64>,
    /// Fixed part of the time to first token, in seconds.
    #[serde(default)]
    pub prefill_overhead_seconds: f64,
    /// Prefill time per prompt token not already in the cache, in seconds (0: constant TTFT).
    #[serde(default)]
    pub prefill_seconds_per_token: f64,
    /// Standard deviation of an inter-token interval, relative to its mean.
    #[serde(default)]
    pub jitter: f64,
    /// Each interval stays within `[1 - jitter_clamp, 1 + jitter_clamp]` × its mean.
    #[serde(default)]
    pub jitter_clamp: f64,
    /// How much longer intervals get with every slot busy: × (1 + load_slowdown) at full load,
    /// linearly in between (× 1 with one sequence running).
    #[serde(default)]
    pub load_slowdown: f64,
    /// Sequences decoded at once.
    pub max_running: usize,
    /// Requests allowed to wait for a slot; more are refused with 429.
    pub max_waiting: usize,
    /// Prompt cache: prompts shorter than this many tokens are not cached.
    #[serde(default = "defaults::min_tokens")]
    pub prompt_cache_min_tokens: usize,
    /// Prompt cache: a request without breakpoints hits in steps of this many tokens.
    #[serde(default = "defaults::block_tokens")]
    pub prompt_cache_block_tokens: usize,
    /// Prompt cache: tokens one replica holds at most (least recently used leave first).
    #[serde(default = "defaults::capacity_tokens")]
    pub prompt_cache_capacity_tokens: u64,
    /// Prompt cache: how long a prefix written without breakpoints or retention lives idle.
    #[serde(default = "defaults::ttl_seconds")]
    pub prompt_cache_ttl_seconds: f64,
    /// Engine replicas, each with its own prompt cache; a request goes to one by a hash of its
    /// prompt's beginning and `prompt_cache_key`.
    #[serde(default = "defaults::replicas")]
    pub replicas: usize,
    /// Requests a minute one prefix-and-key pair sends one replica before it spills to the
    /// next.
    #[serde(default = "defaults::spill_requests_per_minute")]
    pub spill_requests_per_minute: f64,
}

/// The prompt cache's defaults, as OpenAI documents its caching: 1,024 tokens at least, hits
/// in 128-token steps, an in-memory prefix cleared after 5–10 minutes idle (10 here), about
/// 15 requests a minute per prefix and key on one machine. The capacity is Tether's choice:
/// enough for a few dozen long agent conversations per replica.
mod defaults {
    pub fn min_tokens() -> usize {
        1024
    }
    pub fn block_tokens() -> usize {
        128
    }
    pub fn capacity_tokens() -> u64 {
        4_000_000
    }
    pub fn ttl_seconds() -> f64 {
        600.0
    }
    pub fn replicas() -> usize {
        1
    }
    pub fn spill_requests_per_minute() -> f64 {
        15.0
    }
}

impl Profile {
    /// Exact pacing at `tokens_per_second`, no TTFT, no jitter, practically unbounded.
    pub fn exact(tokens_per_second: f64) -> Self {
        Profile {
            tokens_per_second: Some(tokens_per_second),
            prefill_overhead_seconds: 0.0,
            prefill_seconds_per_token: 0.0,
            jitter: 0.0,
            jitter_clamp: 0.0,
            load_slowdown: 0.0,
            max_running: 4096,
            max_waiting: 4096,
            prompt_cache_min_tokens: defaults::min_tokens(),
            prompt_cache_block_tokens: defaults::block_tokens(),
            prompt_cache_capacity_tokens: defaults::capacity_tokens(),
            prompt_cache_ttl_seconds: defaults::ttl_seconds(),
            replicas: defaults::replicas(),
            spill_requests_per_minute: defaults::spill_requests_per_minute(),
        }
    }

    /// The prompt cache settings of this profile.
    pub fn cache_settings(&self) -> CacheSettings {
        CacheSettings {
            sizes: Sizes {
                min_tokens: self.prompt_cache_min_tokens,
                block_tokens: self.prompt_cache_block_tokens,
                in_memory_ttl: Duration::from_secs_f64(self.prompt_cache_ttl_seconds),
            },
            capacity_tokens: self.prompt_cache_capacity_tokens,
            replicas: self.replicas,
            spill_per_minute: self.spill_requests_per_minute,
        }
    }

    /// A realistic server decoding `tokens_per_second`.
    fn realistic(
        tokens_per_second: f64,
        prefill_overhead_seconds: f64,
        prefill_seconds_per_token: f64,
        jitter: f64,
        max_running: usize,
    ) -> Self {
        Profile {
            tokens_per_second: Some(tokens_per_second),
            prefill_overhead_seconds,
            prefill_seconds_per_token,
            jitter,
            jitter_clamp: 3.0 * jitter,
            load_slowdown: 0.5,
            max_running,
            max_waiting: 4 * max_running,
            ..Profile::exact(tokens_per_second)
        }
    }

    /// The shipped profiles, by model name; the default one (`tether-sim`) decodes at
    /// `default_rate` exactly.
    pub fn builtin(default_rate: f64) -> Vec<(String, Profile)> {
        vec![
            (super::MODEL_ID.to_string(), Profile::exact(default_rate)),
            (
                "flagship".into(),
                Profile::realistic(65.0, 0.4, 0.000_2, 0.15, 64),
            ),
            (
                "spark".into(),
                Profile::realistic(1_000.0, 0.08, 0.000_02, 0.08, 256),
            ),
            (
                "burst".into(),
                Profile::realistic(4_000.0, 0.03, 0.000_005, 0.05, 512),
            ),
            (
                "instant".into(),
                Profile {
                    tokens_per_second: None,
                    ..Profile::exact(1.0)
                },
            ),
        ]
    }

    /// Why the profile cannot be used, if it cannot.
    pub fn validate(&self) -> Result<(), String> {
        let non_negative = [
            ("prefill_overhead_seconds", self.prefill_overhead_seconds),
            ("prefill_seconds_per_token", self.prefill_seconds_per_token),
            ("jitter", self.jitter),
            ("jitter_clamp", self.jitter_clamp),
            ("load_slowdown", self.load_slowdown),
        ];
        for (name, value) in non_negative {
            if !(value.is_finite() && value >= 0.0) {
                return Err(format!("{name} must be a non-negative number, got {value}"));
            }
        }
        if let Some(rate) = self.tokens_per_second
            && !(rate.is_finite() && rate > 0.0)
        {
            return Err(format!(
                "tokens_per_second must be positive (or null), got {rate}"
            ));
        }
        if self.jitter_clamp >= 1.0 {
            return Err("jitter_clamp must be below 1".into());
        }
        if self.max_running == 0 {
            return Err("max_running must be at least 1".into());
        }
        if self.prompt_cache_min_tokens == 0 || self.prompt_cache_block_tokens == 0 {
            return Err(
                "prompt_cache_min_tokens and prompt_cache_block_tokens must be at least 1".into(),
            );
        }
        if !(self.prompt_cache_ttl_seconds.is_finite() && self.prompt_cache_ttl_seconds > 0.0) {
            return Err(format!(
                "prompt_cache_ttl_seconds must be a positive number, got {}",
                self.prompt_cache_ttl_seconds
            ));
        }
        if !(1..=64).contains(&self.replicas) {
            return Err(format!(
                "replicas must be between 1 and 64, got {}",
                self.replicas
            ));
        }
        if !(self.spill_requests_per_minute.is_finite() && self.spill_requests_per_minute > 0.0) {
            return Err(format!(
                "spill_requests_per_minute must be a positive number, got {}",
                self.spill_requests_per_minute
            ));
        }
        Ok(())
    }

    /// Time to first token once admitted, for a prompt of which `uncached_tokens` are new.
    pub fn ttft(&self, uncached_tokens: u64) -> Duration {
        if self.tokens_per_second.is_none() {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(
            self.prefill_overhead_seconds + self.prefill_seconds_per_token * uncached_tokens as f64,
        )
    }

    /// The delay before the next token with `running` sequences decoding: the mean interval,
    /// slowed by load, times a Gaussian jitter factor clamped to the band.
    pub fn interval(&self, running: usize, rng: &mut StdRng) -> Duration {
        let Some(rate) = self.tokens_per_second else {
            return Duration::ZERO;
        };
        let busy = running.saturating_sub(1) as f64 / (self.max_running.max(2) - 1) as f64;
        let mean = 1.0 / rate * (1.0 + self.load_slowdown * busy.min(1.0));
        let factor = if self.jitter > 0.0 {
            (1.0 + self.jitter * standard_normal(rng))
                .clamp(1.0 - self.jitter_clamp, 1.0 + self.jitter_clamp)
        } else {
            1.0
        };
        Duration::from_secs_f64(mean * factor)
    }
}

/// A draw from N(0, 1) (Box–Muller).
pub fn standard_normal(rng: &mut StdRng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The request was refused: every slot is busy and the queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueFull;

/// Admits sequences to a bounded number of slots behind a bounded queue.
#[derive(Debug)]
pub struct Scheduler {
    slots: Arc<Semaphore>,
    max_waiting: usize,
    running: AtomicUsize,
    waiting: AtomicUsize,
}

/// A running sequence's slot; dropping it frees the slot.
#[derive(Debug)]
pub struct Slot {
    scheduler: Arc<Scheduler>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.scheduler.running.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Counts a request as waiting for as long as it waits (also when it is cancelled).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Scheduler {
    pub fn new(max_running: usize, max_waiting: usize) -> Arc<Self> {
        Arc::new(Scheduler {
            slots: Arc::new(Semaphore::new(max_running)),
            max_waiting,
            running: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
        })
    }

    /// Sequences decoding now.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::Relaxed)
    }

    /// Requests waiting for a slot now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// A slot, at once or after waiting in the queue; [`QueueFull`] when the queue is full.
    pub async fn admit(self: &Arc<Self>) -> Result<Slot, QueueFull> {
        let permit = match self.slots.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                if self.waiting.fetch_add(1, Ordering::Relaxed) >= self.max_waiting {
                    self.waiting.fetch_sub(1, Ordering::Relaxed);
                    return Err(QueueFull);
                }
                let _waiting = Waiting(&self.waiting);
                self.slots
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("the scheduler never closes its semaphore")
            }
        };
        self.running.fetch_add(1, Ordering::Relaxed);
        Ok(Slot {
            scheduler: self.clone(),
            _permit: permit,
        })
    }
}

/// A profile and the scheduler of its server. Replacing the profile (admin endpoint) takes
/// effect for every later token; the scheduler is rebuilt when its bounds change, and sequences
/// already admitted keep their slots in the old one.
#[derive(Debug)]
pub struct ProfileSlot {
    current: RwLock<(Arc<Profile>, Arc<Scheduler>)>,
}

impl ProfileSlot {
    pub fn new(profile: Profile) -> Self {
        let scheduler = Scheduler::new(profile.max_running, profile.max_waiting);
        ProfileSlot {
            current: RwLock::new((Arc::new(profile), scheduler)),
        }
    }

    pub fn profile(&self) -> Arc<Profile> {
        self.read().0
    }

    pub fn scheduler(&self) -> Arc<Scheduler> {
        self.read().1
    }

    fn read(&self) -> (Arc<Profile>, Arc<Scheduler>) {
        let guard = self.current.read();
        (guard.0.clone(), guard.1.clone())
    }

    /// Replaces the profile (already validated).
    pub fn replace(&self, profile: Profile) {
        let mut guard = self.current.write();
        if guard.0.max_running != profile.max_running || guard.0.max_waiting != profile.max_waiting
        {
            guard.1 = Scheduler::new(profile.max_running, profile.max_waiting);
        }
        guard.0 = Arc::new(profile);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn builtin_profiles_are_valid_and_named() {
        let profiles = Profile::builtin(1000.0);
        let names: Vec<_> = profiles.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["tether-sim", "flagship", "spark", "burst", "instant"]
        );
        for (name, profile) in &profiles {
            assert_eq!(profile.validate(), Ok(()), "{name}");
        }
    }

    #[test]
    fn ttft_is_overhead_plus_uncached_prefill() {
        let profile = Profile::realistic(100.0, 0.5, 0.001, 0.0, 4);
        assert_eq!(profile.ttft(0), Duration::from_millis(500));
        assert_eq!(profile.ttft(1000), Duration::from_millis(1500));
        assert_eq!(Profile::builtin(1.0)[4].1.ttft(1_000_000), Duration::ZERO);
    }

    #[test]
    fn jitter_stays_in_its_band_and_averages_to_the_rate() {
        let profile = Profile::realistic(1000.0, 0.0, 0.0, 0.2, 4);
        let mut rng = StdRng::seed_from_u64(7);
        let samples: Vec<f64> = (0..10_000)
            .map(|_| profile.interval(1, &mut rng).as_secs_f64())
            .collect();
        let (low, high) = (0.001 * 0.4, 0.001 * 1.6);
        assert!(
            samples
                .iter()
                .all(|s| (low - 1e-12..=high + 1e-12).contains(s))
        );
        let mean = samples.iter().sum::<f64>() / samples.len() as f64;
        assert!((mean - 0.001).abs() < 0.000_01, "mean {mean}");
        let spread = samples.iter().any(|s| (s - 0.001).abs() > 0.000_1);
        assert!(spread, "jitter varies the intervals");
    }

    #[test]
    fn load_slows_decoding_down() {
        let profile = Profile::realistic(1000.0, 0.0, 0.0, 0.0, 5);
        let mut rng = StdRng::seed_from_u64(1);
        assert_eq!(profile.interval(1, &mut rng), Duration::from_millis(1));
        assert_eq!(profile.interval(3, &mut rng), Duration::from_micros(1250));
        assert_eq!(profile.interval(5, &mut rng), Duration::from_micros(1500));
    }

    #[test]
    fn invalid_profiles_are_refused() {
        let mut profile = Profile::exact(10.0);
        profile.tokens_per_second = Some(0.0);
        assert!(profile.validate().is_err());
        let mut profile = Profile::exact(10.0);
        profile.jitter = -1.0;
        assert!(profile.validate().is_err());
        let mut profile = Profile::exact(10.0);
        profile.max_running = 0;
        assert!(profile.validate().is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn scheduler_queues_then_refuses() {
        let scheduler = Scheduler::new(1, 1);
        let first = scheduler.admit().await.unwrap();
        assert_eq!(scheduler.running(), 1);
        let queued = tokio::spawn({
            let scheduler = scheduler.clone();
            async move { scheduler.admit().await.map(|_| ()) }
        });
        tokio::task::yield_now().await;
        assert_eq!(scheduler.waiting(), 1);
        assert_eq!(scheduler.admit().await.err(), Some(QueueFull));
        drop(first);
        assert_eq!(queued.await.unwrap(), Ok(()));
        assert_eq!((scheduler.running(), scheduler.waiting()), (0, 0));
    }
}
