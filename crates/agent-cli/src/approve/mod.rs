//! Approval of risky tool calls on the terminal. Without `--yes` the user is asked — the whole
//! command, or a diff of the change (`show.rs`), with the spinner held so the question stays on
//! the screen — and may answer yes, no (with a reason the model reads), always for this tool, or
//! always for commands starting like this one. Without a terminal to ask on, the call is refused
//! (fail closed) and counted, so the run can say how many were refused and how to allow them.
//! `[approvals] allow/deny` rules of `agent.toml` apply before anyone is asked. Ctrl-C while a
//! question waits cancels the run at once, without waiting for Enter. The same terminal is asked
//! whether a command the sandbox refused runs again without it (`rerun.rs`).

//! Approval of risky tool calls on the terminal. Without `--yes` the user is asked — the whole
//! command, or a diff of the change (`show.rs`), with the spinner held so the question stays on
//! the screen — and may answer yes, no (with a reason the model reads), always for this tool, or
//! always for commands starting like this one, by the session rules every front end shares
//! (`agent_runner::interaction::SessionApprovals`): a call an approval rule cannot check is
//! always asked, with the warning and without "always". Without a terminal to ask on, the call
//! is refused (fail closed) and counted, so the run can say how many were refused and how to
//! allow them. `[approvals] allow/deny` rules of `agent.toml` apply before anyone is asked.
//! What was typed ahead is thrown away before each question, so keystrokes typed or injected
//! before it was shown cannot answer it. Ctrl-C while a question waits cancels the run at once,
//! without waiting for Enter. The same terminal is asked whether a command the sandbox refused
//! runs again without it (`rerun.rs`), for a call the user approved here only.

mod rerun;
mod show;

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use agent_runner::interaction::{Answer, Check, Question, SessionApprovals};
use agent_runner::{ApprovalDecision, ApprovalHandler, ApprovalRequest};
use async_trait::async_trait;

/// Asks on the terminal, one call at a time, by the session's rules.
pub(crate) struct TerminalApprover {
    workspace: PathBuf,
    session: SessionApprovals,
    /// How many calls were refused because there was no terminal to ask on.
    refused: AtomicUsize,
}

/// The reason given to the model when nobody could be asked.
pub(crate) const NO_TERMINAL: &str = "risky tool calls need approval, and there is no terminal to ask on; rerun with --yes to approve them";

impl TerminalApprover {
    /// An approver of runs in `workspace`, with no answers yet.
    pub(crate) fn new(workspace: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            session: SessionApprovals::new(workspace.clone()),
            workspace,
            refused: AtomicUsize::new(0),
        })
    }

    /// How many calls were refused for lack of a terminal so far, and forgets them (so that
    /// each turn of a chat reports its own).
    pub(crate) fn take_refused(&self) -> usize {
        self.refused.swap(0, Ordering::Relaxed)
    }
}

#[async_trait]
impl ApprovalHandler for TerminalApprover {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        let question = match self.session.check(&request) {
            Check::Approved => return ApprovalDecision::Approve,
            Check::Ask(question) => question,
        };
        if !std::io::stdin().is_terminal() {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return SessionApprovals::unattended(&request, NO_TERMINAL);
        }
        let color = crate::output::color(true);
        let mut described = show::describe(
            &request.tool_name,
            &request.arguments,
            &self.workspace,
            color,
        );
        if let Some(warning) = &question.warning {
            described.push_str(&format!("\n  ! {warning}"));
        }
        let choices = choices(&question);
        // The run drops this future when it is cancelled (Ctrl-C): the question then stops
        // waiting for its answer at once.
        let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
        let stopped = stop.0.clone();
        let answer = tokio::task::spawn_blocking(move || {
            crate::output::suspended(|| ask(&described, &choices, &question, &stopped))
        })
        .await
        .unwrap_or_else(|_| Answer::No(String::new()));
        drop(stop);
        self.session.answer(&request, answer)
    }
}

/// The lines that describe a call before the user decides, without colours (the full-screen
/// UI colours them itself): the whole command, or a diff of the change.
pub(crate) fn describe_plain(request: &ApprovalRequest, workspace: &std::path::Path) -> String {
    show::describe(&request.tool_name, &request.arguments, workspace, false)
}

/// The line of choices under the question: no "always" for a call with a warning.
fn choices(question: &Question) -> String {
    let mut line = "[y] yes · [n] no (`n <why>` tells the model)".to_owned();
    if question.offers_always() {
        line.push_str(&format!(" · [a] always {} this session", question.tool));
        if let Some(prefix) = &question.prefix {
            line.push_str(&format!(" · [p] always `{prefix} …`"));
        }
    }
    line
}

/// Throws away what was typed on the terminal and not read yet, so that keystrokes typed (or
/// injected) before a question was shown cannot answer it. Does nothing off a terminal.
pub(crate) fn flush_typed_ahead() {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let _ = nix::sys::termios::tcflush(&stdin, nix::sys::termios::FlushArg::TCIFLUSH);
    }
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
fn ask(described: &str, choices: &str, question: &Question, stop: &AtomicBool) -> Answer {
    let always = question.offers_always();
    let prefix = question.prefix.as_deref().filter(|_| always);
    let keys = match (always, prefix) {
        (false, _) => "y/n",
        (true, None) => "y/n/a",
        (true, Some(_)) => "y/n/a/p",
    };
    let mut stderr = std::io::stderr();
    flush_typed_ahead();
    let _ = write!(stderr, "\n? {described}\n  {choices}\n  [{keys}] ");
    let _ = stderr.flush();
    loop {
        let Some(line) = read_line(stop) else {
            return Answer::No(String::new());
        };
        if let Some(answer) = parse(&line, always, prefix) {
            return answer;
        }
        let _ = write!(stderr, "  answer {}: ", keys.replace('/', ", "));
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

/// An answer as typed: `y`, `n`, `n <reason>`, `a` (when "always" is offered), `p` (when a
/// prefix is offered); an empty line is no.
fn parse(line: &str, always: bool, prefix: Option<&str>) -> Option<Answer> {
    let line = line.trim();
    let end = line
        .find(|c: char| c.is_whitespace() || matches!(c, ':' | ',' | '-'))
        .unwrap_or(line.len());
    let (word, rest) = line.split_at(end);
    let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, ':' | ',' | '-'));
    match word.to_lowercase().as_str() {
        "y" | "yes" => Some(Answer::Yes),
        "" | "n" | "no" => Some(Answer::No(rest.to_owned())),
        "a" | "always" if always => Some(Answer::AlwaysTool),
        "p" => prefix.map(|p| Answer::AlwaysPrefix(p.to_owned())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_with_their_reasons() {
        assert_eq!(parse("y\n", true, None), Some(Answer::Yes));
        assert_eq!(parse("\n", true, None), Some(Answer::No(String::new())));
        assert_eq!(
            parse("n: use cargo check instead\n", true, None),
            Some(Answer::No("use cargo check instead".into()))
        );
        assert_eq!(parse("A\n", true, None), Some(Answer::AlwaysTool));
        assert_eq!(
            parse("p\n", true, Some("cargo test")),
            Some(Answer::AlwaysPrefix("cargo test".into()))
        );
        assert_eq!(parse("p\n", true, None), None);
        assert_eq!(parse("maybe\n", true, None), None);
        // Where "always" is not offered, `a` is no answer.
        assert_eq!(parse("a\n", false, None), None);
    }
}
