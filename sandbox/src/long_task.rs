//! The long task's project: the sample project plus `logs/ci.log`, the log of a CI run of 40
//! test shards, for the server's `triage-ci-log` scenario — about 40 tool calls, each reading
//! one shard's window of the log (`sed -n 'A,Bp' logs/ci.log`), ~3,000 tokens, so the
//! conversation grows past 100k tokens. The playground seeds its sandbox with it when the long
//! task is chosen; `cargo xtask bench` runs the same calls natively, so both measure one task.
//!
//! The log is generated, not shipped: a few hundred lines of code instead of 400 kB in the
//! page's wasm. The generator is deterministic (its own xorshift, seeded per shard) and its
//! failures are fixed ([`FAILURES`]), so the scenario's messages can say what each window holds.

use crate::sample::sample_project;
use crate::vfs::Vfs;

/// The task the playground and the bench give the agent.
pub const LONG_TASK_PROMPT: &str = "CI failed on main. Read logs/ci.log one window at a time, \
find which tests fail and why, and summarise the failures.";

/// Where the log is.
pub const CI_LOG_PATH: &str = "logs/ci.log";
/// Shards in the log; the scenario reads one a turn.
pub const SHARDS: usize = 40;
/// Lines of one shard (its header, its tests, its summary line), so shard `k` (from 1) is lines
/// `(k − 1) × LINES_PER_SHARD + 1` to `k × LINES_PER_SHARD`.
pub const LINES_PER_SHARD: usize = 100;

/// The failing tests: the shard, the test, and the lines that explain the failure.
pub const FAILURES: [(usize, &str, &[&str]); 4] = [
    (
        7,
        "paginate › last page of 1,000 items (size 30) has 10 items",
        &[
            "      expected: items 990–999 (10 items)",
            "      received: items 1020–1029 (0 items)",
            "      at Object.<anonymous> (test/paginate.test.js:41:7)",
        ],
    ),
    (
        19,
        "paginate › page 2 of 3 (size 4) starts at item 4",
        &[
            "      expected: [4, 5, 6, 7]",
            "      received: [8, 9, 10, 11]",
            "      at Object.<anonymous> (test/paginate.test.js:18:5)",
        ],
    ),
    (
        23,
        "retry › gives up after 5 attempts",
        &[
            "      Error: timed out after 5000 ms (attempt 3 of 5 still pending)",
            "      at Timeout._onTimeout (src/retry.js:27:11)",
        ],
    ),
    (
        31,
        "paginate › first page of 25 items (size 10) starts at item 0",
        &[
            "      expected: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]",
            "      received: [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]",
            "      at Object.<anonymous> (test/paginate.test.js:9:5)",
        ],
    ),
];

/// The sample project with `logs/ci.log` added.
pub fn long_task_project() -> Vfs {
    let mut vfs = sample_project();
    let _ = vfs.mkdir_all("/logs");
    let _ = vfs.write(&format!("/{CI_LOG_PATH}"), ci_log().into_bytes());
    vfs
}

/// The line range of shard `shard` (from 1), inclusive.
pub fn shard_lines(shard: usize) -> (usize, usize) {
    let first = (shard - 1) * LINES_PER_SHARD + 1;
    (first, first + LINES_PER_SHARD - 1)
}

/// How many of shard `shard`'s tests pass and fail.
pub fn shard_counts(shard: usize) -> (usize, usize) {
    let failed = FAILURES.iter().filter(|(s, _, _)| *s == shard).count();
    let detail: usize = FAILURES
        .iter()
        .filter(|(s, _, _)| *s == shard)
        .map(|(_, _, lines)| lines.len())
        .sum();
    // The header and the summary line; a failure is its line and its detail.
    let tests = LINES_PER_SHARD - 2 - detail;
    (tests - failed, failed)
}

/// The whole log: [`SHARDS`] shards of [`LINES_PER_SHARD`] lines.
pub fn ci_log() -> String {
    let mut log = String::with_capacity(SHARDS * LINES_PER_SHARD * 90);
    let mut number = 0;
    for shard in 1..=SHARDS {
        write_shard(&mut log, shard, &mut number);
    }
    log
}

/// The suites the tests belong to, each with the file its tests live in.
const SUITES: [(&str, &str); 6] = [
    ("paginate", "test/paginate.test.js"),
    ("format", "test/format.test.js"),
    ("parse", "test/parse.test.js"),
    ("cache", "test/cache.test.js"),
    ("retry", "test/retry.test.js"),
    ("router", "test/router.test.js"),
];

