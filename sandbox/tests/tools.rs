//! The model-facing tools: schemas, argument handling (including bad arguments), output
//! formats, isolation between calls, change sets and truncation.

#![cfg(not(target_arch = "wasm32"))]

use serde_json::json;
use tether_sandbox::native::block_on;
use tether_sandbox::{ApplyPatchForm, ChangeKind, Sandbox, StepStatus, Vfs, tool_specs};

fn sandbox() -> Sandbox {
    Sandbox::new(Vfs::from_files([
        ("src/app.js", b"const a = 1;\nconsole.log(a);\n".as_slice()),
        ("src/util.ts", b"export const b = 2;\n"),
        ("README.md", b"# readme\n"),
    ]))
}

fn call(sandbox: &mut Sandbox, name: &str, args: serde_json::Value) -> (String, bool) {
    let result = block_on(sandbox.call_tool(name, &args.to_string()));
    (result.output, result.success)
}

#[test]
fn specs_name_every_tool_in_both_forms() {
    for (form, patch_type) in [
        (ApplyPatchForm::Function, "function"),
        (ApplyPatchForm::Freeform, "custom"),
    ] {
        let specs = tool_specs(form);
        let names: Vec<&str> = specs.iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            [
                "shell",
                "exec_command",
                "apply_patch",
                "read_file",
                "list_dir",
                "grep_files",
                "update_plan"
            ]
        );
        let patch = &specs[2];
        assert_eq!(patch["type"], patch_type);
        for spec in specs.iter().filter(|s| s["type"] == "function") {
            assert_eq!(spec["parameters"]["type"], "object", "{}", spec["name"]);
            assert!(spec["parameters"]["required"].is_array());
        }
    }
    let freeform = &tool_specs(ApplyPatchForm::Freeform)[2];
    assert_eq!(freeform["format"]["syntax"], "lark");
    assert!(
        freeform["format"]["definition"]
            .as_str()
            .unwrap()
            .starts_with("start: begin_patch")
    );
}

#[test]
fn shell_accepts_bash_lc_and_plain_argv() {
    let mut sb = sandbox();
    assert_eq!(
        call(
            &mut sb,
            "shell",
            json!({"command": ["bash", "-lc", "echo hi; ls src"]})
        ),
        (
            "Exit code: 0\nOutput:\nhi\napp.js\nutil.ts\n".to_string(),
            true
        )
    );
    assert_eq!(
        call(
            &mut sb,
            "shell",
            json!({"command": ["cat", "no such file"]})
        ),
        (
            "Exit code: 1\nOutput:\ncat: no such file: No such file or directory\n".to_string(),
            false
        )
    );
    assert_eq!(
        call(
            &mut sb,
            "shell",
            json!({"command": ["pwd"], "workdir": "src"})
        )
        .0,
        "Exit code: 0\nOutput:\n/src\n"
    );
}

#[test]
fn tool_calls_do_not_leak_cd_or_variables() {
    let mut sb = sandbox();
    call(
        &mut sb,
        "exec_command",
        json!({"cmd": "cd src; export X=1"}),
    );
    assert_eq!(
        call(
            &mut sb,
            "exec_command",
            json!({"cmd": "pwd; echo \"[$X]\""})
        )
        .0,
        "Exit code: 0\nOutput:\n/\n[]\n"
    );
}

#[test]
fn the_terminal_keeps_directory_variables_and_functions() {
    let mut sb = sandbox();
    block_on(sb.run_shell("cd src; X=1; hi() { echo \"hi $1\"; }"));
    let output = block_on(sb.run_shell("pwd; echo $X; hi there"));
    assert_eq!(output.stdout, "/src\n1\nhi there\n");
    let tool = call(
        &mut sb,
        "exec_command",
        json!({"cmd": "hi() { echo changed; }"}),
    );
    assert!(tool.1);
    assert_eq!(block_on(sb.run_shell("hi again")).stdout, "hi again\n");
}

#[test]
fn bad_arguments_come_back_as_text() {
    let mut sb = sandbox();
    let cases = [
        (
            "shell",
            "{\"command\": \"ls\"}",
            "failed to parse function arguments: invalid type: string \"ls\", expected a sequence",
        ),
        ("shell", "{\"command\": []}", "command must not be empty"),
        (
            "shell",
            "{not json",
            "failed to parse function arguments: key must be a string",
        ),
        (
            "exec_command",
            "{}",
            "failed to parse function arguments: missing field `cmd`",
        ),
        (
            "read_file",
            "{\"file_path\": 3}",
            "failed to parse function arguments: invalid type: integer `3`, expected a string",
        ),
        (
            "update_plan",
            "{\"plan\": [{\"step\": \"x\", \"status\": \"done\"}]}",
            "failed to parse function arguments: unknown variant `done`",
        ),
        (
            "shell",
            "{\"command\": [\"ls\"], \"workdir\": \"nope\"}",
            "workdir 'nope' is not a directory",
        ),
        ("teleport", "{}", "unsupported call: teleport"),
    ];
    for (name, args, want) in cases {
        let result = block_on(sb.call_tool(name, args));
        assert!(!result.success, "{name} {args}");
        assert!(
            result.output.starts_with(want),
            "{name} {args}: {}",
            result.output
        );
    }
}

