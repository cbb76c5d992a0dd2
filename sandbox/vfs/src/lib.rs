//! The virtual file system: an in-memory tree of directories and files (text or binary).
//!
//! Every path that reaches the tree goes through [`normalize`], which resolves `.`, `..`, repeated
//! and backslash separators against a working directory and clamps at the root. So there is no
//! spelling of a path that names anything outside the tree — the sandbox cannot escape because
//! there is nothing outside to escape to. The tree is a flat ordered map from normalised absolute
//! path to node: listing a directory is a range scan, and iteration order is byte order, the order
//! `ls` uses under `LC_ALL=C`.
//!
//! The VFS also keeps the change journal: the original content of each path at its first write
//! since [`Vfs::take_changes`] was last called, from which a [`ChangeSet`] is computed
//! ([`changes`], with line diffs from [`line_diff`]); [`glob`] matches and expands patterns
//! against the tree. The crate does no I/O and compiles for wasm32 and native alike.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod base64;
pub mod changes;
pub mod glob;
pub mod line_diff;

use crate::changes::ChangeSet;

/// One node of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Dir,
    File(Vec<u8>),
}

/// What a path names, for listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Dir,
    File,
}

/// Why a file-system operation failed. `Display` gives the errno text bash would print.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VfsError {
    #[error("No such file or directory")]
    NotFound,
    #[error("Not a directory")]
    NotADirectory,
    #[error("Is a directory")]
    IsADirectory,
    #[error("File exists")]
    AlreadyExists,
    #[error("Directory not empty")]
    DirectoryNotEmpty,
    #[error("No space left on device (file-system limit of {limit} bytes)")]
    NoSpace { limit: usize },
    #[error("Invalid argument")]
    InvalidArgument,
}

/// An in-memory file tree rooted at `/`.
#[derive(Debug, Clone)]
pub struct Vfs {
    nodes: BTreeMap<String, Node>,
    bytes: usize,
    byte_limit: usize,
    journal: BTreeMap<String, Option<Vec<u8>>>,
}

impl Default for Vfs {
    fn default() -> Self {
        Self::new()
    }
}

