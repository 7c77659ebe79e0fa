//! `agent` with no command: the habits of the terminals people know. A chat (the full-screen
//! UI on a terminal) with `-c` (the newest trace of the project), `-r [ID]` (a trace chosen from
//! a list, or this one), `-m MODEL` and a first message; `-p` makes it a headless run that
//! prints the final answer alone, and so does text piped in without a prompt (`git diff |
//! agent`: the text is the task).

use clap::Args;

use super::{ChatArgs, Command, ModelArgs, RunArgs};
use crate::exit::UsageError;

/// The flags of `agent` without a command.
#[derive(Debug, Args)]
#[command(next_help_heading = "Without a command (a chat, or with -p a headless run)")]
pub(crate) struct BareArgs {
    /// The first message of the chat (with -p: the task; `-` or nothing reads it from standard
    /// input). Without it, text piped into `agent` is the task of a headless run, as with -p.
    #[arg(value_name = "PROMPT")]
    pub(crate) prompt: Option<String>,
    /// Continue the newest trace of this project.
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub(crate) continue_last: bool,
    /// Continue a trace chosen from a list of this project's traces (on a terminal), or this
    /// one (an id or a unique prefix of one).
    #[arg(
        short = 'r',
        long = "resume",
        value_name = "TRACE_ID",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub(crate) resume: Option<String>,
    /// Headless: run PROMPT to the end and print only the final answer (as `agent run -p`); a
    /// run whose tool calls were refused exits 1.
    #[arg(short = 'p', long, conflicts_with_all = ["json", "output_format", "no_tui"])]
    pub(crate) print: bool,
    /// Line mode on a terminal too, instead of the full-screen UI (also `AGENT_TUI=0`).
    #[arg(long)]
    pub(crate) no_tui: bool,
    /// Model, workspace, limits.
    #[command(flatten)]
    pub(crate) model: ModelArgs,
}

impl BareArgs {
    /// The command these flags stand for: `run` with `-p`, or without a prompt when text is
    /// `piped` into standard input (a pipe or a file, not a terminal or nothing; `--no-tui`
    /// keeps the chat), `chat` otherwise. `alone` says the prompt was the only argument: a
    /// single word then is taken for a mistyped command rather than sent to the model.
    pub(crate) fn into_command(mut self, alone: bool, piped: bool) -> Result<Command, UsageError> {
        if let Some(word) = self.prompt.as_deref()
            && alone
            && !word.trim().contains(char::is_whitespace)
            && word != "-"
        {
            return Err(UsageError(format!(
                "{word:?} is not a command of agent (see `agent --help`). To send it to the \
                 model as a first message: agent chat {word:?}, or agent -p {word:?} for the \
                 answer alone"
            )));
        }
        if piped && self.prompt.is_none() && !self.no_tui {
            self.print = true;
        }
        if !self.print {
            return Ok(Command::Chat(ChatArgs {
                message: self.prompt,
                continue_trace: None,
                last: self.continue_last,
                resume: self.resume,
                no_tui: self.no_tui,
                model: self.model,
            }));
        }
        let continue_trace = match self.resume {
            Some(id) if id.is_empty() => {
                return Err(UsageError(
                    "-p runs without asking: name the trace (agent -r ID -p \"...\"), or use -c \
                     for the newest one"
                        .into(),
                ));
            }
            resume => resume,
        };
        // Nothing given: the task comes from standard input, as `agent run -` reads it.
        let task = self.prompt.or_else(|| Some("-".to_owned()));
        Ok(Command::Run(RunArgs {
            task,
            task_file: None,
            images: Vec::new(),
            continue_trace,
            last: self.continue_last,
            print: true,
            trace: None,
            plan: None,
            vars: Vec::new(),
            model: self.model,
        }))
    }
}
