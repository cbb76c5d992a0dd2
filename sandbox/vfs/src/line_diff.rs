//! Line diffs for `diff` and the change-set: Myers' algorithm from `similar`, called directly.
//!
//! `similar::TextDiff` picks its algorithm at run time, so every algorithm it offers (Myers,
//! patience, LCS, Hunt, histogram), each over several index types and hooks, was compiled into
//! the playground's wasm: about 190 KB of code for the one algorithm we use. Here the lines are
//! numbered first (equal lines, equal numbers) and Myers runs once, over `u32` slices, with the
//! same hooks `TextDiff` uses (compaction, replace detection), so the operations are the ones
//! `TextDiff::from_lines` found, and the unified format below is the one it printed.
//!
//! Lines end at `\n` only, as in GNU diff (`TextDiff` also split at a lone `\r`).

use std::collections::HashMap;
use std::fmt::Write;

use similar::DiffOp;
use similar::algorithms::{Capture, Compact, Replace, myers};

/// Two texts cut into lines (terminators kept) and the operations turning one into the other.
pub struct LineDiff<'a> {
    pub old: Vec<&'a str>,
    pub new: Vec<&'a str>,
    pub ops: Vec<DiffOp>,
}

impl<'a> LineDiff<'a> {
    /// Diffs `old` against `new` line by line.
    pub fn new(old: &'a str, new: &'a str) -> Self {
        let old: Vec<&str> = old.split_inclusive('\n').collect();
        let new: Vec<&str> = new.split_inclusive('\n').collect();
        let mut numbers: HashMap<&str, u32> = HashMap::new();
        let mut number = |line: &'a str| {
            let next = u32::try_from(numbers.len()).expect("fewer than 2^32 distinct lines");
            *numbers.entry(line).or_insert(next)
        };
        let old_ids: Vec<u32> = old.iter().map(|line| number(line)).collect();
        let new_ids: Vec<u32> = new.iter().map(|line| number(line)).collect();
        let mut hook = Compact::new(Replace::new(Capture::new()), &old_ids[..], &new_ids[..]);
        let Ok(()) = myers::diff(
            &mut hook,
            &old_ids[..],
            0..old_ids.len(),
            &new_ids[..],
            0..new_ids.len(),
        );
        let ops = hook.into_inner().into_inner().into_ops();
        LineDiff { old, new, ops }
    }

    /// The unified diff with `context` lines around each change, headed `--- old_name` and
    /// `+++ new_name`; empty when the texts are equal.
    pub fn unified(&self, context: usize, old_name: &str, new_name: &str) -> String {
        let mut out = String::new();
        for hunk in similar::group_diff_ops(self.ops.clone(), context) {
            let (Some(first), Some(last)) = (hunk.first(), hunk.last()) else {
                continue;
            };
            if out.is_empty() {
                let _ = writeln!(out, "--- {old_name}\n+++ {new_name}");
            }
            let _ = writeln!(
                out,
                "@@ -{} +{} @@",
                HunkRange(first.old_range().start, last.old_range().end),
                HunkRange(first.new_range().start, last.new_range().end)
            );
            for op in &hunk {
                let (old, new) = (op.old_range(), op.new_range());
                match op {
                    DiffOp::Equal { .. } => self.lines(&mut out, ' ', &self.old[old]),
                    DiffOp::Delete { .. } => self.lines(&mut out, '-', &self.old[old]),
                    DiffOp::Insert { .. } => self.lines(&mut out, '+', &self.new[new]),
                    DiffOp::Replace { .. } => {
                        self.lines(&mut out, '-', &self.old[old]);
                        self.lines(&mut out, '+', &self.new[new]);
                    }
                }
            }
        }
        out
    }

    fn lines(&self, out: &mut String, tag: char, lines: &[&str]) {
        for line in lines {
            out.push(tag);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
}

/// A hunk header's line range, `start,len` (1-based), or `start` alone for one line; an empty
/// range names the line before it.
struct HunkRange(usize, usize);

impl std::fmt::Display for HunkRange {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let len = self.1.saturating_sub(self.0);
        match len {
            1 => write!(f, "{}", self.0 + 1),
            0 => write!(f, "{},0", self.0),
            _ => write!(f, "{},{}", self.0 + 1, len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LineDiff;

    /// The operations and the unified text `similar::TextDiff` produced, kept as the reference.
    #[test]
    fn matches_text_diff() {
        let cases = [
            ("", ""),
            ("a\n", "a\n"),
            ("", "a\nb\n"),
            ("a\nb\n", ""),
            ("a\nb\nc\n", "a\nB\nc\n"),
            ("a\nb", "a\nb\n"),
            ("a\nb\n", "a\nc"),
            (
                "x\na\nb\nc\nd\ne\nf\ng\nh\ni\nj\n",
                "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\ny\n",
            ),
            ("a\nb\nc\na\nb\nc\n", "c\nb\na\nb\na\nc\n"),
        ];
        for (old, new) in cases {
            let ours = LineDiff::new(old, new);
            let theirs = similar::TextDiff::from_lines(old, new);
            assert_eq!(ours.ops, theirs.ops(), "{old:?} -> {new:?}");
            let expected = theirs
                .unified_diff()
                .context_radius(3)
                .header("a", "b")
                .to_string();
            assert_eq!(ours.unified(3, "a", "b"), expected, "{old:?} -> {new:?}");
        }
    }

    /// Over 100 lines `TextDiff` numbers the lines and trims the common ends first; the result
    /// must not change.
    #[test]
    fn matches_text_diff_on_long_inputs() {
        let old: String = (0..400).map(|i| format!("line {}\n", i % 37)).collect();
        let new: String = (0..400)
            .filter(|i| i % 11 != 3)
            .map(|i| format!("line {}\n", (i * 7) % 37))
            .collect();
        let ours = LineDiff::new(&old, &new);
        let theirs = similar::TextDiff::from_lines(old.as_str(), new.as_str());
        assert_eq!(ours.ops, theirs.ops());
        let expected = theirs.unified_diff().header("a", "b").to_string();
        assert_eq!(ours.unified(3, "a", "b"), expected);
    }
}
