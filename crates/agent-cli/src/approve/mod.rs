//! Approval of risky tool calls on the terminal. Without `--yes` the user is asked — the whole
//! command, or a diff of the change (`show.rs`), with the spinner held so the question stays on
//! the screen — and may answer yes, no (with a reason the model reads), always for this tool, or
//! always for commands starting like this one. Without a terminal to ask on, the call is refused
//! (fail closed) and counted, so the run can say how many were refused and how to allow them.
//! `[approvals] allow/deny` rules of `agent.toml` apply before anyone is asked. Ctrl-C while a
//! question waits cancels the run at once, without waiting for Enter. The same terminal is asked
//! whether a command the sandbox refused runs again without it (`rerun.rs`).

mod rerun;
mod show;

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agent_runner::approval_rules::suggested_prefix;
use agent_runner::{
    Approval, ApprovalDecision, ApprovalHandler, ApprovalRequest, ApprovalRules, RuleVerdict,
};
use async_trait::async_trait;
use serde::Deserialize;

use crate::exit::UsageError;

/// `[approvals]` of `agent.toml`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApprovalsConfig {
    /// Calls that run without asking (`bash(cargo test)`, `write_file(src/**)`, `read_file`).
    #[serde(default)]
    pub(crate) allow: Vec<String>,
    /// Calls that are always refused, whatever else says.
    #[serde(default)]
    pub(crate) deny: Vec<String>,
}

/// The rules of `[approvals]`; a rule that cannot be read is a configuration error naming it
/// and the file.
pub(crate) fn rules(
    config: Option<&ApprovalsConfig>,
    file: Option<&std::path::Path>,
) -> Result<ApprovalRules, UsageError> {
    let Some(config) = config else {
        return Ok(ApprovalRules::default());
    };
    ApprovalRules::parse(&config.allow, &config.deny).map_err(|error| {
        let place = file
            .map(|path| format!(" in {}", path.display()))
            .unwrap_or_default();
        UsageError(format!("invalid configuration{place}: [approvals] {error}"))
    })
}

/// The approval of a run: everything with `--yes`, else the terminal (refusing when there is
/// none). The approver is returned too, to read what it refused.
pub(crate) fn policy(yes: bool, workspace: PathBuf) -> (Approval, Option<Arc<TerminalApprover>>) {
    if yes {
        return (Approval::Allow, None);
    }
    let approver = Arc::new(TerminalApprover {
        workspace,
        session: Mutex::new(ApprovalRules::default()),
        refused: AtomicUsize::new(0),
    });
    (Approval::Ask(approver.clone()), Some(approver))
}

/// Asks on the terminal, one call at a time, and remembers the "always" answers of the session.
pub(crate) struct TerminalApprover {
    workspace: PathBuf,
    /// The "always" answers given so far.
    session: Mutex<ApprovalRules>,
    /// How many calls were refused because there was no terminal to ask on.
    refused: AtomicUsize,
}

/// The reason given to the model when nobody could be asked.
pub(crate) const NO_TERMINAL: &str = "risky tool calls need approval, and there is no terminal to ask on; rerun with --yes to approve them";

/// What the user answered.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    Yes,
    No(String),
    AlwaysTool,
    AlwaysPrefix(String),
}

impl TerminalApprover {
    /// How many calls were refused for lack of a terminal so far, and forgets them (so that
    /// each turn of a chat reports its own).
    pub(crate) fn take_refused(&self) -> usize {
        self.refused.swap(0, Ordering::Relaxed)
    }

    fn remember(&self, rule: &str) {
        let mut session = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = session.allow(rule);
    }

    fn allowed_this_session(&self, request: &ApprovalRequest) -> bool {
        let session = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        matches!(
            session.verdict(&request.tool_name, &request.arguments, &self.workspace),
            Some(RuleVerdict::Allow(_))
        )
    }
}

#[async_trait]
impl ApprovalHandler for TerminalApprover {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        // A call asked about for a note is asked every time: no earlier answer covers it.
        if request.note.is_none() && self.allowed_this_session(&request) {
            return ApprovalDecision::Approve;
        }
        if !std::io::stdin().is_terminal() {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return ApprovalDecision::Reject {
                reason: NO_TERMINAL.into(),
            };
        }
        let color = crate::output::color(true);
        let mut described = show::describe(
            &request.tool_name,
            &request.arguments,
            &self.workspace,
            color,
        );
        if let Some(note) = &request.note {
            described.push_str(&format!("\n  ! {note}"));
        }
        let prefix = (request.tool_name == "bash" && request.note.is_none())
            .then(|| command_of(&request.arguments))
            .flatten()
            .and_then(|command| suggested_prefix(&command));
        let choices = choices(&request.tool_name, prefix.as_deref());
        let tool = request.tool_name.clone();
        let asked = prefix.clone();
        // The run drops this future when it is cancelled (Ctrl-C): the question then stops
        // waiting for its answer at once.
        let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
        let stopped = stop.0.clone();
        let answer = tokio::task::spawn_blocking(move || {
            crate::output::suspended(|| ask(&described, &choices, asked.as_deref(), &stopped))
        })
        .await
        .unwrap_or_else(|_| Answer::No(String::new()));
        drop(stop);
        match answer {
            Answer::Yes => ApprovalDecision::Approve,
            Answer::AlwaysTool => {
                self.remember(&tool);
                ApprovalDecision::Approve
            }
            Answer::AlwaysPrefix(prefix) => {
                self.remember(&format!("bash({prefix})"));
                ApprovalDecision::Approve
            }
            Answer::No(reason) if reason.is_empty() => ApprovalDecision::Reject {
                reason: "the user declined".into(),
            },
            Answer::No(reason) => ApprovalDecision::Reject { reason },
        }
    }
}

