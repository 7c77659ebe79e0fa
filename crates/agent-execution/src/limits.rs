//! The one check of a run limit's value ([`check_max_iterations`], [`check_max_cost`], and their
//! `parse_*` forms for text) that the command line, the configuration files and the API all
//! apply before a limit reaches a trace ([`TraceLimits`](crate::TraceLimits)), so NaN, 0 and
//! infinity never pass as limits anywhere.

/// A limit whose value cannot be a limit (the value refused, as given). Its text names the
/// field, for the user: `max_cost must be a positive, finite amount of US dollars (got NaN)`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{} {}", self.field(), self.reason())]
pub enum LimitError {
    /// `max_iterations` is not a whole number of model calls of at least 1.
    MaxIterations(String),
    /// `max_cost` is not a positive, finite amount of US dollars.
    MaxCost(String),
}

impl LimitError {
    /// The limit's field name: `max_iterations` or `max_cost`.
    pub fn field(&self) -> &'static str {
        match self {
            Self::MaxIterations(_) => "max_iterations",
            Self::MaxCost(_) => "max_cost",
        }
    }

    /// What the field must be, without its name: `must be ...`.
    pub fn requirement(&self) -> &'static str {
        match self {
            Self::MaxIterations(_) => "must be a whole number of model calls, at least 1",
            Self::MaxCost(_) => "must be a positive, finite amount of US dollars",
        }
    }

    /// The value refused, as given.
    pub fn value(&self) -> &str {
        match self {
            Self::MaxIterations(value) | Self::MaxCost(value) => value,
        }
    }

    /// What is wrong, without the field's name: `must be ... (got NaN)`, for messages that name
    /// the field their own way.
    pub fn reason(&self) -> String {
        format!("{} (got {})", self.requirement(), self.value())
    }
}

/// Checks a `max_iterations`: at least one model call (0 would make a trace that fails at once).
pub fn check_max_iterations(max_iterations: u32) -> Result<u32, LimitError> {
    if max_iterations == 0 {
        return Err(LimitError::MaxIterations(max_iterations.to_string()));
    }
    Ok(max_iterations)
}

/// Checks a `max_cost`: positive and finite (NaN would mean no limit at all, 0 or less a run that
/// stops before its first call, infinity no limit while claiming one).
pub fn check_max_cost(max_cost: f64) -> Result<f64, LimitError> {
    if !max_cost.is_finite() || max_cost <= 0.0 {
        return Err(LimitError::MaxCost(max_cost.to_string()));
    }
    Ok(max_cost)
}

/// Parses and checks a `max_iterations` given as text (a command-line flag).
pub fn parse_max_iterations(text: &str) -> Result<u32, LimitError> {
    let max = text
        .trim()
        .parse::<u32>()
        .map_err(|_| LimitError::MaxIterations(format!("{text:?}")))?;
    check_max_iterations(max)
}

/// Parses and checks a `max_cost` given as text (a command-line flag); `NaN`, `inf`, `0` and
/// negative amounts are refused.
pub fn parse_max_cost(text: &str) -> Result<f64, LimitError> {
    let cost = text
        .trim()
        .parse::<f64>()
        .map_err(|_| LimitError::MaxCost(format!("{text:?}")))?;
    check_max_cost(cost)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_positive_and_finite() {
        assert_eq!(check_max_iterations(1), Ok(1));
        assert_eq!(
            check_max_iterations(0).unwrap_err().field(),
            "max_iterations"
        );
        assert_eq!(check_max_cost(0.01), Ok(0.01));
        for bad in [0.0, -0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let error = check_max_cost(bad).unwrap_err();
            assert_eq!(error.field(), "max_cost", "{bad}");
        }
        assert_eq!(parse_max_iterations("12"), Ok(12));
        for bad in ["0", "-1", "1.5", "many", "", "4294967296"] {
            assert!(parse_max_iterations(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_max_cost("2.5"), Ok(2.5));
        for bad in ["NaN", "nan", "inf", "-inf", "0", "-3", "1e999", "$2"] {
            let error = parse_max_cost(bad).unwrap_err();
            assert!(
                error.to_string().starts_with("max_cost must be"),
                "{bad}: {error}"
            );
        }
    }
}
