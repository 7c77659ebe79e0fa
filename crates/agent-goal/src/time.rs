//! UTC timestamps in RFC 3339 form, computed from `std::time::SystemTime` without a date library.

use std::time::{SystemTime, UNIX_EPOCH};

/// The current UTC time as RFC 3339 with second precision, e.g. `2026-11-21T19:30:00Z`.
///
/// A clock set before 1970 yields the Unix epoch rather than failing.
pub fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    rfc3339_from_unix(secs)
}

/// Formats seconds since the Unix epoch as an RFC 3339 UTC timestamp.
pub(crate) fn rfc3339_from_unix(secs: u64) -> String {
    let days = secs / 86_400;
    let rest = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Converts days since 1970-01-01 to a proleptic Gregorian (year, month, day).
///
/// This is the well-known era-based algorithm: days are shifted to start on 0000-03-01 so
/// that the leap day is the last day of a year, then split into 400-year eras.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
#[path = "time_tests.rs"]
mod tests;
