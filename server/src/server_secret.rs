//! The server secret (`--server-secret`): one secret a deployment's replicas share, from which
//! each use derives a key of its own under its own label — compaction items are sealed with
//! one (`crate::compaction`), client secrets signed with another (`crate::tenancy::secrets`),
//! turn-state tokens with a third (`crate::turn_state`) — so that no key can stand in for another. Whoever holds the secret can mint client secrets
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
    /// `secret` exactly as given (whitespace included: a value that came with a newline keeps
    /// deriving the keys it always did), if it is long enough without it ([`check`]).
    pub fn new(secret: &str) -> Result<Self, String> {
        check(secret)?;
        Ok(ServerSecret(secret.to_string()))
    }

    /// The key compaction items are sealed with.
    pub fn compaction_key(&self) -> [u8; 32] {
        derive_key(b"tether compaction key", &self.0)
    }

    /// The key client secrets are signed with.
    pub fn client_secret_key(&self) -> [u8; 32] {
        derive_key(b"tether client secret key", &self.0)
    }

    /// The key turn-state tokens (`x-codex-turn-state`) are signed with.
    pub fn turn_state_key(&self) -> [u8; 32] {
        derive_key(b"tether turn state key", &self.0)
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

/// Why `secret` is refused, if it is: shorter than [`MIN_LEN`] bytes, whitespace around it not
/// counted (a key derived from an empty or short secret is anyone's to compute).
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
    fn the_keys_are_what_they_always_were() {
        // HMAC-SHA256(key = label, message = secret), as Python's hmac module computes it: the
        // compaction key every earlier version derived, so sealed items keep opening.
        let hex = |key: [u8; 32]| key.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let secret = ServerSecret::new("0123456789abcdef-kat").unwrap();
        assert_eq!(
            hex(secret.compaction_key()),
            "a9ffa53198835cdec2ff28785d9c63a265adc9291409f90583ff72d3be4083c0"
        );
        assert_eq!(
            hex(secret.client_secret_key()),
            "612e74e2d810c48c07a7ad3b7c4e69fcfc0bc3ff0c432b028c96c8d5e53a50f4"
        );
        // A value given with whitespace derives from all of it, as it always did.
        let padded = ServerSecret::new(" 0123456789abcdef-kat\n").unwrap();
        assert_eq!(
            hex(padded.compaction_key()),
            "d17afda7d564f4942a425c03f1a6a6d9df85f2b67878db0a72dbbe5840405dad"
        );
    }

    #[test]
    fn each_use_gets_its_own_key() {
        let secret = ServerSecret::new("0123456789abcdef0123").unwrap();
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
