//! Short-lived client secrets (`ek_…`), so a browser can open WebSocket mode without holding an
//! API key: a backend holding the key mints one (`POST /v1/responses/client_secrets`) and hands
//! it to the page. A secret stands for the minting key's project until it expires, and is
//! accepted only on the WebSocket upgrade (`crate::transport::auth` decides where).
//!
//! A secret carries what it stands for, signed: its expiry (Unix milliseconds), a random nonce
//! and the project, then an HMAC-SHA256 tag over them under a key derived from the server secret
//! (`--server-secret`). Nothing is kept: replicas given the same server secret accept each
//! other's secrets (the page mints through one replica of a load balancer and upgrades through
//! another), a restart keeps them valid when the secret is kept, and no number of secrets costs
//! memory. The price is that a secret cannot be revoked before it expires, which is why a
//! lifetime is at most an hour.

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

/// The fixed part of a secret's payload: expiry (8 bytes) and nonce (16).
const FIXED: usize = 8 + 16;

/// A minted secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Minted {
    /// `ek_`, the payload and its tag (base64url, a dot between).
    pub value: String,
    /// When it stops being accepted, in Unix seconds (it is accepted at least until then).
    pub expires_at: u64,
}

/// Mints and checks client secrets under one key.
pub struct ClientSecrets {
    key: [u8; 32],
}

impl std::fmt::Debug for ClientSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientSecrets { key: … }")
    }
}

impl ClientSecrets {
    /// Secrets signed under a key derived from the server secret: servers given the same
    /// `secret` accept each other's.
    pub fn from_secret(secret: &str) -> Self {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(b"tether client secret key")
            .expect("any key");
        mac.update(secret.as_bytes());
        ClientSecrets {
            key: mac.finalize().into_bytes().into(),
        }
    }

    /// A new secret for `project`, accepted for `ttl`.
    pub fn mint(&self, project: &Project, ttl: Duration) -> Minted {
        self.mint_at(project, ttl, unix_millis())
    }

    /// The project of an unexpired secret this key signed.
    pub fn project_of(&self, presented: &str) -> Option<Project> {
        self.project_at(presented, unix_millis())
    }

    fn mint_at(&self, project: &Project, ttl: Duration, now_ms: u64) -> Minted {
        let expires_ms = now_ms.saturating_add(ttl.as_millis() as u64);
        let mut payload = Vec::with_capacity(FIXED + project.as_str().len());
        payload.extend_from_slice(&expires_ms.to_be_bytes());
        payload.extend_from_slice(&rand::random::<[u8; 16]>());
        payload.extend_from_slice(project.as_str().as_bytes());
        let tag = self.mac(&payload).finalize().into_bytes();
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
        self.mac(&payload).verify_slice(&tag).ok()?;
        let expires_ms = u64::from_be_bytes(payload.get(..8)?.try_into().ok()?);
        let project = std::str::from_utf8(payload.get(FIXED..)?).ok()?;
        (now_ms < expires_ms).then(|| Project::new(project))
    }

    fn mac(&self, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("any key");
        mac.update(payload);
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

    #[test]
    fn a_secret_stands_for_its_project_until_it_expires() {
        let secrets = ClientSecrets::from_secret("s3cret");
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
    fn a_secret_is_usable_in_a_subprotocol_token() {
        // RFC 6455: a subprotocol is an HTTP token (RFC 7230 tchar): base64url and dots are.
        let minted = ClientSecrets::from_secret("k").mint(&Project::new("a b/ü"), MAX_TTL);
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
    fn servers_sharing_the_server_secret_accept_each_others_secrets() {
        let a = Project::new("a");
        let minted = ClientSecrets::from_secret("shared").mint_at(&a, MAX_TTL, NOW);
        let replica = ClientSecrets::from_secret("shared");
        assert_eq!(replica.project_at(&minted.value, NOW + 1), Some(a));
        let stranger = ClientSecrets::from_secret("another");
        assert_eq!(stranger.project_at(&minted.value, NOW + 1), None);
    }

    #[test]
    fn an_altered_or_malformed_secret_stands_for_nothing() {
        let secrets = ClientSecrets::from_secret("s3cret");
        let minted = secrets.mint_at(&Project::new("a"), MAX_TTL, NOW);
        let (payload, tag) = minted
            .value
            .strip_prefix(PREFIX)
            .unwrap()
            .split_once('.')
            .unwrap();
        // Another project, or a later expiry, under the old tag.
        let mut bytes = URL_SAFE_NO_PAD.decode(payload).unwrap();
        bytes.push(b'x');
        let forged = format!("{PREFIX}{}.{tag}", URL_SAFE_NO_PAD.encode(&bytes));
        assert_eq!(secrets.project_at(&forged, NOW), None);
        let mut later = URL_SAFE_NO_PAD.decode(payload).unwrap();
        later[0] = 0x7f;
        let forged = format!("{PREFIX}{}.{tag}", URL_SAFE_NO_PAD.encode(&later));
        assert_eq!(secrets.project_at(&forged, NOW), None);
        for presented in [
            "",
            "ek_",
            "ek_0123",
            "ek_.",
            "ek_!!.!!",
            &minted.value[..minted.value.len() - 2],
            minted.value.strip_prefix(PREFIX).unwrap(),
            "sk-not-a-secret",
        ] {
            assert_eq!(secrets.project_at(presented, NOW), None, "{presented}");
        }
        // A payload shorter than its fixed part, correctly tagged, is refused, not a panic.
        let short = b"tiny".to_vec();
        let tag = URL_SAFE_NO_PAD.encode(secrets.mac(&short).finalize().into_bytes());
        let presented = format!("{PREFIX}{}.{tag}", URL_SAFE_NO_PAD.encode(&short));
        assert_eq!(secrets.project_at(&presented, NOW), None);
    }
}
