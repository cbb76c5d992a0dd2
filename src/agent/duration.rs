//! How the playground prints a duration. Every time on the page goes through
//! [`format_duration`], so one quantity never shows two ways; the precision says what kind of
//! time it is, since a turn's network time, a tool run and a server stage differ by orders of
//! magnitude.

/// How precisely a duration is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    /// `812 ms`: a turn's times as the page measured them, where a fraction of a millisecond is
    /// noise.
    WholeMs,
    /// `3.4 ms`: a tool run in the sandbox, a frame's offset in the inspector.
    TenthMs,
    /// `0.21 ms`, `3.4 ms`, `812 ms`, `2.87 s`, `37.5 s`, by size: the server's stages, which run from
    /// microseconds (resolving a cached response) to the model's seconds, and a long run's parts.
    BySize,
    /// `1.23 s`: a whole run.
    Seconds,
}

/// What a duration not measured (yet) shows.
const NOT_MEASURED: &str = "–";

/// `ms` milliseconds as `precision` says; `–` for `None`.
pub fn format_duration(ms: impl Into<Option<f64>>, precision: Precision) -> String {
    let Some(ms) = ms.into() else {
        return NOT_MEASURED.to_string();
    };
    match precision {
        Precision::WholeMs => format!("{ms:.0} ms"),
        Precision::TenthMs => format!("{ms:.1} ms"),
        // Each bound where the size's own rounding would carry into the next (999.6 ms is
        // "1.00 s", not "1000 ms").
        Precision::BySize if ms < 1.0 => format!("{ms:.2} ms"),
        Precision::BySize if ms < 100.0 => format!("{ms:.1} ms"),
        Precision::BySize if ms < 999.5 => format!("{ms:.0} ms"),
        Precision::BySize if ms < 9_995.0 => format!("{:.2} s", ms / 1000.0),
        Precision::BySize => format!("{:.1} s", ms / 1000.0),
        Precision::Seconds => format!("{:.2} s", ms / 1000.0),
    }
}

/// `4.24 s`, `812 ms`, `0.40 ms`: a time in a sentence, with the digits the tables give it
/// ([`Precision::BySize`]), so a sentence and the table beside it print one quantity alike.
pub fn format_span(ms: f64) -> String {
    let sign = if ms < 0.0 { "-" } else { "" };
    format!("{sign}{}", format_duration(ms.abs(), Precision::BySize))
}

/// `10.9–11.6 s`, `100–140 ms`, `812 ms–1.20 s`: a range of times, the unit said once when both
/// ends share it.
pub fn format_range(low: f64, high: f64) -> String {
    let [range] = format_ranges([(low, high)]);
    range
}

/// Ranges said side by side, with the same digits: those that tell apart the ends of every range
/// that has two (down to 0.1 ms) — `1.150–1.180 s` beside `1.186–1.188 s`, not `1.1–1.2 s` —,
/// since a range that prints `1.2–1.2 s` would hide the very spread it is there to show, and
/// two ranges that differ from each other (`1.21–1.26 s` beside `1.18–1.28 s`, not `1.2–1.3 s`
/// twice).
pub fn format_ranges<const N: usize>(ranges: [(f64, f64); N]) -> [String; N] {
    let at = |digits: usize, ms: f64| {
        if digits < 2 {
            format_span(ms)
        } else {
            finer(ms, digits)
        }
    };
    let apart = |digits: usize| {
        let printed = |(low, high): &(f64, f64)| (at(digits, *low), at(digits, *high));
        // A range whose ends no digits tell apart is one time, said once: it asks for none.
        ranges
            .iter()
            .all(|(low, high)| point(*low, *high) || at(digits, *low) != at(digits, *high))
            && ranges.iter().enumerate().all(|(i, a)| {
                ranges[i + 1..].iter().all(|b| {
                    // Ranges apart print apart: one's top is not the other's bottom.
                    let touch = |low: &(f64, f64), high: &(f64, f64)| {
                        low.1 < high.0 && at(digits, low.1) == at(digits, high.0)
                    };
                    (a == b || printed(a) != printed(b)) && !touch(a, b) && !touch(b, a)
                })
            })
    };
    // Digits that still do not tell the ends apart are noise: keep the plain text.
    let digits = (1..=MOST_DIGITS).find(|d| apart(*d)).unwrap_or(1);
    ranges.map(|(low, high)| {
        if at(digits, low) == at(digits, high) {
            return at(digits, low);
        }
        // A range from milliseconds into seconds gives its top the digits its bottom has, as
        // the tables print it: `970 ms–1.01 s`, not `970 ms–1.0 s`.
        let crosses = digits < 2 && format_span(low).ends_with(" ms") && high >= 1000.0;
        let (low, high) = if crosses {
            (at(digits, low), format_duration(high, Precision::BySize))
        } else {
            (at(digits, low), at(digits, high))
        };
        match (low.rsplit_once(' '), high.rsplit_once(' ')) {
            (Some((number, unit)), Some((_, high_unit))) if unit == high_unit => {
                format!("{number}–{high}")
            }
            _ => format!("{low}–{high}"),
        }
    })
}

/// Whether `low` and `high` are one time to the finest digits a range prints (0.1 ms).
fn point(low: f64, high: f64) -> bool {
    finer(low, MOST_DIGITS) == finer(high, MOST_DIGITS)
}

/// The most digits a range gets: seconds to the 0.1 ms.
const MOST_DIGITS: usize = 4;

