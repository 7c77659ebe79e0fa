//! Repeated measurements: every figure of the report is the median of several runs, shown with
//! the smallest and largest run, and every comparison is a ratio of two figures of the same run.

use std::time::Duration;

/// The values of one figure over several runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Sample {
    values: Vec<f64>,
}

impl Sample {
    /// A sample of these values.
    pub(crate) fn of(values: impl IntoIterator<Item = f64>) -> Self {
        let mut values: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
        values.sort_by(f64::total_cmp);
        Self { values }
    }

    /// Adds one run's value.
    pub(crate) fn push(&mut self, value: f64) {
        if value.is_finite() {
            let at = self.values.partition_point(|v| *v <= value);
            self.values.insert(at, value);
        }
    }

    /// How many runs it holds.
    pub(crate) fn runs(&self) -> usize {
        self.values.len()
    }

    /// The median (the mean of the two middle values for an even count); 0 when empty.
    pub(crate) fn median(&self) -> f64 {
        let n = self.values.len();
        match n {
            0 => 0.0,
            _ if n % 2 == 1 => self.values[n / 2],
            _ => (self.values[n / 2 - 1] + self.values[n / 2]) / 2.0,
        }
    }

    /// The smallest run; 0 when empty.
    pub(crate) fn min(&self) -> f64 {
        self.values.first().copied().unwrap_or(0.0)
    }

    /// The largest run; 0 when empty.
    pub(crate) fn max(&self) -> f64 {
        self.values.last().copied().unwrap_or(0.0)
    }

    /// The same sample with every value mapped (for instance seconds to steps per second).
    pub(crate) fn map(&self, f: impl Fn(f64) -> f64) -> Self {
        Self::of(self.values.iter().map(|v| f(*v)))
    }

    /// `median (min–max)` with `format` applied to each number; just the median for one run.
    pub(crate) fn show(&self, format: impl Fn(f64) -> String) -> String {
        if self.runs() <= 1 {
            return format(self.median());
        }
        format!(
            "{} ({}–{})",
            format(self.median()),
            format(self.min()),
            format(self.max())
        )
    }
}

/// A whole number with thousands separators: `12,345`.
pub(crate) fn count(value: f64) -> String {
    let rounded = value.round();
    let negative = rounded < 0.0;
    let digits = format!("{:.0}", rounded.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if negative { format!("-{out}") } else { out }
}

/// A rate with about three significant digits: `12,345`, `123`, `12.3`, `1.23`.
pub(crate) fn rate(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 100.0 {
        count(value)
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// A ratio: `3.4×`, `0.52×`, `1,234×`.
pub(crate) fn ratio(value: f64) -> String {
    format!("{}×", rate(value))
}

/// A duration given in seconds, in the unit that suits it: `850 ns`, `12.3 µs`, `4.5 ms`, `2.1 s`.
pub(crate) fn seconds(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 1.0 {
        format!("{} s", rate(value))
    } else if magnitude >= 1e-3 {
        format!("{} ms", rate(value * 1e3))
    } else if magnitude >= 1e-6 {
        format!("{} µs", rate(value * 1e6))
    } else {
        format!("{:.0} ns", value * 1e9)
    }
}

/// The value at quantile `q` of a sorted list; zero when empty.
pub(crate) fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_and_max_of_odd_and_even_counts() {
        let odd = Sample::of([3.0, 1.0, 2.0]);
        assert_eq!((odd.median(), odd.min(), odd.max()), (2.0, 1.0, 3.0));
        let mut even = Sample::of([4.0, 1.0]);
        even.push(3.0);
        even.push(2.0);
        assert_eq!(even.median(), 2.5);
        assert_eq!(even.runs(), 4);
        assert_eq!(Sample::default().median(), 0.0);
    }

    #[test]
    fn shows_median_with_its_range() {
        let sample = Sample::of([10.0, 12.0, 11.0]);
        assert_eq!(sample.show(rate), "11.0 (10.0–12.0)");
        assert_eq!(Sample::of([5.0]).show(rate), "5.00");
    }

    #[test]
    fn formats_counts_rates_and_durations() {
        assert_eq!(count(1_234_567.0), "1,234,567");
        assert_eq!(count(999.0), "999");
        assert_eq!(rate(0.5), "0.50");
        assert_eq!(ratio(12.34), "12.3×");
        assert_eq!(seconds(0.0042), "4.20 ms");
        assert_eq!(seconds(2.5e-5), "25.0 µs");
        assert_eq!(seconds(3.0), "3.00 s");
    }
}
