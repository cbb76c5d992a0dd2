//! The model-facing tools, with Codex's names and argument names: `shell`, `exec_command`,
//! `apply_patch` (JSON and freeform), `read_file`, `list_dir`, `grep_files`, `update_plan`.
//! [`specs`] holds their Responses-API definitions; this file parses arguments and runs them.
//! Bad arguments come back as an error text the model can act on, never a panic.

mod specs;

use serde::{Deserialize, Serialize};

pub use specs::{ApplyPatchForm, tool_specs};

use crate::changes::ChangeSet;
use crate::limits::truncate_middle;
pub use crate::plan::{Plan, PlanStep, StepStatus};
use crate::sandbox::{Sandbox, ShellOutput};
use crate::shell::glob;
use crate::vfs::{self, EntryKind};

/// The result of one tool call, as handed back to the model and to the UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolResult {
    /// The text for the model (truncated to `Limits::max_output_bytes`).
    pub output: String,
    pub success: bool,
    pub changes: ChangeSet,
}

#[derive(Deserialize)]
struct ShellArgs {
    command: Vec<String>,
    workdir: Option<String>,
    timeout_ms: Option<u64>,
}

#[derive(Deserialize)]
struct ExecCommandArgs {
    cmd: String,
    workdir: Option<String>,
}

#[derive(Deserialize)]
struct ApplyPatchArgs {
    input: String,
}

#[derive(Deserialize)]
struct ReadFileArgs {
    file_path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

#[derive(Deserialize)]
struct ListDirArgs {
    dir_path: String,
    offset: Option<usize>,
    limit: Option<usize>,
    depth: Option<usize>,
}

#[derive(Deserialize)]
struct GrepFilesArgs {
    pattern: String,
    include: Option<String>,
    path: Option<String>,
    limit: Option<usize>,
}

/// Quotes one argument for the shell (single quotes, `'\''` for embedded quotes).
pub fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        return arg.to_string();
    }
    format!("'{}'", arg.replace('\'', "'\\''"))
}

