//! Process substitution over buffered pipelines. `<(LIST)` runs LIST in a subshell first and
//! stands for a file holding its output; `>(LIST)` stands for an empty file that the command
//! writes, and LIST runs on what it wrote once the command is done, its output going where
//! the command's own output goes. The files are `/dev/fd/63`, `/dev/fd/62`, … in the VFS (the
//! names bash prints), made for one command and removed after it, so they never show in a
//! change set; they count against the file-system limit while they exist.

use super::exec::{Shell, Streams};
use super::expand::ExpandError;
use super::parse;

/// A file standing for a process substitution until its command has run.
pub(crate) struct Substituted {
    path: String,
    /// `>(LIST)`: the list to run on the file's content afterwards.
    reader: Option<String>,
    /// Directories made to hold the file (`/dev`, `/dev/fd`), removed with it.
    made_dirs: Vec<String>,
}

/// Bash numbers them down from 63; past this many at once a command is refused.
const MAX_OPEN: usize = 32;

impl Shell<'_> {
    /// Expands `<(text)` (`output` false) or `>(text)` to the path of its file.
    pub(crate) async fn process_substitution(
        &mut self,
        text: &str,
        output: bool,
        io: &mut Streams,
    ) -> Result<String, ExpandError> {
        if self.substituted.len() >= MAX_OPEN {
            return Err(ExpandError::Unsupported(format!(
                "more than {MAX_OPEN} process substitutions in one command"
            )));
        }
        let path = format!("/dev/fd/{}", 63 - self.substituted.len());
        let content = if output {
            Vec::new()
        } else {
            let script = parse::parse(text).map_err(|e| ExpandError::Syntax(e.to_string()))?;
            let mut inner = Streams::default();
            self.subshell(&script, &mut inner).await;
            io.err.append(&mut inner.err);
            inner.out
        };
        let mut made_dirs = Vec::new();
        for dir in ["/dev", "/dev/fd"] {
            if !self.state.vfs.is_dir(dir) {
                self.state
                    .vfs
                    .mkdir(dir)
                    .map_err(|e| ExpandError::File(format!("{dir}: {e}")))?;
                made_dirs.push(dir.to_string());
            }
        }
        let written = self.state.vfs.write(&path, content);
        self.substituted.push(Substituted {
            path: path.clone(),
            reader: output.then(|| text.to_string()),
            made_dirs,
        });
        written.map_err(|e| ExpandError::File(format!("{path}: {e}")))?;
        Ok(path)
    }

    /// Ends the process substitutions made since `mark`: runs each `>(LIST)` on what was
    /// written to its file, then removes the files.
    pub(crate) async fn close_substitutions(&mut self, mark: usize, io: &mut Streams) {
        while self.substituted.len() > mark {
            let Some(done) = self.substituted.pop() else {
                break;
            };
            let written = self
                .state
                .vfs
                .read(&done.path)
                .map(<[u8]>::to_vec)
                .unwrap_or_default();
            let _ = self.state.vfs.remove(&done.path);
            for dir in done.made_dirs.iter().rev() {
                if self
                    .state
                    .vfs
                    .list(dir)
                    .is_ok_and(|entries| entries.is_empty())
                {
                    let _ = self.state.vfs.remove(dir);
                }
            }
            let Some(text) = done.reader else {
                continue;
            };
            if self.abort.is_some() {
                continue;
            }
            match parse::parse(&text) {
                Ok(script) => {
                    let mut inner = Streams {
                        stdin: super::Input::new(written),
                        ..Streams::default()
                    };
                    self.subshell(&script, &mut inner).await;
                    io.out.append(&mut inner.out);
                    io.err.append(&mut inner.err);
                }
                Err(e) => super::exec::report(&mut io.err, e),
            }
        }
    }
}