/// `ms` with `digits` decimals of seconds from a second up, one fewer of milliseconds below.
fn finer(ms: f64, digits: usize) -> String {
    if ms.abs() >= 1000.0 {
        format!("{:.*} s", digits, ms / 1000.0)
    } else {
        format!("{:.*} ms", digits - 1, ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_ranges_that_differ_do_not_print_alike() {
        assert_eq!(
            format_ranges([(1_210.0, 1_260.0), (1_180.0, 1_280.0)]),
            ["1.21–1.26 s", "1.18–1.28 s"]
        );
        assert_eq!(
            format_ranges([(1_210.0, 1_260.0), (1_210.0, 1_260.0)]),
            ["1.21–1.26 s", "1.21–1.26 s"],
            "the same range, the same text"
        );
        // Apart, but touching at two digits (7.65–7.66 s, 7.66–7.69 s): a third tells them apart.
        assert_eq!(
            format_ranges([(7_650.0, 7_657.0), (7_661.0, 7_690.0)]),
            ["7.650–7.657 s", "7.661–7.690 s"]
        );
    }

    #[test]
    fn spans_and_ranges_read_as_in_a_sentence() {
        // As the tables print it.
        assert_eq!(format_span(4_240.0), "4.24 s");
        assert_eq!(format_span(12_340.0), "12.3 s");
        assert_eq!(format_span(812.0), "812 ms");
        assert_eq!(format_span(-1_500.0), "-1.50 s");
        assert_eq!(format_range(10_900.0, 11_600.0), "10.9–11.6 s");
        assert_eq!(format_range(100.0, 140.0), "100–140 ms");
        assert_eq!(format_range(812.0, 1_200.0), "812 ms–1.20 s");
        // From milliseconds into seconds, the top as precise as the bottom (and as the tables).
        assert_eq!(format_range(970.0, 1_010.0), "970 ms–1.01 s");
        assert_eq!(format_range(970.0, 12_300.0), "970 ms–12.3 s");
        // Ends that print alike get more digits; equal ends stay as they are.
        assert_eq!(format_range(1_210.0, 1_240.0), "1.21–1.24 s");
        assert_eq!(format_range(1_200.0, 1_200.4), "1.2000–1.2004 s");
        // Ends no digits tell apart are one time, said once.
        assert_eq!(format_range(1_200.0, 1_200.01), "1.20 s");
        // Side by side, the same digits for both.
        assert_eq!(
            format_ranges([(1_150.0, 1_180.0), (1_186.0, 1_188.0)]),
            ["1.150–1.180 s", "1.186–1.188 s"]
        );
        assert_eq!(
            format_ranges([(10_900.0, 11_600.0), (15_300.0, 17_700.0)]),
            ["10.9–11.6 s", "15.3–17.7 s"]
        );
        assert_eq!(format_range(1_200.0, 1_200.0), "1.20 s");
        // One leg's runs alike do not take the other's digits away: 1.157 s beside 1.172–1.190.
        assert_eq!(
            format_ranges([(1_157.3, 1_157.31), (1_172.0, 1_172.4)]),
            ["1.1573 s", "1.1720–1.1724 s"]
        );
        assert_eq!(format_range(812.2, 812.4), "812.2–812.4 ms");
    }

    #[test]
    fn each_precision_prints_its_own_way() {
        assert_eq!(format_duration(14.4, Precision::WholeMs), "14 ms");
        assert_eq!(format_duration(1499.5, Precision::WholeMs), "1500 ms");
        assert_eq!(format_duration(3.44, Precision::TenthMs), "3.4 ms");
        assert_eq!(format_duration(812.0, Precision::TenthMs), "812.0 ms");
        assert_eq!(format_duration(1234.0, Precision::Seconds), "1.23 s");
        assert_eq!(format_duration(0.0, Precision::Seconds), "0.00 s");
    }

    #[test]
    fn by_size_keeps_the_digits_that_matter() {
        assert_eq!(format_duration(0.0, Precision::BySize), "0.00 ms");
        assert_eq!(format_duration(0.21, Precision::BySize), "0.21 ms");
        assert_eq!(format_duration(0.999, Precision::BySize), "1.00 ms");
        assert_eq!(format_duration(1.0, Precision::BySize), "1.0 ms");
        assert_eq!(format_duration(3.44, Precision::BySize), "3.4 ms");
        assert_eq!(format_duration(99.9, Precision::BySize), "99.9 ms");
        assert_eq!(format_duration(999.0, Precision::BySize), "999 ms");
        assert_eq!(format_duration(2_873.0, Precision::BySize), "2.87 s");
        assert_eq!(format_duration(999.6, Precision::BySize), "1.00 s");
        assert_eq!(format_duration(9_994.0, Precision::BySize), "9.99 s");
        assert_eq!(format_duration(9_999.0, Precision::BySize), "10.0 s");
        assert_eq!(format_duration(37_501.0, Precision::BySize), "37.5 s");
        assert_eq!(format_duration(100.0, Precision::BySize), "100 ms");
        assert_eq!(format_duration(812_000.4, Precision::BySize), "812.0 s");
    }

    #[test]
    fn nothing_measured_is_a_dash_whatever_the_precision() {
        for precision in [
            Precision::WholeMs,
            Precision::TenthMs,
            Precision::BySize,
            Precision::Seconds,
        ] {
            assert_eq!(format_duration(None, precision), "–");
        }
        assert_eq!(format_duration(Some(7.0), Precision::WholeMs), "7 ms");
    }
}