/// Resolves `path` against the directory `cwd` into a normalised absolute path.
///
/// `/` and `\` both separate components; NUL characters are dropped first, then empty
/// components and `.` vanish and `..` pops one component, stopping at the root. The result
/// starts with `/` and has no trailing separator (except the root itself), and normalising it
/// again gives it back.
pub fn normalize(cwd: &str, path: &str) -> String {
    let mut parts: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    let absolute = path.starts_with('/') || path.starts_with('\\');
    let joined;
    let full = if absolute {
        path
    } else {
        joined = format!("{cwd}/{path}");
        &joined
    };
    for part in full.split(['/', '\\']) {
        // Without its NULs first, so that `.\0` is `.` here as it would be once written out.
        let part = if part.contains('\0') {
            std::borrow::Cow::Owned(part.replace('\0', ""))
        } else {
            std::borrow::Cow::Borrowed(part)
        };
        match &*part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    let mut out = String::with_capacity(full.len() + 1);
    for part in parts {
        out.push('/');
        out.push_str(&part);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// The parent directory of a normalised path (`/` for top-level entries and for the root).
pub fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The last component of a normalised path (`/` for the root).
pub fn file_name(path: &str) -> &str {
    if path == "/" {
        return "/";
    }
    path.rsplit('/').next().unwrap_or(path)
}

/// `dir/name`, without doubling the root's slash.
pub fn join(dir: &str, name: &str) -> String {
    if dir == "/" {
        format!("/{name}")
    } else {
        format!("{dir}/{name}")
    }
}

fn child_prefix(dir: &str) -> String {
    if dir == "/" {
        "/".to_string()
    } else {
        format!("{dir}/")
    }
}

impl Vfs {
    /// An empty tree with no byte limit.
    pub fn new() -> Self {
        Vfs {
            nodes: BTreeMap::new(),
            bytes: 0,
            byte_limit: usize::MAX,
            journal: BTreeMap::new(),
        }
    }

    /// Builds a tree from `(path, content)` pairs, creating parent directories.
    pub fn from_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Self {
        let mut vfs = Vfs::new();
        for (path, content) in files {
            let path = normalize("/", path);
            let _ = vfs.mkdir_all(parent(&path));
            let _ = vfs.write(&path, content.to_vec());
        }
        vfs.journal.clear();
        vfs
    }

    /// Caps the total bytes of file content; writes that would exceed it fail with
    /// [`VfsError::NoSpace`] and change nothing.
    pub fn set_byte_limit(&mut self, limit: usize) {
        self.byte_limit = limit;
    }

    /// Total bytes of file content in the tree.
    pub fn total_bytes(&self) -> usize {
        self.bytes
    }

    /// What `path` names, if anything.
    pub fn kind(&self, path: &str) -> Option<EntryKind> {
        let path = normalize("/", path);
        if path == "/" {
            return Some(EntryKind::Dir);
        }
        self.nodes.get(&path).map(|node| match node {
            Node::Dir => EntryKind::Dir,
            Node::File(_) => EntryKind::File,
        })
    }

    pub fn is_dir(&self, path: &str) -> bool {
        self.kind(path) == Some(EntryKind::Dir)
    }

    pub fn is_file(&self, path: &str) -> bool {
        self.kind(path) == Some(EntryKind::File)
    }

    pub fn exists(&self, path: &str) -> bool {
        self.kind(path).is_some()
    }

    /// The content of a file.
    pub fn read(&self, path: &str) -> Result<&[u8], VfsError> {
        let path = normalize("/", path);
        if path == "/" {
            return Err(VfsError::IsADirectory);
        }
        match self.nodes.get(&path) {
            Some(Node::File(data)) => Ok(data),
            Some(Node::Dir) => Err(VfsError::IsADirectory),
            None => {
                self.check_parent_dirs(&path)?;
                Err(VfsError::NotFound)
            }
        }
    }

    /// The content of a file as text (invalid UTF-8 replaced).
    pub fn read_text(&self, path: &str) -> Result<String, VfsError> {
        self.read(path)
            .map(|data| String::from_utf8_lossy(data).into_owned())
    }

    fn check_parent_dirs(&self, path: &str) -> Result<(), VfsError> {
        let mut dir = parent(path);
        while dir != "/" {
            match self.nodes.get(dir) {
                Some(Node::File(_)) => return Err(VfsError::NotADirectory),
                Some(Node::Dir) => return Ok(()),
                None => dir = parent(dir),
            }
        }
        Ok(())
    }

    fn record(&mut self, path: &str) {
        if !self.journal.contains_key(path) {
            let original = match self.nodes.get(path) {
                Some(Node::File(data)) => Some(data.clone()),
                _ => None,
            };
            self.journal.insert(path.to_string(), original);
        }
    }

    /// Creates or replaces a file. The parent directory must exist.
    pub fn write(&mut self, path: &str, content: Vec<u8>) -> Result<(), VfsError> {
        let path = normalize("/", path);
        if path == "/" {
            return Err(VfsError::IsADirectory);
        }
        match self.kind(parent(&path)) {
            Some(EntryKind::Dir) => {}
            Some(EntryKind::File) => return Err(VfsError::NotADirectory),
            None => {
                self.check_parent_dirs(&path)?;
                return Err(VfsError::NotFound);
            }
        }
        let old_len = match self.nodes.get(&path) {
            Some(Node::Dir) => return Err(VfsError::IsADirectory),
            Some(Node::File(data)) => data.len(),
            None => 0,
        };
        let new_total = self.bytes - old_len + content.len();
        if new_total > self.byte_limit && content.len() > old_len {
            return Err(VfsError::NoSpace {
                limit: self.byte_limit,
            });
        }
        self.record(&path);
        self.bytes = new_total;
        self.nodes.insert(path, Node::File(content));
        Ok(())
    }

    /// Appends to a file, creating it if missing. The file grows in place: appending is
    /// proportional to what is appended, not to the file (a loop appending a line at a time
    /// copied the whole file each time).
    pub fn append(&mut self, path: &str, content: &[u8]) -> Result<(), VfsError> {
        let path = normalize("/", path);
        if !matches!(self.nodes.get(&path), Some(Node::File(_))) {
            // Missing, a directory, or a parent in the way: what `write` says of it.
            return self.write(&path, content.to_vec());
        }
        let new_total = self.bytes + content.len();
        if new_total > self.byte_limit && !content.is_empty() {
            return Err(VfsError::NoSpace {
                limit: self.byte_limit,
            });
        }
        self.record(&path);
        self.bytes = new_total;
        if let Some(Node::File(data)) = self.nodes.get_mut(&path) {
            data.extend_from_slice(content);
        }
        Ok(())
    }

    /// Creates one directory; its parent must exist.
    pub fn mkdir(&mut self, path: &str) -> Result<(), VfsError> {
        let path = normalize("/", path);
        if self.exists(&path) {
            return Err(VfsError::AlreadyExists);
        }
        match self.kind(parent(&path)) {
            Some(EntryKind::Dir) => {
                self.nodes.insert(path, Node::Dir);
                Ok(())
            }
            Some(EntryKind::File) => Err(VfsError::NotADirectory),
            None => Err(VfsError::NotFound),
        }
    }

    /// Creates a directory and any missing parents (`mkdir -p`).
    pub fn mkdir_all(&mut self, path: &str) -> Result<(), VfsError> {
        let path = normalize("/", path);
        if path == "/" {
            return Ok(());
        }
        match self.kind(&path) {
            Some(EntryKind::Dir) => return Ok(()),
            Some(EntryKind::File) => return Err(VfsError::AlreadyExists),
            None => {}
        }
        self.mkdir_all(parent(&path))?;
        self.nodes.insert(path, Node::Dir);
        Ok(())
    }

    /// The entries directly inside a directory, in byte order of their names.
    pub fn list(&self, dir: &str) -> Result<Vec<(String, EntryKind)>, VfsError> {
        let dir = normalize("/", dir);
        match self.kind(&dir) {
            Some(EntryKind::Dir) => {}
            Some(EntryKind::File) => return Err(VfsError::NotADirectory),
            None => return Err(VfsError::NotFound),
        }
        let prefix = child_prefix(&dir);
        Ok(self
            .nodes
            .range(prefix.clone()..)
            .take_while(|(path, _)| path.starts_with(&prefix))
            .filter(|(path, _)| !path[prefix.len()..].contains('/'))
            .map(|(path, node)| {
                let kind = match node {
                    Node::Dir => EntryKind::Dir,
                    Node::File(_) => EntryKind::File,
                };
                (path[prefix.len()..].to_string(), kind)
            })
            .collect())
    }

    /// Every path strictly below `dir`, depth first in byte order, with its kind.
    pub fn descendants(&self, dir: &str) -> Vec<(String, EntryKind)> {
        let dir = normalize("/", dir);
        let prefix = child_prefix(&dir);
        self.nodes
            .range(prefix.clone()..)
            .take_while(|(path, _)| path.starts_with(&prefix))
            .map(|(path, node)| {
                let kind = match node {
                    Node::Dir => EntryKind::Dir,
                    Node::File(_) => EntryKind::File,
                };
                (path.clone(), kind)
            })
            .collect()
    }

    /// Removes a file or an empty directory.
    pub fn remove(&mut self, path: &str) -> Result<(), VfsError> {
        let path = normalize("/", path);
        if path == "/" {
            return Err(VfsError::InvalidArgument);
        }
        match self.nodes.get(&path) {
            None => Err(VfsError::NotFound),
            Some(Node::Dir) => {
                if !self.descendants(&path).is_empty() {
                    return Err(VfsError::DirectoryNotEmpty);
                }
                self.nodes.remove(&path);
                Ok(())
            }
            Some(Node::File(data)) => {
                let len = data.len();
                self.record(&path);
                self.bytes -= len;
                self.nodes.remove(&path);
                Ok(())
            }
        }
    }

    /// Removes a path and everything below it (`rm -r`).
    pub fn remove_all(&mut self, path: &str) -> Result<(), VfsError> {
        let path = normalize("/", path);
        if path == "/" {
            return Err(VfsError::InvalidArgument);
        }
        if !self.exists(&path) {
            return Err(VfsError::NotFound);
        }
        let mut doomed: Vec<String> = self
            .descendants(&path)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        doomed.reverse();
        doomed.push(path);
        for p in doomed {
            if let Some(Node::File(data)) = self.nodes.get(&p) {
                let len = data.len();
                self.record(&p);
                self.bytes -= len;
            }
            self.nodes.remove(&p);
        }
        Ok(())
    }

    /// Moves a file or directory tree to a new path, replacing a file there.
    pub fn rename(&mut self, from: &str, to: &str) -> Result<(), VfsError> {
        let from = normalize("/", from);
        let to = normalize("/", to);
        if from == to {
            return Ok(());
        }
        if from == "/" || to.starts_with(&child_prefix(&from)) {
            return Err(VfsError::InvalidArgument);
        }
        let kind = self.kind(&from).ok_or(VfsError::NotFound)?;
        if !self.is_dir(parent(&to)) {
            return Err(VfsError::NotFound);
        }
        match (kind, self.kind(&to)) {
            (EntryKind::File, Some(EntryKind::Dir)) => return Err(VfsError::IsADirectory),
            (EntryKind::Dir, Some(EntryKind::File)) => return Err(VfsError::NotADirectory),
            (EntryKind::Dir, Some(EntryKind::Dir)) if !self.descendants(&to).is_empty() => {
                return Err(VfsError::DirectoryNotEmpty);
            }
            _ => {}
        }
        if let Some(EntryKind::File) = self.kind(&to) {
            self.remove(&to)?;
        }
        let mut moving = vec![(from.clone(), kind)];
        moving.extend(self.descendants(&from));
        for (old, _) in &moving {
            self.record(old);
            let new = format!("{to}{}", &old[from.len()..]);
            self.record(&new);
        }
        for (old, _) in moving {
            let node = self.nodes.remove(&old).unwrap_or(Node::Dir);
            let new = format!("{to}{}", &old[from.len()..]);
            self.nodes.insert(new, node);
        }
        Ok(())
    }

    /// Every file with its content, in path order (for the UI's file tree and for export).
    pub fn files(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.nodes.iter().filter_map(|(path, node)| match node {
            Node::File(data) => Some((path.as_str(), data.as_slice())),
            Node::Dir => None,
        })
    }

    /// Every directory, in path order (the root excluded).
    pub fn dirs(&self) -> impl Iterator<Item = &str> {
        self.nodes.iter().filter_map(|(path, node)| match node {
            Node::Dir => Some(path.as_str()),
            Node::File(_) => None,
        })
    }

    /// What changed since the previous call: files added, modified and deleted, with diffs.
    pub fn take_changes(&mut self) -> ChangeSet {
        let journal = std::mem::take(&mut self.journal);
        ChangeSet::between(journal.into_iter().map(|(path, before)| {
            let after = match self.nodes.get(&path) {
                Some(Node::File(data)) => Some(data.clone()),
                _ => None,
            };
            (path, before, after)
        }))
    }

    /// Serialises the tree (text files as text, others as base64) for storage and links.
    pub fn to_json(&self) -> String {
        let snapshot = Snapshot {
            files: self
                .files()
                .map(|(path, data)| (path.to_string(), FileContent::from_bytes(data)))
                .collect(),
            dirs: self.dirs().map(str::to_string).collect(),
        };
        serde_json::to_string(&snapshot).unwrap_or_default()
    }

    /// Rebuilds a tree from [`Vfs::to_json`] output. Paths are normalised on the way in.
    pub fn from_json(json: &str) -> Result<Self, SnapshotError> {
        let snapshot: Snapshot = serde_json::from_str(json)?;
        let mut vfs = Vfs::new();
        for dir in &snapshot.dirs {
            vfs.mkdir_all(dir)
                .map_err(|e| SnapshotError::Tree(dir.clone(), e))?;
        }
        for (path, content) in snapshot.files {
            let data = content.into_bytes()?;
            let path = normalize("/", &path);
            vfs.mkdir_all(parent(&path))
                .and_then(|()| vfs.write(&path, data))
                .map_err(|e| SnapshotError::Tree(path.clone(), e))?;
        }
        vfs.journal.clear();
        Ok(vfs)
    }
}

/// Why a JSON snapshot could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("invalid snapshot JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("invalid base64 content")]
    Base64,
    #[error("{0}: {1}")]
    Tree(String, VfsError),
}

#[derive(Serialize, Deserialize)]
struct Snapshot {
    files: BTreeMap<String, FileContent>,
    #[serde(default)]
    dirs: Vec<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum FileContent {
    Text(String),
    Base64(String),
}

impl FileContent {
    fn from_bytes(data: &[u8]) -> Self {
        match std::str::from_utf8(data) {
            Ok(text) => FileContent::Text(text.to_string()),
            Err(_) => FileContent::Base64(crate::base64::encode(data)),
        }
    }

    fn into_bytes(self) -> Result<Vec<u8>, SnapshotError> {
        match self {
            FileContent::Text(text) => Ok(text.into_bytes()),
            FileContent::Base64(b64) => crate::base64::decode(&b64).ok_or(SnapshotError::Base64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_clamps_at_root() {
        let cases = [
            ("/", "a/b", "/a/b"),
            ("/x", "../../..", "/"),
            ("/x", "/etc/passwd", "/etc/passwd"),
            ("/x", "..\\..\\y", "/y"),
            ("/x/y", "./z//w/", "/x/y/z/w"),
            ("/", "", "/"),
            ("/a", "b/../../../c", "/c"),
        ];
        for (cwd, path, want) in cases {
            assert_eq!(normalize(cwd, path), want, "{cwd} + {path}");
        }
    }

    #[test]
    fn write_requires_parent_and_respects_limit() {
        let mut vfs = Vfs::new();
        assert_eq!(vfs.write("/a/b", b"x".to_vec()), Err(VfsError::NotFound));
        vfs.mkdir_all("/a").unwrap();
        vfs.set_byte_limit(4);
        vfs.write("/a/b", b"1234".to_vec()).unwrap();
        assert!(matches!(
            vfs.write("/a/c", b"5".to_vec()),
            Err(VfsError::NoSpace { .. })
        ));
        assert!(!vfs.exists("/a/c"));
        vfs.write("/a/b", b"12".to_vec()).unwrap();
        assert_eq!(vfs.total_bytes(), 2);
    }

    #[test]
    fn json_round_trip_keeps_text_binary_and_empty_dirs() {
        let mut vfs = Vfs::from_files([("src/a.txt", b"hello\n".as_slice())]);
        vfs.write("/bin.dat", vec![0, 159, 146, 150]).unwrap();
        vfs.mkdir_all("/empty/dir").unwrap();
        let back = Vfs::from_json(&vfs.to_json()).unwrap();
        assert_eq!(back.read("/src/a.txt").unwrap(), b"hello\n");
        assert_eq!(back.read("/bin.dat").unwrap(), &[0, 159, 146, 150]);
        assert!(back.is_dir("/empty/dir"));
    }

    #[test]
    fn json_paths_cannot_escape() {
        let vfs = Vfs::from_json(r#"{"files":{"../../etc/x":{"text":"hi"}}}"#).unwrap();
        assert_eq!(vfs.files().map(|(p, _)| p).collect::<Vec<_>>(), ["/etc/x"]);
    }

    #[test]
    fn rename_moves_trees() {
        let mut vfs = Vfs::from_files([("a/b/c.txt", b"c".as_slice())]);
        vfs.rename("/a", "/z").unwrap();
        assert_eq!(vfs.read("/z/b/c.txt").unwrap(), b"c");
        assert!(!vfs.exists("/a"));
        assert_eq!(vfs.rename("/z", "/z/q"), Err(VfsError::InvalidArgument));
    }

    #[test]
    fn changes_report_added_modified_deleted() {
        let mut vfs = Vfs::from_files([("m.txt", b"1\n".as_slice()), ("d.txt", b"x".as_slice())]);
        vfs.write("/m.txt", b"2\n".to_vec()).unwrap();
        vfs.write("/n.txt", b"new".to_vec()).unwrap();
        vfs.remove("/d.txt").unwrap();
        let changes = vfs.take_changes();
        let summary: Vec<_> = changes
            .changes
            .iter()
            .map(|c| (c.path.as_str(), c.kind))
            .collect();
        use crate::changes::ChangeKind::*;
        assert_eq!(
            summary,
            [("/d.txt", Deleted), ("/m.txt", Modified), ("/n.txt", Added)]
        );
        assert!(
            changes.changes[1]
                .diff
                .as_ref()
                .unwrap()
                .contains("-1\n+2\n")
        );
        assert!(vfs.take_changes().changes.is_empty());
    }
}
