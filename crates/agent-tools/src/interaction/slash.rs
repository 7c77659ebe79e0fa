//! The slash commands of a chat, parsed once for the line mode and the full-screen UI: a line
//! that starts with `/` is a [`SlashCommand`], or a mistake said with what would work. A name
//! this list does not know is [`SlashCommand::Other`], for the front end's own commands (an MCP
//! server's prompts).

/// The commands and what each does, as `/help` lists them and completion offers them.
pub const COMMANDS: &[(&str, &str)] = &[
    (
        "/plan",
        "show or hide the plan panel (full-screen UI), and print the goal tree",
    ),
    (
        "/cost",
        "messages, tokens and cost so far (with sub-agents)",
    ),
    (
        "/goal",
        "TEXT [--check CMD]: work until it is done (and CMD exits 0); alone: where it is; clear",
    ),
    (
        "/compact",
        "summarise the conversation now; the next turn starts from it",
    ),
    (
        "/fork",
        "N: a new conversation from just before goal N started (m SEQ: after message SEQ)",
    ),
    (
        "/rewind",
        "[N]: the points to go back to; N: files as at goal N's start, in a fork",
    ),
    ("/diff", "N: the file changes of goal N"),
    (
        "/shells",
        "the run's background shells; /shells kill ID stops one",
    ),
    (
        "/model",
        "[NAME]: the model, or another one from the next turn",
    ),
    ("/new", "start a new conversation (a new trace)"),
    (
        "/resume",
        "ID: continue another trace; without an id, list the recent ones",
    ),
    (
        "/trace",
        "the trace id, for agent show, resume and the viewer",
    ),
    ("/help", "the commands and keys"),
    ("/quit", "leave (also /exit, Ctrl-D)"),
];

/// Where `/fork` forks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForkAt {
    /// Just before the goal of this display number started.
    Goal(String),
    /// After the message of this sequence number and its turn's tool results.
    Message(u64),
}

/// A slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SlashCommand {
    /// `/quit`, `/exit`, `/q`.
    Quit,
    /// `/help`, `/?`.
    Help,
    /// `/plan`.
    Plan,
    /// `/cost`.
    Cost,
    /// `/model [NAME]`: the model, or another one of the same provider from the next turn.
    Model(Option<String>),
    /// `/trace`.
    Trace,
    /// `/new`.
    New,
    /// `/goal [TEXT]`: the rest of the line (a goal to work to, `clear`, or nothing: where it
    /// is).
    Goal(String),
    /// `/compact`.
    Compact,
    /// `/fork N`, `/fork m SEQ`.
    Fork(ForkAt),
    /// `/rewind [N] [options]`: the words after it (the rewind's own syntax).
    Rewind(Vec<String>),
    /// `/diff N`.
    Diff(String),
    /// `/resume [ID]`.
    Resume(Option<String>),
    /// `/shells` (`None`: list them) or `/shells kill ID`.
    Shells(Option<String>),
    /// Another command: its name (without the `/`) and the rest of the line.
    Other {
        /// The name.
        name: String,
        /// The rest of the line, trimmed.
        args: String,
    },
}

impl SlashCommand {
    /// Whether the command changes the conversation, and so waits for a turn to end.
    pub fn steers(&self) -> bool {
        matches!(
            self,
            Self::Compact
                | Self::Fork(_)
                | Self::Goal(_)
                | Self::New
                | Self::Resume(_)
                | Self::Rewind(_)
        )
    }
}

