//! The sandbox in headless Chromium: shell, apply_patch, the VFS's JSON round trip, tool calls,
//! the wall clock (which must not touch `Instant` in wasm) and `node` through a JS runtime.
//! The runtime here is a deliberate test double (`EchoRuntime`) that reports what it was asked
//! to run; the playground's Web Worker runtime is tested with the playground.
//!
//! Run: `cargo test -p tether-sandbox --target wasm32-unknown-unknown`
//! or `wasm-pack test --headless --chrome sandbox`.

#![cfg(target_arch = "wasm32")]

use std::future::Future;
use std::pin::Pin;

use serde_json::json;
use tether_sandbox::{
    JsEntry, JsOutcome, JsRequest, JsRuntime, Limits, SAMPLE_FIX_PATCH, Sandbox, Vfs,
    sample_project,
};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Test double: prints the entry, arguments and snapshot size instead of running JavaScript.
struct EchoRuntime;

impl JsRuntime for EchoRuntime {
    fn run<'a>(&'a self, request: JsRequest<'a>) -> Pin<Box<dyn Future<Output = JsOutcome> + 'a>> {
        Box::pin(async move {
            let entry = match request.entry {
                JsEntry::File(path) => path.to_string(),
                JsEntry::Eval(code) => format!("eval:{code}"),
            };
            JsOutcome {
                stdout: format!("{entry} {:?} files={}\n", request.args, request.files.len()),
                exit_code: 0,
                ..JsOutcome::default()
            }
        })
    }
}

#[wasm_bindgen_test]
async fn shell_pipelines_redirects_and_globs() {
    let mut sandbox = Sandbox::new(sample_project());
    let output = sandbox
        .run_shell("ls src test | sort | head -n 3; grep -rn 'pageSize' src | wc -l; echo $((6 * 7)) > n.txt && cat n.txt")
        .await;
    assert_eq!(output.exit_code, 0, "{}", output.stderr);
    assert_eq!(output.stdout, "\nassert.js\npaginate.js\n6\n42\n");
    let missing = sandbox.run_shell("cat nope; nosuch").await;
    assert_eq!(missing.exit_code, 127);
    assert!(missing.stderr.contains("command not found"));
}

#[wasm_bindgen_test]
async fn apply_patch_fixes_the_sample_project() {
    let mut sandbox = Sandbox::new(sample_project());
    let result = sandbox
        .call_custom_tool("apply_patch", SAMPLE_FIX_PATCH)
        .await;
    assert!(result.success, "{}", result.output);
    assert!(
        sandbox
            .vfs()
            .read_text("/src/paginate.js")
            .unwrap()
            .contains("(current - 1) * pageSize")
    );
    let shell = sandbox
        .run_shell("apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: docs/x.md\n+hi\n*** End Patch\nEOF")
        .await;
    assert_eq!(
        shell.stdout,
        "Success. Updated the following files:\nA docs/x.md\n"
    );
    assert_eq!(shell.changes.changes.len(), 1);
}

#[wasm_bindgen_test]
fn vfs_json_round_trip() {
    let mut vfs = sample_project();
    vfs.write("/bin.dat", vec![0, 255, 1]).unwrap();
    let back = Vfs::from_json(&vfs.to_json()).unwrap();
    assert_eq!(back.files().count(), vfs.files().count());
    assert_eq!(back.read("/bin.dat").unwrap(), &[0, 255, 1]);
}

#[wasm_bindgen_test]
async fn tools_and_the_wall_clock_work_in_the_browser() {
    let mut sandbox = Sandbox::new(sample_project()).with_limits(Limits {
        wall_clock_ms: 50,
        ..Limits::default()
    });
    let result = sandbox
        .call_tool(
            "shell",
            &json!({"command": ["bash", "-lc", "wc -l src/paginate.js"]}).to_string(),
        )
        .await;
    assert_eq!(result.output, "Exit code: 0\nOutput:\n20 src/paginate.js\n");
    let bad = sandbox.call_tool("read_file", "{").await;
    assert!(!bad.success);
    let spin = sandbox
        .run_shell("i=0; while true; do i=$((i+1)); done")
        .await;
    assert_eq!(spin.exit_code, tether_sandbox::LIMIT_EXIT_CODE);
}

#[wasm_bindgen_test]
async fn node_goes_through_the_runtime() {
    let mut sandbox = Sandbox::new(sample_project()).with_js_runtime(Box::new(EchoRuntime));
    let output = sandbox.run_shell("cd test && node run.js --fast").await;
    assert_eq!(output.stdout, "/test/run.js [\"--fast\"] files=5\n");
}

#[wasm_bindgen_test]
async fn runaway_recursion_ends_within_the_browser_stack() {
    let mut sandbox = Sandbox::new(Vfs::new());
    let output = sandbox.run_shell("f() { f; }; f").await;
    assert_eq!(output.exit_code, tether_sandbox::LIMIT_EXIT_CODE);
    let deep = format!("{}echo deep{}", "( ".repeat(99), " )".repeat(99));
    assert_eq!(
        sandbox.run_shell(&deep).await.exit_code,
        tether_sandbox::LIMIT_EXIT_CODE
    );
    // A subscript that names itself: an arithmetic error, not a stack overflow.
    let output = sandbox.run_shell(r#"b="a[b]"; echo $((a[b]))"#).await;
    assert_eq!(output.exit_code, 1, "{}", output.stderr);
}
