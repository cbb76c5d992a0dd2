//! A handful of measurements in a few numbers: their median and their range. A comparison runs
//! each leg a few times (three by default), so the median says what a run typically takes and
//! the range how far one run can be from it; with so few samples anything finer (quartiles,
//! standard deviations) would claim more than the runs show.

use crate::agent::duration::{Precision, format_duration};

/// The median and the range of some measurements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// How many measurements.
    pub n: usize,
}

impl Spread {
    /// The spread of `values`; `None` when there are none. NaNs are not measurements and are
    /// left out.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let mut sorted: Vec<f64> = values.into_iter().filter(|v| !v.is_nan()).collect();
        if sorted.is_empty() {
            return None;
        }
        sort_small(&mut sorted, |a, b| a < b);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: sorted[0],
            max: sorted[n - 1],
            n,
        })
    }

    /// `312 ms (296–330 ms, 3 runs)`, `11.2 s (all 3 runs alike)`, or just `312 ms` for a single
    /// run; times in `precision`.
    pub fn describe_ms(&self, precision: Precision) -> String {
        let median = format_duration(self.median, precision);
        if self.n < 2 {
            return median;
        }
        let low = format_duration(self.min, precision);
        let high = format_duration(self.max, precision);
        // Runs that print alike are said so once, not as a range from a time to itself.
        if low == high {
            return format!("{median} (all {} runs alike)", self.n);
        }
        format!("{median} ({low} – {high}, {} runs)", self.n)
    }
}

/// Sorts `items` by `less`, stably, by insertion: for the handful of values a comparison has
/// (its repetitions, its five parts) this is as fast as any sort, and much less code in the
/// page's wasm than the standard library's, which each element type would instantiate anew.
pub fn sort_small<T>(items: &mut [T], less: impl Fn(&T, &T) -> bool) {
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && less(&items[j], &items[j - 1]) {
            items.swap(j, j - 1);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_value_or_the_mean_of_the_two() {
        let odd = Spread::of([30.0, 10.0, 20.0]).unwrap();
        assert_eq!((odd.median, odd.min, odd.max, odd.n), (20.0, 10.0, 30.0, 3));
        let even = Spread::of([4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(even.median, 2.5);
        assert_eq!(Spread::of([f64::NAN, 7.0]).unwrap().n, 1);
        assert_eq!(Spread::of([]), None);
    }

    #[test]
    fn the_small_sort_is_stable() {
        let mut pairs = [(3, 'a'), (1, 'b'), (3, 'c'), (2, 'd'), (1, 'e')];
        sort_small(&mut pairs, |x, y| x.0 < y.0);
        assert_eq!(pairs, [(1, 'b'), (1, 'e'), (2, 'd'), (3, 'a'), (3, 'c')]);
    }

    #[test]
    fn a_spread_reads_as_median_and_range() {
        let spread = Spread::of([296.0, 312.0, 330.0]).unwrap();
        assert_eq!(
            spread.describe_ms(Precision::WholeMs),
            "312 ms (296 ms – 330 ms, 3 runs)"
        );
        let alike = Spread::of([11_210.0, 11_230.0, 11_240.0]).unwrap();
        assert_eq!(
            alike.describe_ms(Precision::BySize),
            "11.2 s (all 3 runs alike)"
        );
        let one = Spread::of([1234.0]).unwrap();
        assert_eq!(one.describe_ms(Precision::Seconds), "1.23 s");
    }
}
