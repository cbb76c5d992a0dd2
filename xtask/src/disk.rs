//! Free disk space, for `cargo xtask test`: a clean run writes several gigabytes of build output,
//! and a disk that fills up midway fails whichever suite is compiling with errors that name a
//! file, not the cause. The run says how much room there is before it starts, and says so again
//! next to any suite that failed for want of it.

use std::path::Path;
use std::process::Command;

use crate::output_of;

/// About what a clean `cargo xtask test` writes to `target/` and `fuzz/target/`, with a margin
/// (8.5 GiB at its peak, measured on this kind of machine: `docs/testing.md`, "Time and disk").
/// Below this much free space the run warns.
pub const CLEAN_RUN_BYTES: u64 = 10 << 30;

/// Bytes free on the filesystem that holds `path` (`df -Pk`, POSIX output), if `df` can say.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let out = output_of(Command::new("df").arg("-Pk").arg(path))?;
    parse_df(&out)
}

/// The available column of `df -Pk`'s second line, in bytes.
fn parse_df(out: &str) -> Option<u64> {
    let line = out.lines().nth(1)?;
    let kib: u64 = line.split_whitespace().nth(3)?.parse().ok()?;
    Some(kib * 1024)
}

/// `12.3 GiB`.
pub fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// Whether a line of a suite's output says the disk was full: the OS's error (ENOSPC, as Rust
/// and cargo print it), LLVM's, or SQLite's. Not the sandbox's own "No space left on device
/// (file-system limit …)", which its tests print on purpose.
pub fn says_full(line: &str) -> bool {
    line.contains("No space left on device (os error 28)")
        || line.contains("LLVM ERROR: IO failure on output stream: No space left on device")
        || line.contains("database or disk is full")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn df_posix_output_gives_the_available_bytes() {
        let out = "Filesystem     1024-blocks     Used Available Capacity Mounted on\n\
                   /dev/vda         263174212 15728640  80740352      17% /\n";
        assert_eq!(parse_df(out), Some(80_740_352 * 1024));
        assert_eq!(parse_df("Filesystem\n"), None);
        assert_eq!(parse_df(""), None);
    }

    #[test]
    fn a_full_disk_is_recognised_in_a_suites_output() {
        assert!(says_full(
            "error: failed to build archive: No space left on device (os error 28)"
        ));
        assert!(says_full("Error code 13: database or disk is full"));
        assert!(says_full(
            "rustc-LLVM ERROR: IO failure on output stream: No space left on device"
        ));
        assert!(!says_full("test result: ok"));
        assert!(!says_full(
            "No space left on device (file-system limit of 1048576 bytes)"
        ));
    }

    #[test]
    fn sizes_read_in_gibibytes() {
        assert_eq!(gib(CLEAN_RUN_BYTES), "10.0 GiB");
        assert_eq!(gib(3 << 29), "1.5 GiB");
    }
}
