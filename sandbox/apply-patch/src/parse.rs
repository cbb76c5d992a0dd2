//! Parsing the Codex patch format:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        then lines starting with `+`
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path     (optional)
//! @@ context line           (optional on the first chunk; several in a row narrow the search)
//!  context / -removed / +added lines
//! *** End of File           (optional: the chunk must match at the end of the file)
//! *** End Patch
//! ```
//!
//! Error wording and leniency follow Codex's `apply-patch` crate: markers are compared after
//! trimming, a patch wrapped in a heredoc (`<<'EOF'` … `EOF`) is unwrapped, blank lines between
//! chunks are skipped, and an empty line inside a chunk is an empty context line.

use super::PatchError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hunk {
    Add {
        path: String,
        contents: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// `@@ …` lines, each sought in order after the previous one.
    pub contexts: Vec<String>,
    pub old_lines: Vec<String>,
    pub new_lines: Vec<String>,
    pub end_of_file: bool,
    /// 1-based line of the chunk's first line in the patch, for error messages.
    pub line_number: usize,
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

pub fn parse(patch: &str) -> Result<Vec<Hunk>, PatchError> {
    let lines: Vec<&str> = patch.trim().lines().collect();
    let lines = unwrap_heredoc(&lines);
    match lines.first() {
        Some(first) if first.trim() == BEGIN => {}
        _ => {
            return Err(PatchError::Invalid(
                "The first line of the patch must be '*** Begin Patch'".into(),
            ));
        }
    }
    if lines.len() < 2 || lines[lines.len() - 1].trim() != END {
        return Err(PatchError::Invalid(
            "The last line of the patch must be '*** End Patch'".into(),
        ));
    }
    let body = &lines[1..lines.len() - 1];
    let mut hunks = Vec::new();
    let mut index = 0;
    while index < body.len() {
        let line_number = index + 2;
        let (hunk, used) = hunk(&body[index..], line_number)?;
        hunks.push(hunk);
        index += used;
    }
    Ok(hunks)
}

/// Strips a `<<EOF` / `<<'EOF'` / `<<"EOF"` … `EOF` wrapper, as models sometimes send one.
fn unwrap_heredoc<'a>(lines: &'a [&'a str]) -> &'a [&'a str] {
    if lines.len() >= 4
        && ["<<EOF", "<<'EOF'", "<<\"EOF\""].contains(&lines[0].trim())
        && lines[lines.len() - 1].trim() == "EOF"
    {
        &lines[1..lines.len() - 1]
    } else {
        lines
    }
}

fn relative_path(path: &str, line_number: usize) -> Result<String, PatchError> {
    let path = path.trim();
    if path.is_empty() {
        return Err(PatchError::Hunk {
            line: line_number,
            message: "missing file path".into(),
        });
    }
    if path.starts_with('/') || path.starts_with('\\') || path.chars().nth(1) == Some(':') {
        return Err(PatchError::Hunk {
            line: line_number,
            message: format!("path '{path}' must be relative, not absolute"),
        });
    }
    Ok(path.to_string())
}

fn hunk(lines: &[&str], line_number: usize) -> Result<(Hunk, usize), PatchError> {
    let first = lines[0].trim();
    if let Some(path) = first.strip_prefix(ADD) {
        let path = relative_path(path, line_number)?;
        let mut contents = String::new();
        let mut used = 1;
        for line in &lines[1..] {
            let Some(added) = line.strip_prefix('+') else {
                break;
            };
            contents.push_str(added);
            contents.push('\n');
            used += 1;
        }
        return Ok((Hunk::Add { path, contents }, used));
    }
    if let Some(path) = first.strip_prefix(DELETE) {
        let path = relative_path(path, line_number)?;
        return Ok((Hunk::Delete { path }, 1));
    }
    if let Some(path) = first.strip_prefix(UPDATE) {
        let path = relative_path(path, line_number)?;
        let mut used = 1;
        let move_to = match lines.get(1).and_then(|l| l.trim().strip_prefix(MOVE)) {
            Some(dest) => {
                used += 1;
                Some(relative_path(dest, line_number + 1)?)
            }
            None => None,
        };
        let mut chunks = Vec::new();
        while used < lines.len() {
            let line = lines[used];
            if line.trim().is_empty() {
                used += 1;
                continue;
            }
            if line.starts_with("***") {
                break;
            }
            let (chunk, chunk_used) = chunk(&lines[used..], line_number + used, chunks.is_empty())?;
            chunks.push(chunk);
            used += chunk_used;
        }
        if chunks.is_empty() {
            return Err(PatchError::Hunk {
                line: line_number,
                message: format!("Update file hunk for path '{path}' is empty"),
            });
        }
        return Ok((
            Hunk::Update {
                path,
                move_to,
                chunks,
            },
            used,
        ));
    }
    Err(PatchError::Hunk {
        line: line_number,
        message: format!(
            "'{first}' is not a valid hunk header. Valid hunk headers: '*** Add File: {{path}}', '*** Delete File: {{path}}', '*** Update File: {{path}}'"
        ),
    })
}

fn chunk(lines: &[&str], line_number: usize, first: bool) -> Result<(Chunk, usize), PatchError> {
    let mut contexts = Vec::new();
    let mut start = 0;
    while let Some(line) = lines.get(start) {
        if *line == "@@" || line.trim_end() == "@@" {
            start += 1;
        } else if let Some(context) = line.strip_prefix("@@ ") {
            contexts.push(context.to_string());
            start += 1;
        } else {
            break;
        }
    }
    if start == 0 && !first {
        return Err(PatchError::Hunk {
            line: line_number,
            message: format!(
                "Expected update hunk to start with a @@ context marker, got: '{}'",
                lines[0]
            ),
        });
    }
    let mut chunk = Chunk {
        contexts,
        old_lines: Vec::new(),
        new_lines: Vec::new(),
        end_of_file: false,
        line_number,
    };
    let mut parsed = 0;
    for line in &lines[start..] {
        if line.trim() == END_OF_FILE {
            if parsed == 0 {
                break;
            }
            chunk.end_of_file = true;
            parsed += 1;
            break;
        }
        match line.chars().next() {
            None => {
                chunk.old_lines.push(String::new());
                chunk.new_lines.push(String::new());
            }
            Some(' ') => {
                chunk.old_lines.push(line[1..].to_string());
                chunk.new_lines.push(line[1..].to_string());
            }
            Some('+') => chunk.new_lines.push(line[1..].to_string()),
            Some('-') => chunk.old_lines.push(line[1..].to_string()),
            _ => {
                if parsed == 0 {
                    return Err(PatchError::Hunk {
                        line: line_number + start,
                        message: format!(
                            "Unexpected line found in update hunk: '{line}'. Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)"
                        ),
                    });
                }
                break;
            }
        }
        parsed += 1;
    }
    if parsed == 0 {
        return Err(PatchError::Hunk {
            line: line_number + start,
            message: "Update hunk does not contain any lines".into(),
        });
    }
    Ok((chunk, start + parsed))
}
