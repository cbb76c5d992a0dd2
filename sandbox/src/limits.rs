//! Limits on one call, and the clock that measures the wall-clock budget.
//!
//! The clock is injected because `std::time::Instant` panics on `wasm32-unknown-unknown`: in the
//! browser the default clock reads `Date.now()` through `js-sys`, natively it reads `Instant`.
//! Tests can inject a [`ManualClock`] to exercise the budget deterministically.

use std::cell::Cell;
use std::rc::Rc;

/// Configurable limits; [`Limits::default`] holds the safe defaults documented in the README.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Tool output handed to the model is cut to this many bytes, keeping head and tail.
    pub max_output_bytes: usize,
    /// `run_shell`'s stdout and stderr are each cut to this many bytes, keeping head and tail.
    pub max_stream_bytes: usize,
    /// Commands (simple commands, builtins included, and those awk runs) one call may run.
    pub max_commands: usize,
    /// Iterations of `for`/`while`/`until` loops one call may run, in total.
    pub max_loop_iterations: usize,
    /// Total bytes of file content the VFS may hold.
    pub max_fs_bytes: usize,
    /// Bytes of output one command, or the buffered output of a whole call, may reach.
    pub max_pipe_bytes: usize,
    /// Wall-clock budget of one call, in milliseconds.
    pub wall_clock_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_output_bytes: 10 * 1024,
            max_stream_bytes: 1024 * 1024,
            max_commands: 10_000,
            max_loop_iterations: 10_000,
            max_fs_bytes: 64 * 1024 * 1024,
            max_pipe_bytes: 64 * 1024 * 1024,
            wall_clock_ms: 10_000,
        }
    }
}

/// Which limit ended a call. `Display` is the message appended to stderr.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitExceeded {
    #[error("limit exceeded: more than {0} commands in one call")]
    Commands(usize),
    #[error("limit exceeded: more than {0} loop iterations in one call")]
    LoopIterations(usize),
    #[error("limit exceeded: wall-clock budget of {0} ms used up")]
    WallClock(u64),
    #[error("limit exceeded: a value grew past {0} bytes")]
    ValueSize(usize),
    #[error("limit exceeded: command output grew past {0} bytes")]
    PipeBytes(usize),
    #[error("limit exceeded: functions, subshells or nested scripts more than {0} deep")]
    Nesting(usize),
}

/// Exit code of a call that a limit ended (the code `timeout(1)` uses).
pub const LIMIT_EXIT_CODE: i32 = 124;

/// A millisecond clock. Only differences between readings matter.
pub trait Clock {
    fn now_ms(&self) -> f64;
}

/// The platform clock: `Instant` natively, `Date.now()` in the browser.
#[derive(Debug, Clone)]
#[cfg_attr(target_arch = "wasm32", derive(Default))]
pub struct SystemClock {
    #[cfg(not(target_arch = "wasm32"))]
    origin: std::time::Instant,
}

#[cfg(not(target_arch = "wasm32"))]
impl Default for SystemClock {
    fn default() -> Self {
        SystemClock {
            origin: std::time::Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    #[cfg(not(target_arch = "wasm32"))]
    fn now_ms(&self) -> f64 {
        self.origin.elapsed().as_secs_f64() * 1000.0
    }

    #[cfg(target_arch = "wasm32")]
    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }
}

/// A clock that only moves when told to, and optionally on every reading.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now: Rc<Cell<f64>>,
    step_per_read: f64,
}

impl ManualClock {
    /// A clock that advances `step_per_read` milliseconds each time it is read.
    pub fn stepping(step_per_read: f64) -> Self {
        ManualClock {
            now: Rc::default(),
            step_per_read,
        }
    }

    pub fn advance(&self, ms: f64) {
        self.now.set(self.now.get() + ms);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> f64 {
        let now = self.now.get();
        self.now.set(now + self.step_per_read);
        now
    }
}

/// Cuts `text` to at most `max` bytes, keeping the head and the tail around a marker that says
/// how much was elided. Cuts fall on character boundaries.
pub fn truncate_middle(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let half = max / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let elided = tail_start - head_end;
    format!(
        "{}\n…[{elided} bytes elided]…\n{}",
        &text[..head_end],
        &text[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_when_told_and_per_read() {
        let clock = ManualClock::stepping(2.0);
        assert_eq!(clock.now_ms(), 0.0);
        assert_eq!(clock.now_ms(), 2.0);
        clock.advance(10.0);
        assert_eq!(clock.now_ms(), 14.0);
    }

    #[test]
    fn truncation_keeps_head_and_tail() {
        let text = format!("{}{}", "a".repeat(100), "b".repeat(100));
        let cut = truncate_middle(&text, 20);
        assert!(cut.starts_with("aaaaaaaaaa\n…[180 bytes elided]…\n"));
        assert!(cut.ends_with("bbbbbbbbbb"));
        assert_eq!(truncate_middle("short", 20), "short");
        let multibyte = "é".repeat(50);
        assert!(truncate_middle(&multibyte, 7).contains("elided"));
    }
}
