//! The change log the UI shows after each tool call: which files were added, modified or
//! deleted, with a unified diff for text content.
//!
//! It is computed from the VFS journal (content before the first write, content now), so a file
//! written and then restored within one call does not appear at all.

use serde::Serialize;

use crate::line_diff::LineDiff;

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    pub path: String,
    pub kind: ChangeKind,
    /// Unified diff (`--- a/path`, `+++ b/path`) when both sides are text; `None` for binary.
    pub diff: Option<String>,
}

/// The files one tool call or shell run changed, in path order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChangeSet {
    pub changes: Vec<FileChange>,
}

impl ChangeSet {
    /// Builds the set from `(path, before, after)` triples; unchanged paths are dropped.
    pub fn between(
        entries: impl IntoIterator<Item = (String, Option<Vec<u8>>, Option<Vec<u8>>)>,
    ) -> Self {
        let mut changes: Vec<FileChange> = entries
            .into_iter()
            .filter_map(|(path, before, after)| {
                let kind = match (&before, &after) {
                    (None, None) => return None,
                    (Some(b), Some(a)) if a == b => return None,
                    (None, Some(_)) => ChangeKind::Added,
                    (Some(_), None) => ChangeKind::Deleted,
                    (Some(_), Some(_)) => ChangeKind::Modified,
                };
                let old = text_of(before.as_deref());
                let new = text_of(after.as_deref());
                let diff = match (old, new) {
                    (Some(old), Some(new)) => Some(unified_diff(
                        &old,
                        &new,
                        &format!("a{path}"),
                        &format!("b{path}"),
                    )),
                    _ => None,
                };
                Some(FileChange { path, kind, diff })
            })
            .collect();
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        ChangeSet { changes }
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// Missing content counts as empty text; binary content has no text.
fn text_of(data: Option<&[u8]>) -> Option<String> {
    match data {
        None => Some(String::new()),
        Some(bytes) => std::str::from_utf8(bytes).ok().map(str::to_string),
    }
}

/// A unified diff with three lines of context, as `diff -u` prints it (without timestamps).
pub fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    LineDiff::new(old, new).unified(3, old_name, new_name)
}
