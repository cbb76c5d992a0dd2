//! The server secret (`--server-secret`): one secret a deployment's replicas share, from which
//! each use derives a key of its own under its own label — compaction items are sealed with
//! one (`crate::compaction`), client secrets signed with another (`crate::tenancy::secrets`) —
//! so that no key can stand in for another. Whoever holds the secret can mint client secrets
//! for every project, so it is a credential like the API keys.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The shortest server secret accepted: 16 bytes (a generated one has 64 hex digits).
pub const MIN_LEN: usize = 16;

/// A checked server secret and the keys derived from it.
#[derive(Clone)]
pub struct ServerSecret(String);

impl std::fmt::Debug for ServerSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerSecret(…)")
    }
}

impl ServerSecret {
    /// `secret` with the whitespace around it left out, if it is long enough ([`check`]).
    pub fn new(secret: &str) -> Result<Self, String> {
        check(secret)?;
        Ok(ServerSecret(secret.trim().to_string()))
    }

    /// The key compaction items are sealed with.
    pub fn compaction_key(&self) -> [u8; 32] {
        derive_key(b"tether compaction key", &self.0)
    }

    /// The key client secrets are signed with.
    pub fn client_secret_key(&self) -> [u8; 32] {
        derive_key(b"tether client secret key", &self.0)
    }

    /// The secret itself, to keep it (`compaction.key`).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// The key for `label`'s use of `secret`: HMAC-SHA256 keyed with the label, over the secret.
fn derive_key(label: &[u8], secret: &str) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(label).expect("any key");
    mac.update(secret.as_bytes());
    mac.finalize().into_bytes().into()
}

/// Why `secret` is refused, if it is: shorter than [`MIN_LEN`] bytes, whitespace around it
/// left out (a key derived from an empty or short secret is anyone's to compute).
pub fn check(secret: &str) -> Result<(), String> {
    let len = secret.trim().len();
    if len < MIN_LEN {
        return Err(format!(
            "the server secret has {len} bytes; it needs at least {MIN_LEN} (e.g. `openssl rand \
             -hex 32`): whoever can guess it can mint client secrets for every project"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_use_gets_its_own_key() {
        let secret = ServerSecret::new("  0123456789abcdef0123\n").unwrap();
        let again = ServerSecret::new("0123456789abcdef0123").unwrap();
        assert_eq!(secret.expose(), "0123456789abcdef0123");
        assert_eq!(secret.compaction_key(), again.compaction_key());
        assert_ne!(secret.compaction_key(), secret.client_secret_key());
        let other = ServerSecret::new("another secret, long").unwrap();
        assert_ne!(secret.compaction_key(), other.compaction_key());
        assert_ne!(secret.client_secret_key(), other.client_secret_key());
    }

    #[test]
    fn a_short_or_empty_secret_is_refused() {
        assert!(check("0123456789abcdef").is_ok());
        for weak in ["", "   ", "s3cret", "  0123456789abcde  "] {
            let error = ServerSecret::new(weak).unwrap_err();
            assert!(error.contains("at least 16"), "{weak:?}: {error}");
        }
    }
}
