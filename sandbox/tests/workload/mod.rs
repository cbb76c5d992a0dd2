//! The benchmark workloads, shared by the native bench (`benches/sandbox_bench.rs`) and the
//! browser bench (`tests/web_bench.rs`): a 10 MB tree of 1,000 text files for `grep -rn`, and a
//! 10,000-line file with a 50-hunk patch. Deterministic: a fixed seed, and rand's
//! Xoshiro256PlusPlus, whose output is the same natively and in wasm.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

const WORDS: &[&str] = &[
    "alpha", "beta", "gamma", "delta", "render", "token", "cache", "socket", "frame", "lane",
    "queue", "store", "model", "stream", "event", "buffer", "schema", "tool", "patch", "shell",
];

/// 1,000 files of about 10 KB each under `src/modNN/`; about one line in 97 holds `needle`.
pub fn grep_tree() -> Vec<(String, String)> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x9E37_79B9_7F4A_7C15);
    let mut files = Vec::with_capacity(1000);
    let mut line_number = 0u64;
    for index in 0..1000 {
        let mut text = String::with_capacity(10_300);
        while text.len() < 10_000 {
            line_number += 1;
            let words = rng.random_range(4..12);
            for w in 0..words {
                if w > 0 {
                    text.push(' ');
                }
                text.push_str(WORDS[rng.random_range(0..WORDS.len())]);
            }
            if line_number.is_multiple_of(97) {
                text.push_str(" needle");
            }
            text.push('\n');
        }
        files.push((format!("src/mod{:02}/file{index:04}.txt", index / 50), text));
    }
    files
}

/// A 10,000-line file and a patch with 50 update chunks spread through it.
pub fn patch_workload() -> (String, String) {
    let lines: Vec<String> = (0..10_000)
        .map(|i| format!("line {i}: value = {};", (i * 7) % 1000))
        .collect();
    let mut file = lines.join("\n");
    file.push('\n');
    let mut patch = String::from("*** Begin Patch\n*** Update File: big.txt\n");
    for hunk in 0..50 {
        let target = 100 + hunk * 199;
        patch.push_str(&format!(
            "@@ line {}: value = {};\n",
            target - 4,
            ((target - 4) * 7) % 1000
        ));
        for context in &lines[target - 3..target] {
            patch.push_str(&format!(" {context}\n"));
        }
        patch.push_str(&format!(
            "-{}\n+line {target}: value = patched;\n",
            lines[target]
        ));
        for context in &lines[target + 1..target + 4] {
            patch.push_str(&format!(" {context}\n"));
        }
    }
    patch.push_str("*** End Patch\n");
    (file, patch)
}
