//! Redirections: `<`, `>`, `>>`, `&>`, `2>&1`, heredocs and here-strings set up a command's
//! stdin and the sinks of its stdout and stderr, and [`Shell::route`] delivers its output
//! there once it ran (commands run on buffers, so a file receives the whole output at once).

use super::Input;
use super::ast::{Redirect, RedirectOp};
use super::exec::{Shell, Streams, report};
use crate::vfs;

/// Where fd 1 or fd 2 of a command goes.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Sink {
    Out,
    Err,
    File(String),
    Null,
}

impl Shell<'_> {
    /// Applies redirections in order: returns the replacement stdin, if any, and the sinks of
    /// fd 1 and fd 2. Files named by `>` are truncated here, before the command runs.
    pub(super) async fn redirects(
        &mut self,
        redirects: &[Redirect],
        io: &mut Streams,
    ) -> Result<(Option<Input>, [Sink; 2]), String> {
        let mut sinks = [Sink::Out, Sink::Err];
        let mut stdin = None;
        for redirect in redirects {
            let fd = redirect.fd as usize;
            match &redirect.op {
                RedirectOp::Read(word) => {
                    let target = self
                        .expand_single(word, io)
                        .await
                        .map_err(|e| e.to_string())?;
                    if target == "/dev/null" {
                        stdin = Some(Input::default());
                        continue;
                    }
                    let path = vfs::normalize(&self.state.cwd, &target);
                    match self.state.vfs.read(&path) {
                        Ok(data) => stdin = Some(Input::new(data.to_vec())),
                        Err(e) => return Err(format!("{target}: {e}")),
                    }
                }
                RedirectOp::Write(word)
                | RedirectOp::Append(word)
                | RedirectOp::WriteBoth { target: word, .. } => {
                    let target = self
                        .expand_single(word, io)
                        .await
                        .map_err(|e| e.to_string())?;
                    let truncate = matches!(
                        redirect.op,
                        RedirectOp::Write(_) | RedirectOp::WriteBoth { append: false, .. }
                    );
                    let sink = match target.as_str() {
                        "/dev/null" => Sink::Null,
                        "/dev/stdout" => Sink::Out,
                        "/dev/stderr" => Sink::Err,
                        "" => return Err(": No such file or directory".to_string()),
                        _ => {
                            let path = vfs::normalize(&self.state.cwd, &target);
                            let result = if truncate || !self.state.vfs.exists(&path) {
                                self.state.vfs.write(&path, Vec::new())
                            } else if self.state.vfs.is_dir(&path) {
                                Err(vfs::VfsError::IsADirectory)
                            } else {
                                Ok(())
                            };
                            result.map_err(|e| format!("{target}: {e}"))?;
                            Sink::File(path)
                        }
                    };
                    if let RedirectOp::WriteBoth { .. } = redirect.op {
                        sinks = [sink.clone(), sink];
                    } else if (1..=2).contains(&fd) {
                        sinks[fd - 1] = sink;
                    }
                }
                RedirectOp::Duplicate(word) => {
                    let target = self
                        .expand_single(word, io)
                        .await
                        .map_err(|e| e.to_string())?;
                    if fd == 0 || fd > 2 {
                        continue;
                    }
                    sinks[fd - 1] = match target.as_str() {
                        "1" => sinks[0].clone(),
                        "2" => sinks[1].clone(),
                        "-" => Sink::Null,
                        other => return Err(format!("{other}: Bad file descriptor")),
                    };
                }
                RedirectOp::HereDoc { body, expand } => {
                    let text = if *expand {
                        let parts = super::parse::expandable_text(body);
                        self.expand_quoted_parts(&parts, io)
                            .await
                            .map_err(|e| e.to_string())?
                    } else {
                        body.clone()
                    };
                    stdin = Some(Input::new(text.into_bytes()));
                }
                RedirectOp::HereString(word) => {
                    let mut text = self
                        .expand_single(word, io)
                        .await
                        .map_err(|e| e.to_string())?;
                    text.push('\n');
                    stdin = Some(Input::new(text.into_bytes()));
                }
            }
        }
        Ok((stdin, sinks))
    }

    /// Delivers a command's output to its sinks; false when a file write failed (the command
    /// then fails, as a write error does in bash).
    pub(super) fn route(
        &mut self,
        sinks: &[Sink; 2],
        out: Vec<u8>,
        err: Vec<u8>,
        io: &mut Streams,
    ) -> bool {
        let mut delivered = true;
        for (sink, data) in sinks.iter().zip([out, err]) {
            if data.is_empty() {
                continue;
            }
            match sink {
                Sink::Out | Sink::Err
                    if io.out.len() + io.err.len() + data.len()
                        > self.state.limits.max_pipe_bytes =>
                {
                    self.pipe_overflow();
                }
                Sink::Out => io.out.extend_from_slice(&data),
                Sink::Err => io.err.extend_from_slice(&data),
                Sink::Null => {}
                Sink::File(path) => {
                    if let Err(e) = self.state.vfs.append(path, &data) {
                        report(&mut io.err, format!("{path}: write error: {e}"));
                        delivered = false;
                    }
                }
            }
        }
        delivered
    }
}
