//! Short-lived client secrets (`ek_…`), so a browser can open WebSocket mode without holding an
//! API key: a backend holding the key mints one (`POST /v1/responses/client_secrets`) and hands
//! it to the page. A secret stands for the minting key's project until it expires, and is
//! accepted only on the WebSocket upgrade (`crate::transport::auth` decides where).
//!
//! A secret carries what it stands for, signed: a version byte, its expiry (Unix milliseconds),
//! a random nonce and a reference to the project — an HMAC of the project's name, not the name,
//! so the page learns nothing about the project (an `--api-key` project is named after a digest
//! of its key) — then an HMAC-SHA256 tag over them, both under the server secret's client-secret
//! key (`crate::server_secret`). Nothing is kept per secret: replicas sharing the server secret
//! and the keys accept each other's secrets (the page mints through one replica of a load
//! balancer and upgrades through another), a restart keeps them valid when the server secret is
//! kept, and minting costs no memory. A secret stands only for a project that still has keys, so
//! removing a project's keys revokes its secrets at the next start; otherwise a secret cannot be
//! revoked before it expires, which is why a lifetime is at most an hour.

use std::collections::HashMap;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::Project;

/// What every client secret starts with.
pub const PREFIX: &str = "ek_";
/// A secret's lifetime when the request names none.
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);
/// The longest lifetime a secret may have.
pub const MAX_TTL: Duration = Duration::from_secs(3600);
/// How far ahead of this server's clock the minting replica's may be.
const CLOCK_SKEW: Duration = Duration::from_secs(60);

/// The payload's layout version (its first byte).
const VERSION: u8 = 1;
/// The payload: version (1 byte), expiry (8), nonce (16), project reference (16).
const PAYLOAD_LEN: usize = 1 + 8 + 16 + 16;

/// A project reference: the first 16 bytes of an HMAC of its name.
type ProjectRef = [u8; 16];

/// A minted secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Minted {
    /// `ek_`, the payload and its tag (base64url, a dot between).
    pub value: String,
    /// When it stops being accepted, in Unix seconds (it is accepted at least until then).
    pub expires_at: u64,
}

/// Mints and checks client secrets under one key, for a known set of projects.
pub struct ClientSecrets {
    key: [u8; 32],
    projects: HashMap<ProjectRef, Project>,
}

impl std::fmt::Debug for ClientSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ClientSecrets {{ key: …, {} projects }}",
            self.projects.len()
        )
    }
}

impl ClientSecrets {
    /// Secrets signed with `key` (the server secret's client-secret key) for `projects` (those
    /// with keys, or the open server's `default`).
    pub fn new(key: [u8; 32], projects: impl IntoIterator<Item = Project>) -> Self {
        let mut secrets = ClientSecrets {
            key,
            projects: HashMap::new(),
        };
        for project in projects {
            secrets
                .projects
                .insert(secrets.reference(&project), project);
        }
        secrets
    }

    /// A new secret for `project`, accepted for `ttl` (at most [`MAX_TTL`]).
    pub fn mint(&self, project: &Project, ttl: Duration) -> Minted {
        self.mint_at(project, ttl, unix_millis())
    }

    /// The project of an unexpired secret this key signed, if the project still has keys.
    pub fn project_of(&self, presented: &str) -> Option<Project> {
        self.project_at(presented, unix_millis())
    }

    fn mint_at(&self, project: &Project, ttl: Duration, now_ms: u64) -> Minted {
        let ttl_ms = ttl.min(MAX_TTL).as_millis() as u64;
        let expires_ms = now_ms.saturating_add(ttl_ms);
        let mut payload = Vec::with_capacity(PAYLOAD_LEN);
        payload.push(VERSION);
        payload.extend_from_slice(&expires_ms.to_be_bytes());
        payload.extend_from_slice(&rand::random::<[u8; 16]>());
        payload.extend_from_slice(&self.reference(project));
        let tag = self.mac(b"secret", &payload).finalize().into_bytes();
        Minted {
            value: format!(
                "{PREFIX}{}.{}",
                URL_SAFE_NO_PAD.encode(&payload),
                URL_SAFE_NO_PAD.encode(tag)
            ),
            // Rounded down: accepted at least until then.
            expires_at: expires_ms / 1000,
        }
    }