fn write_shard(log: &mut String, shard: usize, number: &mut usize) {
    use std::fmt::Write;
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15 ^ (shard as u64).wrapping_mul(0x2545_f491));
    let (a, b) = (
        SUITES[shard % SUITES.len()],
        SUITES[(shard + 2) % SUITES.len()],
    );
    let _ = writeln!(
        log,
        "== shard {shard:02}/{SHARDS} · node test/run.js --shard {shard}/{SHARDS} · {} {} ==",
        a.1, b.1
    );
    let (passed, failed) = shard_counts(shard);
    let failures: Vec<_> = FAILURES.iter().filter(|(s, _, _)| *s == shard).collect();
    let tests = passed + failed;
    // Failures sit at fixed places among the shard's tests.
    let failing_at: Vec<usize> = (0..failures.len())
        .map(|i| (i + 1) * tests / (failures.len() + 1))
        .collect();
    let mut millis_total = 0u64;
    let mut failure = failures.iter();
    for index in 0..tests {
        *number += 1;
        let millis = 1 + rng.below(40);
        millis_total += millis;
        if failing_at.contains(&index)
            && let Some((_, name, detail)) = failure.next()
        {
            let _ = writeln!(
                log,
                "[shard {shard:02}] not ok {number:04} {name} ({millis} ms)"
            );
            for line in detail.iter() {
                let _ = writeln!(log, "{line}");
            }
            continue;
        }
        let suite = if rng.below(2) == 0 { a.0 } else { b.0 };
        let case = case(suite, &mut rng);
        let _ = writeln!(
            log,
            "[shard {shard:02}] ok {number:04} {suite} › {case} ({millis} ms)"
        );
    }
    let _ = writeln!(
        log,
        "[shard {shard:02}] {passed} passed, {failed} failed ({}.{:02} s)",
        millis_total / 1000,
        millis_total % 1000 / 10
    );
}

/// A passing test's name in `suite`.
fn case(suite: &str, rng: &mut XorShift) -> String {
    let n = |rng: &mut XorShift, below: u64| rng.below(below);
    match suite {
        "paginate" => {
            let size = 5 + n(rng, 46);
            let pages = 2 + n(rng, 60);
            let page = 1 + n(rng, pages);
            let first = (page - 1) * size;
            format!(
                "page {page} of {pages} (size {size}) returns items {first}–{}",
                first + size - 1
            )
        }
        "format" => {
            let bytes = n(rng, 10_000_000);
            format!("formats {bytes} bytes as {:.1} MB", bytes as f64 / 1e6)
        }
        "parse" => format!(
            "parses 2026-{:02}-{:02}T{:02}:{:02}:00Z as a UTC instant",
            1 + n(rng, 12),
            1 + n(rng, 28),
            n(rng, 24),
            n(rng, 60)
        ),
        "cache" => format!(
            "returns the cached entry for user:{} within its {} s TTL",
            n(rng, 100_000),
            30 + n(rng, 570)
        ),
        "retry" => format!(
            "retries {} times with {} ms of backoff, then succeeds",
            1 + n(rng, 4),
            50 * (1 + n(rng, 8))
        ),
        _ => format!(
            "routes GET /api/v{}/items/{} to items.show",
            1 + n(rng, 3),
            n(rng, 10_000)
        ),
    }
}

/// A small deterministic generator (xorshift64), the same on every target. Not rand's
/// Xoshiro256PlusPlus, which the sandbox's tests use: this one ships in the page's wasm, where
/// rand is not, and the log only has to be the same for a page and a bench built from one tree.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, bound: u64) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x % bound.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shard_has_its_lines_and_says_what_failed() {
        let log = ci_log();
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), SHARDS * LINES_PER_SHARD);
        for shard in 1..=SHARDS {
            let (first, last) = shard_lines(shard);
            let window = &lines[first - 1..last];
            assert!(window[0].starts_with(&format!("== shard {shard:02}/40")));
            let (passed, failed) = shard_counts(shard);
            assert!(
                window[LINES_PER_SHARD - 1].starts_with(&format!(
                    "[shard {shard:02}] {passed} passed, {failed} failed"
                )),
                "{}",
                window[LINES_PER_SHARD - 1]
            );
            let not_ok = window.iter().filter(|l| l.contains(" not ok ")).count();
            assert_eq!(not_ok, failed, "shard {shard}");
            // Under the shell tool's 10 KiB output cap, so nothing is elided.
            let bytes: usize = window.iter().map(|l| l.len() + 1).sum();
            assert!(
                (7_000..10_000).contains(&bytes),
                "shard {shard}: {bytes} bytes"
            );
        }
        assert_eq!(log, ci_log(), "deterministic");
    }

    #[test]
    fn the_project_holds_the_log_beside_the_sample() {
        let vfs = long_task_project();
        assert_eq!(
            vfs.read(&format!("/{CI_LOG_PATH}")).unwrap(),
            ci_log().as_bytes()
        );
        assert!(vfs.read("/src/paginate.js").is_ok());
    }
}
