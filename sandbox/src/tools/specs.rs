//! The tools' Responses-API definitions. Names, argument names and descriptions follow the
//! Codex CLI so a model trained on Codex transcripts calls them without surprises.

use serde_json::{Value, json};

/// Which form of `apply_patch` to offer: a JSON function taking `{input}`, or a freeform
/// custom tool whose input is the raw patch, constrained by a Lark grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyPatchForm {
    Function,
    Freeform,
}

/// The Lark grammar of the Codex patch format, for the freeform tool.
pub const APPLY_PATCH_GRAMMAR: &str = r#"start: begin_patch hunk+ end_patch
begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

hunk: add_hunk | delete_hunk | update_hunk
add_hunk: "*** Add File: " filename LF add_line+
delete_hunk: "*** Delete File: " filename LF
update_hunk: "*** Update File: " filename LF change_move? change?

filename: /(.+)/
add_line: "+" /(.*)/ LF -> line

change_move: "*** Move to: " filename LF
change: (change_context | change_line)+ eof_line?
change_context: ("@@" | "@@ " /(.+)/) LF
change_line: ("+" | "-" | " ") /(.*)/ LF
eof_line: "*** End of File" LF

%import common.LF
"#;

const APPLY_PATCH_DESCRIPTION: &str = r#"Use the `apply_patch` tool to edit files.
Your patch language is a stripped-down, file-oriented diff format designed to be easy to parse and safe to apply. You can think of it as a high-level envelope:

*** Begin Patch
[ one or more file sections ]
*** End Patch

Within that envelope, you get a sequence of file operations.
You MUST include a header to specify the action you are taking.
Each operation starts with one of three headers:

*** Add File: <path> - create a new file. Every following line is a + line (the initial contents).
*** Delete File: <path> - remove an existing file. Nothing follows.
*** Update File: <path> - patch an existing file in place (optionally with a rename).

May be immediately followed by *** Move to: <new path> if you want to rename the file.
Then one or more "hunks", each introduced by @@ (optionally followed by a hunk header).
Within a hunk each line starts with: " " (context), "-" (remove) or "+" (add).

Show 3 lines of context above and below each change. If that is not enough to locate the change uniquely, use one or more @@ statements naming the class or function, e.g.
@@ class BaseClass
@@     def method():

File references must be relative, NEVER ABSOLUTE."#;

fn function(name: &str, description: &str, parameters: &str) -> Value {
    json!({
        "type": "function",
        "name": name,
        "description": description,
        "strict": false,
        "parameters": schema(parameters),
    })
}

/// A parameter schema, written as JSON text: parsing it at run time takes far less wasm than
/// the `json!` macro's code building the same value field by field.
fn schema(text: &str) -> Value {
    serde_json::from_str(text).expect("a tool's parameter schema is valid JSON")
}

/// Every tool definition, with `apply_patch` in the requested form.
pub fn tool_specs(form: ApplyPatchForm) -> Vec<Value> {
    let apply_patch = match form {
        ApplyPatchForm::Function => function(
            "apply_patch",
            APPLY_PATCH_DESCRIPTION,
            r#"{
                "type": "object",
                "properties": {
                    "input": {"type": "string", "description": "The entire contents of the apply_patch command"}
                },
                "required": ["input"],
                "additionalProperties": false
            }"#,
        ),
        ApplyPatchForm::Freeform => json!({
            "type": "custom",
            "name": "apply_patch",
            "description": "Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.",
            "format": {"type": "grammar", "syntax": "lark", "definition": APPLY_PATCH_GRAMMAR},
        }),
    };
    vec![
        function(
            "shell",
            "Runs a shell command and returns its output. The command is an argv array, typically [\"bash\", \"-lc\", \"<script>\"]. Output is returned as `Exit code: N` followed by `Output:` and the command's stdout then stderr.",
            r#"{
                "type": "object",
                "properties": {
                    "command": {"type": "array", "items": {"type": "string"}, "description": "The command to execute"},
                    "workdir": {"type": "string", "description": "The working directory to execute the command in"},
                    "timeout_ms": {"type": "number", "description": "The timeout for the command in milliseconds"}
                },
                "required": ["command"],
                "additionalProperties": false
            }"#,
        ),
        function(
            "exec_command",
            "Runs a command line in the shell and returns its exit code and output.",
            r#"{
                "type": "object",
                "properties": {
                    "cmd": {"type": "string", "description": "Shell command to execute."},
                    "workdir": {"type": "string", "description": "Optional working directory to run the command in; defaults to the session directory."}
                },
                "required": ["cmd"],
                "additionalProperties": false
            }"#,
        ),
        apply_patch,
        function(
            "read_file",
            "Reads a local file with 1-indexed line numbers, returning lines as `L<n>: <text>`.",
            r#"{
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "Absolute path to the file"},
                    "offset": {"type": "number", "description": "The line number to start reading from. Must be 1 or greater."},
                    "limit": {"type": "number", "description": "The maximum number of lines to return."}
                },
                "required": ["file_path"],
                "additionalProperties": false
            }"#,
        ),
        function(
            "list_dir",
            "Lists entries in a local directory with 1-indexed entry numbers and simple type labels (directories end with /).",
            r#"{
                "type": "object",
                "properties": {
                    "dir_path": {"type": "string", "description": "Absolute path to the directory to list."},
                    "offset": {"type": "number", "description": "The entry number to start listing from. Must be 1 or greater."},
                    "limit": {"type": "number", "description": "The maximum number of entries to return."},
                    "depth": {"type": "number", "description": "The maximum directory depth to traverse. Must be 1 or greater."}
                },
                "required": ["dir_path"],
                "additionalProperties": false
            }"#,
        ),
        function(
            "grep_files",
            "Finds files whose contents match the pattern and lists them, one path per line.",
            r#"{
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Regular expression pattern to search for."},
                    "include": {"type": "string", "description": "Optional glob that limits which files are searched (e.g. \"*.rs\" or \"*.{ts,tsx}\")."},
                    "path": {"type": "string", "description": "Directory or file path to search. Defaults to the session's working directory."},
                    "limit": {"type": "number", "description": "Maximum number of file paths to return (defaults to 100)."}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }"#,
        ),
        function(
            "update_plan",
            "Updates the task plan. Provide an optional explanation and a list of plan items, each with a step and status. At most one step can be in_progress at a time.",
            r#"{
                "type": "object",
                "properties": {
                    "explanation": {"type": "string"},
                    "plan": {
                        "type": "array",
                        "description": "The list of steps",
                        "items": {
                            "type": "object",
                            "properties": {
                                "step": {"type": "string"},
                                "status": {"type": "string", "description": "One of: pending, in_progress, completed", "enum": ["pending", "in_progress", "completed"]}
                            },
                            "required": ["step", "status"],
                            "additionalProperties": false
                        }
                    }
                },
                "required": ["plan"],
                "additionalProperties": false
            }"#,
        ),
    ]
}