    fn project_at(&self, presented: &str, now_ms: u64) -> Option<Project> {
        let (payload, tag) = presented.strip_prefix(PREFIX)?.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        // Constant time: how long a check takes says nothing about the right tag.
        self.mac(b"secret", &payload).verify_slice(&tag).ok()?;
        if payload.len() != PAYLOAD_LEN || payload[0] != VERSION {
            return None;
        }
        let expires_ms = u64::from_be_bytes(payload[1..9].try_into().ok()?);
        // Never longer than a secret can live (give or take the replicas' clocks), whatever the
        // clock did since it was minted.
        let latest = now_ms.saturating_add((MAX_TTL + CLOCK_SKEW).as_millis() as u64);
        if now_ms >= expires_ms || expires_ms > latest {
            return None;
        }
        let reference: ProjectRef = payload[25..].try_into().ok()?;
        self.projects.get(&reference).cloned()
    }

    fn reference(&self, project: &Project) -> ProjectRef {
        let full = self
            .mac(b"project", project.as_str().as_bytes())
            .finalize()
            .into_bytes();
        let mut reference = [0; 16];
        reference.copy_from_slice(&full[..16]);
        reference
    }

    /// An HMAC under the key for `domain` (a secret's tag, a project's reference).
    fn mac(&self, domain: &[u8], data: &[u8]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("any key");
        mac.update(domain);
        mac.update(&[0]);
        mac.update(data);
        mac
    }
}

