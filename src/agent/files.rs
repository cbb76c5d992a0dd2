//! The sandbox's files as the Files view shows them: the tree after the latest tool call and the
//! log of every change a tool call made, with its unified diff. A snapshot shares the content of
//! unchanged files with the previous one, so taking one after a tool call costs the changed
//! files, not the whole tree.

use std::collections::BTreeMap;
use std::sync::Arc;

use tether_sandbox::{ChangeKind, ChangeSet, Vfs};

use crate::agent::frames::AppendLog;

/// A file's content, as far as the viewer is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileBody {
    Text(String),
    /// Not UTF-8: only its size is shown.
    Binary(usize),
}

impl FileBody {
    fn of(bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) => FileBody::Text(text.to_string()),
            Err(_) => FileBody::Binary(bytes.len()),
        }
    }
}

/// Every file of the sandbox (directories implied by the paths, plus empty ones).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileSnapshot {
    pub files: BTreeMap<String, Arc<FileBody>>,
    pub dirs: Vec<String>,
}

impl FileSnapshot {
    /// The whole tree of `vfs`.
    pub fn of(vfs: &Vfs) -> Self {
        FileSnapshot {
            files: vfs
                .files()
                .map(|(path, bytes)| (path.to_string(), Arc::new(FileBody::of(bytes))))
                .collect(),
            dirs: vfs.dirs().map(str::to_string).collect(),
        }
    }

    /// This snapshot with `changes` applied from `vfs`: only the changed files are read.
    pub fn updated(&self, vfs: &Vfs, changes: &ChangeSet) -> Self {
        let mut files = self.files.clone();
        for change in &changes.changes {
            match vfs.read(&change.path) {
                Ok(bytes) => {
                    files.insert(change.path.clone(), Arc::new(FileBody::of(bytes)));
                }
                Err(_) => {
                    files.remove(&change.path);
                }
            }
        }
        FileSnapshot {
            files,
            dirs: vfs.dirs().map(str::to_string).collect(),
        }
    }

    /// The tree as indented rows: directories, then the files in them, in path order.
    pub fn rows(&self) -> Vec<TreeRow> {
        let mut dirs: Vec<&str> = self.dirs.iter().map(String::as_str).collect();
        for path in self.files.keys() {
            let mut parent = tether_sandbox::vfs::parent(path);
            while parent != "/" {
                dirs.push(parent);
                parent = tether_sandbox::vfs::parent(parent);
            }
        }
        // A directory sorts right before its contents: compare paths with `/` lowest.
        let mut keyed: Vec<(String, TreeRow)> = dirs
            .into_iter()
            .map(|dir| TreeRow::new(dir, false))
            .chain(self.files.keys().map(|path| TreeRow::new(path, true)))
            .map(|row| (row.path.replace('/', "\u{0}"), row))
            .collect();
        crate::agent::stats::sort_small(&mut keyed, |a, b| a.0 < b.0);
        let mut rows: Vec<TreeRow> = keyed.into_iter().map(|(_, row)| row).collect();
        rows.dedup_by(|a, b| a.path == b.path);
        rows
    }
}

/// One line of the file tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    pub path: String,
    pub name: String,
    /// 0 for entries of `/`.
    pub depth: usize,
    pub is_file: bool,
}

impl TreeRow {
    fn new(path: &str, is_file: bool) -> Self {
        TreeRow {
            path: path.to_string(),
            name: tether_sandbox::vfs::file_name(path).to_string(),
            depth: path.matches('/').count() - 1,
            is_file,
        }
    }
}

/// One file one tool call changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChangeRecord {
    pub turn: usize,
    pub call_id: String,
    /// The tool that changed it.
    pub tool: String,
    pub path: String,
    pub kind: ChangeKind,
    /// Unified diff; `None` for binary content.
    pub diff: Option<String>,
}

impl FileChangeRecord {
    /// `added`, `modified` or `deleted`.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Deleted => "deleted",
        }
    }
}

/// Every file change of a run, in order.
pub type ChangeLog = AppendLog<FileChangeRecord>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_nest_files_under_their_directories() {
        let vfs = Vfs::from_files([
            ("/b.txt", b"b".as_slice()),
            ("/src/x.js", b"x".as_slice()),
            ("/src-old/y.js", b"y".as_slice()),
            ("/src/lib/z.js", b"\xff".as_slice()),
        ]);
        let snapshot = FileSnapshot::of(&vfs);
        let all = snapshot.rows();
        let rows: Vec<(usize, &str, bool)> = all
            .iter()
            .map(|r| (r.depth, r.name.as_str(), r.is_file))
            .collect();
        assert_eq!(
            rows,
            [
                (0, "b.txt", true),
                (0, "src", false),
                (1, "lib", false),
                (2, "z.js", true),
                (1, "x.js", true),
                (0, "src-old", false),
                (1, "y.js", true),
            ]
        );
        assert_eq!(
            *snapshot.files["/src/lib/z.js"],
            FileBody::Binary(1),
            "not UTF-8"
        );
    }

    #[test]
    fn an_update_reads_only_the_changed_files() {
        let mut vfs = Vfs::from_files([("/a", b"1".as_slice()), ("/b", b"2".as_slice())]);
        let before = FileSnapshot::of(&vfs);
        vfs.write("/a", b"one".to_vec()).unwrap();
        vfs.remove("/b").unwrap();
        vfs.write("/c", b"3".to_vec()).unwrap();
        let changes = vfs.take_changes();
        let after = before.updated(&vfs, &changes);
        assert_eq!(after, FileSnapshot::of(&vfs));
        assert_eq!(*after.files["/a"], FileBody::Text("one".into()));
        assert!(!after.files.contains_key("/b"));

        // Unchanged content is shared, not copied.
        let again = after.updated(&vfs, &ChangeSet::default());
        assert!(Arc::ptr_eq(&again.files["/a"], &after.files["/a"]));
    }
}
