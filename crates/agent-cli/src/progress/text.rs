//! The model's text on stdout as it streams: rendered Markdown on a terminal (each line as it
//! ends, see `markdown`), plain text in a pipe (each piece as it comes, only the terminal
//! control sequences the model wrote taken out). The messages of a run are separated by a blank
//! line, but for an answer cut at the length limit and its continuation, which follow each
//! other with no break. The closing report follows the answer under a rule on a terminal; a pipe carries the
//! answer alone.

use std::io::IsTerminal;

use crate::markdown::{Markdown, terminal_width};
use crate::output::{clean, write_stdout};

/// How the text is written.
enum Form {
    Rendered(Markdown),
    /// The end of what came that may be the start of a control sequence, held until the
    /// sequence is whole (so that it is taken out whole).
    Plain {
        held: String,
    },
    Off,
}

/// The text of a run on stdout.
pub(super) struct TextOut {
    form: Form,
    /// A message's text is being written.
    open: bool,
    /// Something was written: the next message starts after a blank line.
    written: bool,
    /// The last character written was a newline (or nothing was written).
    at_line_start: bool,
    /// The last message ended without a newline, which is owed unless the next one continues
    /// it.
    owed_newline: bool,
    /// The next message continues the last one (a cut answer asked to go on): no break.
    continues: bool,
    /// The closing report's rule was written.
    report: bool,
    /// Everything written, as the model sent it.
    streamed: String,
}

impl TextOut {
    /// Rendered when stdout is a terminal, plain otherwise.
    pub(super) fn stdout() -> Self {
        let form = if std::io::stdout().is_terminal() {
            Form::Rendered(Markdown::new(terminal_width(), crate::output::color(false)))
        } else {
            Form::Plain {
                held: String::new(),
            }
        };
        Self::with(form)
    }

    /// Writes nothing.
    pub(super) fn off() -> Self {
        Self::with(Form::Off)
    }

    fn with(form: Form) -> Self {
        Self {
            form,
            open: false,
            written: false,
            at_line_start: true,
            owed_newline: false,
            continues: false,
            report: false,
            streamed: String::new(),
        }
    }

    /// The next piece of the answer.
    pub(super) fn push(&mut self, piece: &str) {
        if matches!(self.form, Form::Off) || piece.is_empty() {
            return;
        }
        if !self.open {
            self.open = true;
            if std::mem::take(&mut self.continues) {
                self.owed_newline = false;
            } else {
                self.pay_newline();
                if self.written {
                    self.write("\n");
                }
            }
        }
        self.streamed.push_str(piece);
        let out = match &mut self.form {
            Form::Rendered(markdown) => markdown.push(piece),
            Form::Plain { held } => {
                held.push_str(piece);
                let whole = whole_sequences(held);
                let ready: String = held.drain(..whole).collect();
                clean(&ready)
            }
            Form::Off => String::new(),
        };
        self.write(&out);
    }

    /// The next piece of the closing report: shown after the answer on a terminal only.
    pub(super) fn push_report(&mut self, piece: &str) {
        let Form::Rendered(_) = self.form else {
            return;
        };
        if !self.report {
            self.finish();
            self.pay_newline();
            self.report = true;
            let rule = format!("{} report {}", "─".repeat(3), "─".repeat(30));
            let color = crate::output::color(false);
            self.write(&format!("\n{}\n", crate::reasoning::dim(&rule, color)));
            self.written = false;
        }
        self.push(piece);
    }

    /// Ends the message being written: its last line, and a newline if it had none.
    pub(super) fn finish(&mut self) {
        if !self.open {
            return;
        }
        self.open = false;
        let out = match &mut self.form {
            Form::Rendered(markdown) => markdown.finish(),
            Form::Plain { held } => clean(&std::mem::take(held)),
            Form::Off => String::new(),
        };
        let ends = out.ends_with('\n') || (out.is_empty() && self.at_line_start);
        self.write(&out);
        self.owed_newline = !ends;
    }

    /// The next message continues the last one: it follows it with no break.
    pub(super) fn continue_next(&mut self) {
        self.continues = true;
    }

    /// Ends the text: the newline the last message is owed.
    pub(super) fn end(&mut self) {
        self.finish();
        self.pay_newline();
    }

    fn pay_newline(&mut self) {
        if std::mem::take(&mut self.owed_newline) {
            self.write("\n");
        }
    }

    /// The unfinished line of the answer, as a terminal shows it below the text.
    pub(super) fn preview(&self) -> Option<String> {
        match &self.form {
            Form::Rendered(markdown) => markdown.preview(3),
            _ => None,
        }
    }

    /// Everything written, as the model sent it.
    pub(super) fn into_streamed(self) -> String {
        self.streamed
    }

    fn write(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        write_stdout(text);
        self.written = true;
        self.at_line_start = text.ends_with('\n');
    }
}

/// How much of `text` can be cleaned now: all of it, unless it ends in the middle of a control
/// sequence, which is held until its end comes (or it grows too long to be one).
fn whole_sequences(text: &str) -> usize {
    let Some(start) = text.rfind(['\u{1b}', '\u{9b}']) else {
        return text.len();
    };
    let tail = &text[start..];
    if tail.len() > 256 {
        return text.len();
    }
    let mut chars = tail.chars();
    let introducer = chars.next();
    let finished = match (introducer, chars.next()) {
        (Some('\u{9b}'), Some(_)) => tail.chars().skip(1).any(|c| ('@'..='~').contains(&c)),
        (Some('\u{1b}'), Some('[')) => tail.chars().skip(2).any(|c| ('@'..='~').contains(&c)),
        (Some('\u{1b}'), Some(']' | 'P' | 'X' | '^' | '_')) => {
            tail.contains('\u{7}') || tail[1..].contains("\u{1b}\\")
        }
        (_, Some(_)) => true,
        (_, None) => false,
    };
    if finished { text.len() } else { start }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a pipe gets for `pieces`, one message.
    fn plain(pieces: &[&str]) -> String {
        let mut out = String::new();
        let mut held = String::new();
        for piece in pieces {
            held.push_str(piece);
            let whole = whole_sequences(&held);
            let ready: String = held.drain(..whole).collect();
            out.push_str(&clean(&ready));
        }
        out.push_str(&clean(&held));
        out
    }

    #[test]
    fn a_sequence_cut_between_pieces_is_taken_out_whole() {
        assert_eq!(plain(&["a \u{1b}", "[31mred\u{1b}[0m b"]), "a red b");
        assert_eq!(plain(&["x\u{1b}]0;ti", "tle\u{7}y"]), "xy");
        assert_eq!(plain(&["**bold** ", "text"]), "**bold** text");
        assert_eq!(whole_sequences("abc\u{1b}["), 3);
        assert_eq!(whole_sequences("abc\u{1b}[1m"), 7);
    }
}