/// The lines that describe a call before the user decides, without colours (the full-screen
/// UI colours them itself): the whole command, or a diff of the change.
pub(crate) fn describe_plain(request: &ApprovalRequest, workspace: &std::path::Path) -> String {
    show::describe(&request.tool_name, &request.arguments, workspace, false)
}

/// The command of a `bash` call.
fn command_of(arguments: &str) -> Option<String> {
    let args: serde_json::Value = serde_json::from_str(arguments).ok()?;
    args.get("command")?.as_str().map(str::to_owned)
}

/// The line of choices under the question.
fn choices(tool: &str, prefix: Option<&str>) -> String {
    let mut line =
        format!("[y] yes · [n] no (`n <why>` tells the model) · [a] always {tool} this session");
    if let Some(prefix) = prefix {
        line.push_str(&format!(" · [p] always `{prefix} …`"));
    }
    line
}

/// Sets its flag when dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Prints the question and reads answers until one is understood; end of input, or `stop`
/// set while waiting, is "no".
fn ask(described: &str, choices: &str, prefix: Option<&str>, stop: &AtomicBool) -> Answer {
    let mut stderr = std::io::stderr();
    let _ = write!(
        stderr,
        "\n? {described}\n  {choices}\n  [y/n/a{}] ",
        if prefix.is_some() { "/p" } else { "" }
    );
    let _ = stderr.flush();
    loop {
        let Some(line) = read_line(stop) else {
            return Answer::No(String::new());
        };
        if let Some(answer) = parse(&line, prefix) {
            return answer;
        }
        let _ = write!(
            stderr,
            "  answer y, n, a{}: ",
            if prefix.is_some() { " or p" } else { "" }
        );
        let _ = stderr.flush();
    }
}

/// The next line typed on standard input, waited for in short polls so that `stop` ends the
/// wait within a tenth of a second; `None` at the end of input or when stopped.
fn read_line(stop: &AtomicBool) -> Option<String> {
    use std::os::fd::AsFd;
    let stdin = std::io::stdin();
    loop {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let mut fds = [nix::poll::PollFd::new(
            stdin.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        match nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(100u16)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => {}
            // Ready, or not pollable: read.
            Ok(_) | Err(_) => break,
        }
    }
    let mut line = String::new();
    match stdin.lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

/// An answer as typed: `y`, `n`, `n <reason>`, `a`, `p` (when a prefix is offered); an empty
/// line is no.
fn parse(line: &str, prefix: Option<&str>) -> Option<Answer> {
    let line = line.trim();
    let end = line
        .find(|c: char| c.is_whitespace() || matches!(c, ':' | ',' | '-'))
        .unwrap_or(line.len());
    let (word, rest) = line.split_at(end);
    let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, ':' | ',' | '-'));
    match word.to_lowercase().as_str() {
        "y" | "yes" => Some(Answer::Yes),
        "" | "n" | "no" => Some(Answer::No(rest.to_owned())),
        "a" | "always" => Some(Answer::AlwaysTool),
        "p" if prefix.is_some() => prefix.map(|p| Answer::AlwaysPrefix(p.to_owned())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_with_their_reasons() {
        assert_eq!(parse("y\n", None), Some(Answer::Yes));
        assert_eq!(parse("\n", None), Some(Answer::No(String::new())));
        assert_eq!(
            parse("n: use cargo check instead\n", None),
            Some(Answer::No("use cargo check instead".into()))
        );
        assert_eq!(parse("A\n", None), Some(Answer::AlwaysTool));
        assert_eq!(
            parse("p\n", Some("cargo test")),
            Some(Answer::AlwaysPrefix("cargo test".into()))
        );
        assert_eq!(parse("p\n", None), None);
        assert_eq!(parse("maybe\n", None), None);
    }

    #[test]
    fn bad_rules_name_the_file_and_the_rule() {
        let config = ApprovalsConfig {
            allow: vec!["bash(cargo test".into()],
            deny: Vec::new(),
        };
        let error = rules(Some(&config), Some(std::path::Path::new("/p/agent.toml")))
            .unwrap_err()
            .to_string();
        assert!(error.contains("/p/agent.toml"), "{error}");
        assert!(error.contains("\"bash(cargo test\""), "{error}");
    }
}
