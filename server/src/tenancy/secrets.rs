//! Short-lived client secrets (`ek_…`), so a browser can open WebSocket mode without holding an
//! API key: a backend holding the key mints one (`POST /v1/responses/client_secrets`) and hands
//! it to the page. A secret stands for the minting key's project until it expires, and is
//! accepted only on the WebSocket upgrade (`crate::transport::auth` decides where).
//!
//! Secrets live in this process's memory, keyed by their SHA-256 digest (a lookup's timing says
//! nothing about the secret itself): they do not survive a restart, and a secret minted by one
//! replica is unknown to the others. Expired ones are pruned whenever one is minted.

use std::collections::HashMap;
use std::time::Duration;

use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use super::Project;

/// What every client secret starts with.
pub const PREFIX: &str = "ek_";
/// A secret's lifetime when the request names none.
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);
/// The longest lifetime a secret may have.
pub const MAX_TTL: Duration = Duration::from_secs(3600);
/// Unexpired secrets one project may hold at once.
pub const MAX_LIVE_PER_PROJECT: usize = 1000;

/// A minted secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Minted {
    /// `ek_` and 64 hex digits.
    pub value: String,
    /// When it stops being accepted, in Unix seconds (it is accepted at least until then).
    pub expires_at: u64,
}

/// A project already holds [`MAX_LIVE_PER_PROJECT`] unexpired secrets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManySecrets;

#[derive(Debug)]
struct Entry {
    project: Project,
    expires: Instant,
}

/// The unexpired secrets of this process.
#[derive(Debug, Default)]
pub struct ClientSecrets {
    live: Mutex<HashMap<[u8; 32], Entry>>,
}

impl ClientSecrets {
    /// A new secret for `project`, accepted for `ttl`.
    pub fn mint(&self, project: &Project, ttl: Duration) -> Result<Minted, TooManySecrets> {
        let now = Instant::now();
        let mut live = self.live.lock();
        live.retain(|_, entry| entry.expires > now);
        if live.values().filter(|e| &e.project == project).count() >= MAX_LIVE_PER_PROJECT {
            return Err(TooManySecrets);
        }
        let bytes: [u8; 32] = rand::random();
        let value: String = std::iter::once(PREFIX.to_string())
            .chain(bytes.iter().map(|b| format!("{b:02x}")))
            .collect();
        live.insert(
            digest(&value),
            Entry {
                project: project.clone(),
                expires: now + ttl,
            },
        );
        Ok(Minted {
            value,
            expires_at: unix_now() + ttl.as_secs(),
        })
    }

    /// The project of an unexpired secret.
    pub fn project_of(&self, presented: &str) -> Option<Project> {
        if !presented.starts_with(PREFIX) {
            return None;
        }
        let key = digest(presented);
        let mut live = self.live.lock();
        let entry = live.get(&key)?;
        if entry.expires > Instant::now() {
            return Some(entry.project.clone());
        }
        live.remove(&key);
        None
    }

    /// Unexpired secrets held (expired ones may still be counted until the next mint).
    pub fn len(&self) -> usize {
        self.live.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_secret_stands_for_its_project_until_it_expires() {
        let secrets = ClientSecrets::default();
        let a = Project::new("a");
        let minted = secrets.mint(&a, Duration::from_secs(10)).unwrap();
        assert!(minted.value.starts_with("ek_") && minted.value.len() == 3 + 64);
        assert!(minted.expires_at >= unix_now() + 9);
        assert_eq!(secrets.project_of(&minted.value), Some(a.clone()));
        let other = secrets.mint(&a, Duration::from_secs(10)).unwrap();
        assert_ne!(other.value, minted.value);
        assert_eq!(secrets.project_of("ek_nope"), None);
        assert_eq!(secrets.project_of(&minted.value[..20]), None);
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(secrets.project_of(&minted.value), None);
        // The expired secret looked up is gone; the other is pruned by the next mint.
        assert_eq!(secrets.len(), 1);
        secrets
            .mint(&Project::new("b"), Duration::from_secs(1))
            .unwrap();
        assert_eq!(secrets.len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_project_holds_a_bounded_number_of_live_secrets() {
        let secrets = ClientSecrets::default();
        let a = Project::new("a");
        for _ in 0..MAX_LIVE_PER_PROJECT {
            secrets.mint(&a, Duration::from_secs(5)).unwrap();
        }
        assert_eq!(
            secrets.mint(&a, Duration::from_secs(5)),
            Err(TooManySecrets)
        );
        secrets
            .mint(&Project::new("b"), Duration::from_secs(5))
            .unwrap();
        tokio::time::advance(Duration::from_secs(5)).await;
        secrets.mint(&a, Duration::from_secs(5)).unwrap();
    }
}