/// `["bash", "-lc", "script"]` → the script; any other argv → a quoted command line.
fn command_line(argv: &[String]) -> String {
    match argv {
        [shell, flag, script]
            if ["bash", "sh", "zsh", "/bin/bash", "/bin/sh"].contains(&shell.as_str())
                && (flag == "-c" || flag == "-lc") =>
        {
            script.clone()
        }
        _ => argv
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

fn error(message: String) -> ToolResult {
    ToolResult {
        output: message,
        success: false,
        changes: ChangeSet::default(),
    }
}

fn parse<'a, T: Deserialize<'a>>(arguments: &'a str) -> Result<T, ToolResult> {
    serde_json::from_str(arguments)
        .map_err(|e| error(format!("failed to parse function arguments: {e}")))
}

/// The shell tools' output format: exit code, then stdout and stderr.
fn shell_result(output: ShellOutput, max: usize) -> ToolResult {
    let text = format!(
        "Exit code: {}\nOutput:\n{}{}",
        output.exit_code, output.stdout, output.stderr
    );
    ToolResult {
        output: truncate_middle(&text, max),
        success: output.exit_code == 0,
        changes: output.changes,
    }
}

impl Sandbox {
    /// The Responses-API definitions of the tools, with apply_patch in the chosen form.
    pub fn tool_specs(&self, form: ApplyPatchForm) -> Vec<serde_json::Value> {
        tool_specs(form)
    }

    /// Runs a function tool call: `arguments` is the raw JSON string the model sent.
    pub async fn call_tool(&mut self, name: &str, arguments: &str) -> ToolResult {
        let max = self.state.limits.max_output_bytes;
        let mut result = match self.dispatch(name, arguments).await {
            Ok(result) | Err(result) => result,
        };
        result.output = truncate_middle(&result.output, max);
        result
    }

    /// Runs a custom (freeform) tool call: `input` is the raw text, e.g. a patch.
    pub async fn call_custom_tool(&mut self, name: &str, input: &str) -> ToolResult {
        match name {
            "apply_patch" => self.apply_patch(input),
            _ => error(format!("unsupported custom tool call: {name}")),
        }
    }

    async fn dispatch(&mut self, name: &str, arguments: &str) -> Result<ToolResult, ToolResult> {
        let arguments = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        Ok(match name {
            "shell" | "container.exec" | "local_shell" => {
                let args: ShellArgs = parse(arguments)?;
                if args.command.is_empty() {
                    return Err(error("command must not be empty".into()));
                }
                self.isolated(
                    &command_line(&args.command),
                    args.workdir.as_deref(),
                    args.timeout_ms,
                )
                .await?
            }
            "exec_command" => {
                let args: ExecCommandArgs = parse(arguments)?;
                self.isolated(&args.cmd, args.workdir.as_deref(), None)
                    .await?
            }
            "apply_patch" => match serde_json::from_str::<ApplyPatchArgs>(arguments) {
                Ok(args) => self.apply_patch(&args.input),
                Err(_) if arguments.trim_start().starts_with("*** Begin Patch") => {
                    self.apply_patch(arguments)
                }
                Err(e) => return Err(error(format!("failed to parse function arguments: {e}"))),
            },
            "read_file" => self.read_file(parse(arguments)?),
            "list_dir" => self.list_dir(parse(arguments)?),
            "grep_files" => self.grep_files(parse(arguments)?),
            "update_plan" => {
                self.plan = parse(arguments)?;
                ToolResult {
                    output: "Plan updated".into(),
                    success: true,
                    changes: ChangeSet::default(),
                }
            }
            _ => return Err(error(format!("unsupported call: {name}"))),
        })
    }

    /// Runs a command line from the session's directory (or `workdir`), environment and
    /// functions, then restores them: tool calls do not leak `cd`, `export` or definitions into
    /// the next call.
    async fn isolated(
        &mut self,
        line: &str,
        workdir: Option<&str>,
        timeout_ms: Option<u64>,
    ) -> Result<ToolResult, ToolResult> {
        let saved = self.state.save();
        if let Some(dir) = workdir {
            let path = vfs::normalize(&self.state.cwd, dir);
            if !self.state.vfs.is_dir(&path) {
                return Err(error(format!("workdir '{dir}' is not a directory")));
            }
            self.state.cwd = path;
        }
        let budget = timeout_ms.map_or(self.state.limits.wall_clock_ms, |t| {
            t.min(self.state.limits.wall_clock_ms)
        });
        let output = self.execute(line, budget).await;
        self.state.restore(saved);
        Ok(shell_result(output, self.state.limits.max_output_bytes))
    }

    fn apply_patch(&mut self, patch: &str) -> ToolResult {
        self.state
            .vfs
            .set_byte_limit(self.state.limits.max_fs_bytes);
        self.state.vfs.take_changes();
        let result = crate::patch::apply(&mut self.state.vfs, &self.state.cwd, patch);
        let changes = self.state.vfs.take_changes();
        match result {
            Ok(summary) => ToolResult {
                output: summary.report(),
                success: true,
                changes,
            },
            Err(e) => ToolResult {
                output: e.to_string(),
                success: false,
                changes,
            },
        }
    }

    fn read_file(&self, args: ReadFileArgs) -> ToolResult {
        let path = vfs::normalize(&self.state.cwd, &args.file_path);
        let offset = args.offset.unwrap_or(1);
        let limit = args.limit.unwrap_or(2000);
        if offset == 0 || limit == 0 {
            return error("offset and limit must be 1 or greater".into());
        }
        let text = match self.state.vfs.read(&path) {
            Ok(data) => String::from_utf8_lossy(data).into_owned(),
            Err(e) => return error(format!("failed to read file {}: {e}", args.file_path)),
        };
        let lines: Vec<&str> = text.lines().collect();
        if offset > lines.len().max(1) {
            return error(format!(
                "offset {offset} exceeds file length ({} lines)",
                lines.len()
            ));
        }
        let output = lines
            .iter()
            .enumerate()
            .skip(offset - 1)
            .take(limit)
            .map(|(i, line)| format!("L{}: {line}", i + 1))
            .collect::<Vec<_>>()
            .join("\n");
        ToolResult {
            output,
            success: true,
            changes: ChangeSet::default(),
        }
    }

    fn list_dir(&self, args: ListDirArgs) -> ToolResult {
        let path = vfs::normalize(&self.state.cwd, &args.dir_path);
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(25);
        let depth = args.depth.unwrap_or(2).max(1);
        if !self.state.vfs.is_dir(&path) {
            return error(format!(
                "failed to read directory {}: Not a directory or missing",
                args.dir_path
            ));
        }
        let mut entries = Vec::new();
        collect_entries(self, &path, 0, depth, &mut entries);
        let total = entries.len();
        let shown: Vec<String> = entries.into_iter().skip(offset - 1).take(limit).collect();
        let mut output = format!("Absolute path: {path}\n{}", shown.join("\n"));
        if offset - 1 + shown.len() < total {
            output.push_str(&format!("\nMore than {limit} entries found"));
        }
        ToolResult {
            output,
            success: true,
            changes: ChangeSet::default(),
        }
    }

    fn grep_files(&self, args: GrepFilesArgs) -> ToolResult {
        let regex = match regex::RegexBuilder::new(&args.pattern).build() {
            Ok(r) => r,
            Err(e) => return error(format!("invalid pattern: {e}")),
        };
        let root = vfs::normalize(&self.state.cwd, args.path.as_deref().unwrap_or("."));
        let limit = args.limit.unwrap_or(100).clamp(1, 2000);
        let matches: Vec<String> = self
            .state
            .vfs
            .descendants(&root)
            .into_iter()
            .filter(|(path, kind)| {
                *kind == EntryKind::File && !path.split('/').any(|c| c.starts_with('.'))
            })
            .filter(|(path, _)| {
                args.include
                    .as_deref()
                    .is_none_or(|g| include_matches(g, vfs::file_name(path)))
            })
            .filter(|(path, _)| {
                self.state
                    .vfs
                    .read(path)
                    .is_ok_and(|data| regex.is_match(&String::from_utf8_lossy(data)))
            })
            .map(|(path, _)| path)
            .take(limit)
            .collect();
        if matches.is_empty() {
            return ToolResult {
                output: "No matches found.".into(),
                success: false,
                changes: ChangeSet::default(),
            };
        }
        ToolResult {
            output: matches.join("\n"),
            success: true,
            changes: ChangeSet::default(),
        }
    }
}

/// `*.{ts,tsx}`-style include globs: braces expand to alternatives.
fn include_matches(pattern: &str, name: &str) -> bool {
    if let (Some(open), Some(close)) = (pattern.find('{'), pattern.find('}'))
        && open < close
    {
        return pattern[open + 1..close].split(',').any(|alt| {
            include_matches(
                &format!("{}{alt}{}", &pattern[..open], &pattern[close + 1..]),
                name,
            )
        });
    }
    glob::matches(pattern, name)
}

fn collect_entries(
    sandbox: &Sandbox,
    dir: &str,
    level: usize,
    depth: usize,
    out: &mut Vec<String>,
) {
    for (name, kind) in sandbox.state.vfs.list(dir).unwrap_or_default() {
        let indent = "  ".repeat(level);
        match kind {
            EntryKind::Dir => {
                out.push(format!("{indent}{name}/"));
                if level + 1 < depth {
                    collect_entries(sandbox, &vfs::join(dir, &name), level + 1, depth, out);
                }
            }
            EntryKind::File => out.push(format!("{indent}{name}")),
        }
    }
}
