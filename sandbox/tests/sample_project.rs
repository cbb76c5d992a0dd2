//! The default agent scenario, replayed through the tools with the real `node`
//! (`NodeProcessRuntime`): list the files, read the failing module, run the tests (they fail),
//! apply the shipped fix patch, run the tests again (they pass).

#![cfg(not(target_arch = "wasm32"))]

use serde_json::json;
use tether_sandbox::native::{NodeProcessRuntime, block_on};
use tether_sandbox::{ChangeKind, SAMPLE_FIX_PATCH, Sandbox, sample_project};

#[test]
fn the_fix_patch_turns_the_failing_tests_green() {
    let mut sandbox =
        Sandbox::new(sample_project()).with_js_runtime(Box::new(NodeProcessRuntime::default()));
    let call = |sandbox: &mut Sandbox, name: &str, args: serde_json::Value| {
        block_on(sandbox.call_tool(name, &args.to_string()))
    };

    let listing = call(&mut sandbox, "list_dir", json!({"dir_path": "/"}));
    assert!(
        listing.output.contains("src/\n  paginate.js"),
        "{}",
        listing.output
    );

    let source = call(
        &mut sandbox,
        "read_file",
        json!({"file_path": "/src/paginate.js"}),
    );
    assert!(source.output.contains("const start = current * pageSize;"));

    let before = call(
        &mut sandbox,
        "shell",
        json!({"command": ["bash", "-lc", "node test/run.js"]}),
    );
    assert!(!before.success);
    assert!(
        before.output.starts_with("Exit code: 1\n"),
        "{}",
        before.output
    );
    assert!(
        before.output.contains("3 passing, 3 failing"),
        "{}",
        before.output
    );

    let patch = call(
        &mut sandbox,
        "apply_patch",
        json!({"input": SAMPLE_FIX_PATCH}),
    );
    assert!(patch.success, "{}", patch.output);
    assert_eq!(patch.changes.changes.len(), 1);
    assert_eq!(patch.changes.changes[0].kind, ChangeKind::Modified);
    assert!(
        patch.changes.changes[0]
            .diff
            .as_deref()
            .unwrap()
            .contains("+  const start = (current - 1) * pageSize;")
    );

    let after = call(
        &mut sandbox,
        "shell",
        json!({"command": ["bash", "-lc", "node test/run.js"]}),
    );
    assert!(after.success, "{}", after.output);
    assert!(after.output.contains("6 passing, 0 failing"));
}

#[test]
fn node_gets_arguments_stdin_and_times_out() {
    let mut sandbox =
        Sandbox::new(sample_project()).with_js_runtime(Box::new(NodeProcessRuntime::default()));
    let output = block_on(sandbox.run_shell(
        "echo 'console.log(process.argv.slice(2).join(\"+\"))' > args.js; node args.js a b; echo piped | node -e 'process.stdin.on(\"data\", d => process.stdout.write(d.toString().toUpperCase()))'",
    ));
    assert_eq!(output.stdout, "a+b\nPIPED\n", "{}", output.stderr);

    let mut sandbox = Sandbox::new(sample_project())
        .with_js_runtime(Box::new(NodeProcessRuntime::default()))
        .with_limits(tether_sandbox::Limits {
            wall_clock_ms: 300,
            ..Default::default()
        });
    let output = block_on(sandbox.run_shell("node -e 'while (true) {}'"));
    assert_eq!(output.exit_code, tether_sandbox::LIMIT_EXIT_CODE);
    assert!(
        output.stderr.contains("node: timed out"),
        "{}",
        output.stderr
    );
}

#[test]
fn a_missing_node_binary_is_a_clear_error() {
    let mut sandbox = Sandbox::new(sample_project()).with_js_runtime(Box::new(
        NodeProcessRuntime::with_program("/nonexistent/node"),
    ));
    let output = block_on(sandbox.run_shell("node test/run.js"));
    assert_eq!(output.exit_code, 127);
    assert!(
        output.stderr.contains("Node.js is not installed"),
        "{}",
        output.stderr
    );
}
