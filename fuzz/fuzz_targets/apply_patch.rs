//! `apply_patch`: the parser of Codex's patch format, then applying the parsed patch to a small
//! VFS built so that most patches find what they look for — each file a patch updates or deletes
//! holds the patch's own context and removed lines, with filler around them (a few files are
//! left out, so "missing file" paths run too).
//!
//! Checks: neither step panics; a patch that fails leaves the tree exactly as it was (files and
//! directories: `apply` is atomic); a patch that succeeds leaves every file it added, updated or
//! moved in the tree and every file it deleted gone, unless a later hunk wrote it again (or wrote
//! beneath it: then it is a directory).

#![no_main]

use std::collections::BTreeSet;

use libfuzzer_sys::fuzz_target;
use tether_sandbox::patch::{Hunk, apply, parse};
use tether_sandbox::vfs::{self, Vfs};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(hunks) = parse(&text) else {
        return;
    };
    let mut rng = tether_fuzz::Rng::seeded_by(data);
    let mut vfs = Vfs::from_files([
        ("/a.txt", &b"one\ntwo\nthree\n"[..]),
        ("/src/lib.rs", b"fn main() {\n    println!(\"hi\");\n}\n"),
    ]);
    for hunk in &hunks {
        let (path, content) = match hunk {
            Hunk::Add { .. } => continue,
            Hunk::Delete { path } => (path, "gone\n".to_string()),
            Hunk::Update { path, chunks, .. } => {
                let mut content = String::new();
                for chunk in chunks {
                    if rng.below(2) == 0 {
                        content.push_str("filler\n");
                    }
                    for line in chunk.contexts.iter().chain(&chunk.old_lines) {
                        content.push_str(line);
                        content.push('\n');
                    }
                }
                (path, content)
            }
        };
        if rng.below(8) != 0 {
            let full = vfs::normalize("/", path);
            let _ = vfs.mkdir_all(vfs::parent(&full));
            let _ = vfs.append(&full, content.as_bytes());
        }
    }
    vfs.take_changes();
    let before = snapshot(&vfs);
    match apply(&mut vfs, "/", &text) {
        Err(error) => {
            assert!(
                snapshot(&vfs) == before,
                "a failed patch changed the tree ({error})"
            );
            let _ = error.to_string();
        }
        Ok(summary) => {
            let _ = summary.report();
            let mut present = BTreeSet::new();
            let mut absent = BTreeSet::new();
            for hunk in &hunks {
                let (gone, written) = match hunk {
                    Hunk::Add { path, .. } => (None, Some(path)),
                    Hunk::Delete { path } => (Some(path), None),
                    Hunk::Update {
                        path,
                        move_to: Some(dest),
                        ..
                    } => (Some(path), Some(dest)),
                    Hunk::Update {
                        path,
                        move_to: None,
                        ..
                    } => (None, Some(path)),
                };
                if let Some(path) = gone {
                    let full = vfs::normalize("/", path);
                    present.remove(&full);
                    absent.insert(full);
                }
                if let Some(path) = written {
                    let full = vfs::normalize("/", path);
                    absent.remove(&full);
                    present.insert(full);
                }
            }
            for path in &present {
                assert!(vfs.is_file(path), "{path} should be a file after the patch");
            }
            for path in &absent {
                // A later hunk that wrote beneath a deleted file's path (`Delete File: r.txt`,
                // then `Add File: r.txt/r.txt`) made that path a directory, as on a real disk.
                let prefix = format!("{path}/");
                if present.iter().any(|written| written.starts_with(&prefix)) {
                    assert!(
                        vfs.is_dir(path),
                        "{path} should be a directory after the patch"
                    );
                } else {
                    assert!(!vfs.exists(path), "{path} should be gone after the patch");
                }
            }
        }
    }
});

type Snapshot = (Vec<(String, Vec<u8>)>, Vec<String>);

fn snapshot(vfs: &Vfs) -> Snapshot {
    (
        vfs.files()
            .map(|(path, data)| (path.to_string(), data.to_vec()))
            .collect(),
        vfs.dirs().map(str::to_string).collect(),
    )
}
