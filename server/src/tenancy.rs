//! Who a request is for: every API key belongs to one **project**, and every stored response,
//! its items, its ledger rows and its prompt-cache entries belong to the project of the key that
//! made it. Another project's response is answered exactly like one that does not exist, so a
//! key learns nothing of what other projects stored.
//!
//! By default each `--api-key` is a project of its own; `--keys-file` groups keys into named
//! projects. With no keys at all, authentication is off and everything is the `default`
//! project. Keys are compared in constant time.
//!
//! What else is per project: its rate limits ([`limits`]) and the short-lived client secrets
//! that stand for its keys on a WebSocket upgrade ([`secrets`]).

pub mod limits;
pub mod secrets;

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::sync::Arc;

use subtle::ConstantTimeEq;

/// A project's name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Project(Arc<str>);

impl Project {
    pub fn new(name: &str) -> Self {
        Project(Arc::from(name))
    }

    /// The project of a server without keys.
    pub fn open() -> Self {
        Project::new("default")
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Project {
    fn default() -> Self {
        Project::open()
    }
}

/// The accepted keys and their projects.
#[derive(Debug, Clone, Default)]
pub struct KeyRing {
    keys: Arc<Vec<(Vec<u8>, Project)>>,
}

impl KeyRing {
    /// Keys from `--api-key` (each its own project, named by a digest of the key so logs and
    /// metrics never show it) and from a keys file (`{"project": ["key", …], …}`).
    pub fn new(single_keys: &[String], file: Option<&Path>) -> Result<Self, String> {
        let mut keys: Vec<(Vec<u8>, Project)> = single_keys
            .iter()
            .filter(|key| !key.is_empty())
            .map(|key| (key.as_bytes().to_vec(), Project::new(&digest(key))))
            .collect();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let projects: BTreeMap<String, Vec<String>> =
                serde_json::from_str(&text).map_err(|e| {
                    format!(
                        "{}: {e} (expected {{\"project\": [\"key\", …], …}})",
                        path.display()
                    )
                })?;
            for (project, project_keys) in projects {
                if project.is_empty() {
                    return Err(format!("{}: a project needs a name", path.display()));
                }
                for key in project_keys.into_iter().filter(|k| !k.is_empty()) {
                    keys.push((key.into_bytes(), Project::new(&project)));
                }
            }
        }
        for (index, (key, project)) in keys.iter().enumerate() {
            if let Some((_, other)) = keys[..index].iter().find(|(k, _)| k == key)
                && other != project
            {
                return Err(format!(
                    "a key is given for two projects ({} and {})",
                    other.as_str(),
                    project.as_str()
                ));
            }
        }
        Ok(KeyRing {
            keys: Arc::new(keys),
        })
    }

    /// Whether authentication is off (no keys).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Every project that has a key, once each.
    pub fn projects(&self) -> Vec<Project> {
        let mut seen = std::collections::BTreeSet::new();
        self.keys
            .iter()
            .filter(|(_, project)| seen.insert(project.as_str()))
            .map(|(_, project)| project.clone())
            .collect()
    }

    /// Whether `candidate` is one of the keys (the admin key must not be).
    pub fn contains(&self, candidate: &str) -> bool {
        self.project_of(candidate).is_some()
    }

    /// The project `presented` belongs to. Every key is compared, in constant time, so how long
    /// it takes does not say which key (or how much of one) matched.
    pub fn project_of(&self, presented: &str) -> Option<Project> {
        let presented = presented.as_bytes();
        let mut found = None;
        for (key, project) in self.keys.iter() {
            if bool::from(key.as_slice().ct_eq(presented)) {
                found = Some(project.clone());
            }
        }
        found
    }
}

/// A stable name for a key's own project that does not reveal the key.
fn digest(key: &str) -> String {
    let mut hasher = DefaultHasher::new();
    key.hash(&mut hasher);
    format!("key_{:016x}", hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_map_to_their_projects() {
        let dir = std::env::temp_dir().join(format!("tether-keys-{}", rand::random::<u64>()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("keys.json");
        std::fs::write(&file, r#"{"team-a": ["a1", "a2"], "team-b": ["b1"]}"#).unwrap();
        let ring = KeyRing::new(&["solo".into()], Some(&file)).unwrap();
        let project = |key: &str| ring.project_of(key).map(|p| p.as_str().to_string());
        assert_eq!(project("a1"), project("a2"));
        assert_eq!(project("a1").as_deref(), Some("team-a"));
        assert_eq!(project("b1").as_deref(), Some("team-b"));
        let solo = project("solo").unwrap();
        assert!(solo.starts_with("key_") && !solo.contains("solo"));
        assert_eq!(project("nope"), None);
        assert_eq!(project("a"), None, "a prefix of a key is not the key");
        std::fs::write(&file, r#"{"x": ["solo"]}"#).unwrap();
        assert!(KeyRing::new(&["solo".into()], Some(&file)).is_err());
        std::fs::write(&file, "[1]").unwrap();
        assert!(KeyRing::new(&[], Some(&file)).is_err());
        assert!(KeyRing::new(&[], None).unwrap().is_empty());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
