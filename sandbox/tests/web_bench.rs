//! The benchmark in headless Chromium (ignored by the normal test run, which must stay fast):
//! `grep -rn` over the 10 MB tree and the 50-hunk `apply_patch`, timed with the sandbox's own
//! clock (`Date.now()` in the browser). Results are printed to the runner's console.
//!
//! Run: `cargo test -p tether-sandbox --release --target wasm32-unknown-unknown --test web_bench -- --include-ignored`

#![cfg(target_arch = "wasm32")]

#[path = "workload/mod.rs"]
mod workload;

use tether_sandbox::{Clock, Limits, Sandbox, SystemClock, Vfs};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const RUNS: usize = 7;

async fn median_ms<F: AsyncFnMut()>(mut run: F) -> f64 {
    let clock = SystemClock::default();
    let mut samples = Vec::new();
    for _ in 0..RUNS {
        let started = clock.now_ms();
        run().await;
        samples.push(clock.now_ms() - started);
    }
    samples.sort_by(f64::total_cmp);
    samples[RUNS / 2]
}

#[wasm_bindgen_test]
#[ignore]
async fn benchmark_in_the_browser() {
    let tree = workload::grep_tree();
    let vfs = Vfs::from_files(tree.iter().map(|(p, t)| (p.as_str(), t.as_bytes())));
    let mut sandbox = Sandbox::new(vfs).with_limits(Limits {
        max_stream_bytes: 64 * 1024 * 1024,
        ..Limits::default()
    });
    let mut lines = 0;
    let grep_ms = median_ms(async || {
        lines = sandbox
            .run_shell("grep -rn needle .")
            .await
            .stdout
            .lines()
            .count();
    })
    .await;
    console_log!(
        "wasm grep -rn needle . over 10 MB / 1000 files: median {grep_ms:.1} ms of {RUNS} ({lines} lines)"
    );

    let (file, patch) = workload::patch_workload();
    let patch_ms = median_ms(async || {
        let mut sandbox = Sandbox::new(Vfs::from_files([("big.txt", file.as_bytes())]));
        assert!(
            sandbox
                .call_custom_tool("apply_patch", &patch)
                .await
                .success
        );
    })
    .await;
    console_log!("wasm apply_patch 50 hunks on 10,000 lines: median {patch_ms:.1} ms of {RUNS}");
}
