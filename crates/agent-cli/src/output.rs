//! Small text helpers shared by the commands' output.

/// The text on one line: line breaks and runs of spaces become one space.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max` characters, with `…` when cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Prints a line on stdout (the machine-readable channel).
#[allow(clippy::print_stdout)]
pub(crate) fn print(text: &str) {
    println!("{text}");
}

/// Prints a line on stderr (messages for people).
#[allow(clippy::print_stderr)]
pub(crate) fn note(text: &str) {
    eprintln!("{text}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_folded_and_cut() {
        assert_eq!(one_line(" a\n b  c "), "a b c");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(truncate("ééééé", 3), "éé…");
    }
}
