//! Compaction (`POST /v1/responses/compact`): a conversation becomes its user messages followed
//! by one `compaction` item standing for everything else. The item's `encrypted_content` is
//! opaque to the client, which sends it back as input; Tether expands it into the summary it
//! sealed, and the model reads that summary instead of the items it replaced.
//!
//! The content is `tc1.<payload>.<tag>`: the payload is the base64url JSON of the summary, the
//! tag an HMAC-SHA256 over the project and the payload under a key derived from the server
//! secret (`crate::server_secret`). It is signed, not encrypted — it holds only what the client sent — so a client cannot forge or
//! alter one, nor replay another project's; a request holding a bad one is refused with 400
//! `invalid_encrypted_content` (`pipeline::checks`). What the summary says is the model's to write: the simulator's
//! is in `sim::compact`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::Sha256;
use tether_protocol::Item;

/// The prefix of every content this version seals.
const VERSION: &str = "tc1";

/// What a compaction item stands for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// How many items it replaced.
    pub items: usize,
    /// The text the model reads in their place.
    pub text: String,
}

/// Seals and opens compaction contents with the server's key.
#[derive(Clone)]
pub struct Sealer {
    key: [u8; 32],
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer { key: … }")
    }
}

impl Sealer {
    /// A sealer with `key` (the server secret's compaction key): replicas given the same key
    /// open each other's contents.
    pub fn new(key: [u8; 32]) -> Self {
        Sealer { key }
    }

    /// A sealer with a fresh random key (contents it seals open in this process only).
    pub fn random() -> Self {
        Sealer::new(rand::random())
    }

    fn tag(&self, project: &str, payload: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key");
        mac.update(project.as_bytes());
        mac.update(&[0]);
        mac.update(payload.as_bytes());
        mac
    }

    /// The `encrypted_content` of `summary`, for `project`.
    pub fn seal(&self, project: &str, summary: &Summary) -> String {
        let json = serde_json::to_vec(summary).expect("a summary serializes");
        let payload = URL_SAFE_NO_PAD.encode(json);
        let tag = self.tag(project, &payload).finalize().into_bytes();
        format!("{VERSION}.{payload}.{}", URL_SAFE_NO_PAD.encode(tag))
    }

    /// The summary `content` stands for, if this server sealed it for `project`.
    pub fn open(&self, project: &str, content: &str) -> Option<Summary> {
        let (payload, tag) = split(content)?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        self.tag(project, payload).verify_slice(&tag).ok()?;
        decode_payload(payload)
    }

    /// The index of the first compaction item in `input` this server did not seal for
    /// `project` (forged, altered, another project's or another server's), if any.
    pub fn first_unsealed(&self, project: &str, input: &[Item]) -> Option<usize> {
        input.iter().position(|item| {
            compaction(item).is_some_and(|value| {
                let content = value.get("encrypted_content").and_then(Value::as_str);
                content.and_then(|c| self.open(project, c)).is_none()
            })
        })
    }
}

fn split(content: &str) -> Option<(&str, &str)> {
    let rest = content.strip_prefix(VERSION)?.strip_prefix('.')?;
    rest.split_once('.')
}

fn decode_payload(payload: &str) -> Option<Summary> {
    let json = URL_SAFE_NO_PAD.decode(payload).ok()?;
    serde_json::from_slice(&json).ok()
}

/// The compaction item's JSON, if `item` is one.
pub fn compaction(item: &Item) -> Option<&Value> {
    match item {
        Item::Unknown(value) if value.get("type").and_then(Value::as_str) == Some("compaction") => {
            Some(value)
        }
        _ => None,
    }
}

/// The text a compaction item's content expands to, for the prompt. Contents are checked when
/// they arrive ([`Sealer::check`]), so the conversation holds only sealed ones.
pub fn expanded(value: &Value) -> Option<String> {
    let content = value.get("encrypted_content")?.as_str()?;
    let (payload, _) = split(content)?;
    decode_payload(payload).map(|summary| summary.text)
}

/// The compaction item for `summary`.
pub fn item(id: String, content: String) -> Value {
    json!({"type": "compaction", "id": id, "encrypted_content": content})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary() -> Summary {
        Summary {
            items: 3,
            text: "Summary of the conversation so far (3 items compacted):\n- tool: ok".into(),
        }
    }

    #[test]
    fn only_the_sealing_server_and_project_open_a_content() {
        let sealer = Sealer::new([7; 32]);
        let summary = summary();
        let content = sealer.seal("proj", &summary);
        assert_eq!(sealer.open("proj", &content), Some(summary.clone()));
        assert_eq!(
            Sealer::new([7; 32]).open("proj", &content),
            Some(summary.clone()),
            "the same secret on another replica"
        );
        assert_eq!(sealer.open("other", &content), None, "another project");
        assert_eq!(Sealer::random().open("proj", &content), None, "another key");
        let (_, tag) = content.rsplit_once('.').unwrap();
        let altered = Summary {
            items: 1,
            ..summary.clone()
        };
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&altered).unwrap());
        let forged = format!("{VERSION}.{payload}.{tag}");
        assert_eq!(sealer.open("proj", &forged), None, "an altered payload");
        assert_eq!(sealer.open("proj", "tc1.x"), None);
        assert_eq!(sealer.open("proj", ""), None);
        assert_eq!(
            expanded(&item("cmp_1".into(), content)).as_deref(),
            Some(summary.text.as_str())
        );
    }

    #[test]
    fn a_compaction_in_the_input_must_be_sealed_here() {
        let sealer = Sealer::random();
        let summary = summary();
        let good: Item =
            serde_json::from_value(item("cmp_1".into(), sealer.seal("p", &summary))).unwrap();
        let input = [Item::user_text("hi"), good];
        assert_eq!(sealer.first_unsealed("p", &input), None);
        assert_eq!(sealer.first_unsealed("q", &input), Some(1));
    }
}
