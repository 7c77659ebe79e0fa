//! Small text helpers shared by the commands' output.

/// The text on one line: line breaks and runs of spaces become one space, and terminal control
/// sequences are dropped (see [`clean`]).
pub(crate) fn one_line(text: &str) -> String {
    clean(text).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text without what would drive a terminal: escape sequences (CSI such as colours and
/// cursor moves, OSC such as titles and links, DCS and the like), C1 controls and every other
/// control character but line feeds and tabs. Model output and tool output go through it
/// before they are printed, so a model cannot colour, move or retitle the user's terminal.
pub(crate) fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates up to a final byte in @..~.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC, DCS, SOS, PM, APC: up to BEL or the string terminator ESC \.
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                // Two-character sequences (ESC c, ESC 7, ...): both dropped.
                _ => {}
            },
            '\u{9b}' => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
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

/// When output is coloured (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set (to anything but an empty string).
    #[default]
    Auto,
    /// Always, even into a file or a pipe.
    Always,
    /// Never.
    Never,
}

/// The `--color` of this process, set once at start.
static COLOR: std::sync::OnceLock<ColorChoice> = std::sync::OnceLock::new();

/// Records the `--color` choice (the first call wins).
pub(crate) fn set_color(choice: ColorChoice) {
    let _ = COLOR.set(choice);
}

/// Whether text written to stderr (`stderr: true`) or stdout may be coloured: as `--color`
/// says; with `auto`, when it is a terminal and `NO_COLOR` is unset.
pub(crate) fn color(stderr: bool) -> bool {
    match COLOR.get().copied().unwrap_or_default() {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            let terminal = if stderr {
                std::io::IsTerminal::is_terminal(&std::io::stderr())
            } else {
                std::io::IsTerminal::is_terminal(&std::io::stdout())
            };
            terminal && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
        }
    }
}

/// A plain-text table: the header, then the rows, every column but the last padded to its
/// widest cell and followed by two spaces; no trailing blank line.
pub(crate) fn table<const N: usize>(header: [&str; N], rows: &[[String; N]]) -> String {
    let header = header.map(str::to_owned);
    let mut widths = [0usize; N];
    for row in std::iter::once(&header).chain(rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(rows) {
        for (cell, width) in row.iter().zip(widths).take(N - 1) {
            out.push_str(&format!("{cell:<width$}  "));
        }
        out.push_str(&row[N - 1]);
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// Prints a line on stdout (the machine-readable channel). A reader that went away (`agent
/// traces | head -1`) ends the command quietly with exit code 0, as a Unix tool does, instead
/// of a panic: what it wanted has been read.
pub(crate) fn print(text: &str) {
    write_stdout(&format!("{text}\n"));
}

/// Writes `text` on stdout as it is and flushes it, above the run's spinner when one is shown
/// (the model's answer as it streams). A reader that went away ends the command quietly with
/// exit code 0, as [`print()`] does.
pub(crate) fn write_stdout(text: &str) {
    use std::io::Write;
    let written = suspended(|| {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes()).and_then(|()| out.flush())
    });
    if let Err(error) = written {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        note(&format!("agent: cannot write to standard output: {error}"));
        std::process::exit(1);
    }
}

/// Prints a line on stderr (messages for people), above the run's spinner when one is shown,
/// so that the spinner leaves no debris.
#[allow(clippy::print_stderr)]
pub(crate) fn note(text: &str) {
    suspended(|| eprintln!("{text}"));
}

/// The spinner of the run being shown, for [`suspended`]; `progress` sets it.
static SPINNER: std::sync::Mutex<Option<indicatif::ProgressBar>> = std::sync::Mutex::new(None);

/// Runs `f` with the run's spinner (if one is shown) cleared and held still, so that what `f`
/// prints — an approval question — stays on the screen whole while the user answers.
pub(crate) fn suspended<R>(f: impl FnOnce() -> R) -> R {
    let bar = SPINNER.lock().ok().and_then(|bar| bar.clone());
    match bar {
        Some(bar) => bar.suspend(f),
        None => f(),
    }
}

/// Makes `bar` the spinner [`suspended`] holds still (`None`: no spinner is shown).
pub(crate) fn show_spinner(bar: Option<indicatif::ProgressBar>) {
    if let Ok(mut shown) = SPINNER.lock() {
        *shown = bar;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_control_sequences_are_dropped() {
        let hostile = "\u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}x\u{1b}]8;;http://e\u{1b}\\link\
                       \u{1b}]8;;\u{1b}\\ \u{1b}[2J\u{1b}[Hhome\r\u{8}\u{7}\u{1b}cok\u{9b}1mz\ttab\nline";
        assert_eq!(clean(hostile), "red xlink homeokz\ttab\nline");
        assert_eq!(one_line("a\u{1b}[1mb"), "ab");
        assert_eq!(clean("plain ünïcode ✓"), "plain ünïcode ✓");
    }

    #[test]
    fn text_is_folded_and_cut() {
        assert_eq!(one_line(" a\n b  c "), "a b c");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(truncate("ééééé", 3), "éé…");
    }
}
