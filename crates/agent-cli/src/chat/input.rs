//! The chat's input: a line editor on a terminal (history, the usual editing keys; Ctrl-C and
//! Ctrl-D come back as [`Read::Interrupted`] and [`Read::Eof`]), plain lines otherwise.

use anyhow::{Context, Result};
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};

/// What a read gave.
pub(crate) enum Read {
    /// A line, without its line break.
    Line(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D at an empty prompt, or the end of the input.
    Eof,
}

/// Where lines come from.
pub(crate) enum Input {
    /// A terminal: the line editor, taken by the blocking read while it waits.
    Editor(Option<DefaultEditor>),
    /// A pipe or a file.
    Lines(Lines<BufReader<Stdin>>),
}

impl Input {
    /// The line editor on a terminal, plain lines otherwise.
    pub(crate) fn new(terminal: bool) -> Result<Self> {
        if terminal {
            let editor = DefaultEditor::new().context("cannot start the line editor")?;
            Ok(Self::Editor(Some(editor)))
        } else {
            Ok(Self::Lines(BufReader::new(tokio::io::stdin()).lines()))
        }
    }

    /// The next line; on a terminal after showing `prompt`.
    pub(crate) async fn read(&mut self, prompt: &str) -> Result<Read> {
        match self {
            Self::Lines(lines) => Ok(match lines.next_line().await? {
                Some(line) => Read::Line(line),
                None => Read::Eof,
            }),
            Self::Editor(slot) => {
                let mut editor = slot.take().context("the line editor is in use")?;
                let prompt = prompt.to_owned();
                let (editor, read) = tokio::task::spawn_blocking(move || {
                    let read = editor.readline(&prompt);
                    (editor, read)
                })
                .await
                .context("the line editor stopped")?;
                *slot = Some(editor);
                match read {
                    Ok(line) => Ok(Read::Line(line)),
                    Err(ReadlineError::Interrupted) => Ok(Read::Interrupted),
                    Err(ReadlineError::Eof) => Ok(Read::Eof),
                    Err(error) => Err(error).context("cannot read from the terminal"),
                }
            }
        }
    }

    /// Keeps `line` in the editor's history (for the up arrow).
    pub(crate) fn remember(&mut self, line: &str) {
        if let Self::Editor(Some(editor)) = self {
            let _ = editor.add_history_entry(line);
        }
    }
}
