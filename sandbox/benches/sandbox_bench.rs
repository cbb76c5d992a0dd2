//! Benchmark (not a test): `grep -rn` over a 10 MB tree of 1,000 files in the sandbox against
//! real GNU `grep -rn` on the same tree written to a temporary directory, and `apply_patch` of
//! 50 hunks on a 10,000-line file. Prints the method, the machine and medians side by side.
//!
//! Run: `cargo bench -p tether-sandbox --features native --bench sandbox_bench`

#[path = "common/mod.rs"]
mod common;
#[path = "../tests/workload/mod.rs"]
mod workload;

use std::process::Command;
use std::time::Instant;

use tether_sandbox::native::block_on;
use tether_sandbox::{Limits, Sandbox, Vfs};

const RUNS: usize = 7;

fn median_ms(mut run: impl FnMut()) -> f64 {
    let mut samples: Vec<f64> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[RUNS / 2]
}

fn main() {
    println!("tether-sandbox benchmark: median of {RUNS} runs, wall time, release build");
    println!("machine: {}", common::machine());

    let tree = workload::grep_tree();
    let bytes: usize = tree.iter().map(|(_, t)| t.len()).sum();
    println!(
        "\n[grep -rn needle .] {} files, {:.1} MB",
        tree.len(),
        bytes as f64 / 1e6
    );
    let vfs = Vfs::from_files(tree.iter().map(|(p, t)| (p.as_str(), t.as_bytes())));
    let mut sandbox = Sandbox::new(vfs).with_limits(Limits {
        max_stream_bytes: 64 * 1024 * 1024,
        ..Limits::default()
    });
    let mut sandbox_lines = 0;
    let sandbox_ms = median_ms(|| {
        let output = block_on(sandbox.run_shell("grep -rn needle ."));
        sandbox_lines = output.stdout.lines().count();
    });

    let dir = std::env::temp_dir().join(format!("tether-bench-{}", std::process::id()));
    for (path, text) in &tree {
        let target = dir.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, text).unwrap();
    }
    let mut grep_lines = 0;
    let grep_ms = median_ms(|| {
        let output = Command::new("grep")
            .args(["-rn", "needle", "."])
            .current_dir(&dir)
            .env("LC_ALL", "C")
            .output()
            .unwrap();
        grep_lines = output.stdout.iter().filter(|b| **b == b'\n').count();
    });
    std::fs::remove_dir_all(&dir).unwrap();
    println!("  sandbox grep -rn      {sandbox_ms:8.1} ms   ({sandbox_lines} matching lines)");
    println!("  GNU grep -rn (disk)   {grep_ms:8.1} ms   ({grep_lines} matching lines)");
    println!("  ratio sandbox / GNU   {:8.2}x", sandbox_ms / grep_ms);

    let (file, patch) = workload::patch_workload();
    println!(
        "\n[apply_patch] 50 hunks on a {}-line file",
        file.lines().count()
    );
    let patch_ms = median_ms(|| {
        let mut sandbox = Sandbox::new(Vfs::from_files([("big.txt", file.as_bytes())]));
        let result = block_on(sandbox.call_custom_tool("apply_patch", &patch));
        assert!(result.success, "{}", result.output);
    });
    println!(
        "  sandbox apply_patch   {patch_ms:8.1} ms   (includes building the VFS and the change-set diff)"
    );
}