/// The command `line` types: `None` when it does not start with `/`; otherwise the command, or
/// what is wrong with it and what would work.
pub fn parse(line: &str) -> Option<Result<SlashCommand, String>> {
    let line = line.trim().strip_prefix('/')?;
    let mut words = line.split_whitespace();
    let name = words.next().unwrap_or_default();
    let rest: Vec<&str> = words.collect();
    Some(Ok(match (name, rest.as_slice()) {
        ("quit" | "exit" | "q", _) => SlashCommand::Quit,
        ("help" | "?", _) => SlashCommand::Help,
        ("plan", _) => SlashCommand::Plan,
        ("cost", _) => SlashCommand::Cost,
        ("model", []) => SlashCommand::Model(None),
        ("model", [name]) => SlashCommand::Model(Some((*name).to_owned())),
        ("model", _) => return Some(Err("/model NAME takes one model name".into())),
        ("trace", _) => SlashCommand::Trace,
        ("new", _) => SlashCommand::New,
        ("compact", _) => SlashCommand::Compact,
        ("goal", _) => SlashCommand::Goal(line.trim_start()["goal".len()..].trim().to_owned()),
        ("fork", [number]) => SlashCommand::Fork(ForkAt::Goal((*number).to_owned())),
        ("fork", ["m", sequence]) => match sequence.parse() {
            Ok(sequence) => SlashCommand::Fork(ForkAt::Message(sequence)),
            Err(_) => {
                return Some(Err(
                    "/fork m SEQ takes a message number (see agent show)".into()
                ));
            }
        },
        ("fork", _) => {
            return Some(Err(
                "/fork N forks before goal N (see /plan); /fork m SEQ after message SEQ".into(),
            ));
        }
        ("rewind", words) => {
            SlashCommand::Rewind(words.iter().map(|word| (*word).to_owned()).collect())
        }
        ("diff", [number]) => SlashCommand::Diff((*number).to_owned()),
        ("diff", _) => {
            return Some(Err(
                "/diff N shows the file changes of goal N (see /plan)".into()
            ));
        }
        ("resume", []) => SlashCommand::Resume(None),
        ("resume", [id]) => SlashCommand::Resume(Some((*id).to_owned())),
        ("resume", _) => return Some(Err("/resume ID continues one trace".into())),
        ("shells", []) => SlashCommand::Shells(None),
        ("shells", ["kill", id]) => SlashCommand::Shells(Some((*id).to_owned())),
        ("shells", _) => {
            return Some(Err(
                "/shells lists the background shells; /shells kill ID stops one".into(),
            ));
        }
        ("", _) => return Some(Err("a command follows the /; /help lists them".into())),
        (other, _) => SlashCommand::Other {
            name: other.to_owned(),
            args: line.trim_start()[other.len()..].trim().to_owned(),
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str, expected: Result<SlashCommand, &str>) {
        assert_eq!(
            parse(line),
            Some(expected.map_err(str::to_owned)),
            "{line:?}"
        );
    }

    #[test]
    fn commands_and_their_arguments() {
        assert_eq!(parse("hello /plan"), None);
        check("/q", Ok(SlashCommand::Quit));
        check("  /help  ", Ok(SlashCommand::Help));
        check(
            "/fork 2.1",
            Ok(SlashCommand::Fork(ForkAt::Goal("2.1".into()))),
        );
        check("/fork m 14", Ok(SlashCommand::Fork(ForkAt::Message(14))));
        check(
            "/rewind 2 --files-only",
            Ok(SlashCommand::Rewind(vec![
                "2".into(),
                "--files-only".into(),
            ])),
        );
        check("/resume", Ok(SlashCommand::Resume(None)));
        check("/diff 3", Ok(SlashCommand::Diff("3".into())));
        check("/shells", Ok(SlashCommand::Shells(None)));
        check(
            "/shells kill sh-3f2a",
            Ok(SlashCommand::Shells(Some("sh-3f2a".into()))),
        );
        check(
            "/mcp__notes__summarise topic=rust  depth=2",
            Ok(SlashCommand::Other {
                name: "mcp__notes__summarise".into(),
                args: "topic=rust  depth=2".into(),
            }),
        );
        assert!(SlashCommand::Compact.steers() && !SlashCommand::Cost.steers());
    }

    #[test]
    fn mistakes_say_what_would_work() {
        check(
            "/fork m x",
            Err("/fork m SEQ takes a message number (see agent show)"),
        );
        check(
            "/fork",
            Err("/fork N forks before goal N (see /plan); /fork m SEQ after message SEQ"),
        );
        check(
            "/diff",
            Err("/diff N shows the file changes of goal N (see /plan)"),
        );
        check("/", Err("a command follows the /; /help lists them"));
        check(
            "/shells stop sh-1",
            Err("/shells lists the background shells; /shells kill ID stops one"),
        );
    }
}