fn unix_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_780_000_000_000;

    fn secrets(key: u8) -> ClientSecrets {
        ClientSecrets::new([key; 32], [Project::new("team a"), Project::new("b")])
    }

    #[test]
    fn the_open_project_is_known_only_where_it_is_the_project() {
        // A keyed server does not take a secret minted for `default` (by a keyless server with
        // the same secret, or this one before it had keys).
        let open = ClientSecrets::new([1; 32], [Project::open()]);
        let minted = open.mint_at(&Project::open(), MAX_TTL, NOW);
        assert_eq!(open.project_at(&minted.value, NOW), Some(Project::open()));
        assert_eq!(secrets(1).project_at(&minted.value, NOW), None);
    }

    /// `ek_` + the payload re-encoded after `change`, with a correct tag under `secrets`' key.
    fn resigned(secrets: &ClientSecrets, value: &str, change: impl FnOnce(&mut Vec<u8>)) -> String {
        let (payload, _) = value.strip_prefix(PREFIX).unwrap().split_once('.').unwrap();
        let mut payload = URL_SAFE_NO_PAD.decode(payload).unwrap();
        change(&mut payload);
        let tag = secrets.mac(b"secret", &payload).finalize().into_bytes();
        format!(
            "{PREFIX}{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    #[test]
    fn a_secret_stands_for_its_project_until_it_expires() {
        let secrets = secrets(1);
        let a = Project::new("team a");
        let minted = secrets.mint_at(&a, Duration::from_secs(10), NOW);
        assert!(minted.value.starts_with("ek_"), "{}", minted.value);
        assert_eq!(minted.expires_at, NOW / 1000 + 10);
        assert_eq!(secrets.project_at(&minted.value, NOW), Some(a.clone()));
        assert_eq!(
            secrets.project_at(&minted.value, NOW + 9_999),
            Some(a.clone())
        );
        assert_eq!(secrets.project_at(&minted.value, NOW + 10_000), None);
        let other = secrets.mint_at(&a, Duration::from_secs(10), NOW);
        assert_ne!(other.value, minted.value, "a nonce in each");
    }

    #[test]
    fn a_secret_does_not_show_its_project() {
        let secrets = secrets(1);
        let minted = secrets.mint(&Project::new("team a"), MAX_TTL);
        let (payload, _) = minted.value[3..].split_once('.').unwrap();
        let payload = URL_SAFE_NO_PAD.decode(payload).unwrap();
        assert_eq!(payload.len(), PAYLOAD_LEN);
        assert!(!payload.windows(6).any(|w| w == b"team a"));
        // RFC 6455: a subprotocol is an HTTP token (RFC 7230 tchar): base64url and dots are.
        assert!(
            minted
                .value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)),
            "{}",
            minted.value
        );
    }

    #[test]
    fn servers_sharing_the_key_and_the_projects_accept_each_others_secrets() {
        let a = Project::new("team a");
        let minted = secrets(1).mint_at(&a, MAX_TTL, NOW);
        assert_eq!(secrets(1).project_at(&minted.value, NOW + 1), Some(a));
        assert_eq!(
            secrets(2).project_at(&minted.value, NOW + 1),
            None,
            "another key"
        );
        // A project whose keys were removed: its secrets stand for nothing.
        let without_a = ClientSecrets::new([1; 32], [Project::new("b")]);
        assert_eq!(without_a.project_at(&minted.value, NOW + 1), None);
    }

    #[test]
    fn a_lifetime_is_at_most_an_hour_whatever_the_secret_says() {
        let secrets = secrets(1);
        let a = Project::new("team a");
        let long = secrets.mint_at(&a, Duration::from_secs(7200), NOW);
        assert_eq!(long.expires_at, NOW / 1000 + 3600, "capped at minting");
        // A secret claiming a later expiry than an hour from now (a clock stepped back, or a
        // minting bug) is refused; a minute's difference between replicas' clocks is not.
        let far = resigned(&secrets, &long.value, |p| {
            p[1..9].copy_from_slice(&(NOW + 3_660_001).to_be_bytes())
        });
        assert_eq!(secrets.project_at(&far, NOW), None);
        let edge = resigned(&secrets, &long.value, |p| {
            p[1..9].copy_from_slice(&(NOW + 3_660_000).to_be_bytes())
        });
        assert_eq!(secrets.project_at(&edge, NOW), Some(a));
    }

    #[test]
    fn an_altered_or_malformed_secret_stands_for_nothing() {
        let secrets = secrets(1);
        let minted = secrets.mint_at(&Project::new("team a"), MAX_TTL, NOW);
        let (payload, tag) = minted.value[3..].split_once('.').unwrap();
        // A later expiry under the old tag.
        let mut later = URL_SAFE_NO_PAD.decode(payload).unwrap();
        later[1] ^= 1;
        let forged = format!("{PREFIX}{}.{tag}", URL_SAFE_NO_PAD.encode(&later));
        assert_eq!(secrets.project_at(&forged, NOW), None);
        // A tag cut short (29 bytes: it decodes, and the length check refuses it).
        let cut = &minted.value[..minted.value.len() - 4];
        assert_eq!(secrets.project_at(cut, NOW), None);
        for presented in [
            "",
            "ek_",
            "ek_0123",
            "ek_.",
            "ek_!!.!!",
            minted.value.strip_prefix(PREFIX).unwrap(),
            "sk-not-a-secret",
        ] {
            assert_eq!(secrets.project_at(presented, NOW), None, "{presented}");
        }
        // Correctly tagged but of another layout or version: refused, not a panic.
        let short = resigned(&secrets, &minted.value, |p| p.truncate(4));
        assert_eq!(secrets.project_at(&short, NOW), None);
        let longer = resigned(&secrets, &minted.value, |p| p.push(0));
        assert_eq!(secrets.project_at(&longer, NOW), None);
        let version = resigned(&secrets, &minted.value, |p| p[0] = 2);
        assert_eq!(secrets.project_at(&version, NOW), None);
    }
}