#[test]
fn apply_patch_in_both_forms_reports_changes_with_diffs() {
    let patch = "*** Begin Patch\n*** Update File: src/app.js\n@@\n-const a = 1;\n+const a = 2;\n console.log(a);\n*** Add File: NEW.md\n+new\n*** Delete File: README.md\n*** End Patch\n";
    let mut sb = sandbox();
    let result = block_on(sb.call_tool("apply_patch", &json!({"input": patch}).to_string()));
    assert!(result.success, "{}", result.output);
    assert_eq!(
        result.output,
        "Success. Updated the following files:\nA NEW.md\nM src/app.js\nD README.md\n"
    );
    let kinds: Vec<_> = result
        .changes
        .changes
        .iter()
        .map(|c| (c.path.as_str(), c.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("/NEW.md", ChangeKind::Added),
            ("/README.md", ChangeKind::Deleted),
            ("/src/app.js", ChangeKind::Modified)
        ]
    );
    let diff = result.changes.changes[2].diff.as_deref().unwrap();
    assert!(
        diff.starts_with(
            "--- a/src/app.js\n+++ b/src/app.js\n@@ -1,2 +1,2 @@\n-const a = 1;\n+const a = 2;\n"
        ),
        "{diff}"
    );

    let mut sb = sandbox();
    let result = block_on(sb.call_custom_tool("apply_patch", patch));
    assert!(result.success);
    assert_eq!(
        sb.vfs().read_text("/src/app.js").unwrap(),
        "const a = 2;\nconsole.log(a);\n"
    );
}

#[test]
fn shell_runs_report_their_changes() {
    let mut sb = sandbox();
    let output =
        block_on(sb.run_shell("echo x > out.txt; sed -i 's/1/9/' src/app.js; rm README.md"));
    let kinds: Vec<_> = output
        .changes
        .changes
        .iter()
        .map(|c| (c.path.as_str(), c.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("/README.md", ChangeKind::Deleted),
            ("/out.txt", ChangeKind::Added),
            ("/src/app.js", ChangeKind::Modified)
        ]
    );
}

#[test]
fn read_file_numbers_lines_and_pages() {
    let mut sb = sandbox();
    assert_eq!(
        call(&mut sb, "read_file", json!({"file_path": "/src/app.js"})),
        ("L1: const a = 1;\nL2: console.log(a);".to_string(), true)
    );
    assert_eq!(
        call(
            &mut sb,
            "read_file",
            json!({"file_path": "src/app.js", "offset": 2, "limit": 1})
        )
        .0,
        "L2: console.log(a);"
    );
    let (text, ok) = call(&mut sb, "read_file", json!({"file_path": "/missing.js"}));
    assert!(!ok);
    assert_eq!(
        text,
        "failed to read file /missing.js: No such file or directory"
    );
}

#[test]
fn list_dir_and_grep_files() {
    let mut sb = sandbox();
    assert_eq!(
        call(&mut sb, "list_dir", json!({"dir_path": "/"})).0,
        "Absolute path: /\nREADME.md\nsrc/\n  app.js\n  util.ts"
    );
    assert_eq!(
        call(&mut sb, "list_dir", json!({"dir_path": "/", "limit": 1})).0,
        "Absolute path: /\nREADME.md\nMore than 1 entries found"
    );
    assert_eq!(
        call(
            &mut sb,
            "grep_files",
            json!({"pattern": "const", "include": "*.{js,ts}"})
        ),
        ("/src/app.js\n/src/util.ts".to_string(), true)
    );
    assert_eq!(
        call(&mut sb, "grep_files", json!({"pattern": "zzz"})),
        ("No matches found.".to_string(), false)
    );
}

#[test]
fn update_plan_stores_the_plan() {
    let mut sb = sandbox();
    let args = json!({"explanation": "fix", "plan": [
        {"step": "Run tests", "status": "completed"},
        {"step": "Fix bug", "status": "in_progress"}
    ]});
    assert_eq!(
        call(&mut sb, "update_plan", args),
        ("Plan updated".to_string(), true)
    );
    assert_eq!(sb.plan().explanation.as_deref(), Some("fix"));
    assert_eq!(sb.plan().steps.len(), 2);
    assert_eq!(sb.plan().steps[1].status, StepStatus::InProgress);
}

#[test]
fn tool_output_is_cut_to_ten_kib_with_head_and_tail() {
    let mut sb = sandbox();
    let (text, ok) = call(&mut sb, "exec_command", json!({"cmd": "seq 1 20000"}));
    assert!(ok);
    assert!(text.len() <= 10 * 1024 + 64, "{}", text.len());
    assert!(text.starts_with("Exit code: 0\nOutput:\n1\n2\n"));
    assert!(text.contains("bytes elided]…"));
    assert!(text.ends_with("19999\n20000\n"));
}
