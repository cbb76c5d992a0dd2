//! A connection's quiet times: the server pings a connection it has heard nothing from for
//! `--ping-interval-seconds`, takes it for gone when a second interval passes without an answer,
//! and closes it when it was idle — nothing running and nothing from the client — for
//! `--idle-timeout-seconds`.

use std::time::Duration;

use tokio::time::Instant;

use crate::AppState;

/// What a quiet connection needs now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    Fine,
    /// Ping it.
    Ping,
    /// No answer to the ping: the client is gone.
    Gone,
    /// Idle for too long: close it.
    Idle,
}

/// When the connection last heard from its client, and what it did about the silence.
#[derive(Debug)]
pub struct Quiet {
    ping_interval: Option<Duration>,
    idle_timeout: Option<Duration>,
    heard: Instant,
    /// Since when nothing ran (the idle time counts from the later of this and `heard`).
    idle_since: Instant,
    pinged: bool,
}

impl Quiet {
    pub fn new(state: &AppState) -> Self {
        let limits = state.connection_limits;
        let now = Instant::now();
        Quiet {
            ping_interval: limits.ping_interval,
            idle_timeout: limits.idle_timeout,
            heard: now,
            idle_since: now,
            pinged: false,
        }
    }

    /// The client sent something (a pong included).
    pub fn heard(&mut self) {
        self.heard = Instant::now();
        self.pinged = false;
    }

    fn next(&self) -> Option<Instant> {
        let ping = self.ping_interval.map(|interval| match self.pinged {
            false => self.heard + interval,
            true => self.heard + 2 * interval,
        });
        let idle = self
            .idle_timeout
            .map(|timeout| self.heard.max(self.idle_since) + timeout);
        match (ping, idle) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Completes at the next moment something may be due (never, with neither limit set).
    pub async fn tick(&self) {
        match self.next() {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    }

    /// What is due now; `busy` says whether a response runs or waits on the connection.
    pub fn check(&mut self, busy: bool) -> Check {
        let now = Instant::now();
        if let Some(timeout) = self.idle_timeout {
            if busy {
                self.idle_since = now;
            } else if now >= self.heard.max(self.idle_since) + timeout {
                return Check::Idle;
            }
        }
        if let Some(interval) = self.ping_interval {
            if self.pinged && now >= self.heard + 2 * interval {
                return Check::Gone;
            }
            if !self.pinged && now >= self.heard + interval {
                self.pinged = true;
                return Check::Ping;
            }
        }
        Check::Fine
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet(ping: Option<u64>, idle: Option<u64>) -> Quiet {
        let now = Instant::now();
        Quiet {
            ping_interval: ping.map(Duration::from_secs),
            idle_timeout: idle.map(Duration::from_secs),
            heard: now,
            idle_since: now,
            pinged: false,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_client_is_pinged_then_taken_for_gone() {
        let mut quiet = quiet(Some(30), None);
        quiet.tick().await;
        assert_eq!(quiet.check(false), Check::Ping);
        quiet.tick().await;
        assert_eq!(quiet.check(false), Check::Gone);
        // An answer resets it.
        let mut quiet = self::quiet(Some(30), None);
        quiet.tick().await;
        assert_eq!(quiet.check(false), Check::Ping);
        quiet.heard();
        tokio::time::advance(Duration::from_secs(29)).await;
        assert_eq!(quiet.check(false), Check::Fine);
    }

    #[tokio::test(start_paused = true)]
    async fn idle_counts_only_while_nothing_runs() {
        let mut quiet = quiet(None, Some(60));
        quiet.tick().await;
        assert_eq!(quiet.check(true), Check::Fine, "a response runs");
        tokio::time::advance(Duration::from_secs(59)).await;
        assert_eq!(quiet.check(false), Check::Fine);
        quiet.tick().await;
        assert_eq!(quiet.check(false), Check::Idle);
    }
}
