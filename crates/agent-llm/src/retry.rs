//! Retry policy: exponential backoff with jitter, honouring the provider's `Retry-After`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::Rng;
use reqwest::header::HeaderMap;

use crate::error::LlmError;

/// When and how often a failed request is sent again.
///
/// Rate limits (429), server errors (5xx, 529), connection errors and request timeouts are
/// retried; everything else fails at once. Before the `n`th retry the client waits
/// `initial_delay * multiplier^(n-1)`, capped at `max_delay` and shortened by up to `jitter`
/// of itself at random, unless the provider said how long to wait (`Retry-After`), which is
/// honoured as given. A `Retry-After` longer than `max_retry_after` is not waited for: the
/// [`LlmError::RateLimited`] goes to the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// How many times a request is sent at most, the first time included (1 = no retry).
    pub max_attempts: u32,
    /// The wait before the first retry.
    pub initial_delay: Duration,
    /// The longest computed wait.
    pub max_delay: Duration,
    /// The factor between consecutive waits.
    pub multiplier: f64,
    /// The fraction (0 to 1) of each computed wait that is randomised away.
    pub jitter: f64,
    /// The longest `Retry-After` the client waits for.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            multiplier: 2.0,
            jitter: 0.25,
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// The same policy with this many attempts at most.
    #[must_use]
    pub fn with_max_attempts(self, max_attempts: u32) -> Self {
        RetryPolicy {
            max_attempts,
            ..self
        }
    }

    /// The same policy with these computed waits (for tests: a millisecond or two).
    #[must_use]
    pub fn with_delays(self, initial_delay: Duration, max_delay: Duration) -> Self {
        RetryPolicy {
            initial_delay,
            max_delay,
            ..self
        }
    }

    /// The computed wait before retry number `retry` (from 1), jitter included.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exponent = i32::try_from(retry.saturating_sub(1)).unwrap_or(i32::MAX);
        let base = self.initial_delay.as_secs_f64() * self.multiplier.max(1.0).powi(exponent);
        let capped = base.min(self.max_delay.as_secs_f64());
        let jitter = self.jitter.clamp(0.0, 1.0);
        let factor = if jitter > 0.0 {
            1.0 - rand::rng().random_range(0.0..=jitter)
        } else {
            1.0
        };
        Duration::from_secs_f64((capped * factor).max(0.0))
    }

    /// How long to wait after `error` before attempt number `attempt + 1`, or `None` when the
    /// error is final.
    pub fn delay_after(&self, error: &LlmError, attempt: u32) -> Option<Duration> {
        if attempt >= self.max_attempts || !error.is_retryable() {
            return None;
        }
        match error {
            LlmError::RateLimited {
                retry_after: Some(wait),
                ..
            } => (*wait <= self.max_retry_after).then_some(*wait),
            _ => Some(self.backoff(attempt)),
        }
    }
}

/// The wait a response asks for: `retry-after-ms` (OpenAI), else `Retry-After` as seconds or as
/// an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = header("retry-after")?;
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = parse_http_date(value)?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Seconds since the Unix epoch of an IMF-fixdate such as `Sun, 06 Nov 1994 08:49:37 GMT`.
fn parse_http_date(value: &str) -> Option<u64> {
    let mut parts = value.split_whitespace();
    let _weekday = parts.next()?;
    let day: u64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts
        .next()?
        .split(':')
        .map(|part| part.parse::<u64>().ok());
    let (hour, minute, second) = (clock.next()??, clock.next()??, clock.next()??);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60
    {
        return None;
    }
    // Days from the civil date, after Howard Hinnant's algorithm.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let days = u64::try_from(days).ok()?;
    Some(days * 86_400 + hour * 3_600 + minute * 60 + second)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn http_dates_parse() {
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(parse_http_date("yesterday"), None);
    }

    #[test]
    fn retry_after_prefers_milliseconds() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(3)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        let mut past = HeaderMap::new();
        past.insert(
            "retry-after",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(retry_after(&past), Some(Duration::ZERO));
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let policy = RetryPolicy {
            jitter: 0.0,
            ..RetryPolicy::default()
        };
        assert_eq!(policy.backoff(1), Duration::from_millis(500));
        assert_eq!(policy.backoff(3), Duration::from_secs(2));
        assert_eq!(policy.backoff(20), Duration::from_secs(30));
        let jittered = RetryPolicy::default().backoff(2);
        assert!(jittered <= Duration::from_secs(1) && jittered >= Duration::from_millis(750));
    }

    #[test]
    fn only_retryable_errors_within_the_budget_wait() {
        let policy = RetryPolicy::default();
        let server = LlmError::Server {
            status: 500,
            message: String::new(),
        };
        assert!(policy.delay_after(&server, 1).is_some());
        assert!(policy.delay_after(&server, 4).is_none());
        let auth = LlmError::Authentication {
            status: 401,
            message: String::new(),
        };
        assert!(policy.delay_after(&auth, 1).is_none());
        let long = LlmError::RateLimited {
            retry_after: Some(Duration::from_secs(600)),
            message: String::new(),
        };
        assert!(policy.delay_after(&long, 1).is_none());
    }
}
