//! `apply_patch`: Codex's file-editing format, applied to the VFS atomically — every hunk is
//! computed against an overlay first and the tree is only touched when all of them succeed, so
//! a patch that fails half-way changes nothing. [`parse`] reads the patch, `seek` finds each
//! chunk's lines (exactly, then ever more leniently), [`apply`] computes and commits. The shell
//! command of the same name is tether-coreutils' `apply_patch`.

mod parse;
mod seek;

use std::collections::BTreeMap;

pub use parse::{Chunk, Hunk, parse};

use tether_vfs::{self as vfs, Vfs, VfsError};

/// Why a patch was not applied. `Display` is the text the model sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("invalid patch: {0}")]
    Invalid(String),
    #[error("invalid hunk at line {line}, {message}")]
    Hunk { line: usize, message: String },
    #[error("Failed to find context '{context}' in {path} (chunk at patch line {line})")]
    ContextNotFound {
        path: String,
        context: String,
        line: usize,
    },
    #[error("Failed to find expected lines in {path} (chunk at patch line {line}):\n{expected}")]
    LinesNotFound {
        path: String,
        expected: String,
        line: usize,
    },
    #[error("{action} {path}: {source}")]
    File {
        action: &'static str,
        path: String,
        source: VfsError,
    },
}

/// What a successful patch did, per path as written in the patch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PatchSummary {
    pub added: Vec<String>,
    pub modified: Vec<String>,
    pub deleted: Vec<String>,
}

impl PatchSummary {
    /// Codex's success text.
    pub fn report(&self) -> String {
        let mut text = String::from("Success. Updated the following files:\n");
        for (mark, paths) in [
            ("A", &self.added),
            ("M", &self.modified),
            ("D", &self.deleted),
        ] {
            for path in paths {
                text.push_str(&format!("{mark} {path}\n"));
            }
        }
        text
    }
}

/// Parses and applies `patch` with relative paths resolved against `cwd`.
pub fn apply(vfs: &mut Vfs, cwd: &str, patch: &str) -> Result<PatchSummary, PatchError> {
    let hunks = parse(patch)?;
    let mut overlay: BTreeMap<String, Option<Vec<u8>>> = BTreeMap::new();
    let mut summary = PatchSummary::default();
    let read =
        |overlay: &BTreeMap<String, Option<Vec<u8>>>, path: &str| -> Result<Vec<u8>, VfsError> {
            match overlay.get(path) {
                Some(Some(data)) => Ok(data.clone()),
                Some(None) => Err(VfsError::NotFound),
                None => vfs.read(path).map(<[u8]>::to_vec),
            }
        };
    for hunk in &hunks {
        match hunk {
            Hunk::Add { path, contents } => {
                let full = vfs::normalize(cwd, path);
                if vfs.is_dir(&full) {
                    return Err(PatchError::File {
                        action: "Failed to add file",
                        path: path.clone(),
                        source: VfsError::IsADirectory,
                    });
                }
                overlay.insert(full, Some(contents.clone().into_bytes()));
                summary.added.push(path.clone());
            }
            Hunk::Delete { path } => {
                let full = vfs::normalize(cwd, path);
                read(&overlay, &full).map_err(|source| PatchError::File {
                    action: "Failed to delete file",
                    path: path.clone(),
                    source,
                })?;
                overlay.insert(full, None);
                summary.deleted.push(path.clone());
            }
            Hunk::Update {
                path,
                move_to,
                chunks,
            } => {
                let full = vfs::normalize(cwd, path);
                let original = read(&overlay, &full).map_err(|source| PatchError::File {
                    action: "Failed to read file to update",
                    path: path.clone(),
                    source,
                })?;
                let text = String::from_utf8_lossy(&original);
                let updated = update(&text, path, chunks)?;
                match move_to {
                    Some(dest) => {
                        overlay.insert(full, None);
                        overlay.insert(vfs::normalize(cwd, dest), Some(updated.into_bytes()));
                        summary.modified.push(dest.clone());
                    }
                    None => {
                        overlay.insert(full, Some(updated.into_bytes()));
                        summary.modified.push(path.clone());
                    }
                }
            }
        }
    }
    commit(vfs, overlay)?;
    Ok(summary)
}

