//! The turn-state token (`x-codex-turn-state`): a routing token the server hands a client with
//! the first answer of a turn — the WebSocket upgrade, or an HTTP response — and the client
//! sends back unchanged on every later request of that turn (a reconnect, a retry, an HTTP
//! fallback), so a balancer can send them where the turn began (docs/protocol.md §11,
//! docs/deployment.md).
//!
//! A token names the replica that issued it (`--replica-id`) and is signed with a key derived
//! from the server secret, which replicas share: `t1.<replica>.<nonce>.<tag>`, the tag the
//! first 16 bytes of HMAC-SHA256 over `t1.<replica>.<nonce>`, in hex. The balancer reads only
//! the replica's name (nginx cannot check a signature); a replica echoes a token only when its
//! tag checks, and answers anything else — garbage, another deployment's token, one from before
//! the secret changed — with a fresh token of its own, never with an error.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The token format's version, its first field.
const VERSION: &str = "t1";
/// Bytes of the tag kept (128 bits).
const TAG_BYTES: usize = 16;
/// The longest replica name.
pub const MAX_REPLICA_LEN: usize = 64;

/// Issues and checks turn-state tokens for one replica.
#[derive(Clone)]
pub struct TurnStates {
    replica: String,
    key: [u8; 32],
}

impl std::fmt::Debug for TurnStates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnStates")
            .field("replica", &self.replica)
            .finish_non_exhaustive()
    }
}

/// Why a replica name is refused, if it is: 1–64 characters of `[A-Za-z0-9_-]`, so a token's
/// fields stay apart and a balancer's pattern can take the name out.
pub fn check_replica(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= MAX_REPLICA_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "the replica id must be 1–{MAX_REPLICA_LEN} characters of A-Z, a-z, 0-9, '_' and \
             '-'; got '{name}'"
        ))
    }
}

impl TurnStates {
    /// Tokens naming `replica` (checked with [`check_replica`]), signed with `key`.
    pub fn new(replica: &str, key: [u8; 32]) -> Result<Self, String> {
        check_replica(replica)?;
        Ok(TurnStates {
            replica: replica.to_string(),
            key,
        })
    }

    /// The replica this server is.
    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// A new token naming this replica.
    pub fn issue(&self) -> String {
        let nonce: [u8; 12] = rand::random();
        let body = format!("{VERSION}.{}.{}", self.replica, hex(&nonce));
        let tag = self.tag(&body);
        format!("{body}.{tag}")
    }

    /// The token to answer a request that presented `presented`: the same token when it is one
    /// of this deployment's (its tag checks, whichever replica it names), else a new one naming
    /// this replica.
    pub fn answer(&self, presented: Option<&str>) -> String {
        match presented {
            Some(token) if self.verify(token).is_some() => token.to_string(),
            _ => self.issue(),
        }
    }

    /// The replica `token` names, when its tag checks.
    pub fn verify<'t>(&self, token: &'t str) -> Option<&'t str> {
        let (body, tag) = token.rsplit_once('.')?;
        let mut fields = body.split('.');
        let (version, replica, nonce) = (fields.next()?, fields.next()?, fields.next()?);
        if version != VERSION || fields.next().is_some() || check_replica(replica).is_err() {
            return None;
        }
        if nonce.len() != 24 || !nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let tag = unhex(tag).filter(|tag| tag.len() == TAG_BYTES)?;
        let mut mac = self.mac();
        mac.update(body.as_bytes());
        // Constant time: `verify_truncated_left` compares the tag with the MAC's leading bytes.
        mac.verify_truncated_left(&tag).ok()?;
        Some(replica)
    }

    fn mac(&self) -> Hmac<Sha256> {
        <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("any key length")
    }

    fn tag(&self, body: &str) -> String {
        let mut mac = self.mac();
        mac.update(body.as_bytes());
        hex(&mac.finalize().into_bytes()[..TAG_BYTES])
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_its_replica_and_is_echoed_only_when_it_checks() {
        let a = TurnStates::new("r0", [1; 32]).unwrap();
        let b = TurnStates::new("r1", [1; 32]).unwrap();
        let token = a.issue();
        assert!(token.starts_with("t1.r0."), "{token}");
        assert_ne!(token, a.issue(), "each turn gets its own token");
        // Any replica of the deployment (same key) echoes it and reads whose it is.
        assert_eq!(b.verify(&token), Some("r0"));
        assert_eq!(b.answer(Some(&token)), token);
        // Another deployment's token, a tampered one or garbage: a fresh token of our own.
        let other = TurnStates::new("r0", [2; 32]).unwrap();
        assert_eq!(other.verify(&token), None);
        assert!(other.answer(Some(&token)).starts_with("t1.r0."));
        let renamed = token.replacen("t1.r0.", "t1.r1.", 1);
        assert_eq!(a.verify(&renamed), None, "the name is signed");
        let short = &token[..token.len() - 2];
        assert_eq!(a.verify(short), None, "the whole tag is needed");
        for garbage in ["", "t1", "t1.r0.x.y", "opaque-state", "t1..0.00"] {
            assert_eq!(a.verify(garbage), None, "{garbage}");
            assert!(b.answer(Some(garbage)).starts_with("t1.r1."));
        }
        assert!(b.answer(None).starts_with("t1.r1."));
    }

    #[test]
    fn a_replica_name_is_checked() {
        assert!(TurnStates::new("replica-2_b", [0; 32]).is_ok());
        for bad in ["", "a.b", "r 1", &"x".repeat(65)] {
            let error = TurnStates::new(bad, [0; 32]).unwrap_err();
            assert!(error.contains("replica id"), "{error}");
        }
    }
}
