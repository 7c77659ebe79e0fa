//! How the model's reasoning is shown on a terminal: a dimmed one-line summary by default
//! (`thinking… (123 words)`), the whole text with `--show-reasoning`; dimmed only on a
//! terminal and when `NO_COLOR` is unset.

/// `text` in ANSI dim when `color`, else as it is.
pub(crate) fn dim(text: &str, color: bool) -> String {
    if color {
        format!("\x1b[2m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// How reasoning `text` is shown: the whole text with `full`, else a summary with its word
/// count. `None` when there is nothing readable (redacted or encrypted reasoning only).
pub(crate) fn shown(text: &str, full: bool) -> Option<String> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if full {
        return Some(format!("thinking: {}", crate::output::clean(text)));
    }
    let words = text.split_whitespace().count();
    let unit = if words == 1 { "word" } else { "words" };
    Some(format!("thinking… ({words} {unit})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_is_summarised_unless_shown_in_full() {
        assert_eq!(
            shown("I should read a.txt.", false).as_deref(),
            Some("thinking… (4 words)")
        );
        assert_eq!(
            shown("I should read a.txt.", true).as_deref(),
            Some("thinking: I should read a.txt.")
        );
        assert_eq!(shown("  ", true), None);
        assert_eq!(dim("x", true), "\x1b[2mx\x1b[0m");
        assert_eq!(dim("x", false), "x");
    }
}