/// Writes the overlay to the tree; on any failure restores what was already written, and
/// removes the directories it created for it.
fn commit(vfs: &mut Vfs, overlay: BTreeMap<String, Option<Vec<u8>>>) -> Result<(), PatchError> {
    let mut undo: Vec<(String, Option<Vec<u8>>)> = Vec::new();
    // Directories that did not exist before, outermost first.
    let mut created: Vec<String> = Vec::new();
    for (path, content) in overlay {
        let before = vfs.read(&path).ok().map(<[u8]>::to_vec);
        let result = match content {
            Some(data) => {
                let dir = vfs::parent(&path);
                let mut missing: Vec<String> =
                    std::iter::successors(Some(dir), |d| (*d != "/").then(|| vfs::parent(d)))
                        .take_while(|d| !vfs.exists(d))
                        .map(str::to_string)
                        .collect();
                missing.reverse();
                created.extend(missing);
                vfs.mkdir_all(dir).and_then(|()| vfs.write(&path, data))
            }
            None if before.is_some() => vfs.remove(&path),
            None => Ok(()),
        };
        if let Err(source) = result {
            roll_back(vfs, undo, &created);
            return Err(PatchError::File {
                action: "Failed to write",
                path: path.trim_start_matches('/').to_string(),
                source,
            });
        }
        undo.push((path, before));
    }
    Ok(())
}

/// Takes back what [`commit`] wrote: first the files that did not exist, then the directories
/// it made (innermost first), and only then the files as they were — a directory made for the
/// patch may stand where one of them was (`Delete File: r.txt`, `Add File: r.txt/a`).
fn roll_back(vfs: &mut Vfs, undo: Vec<(String, Option<Vec<u8>>)>, created: &[String]) {
    for (path, before) in undo.iter().rev() {
        if before.is_none() {
            let _ = vfs.remove(path);
        }
    }
    for dir in created.iter().rev() {
        if vfs.is_dir(dir) {
            let _ = vfs.remove(dir);
        }
    }
    for (path, before) in undo {
        if let Some(data) = before {
            let _ = vfs.write(&path, data);
        }
    }
}

/// Applies an update hunk's chunks to a file's text.
fn update(text: &str, path: &str, chunks: &[Chunk]) -> Result<String, PatchError> {
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut index = 0;
    for chunk in chunks {
        for context in &chunk.contexts {
            match seek::seek(&lines, std::slice::from_ref(context), index, false) {
                Some(found) => index = found + 1,
                None => {
                    return Err(PatchError::ContextNotFound {
                        path: path.into(),
                        context: context.clone(),
                        line: chunk.line_number,
                    });
                }
            }
        }
        if chunk.old_lines.is_empty() {
            let at = if chunk.contexts.is_empty() {
                lines.len()
            } else {
                index
            };
            replacements.push((at, 0, chunk.new_lines.clone()));
            continue;
        }
        let mut pattern: &[String] = &chunk.old_lines;
        let mut new_lines: &[String] = &chunk.new_lines;
        let mut found = seek::seek(&lines, pattern, index, chunk.end_of_file);
        if found.is_none() && pattern.last().is_some_and(String::is_empty) {
            pattern = &pattern[..pattern.len() - 1];
            if new_lines.last().is_some_and(String::is_empty) {
                new_lines = &new_lines[..new_lines.len() - 1];
            }
            found = seek::seek(&lines, pattern, index, chunk.end_of_file);
        }
        match found {
            Some(start) => {
                replacements.push((start, pattern.len(), new_lines.to_vec()));
                index = start + pattern.len();
            }
            None => {
                return Err(PatchError::LinesNotFound {
                    path: path.into(),
                    expected: chunk.old_lines.join("\n"),
                    line: chunk.line_number,
                });
            }
        }
    }
    replacements.sort_by_key(|(start, _, _)| *start);
    for (start, len, new) in replacements.into_iter().rev() {
        lines.splice(start..start + len, new);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}
