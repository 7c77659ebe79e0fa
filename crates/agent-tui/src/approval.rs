//! Approvals asked in the UI: the runner's [`ApprovalHandler`] side ([`Approver`]) sends each
//! risky call, described by the embedder (the whole command, or a diff of the change), to the
//! screen and waits for the answer of the modal (`modal.rs`): yes, no with a reason the model
//! reads, always this tool, or always commands starting like this one. "Always" answers hold for
//! the rest of the session. A command the sandbox refused is asked about with what it printed and
//! the sandbox's rule: run it once more without the sandbox, or not. A question nobody answers
//! (the UI closed, the turn stopped) is a refusal.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_runner::approval_rules::suggested_prefix;
use agent_runner::{
    ApprovalDecision, ApprovalHandler, ApprovalRequest, ApprovalRules, RerunApprover, RerunRequest,
    RuleVerdict, async_trait,
};
use tokio::sync::{mpsc, oneshot};

/// How the embedder describes a call before the user decides: the lines of the command or diff.
pub type Describe = Arc<dyn Fn(&ApprovalRequest) -> String + Send + Sync>;

/// What the user answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Run the call.
    Yes,
    /// Do not run it; the reason (may be empty) is told to the model.
    No(String),
    /// Run it, and every call of this tool for the rest of the session.
    AlwaysTool,
    /// Run it, and every command starting with this prefix for the rest of the session.
    AlwaysPrefix(String),
}

/// What a question is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskKind {
    /// A risky call waiting for approval.
    Call,
    /// A command the sandbox refused, to run once more without the sandbox or not; the rule
    /// of the sandbox that refused it, in words.
    Rerun(String),
}

/// A question waiting on the screen.
#[derive(Debug)]
pub struct Ask {
    /// The tool.
    pub tool: String,
    /// The lines that describe the call.
    pub description: String,
    /// The prefix "always" may allow, for a command.
    pub prefix: Option<String>,
    /// What it is about.
    pub kind: AskKind,
    reply: oneshot::Sender<Answer>,
}

impl Ask {
    /// A question and the receiver of its answer (for tests and other front ends).
    pub fn new(
        tool: impl Into<String>,
        description: impl Into<String>,
        prefix: Option<String>,
    ) -> (Self, oneshot::Receiver<Answer>) {
        let (reply, answer) = oneshot::channel();
        let ask = Self {
            tool: tool.into(),
            description: description.into(),
            prefix,
            kind: AskKind::Call,
            reply,
        };
        (ask, answer)
    }

    /// The question whether `request`'s command, which the sandbox refused, runs once more
    /// without it: the command, how it ended and the last lines it printed, and the rule.
    pub fn rerun(request: &RerunRequest) -> (Self, oneshot::Receiver<Answer>) {
        let printed: Vec<&str> = request
            .output
            .lines()
            .filter(|line| !line.starts_with("note: ") && !line.starts_with("--- "))
            .filter(|line| !line.trim().is_empty())
            .collect();
        let mut description = format!("$ {}", request.command.trim_end());
        let tail = printed.len().saturating_sub(RERUN_LINES);
        if tail > 0 {
            description.push_str(&format!("\n… {tail} lines before"));
        }
        for line in &printed[tail..] {
            description.push('\n');
            description.push_str(line);
        }
        let (mut ask, answer) = Self::new("bash", description, None);
        ask.kind = AskKind::Rerun(request.rule.clone());
        (ask, answer)
    }

    /// Answers the question.
    pub fn answer(self, answer: Answer) {
        let _ = self.reply.send(answer);
    }
}

/// The questions the UI is to ask, as the [`Approver`] sends them.
pub type Questions = mpsc::UnboundedReceiver<Ask>;

/// The runner's approval handler for a session in the UI.
pub struct Approver {
    questions: mpsc::UnboundedSender<Ask>,
    describe: Describe,
    workspace: PathBuf,
    /// The "always" answers given so far.
    session: Mutex<ApprovalRules>,
}

impl Approver {
    /// A handler whose questions arrive on the returned receiver, described by `describe`;
    /// "always" rules are matched against calls in `workspace`.
    pub fn new(describe: Describe, workspace: PathBuf) -> (Arc<Self>, Questions) {
        let (questions, receiver) = mpsc::unbounded_channel();
        let approver = Arc::new(Self {
            questions,
            describe,
            workspace,
            session: Mutex::new(ApprovalRules::default()),
        });
        (approver, receiver)
    }

    fn allowed(&self, request: &ApprovalRequest) -> bool {
        let session = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        matches!(
            session.verdict(&request.tool_name, &request.arguments, &self.workspace),
            Some(RuleVerdict::Allow(_))
        )
    }

    fn remember(&self, rule: &str) {
        let mut session = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = session.allow(rule);
    }
}

/// How far the question on the screen is answered (`modal.rs` takes the keys).
#[derive(Debug, Default)]
pub(crate) struct Modal {
    /// When the question on the screen appeared.
    pub(crate) opened: Option<std::time::Instant>,
    /// The choice picked and not confirmed yet.
    pub(crate) selected: Option<usize>,
    /// The reason being typed after "no".
    pub(crate) reason: Option<String>,
}

impl Modal {
    /// A question appears at `now`: nothing is picked.
    pub(crate) fn open(&mut self, now: std::time::Instant) {
        *self = Self {
            opened: Some(now),
            ..Self::default()
        };
    }
}

/// How many of the last lines a refused command printed its question shows.
const RERUN_LINES: usize = 8;

/// A command the sandbox refused is asked about in the same modal; only yes runs it again,
/// once.
#[async_trait]
impl RerunApprover for Approver {
    async fn rerun_unsandboxed(&self, request: RerunRequest) -> bool {
        let (ask, answer) = Ask::rerun(&request);
        if self.questions.send(ask).is_err() {
            return false;
        }
        matches!(answer.await, Ok(Answer::Yes))
    }
}

/// The command of a `bash` call.
fn command_of(arguments: &str) -> Option<String> {
    let args: serde_json::Value = serde_json::from_str(arguments).ok()?;
    args.get("command")?.as_str().map(str::to_owned)
}

#[async_trait]
impl ApprovalHandler for Approver {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        if self.allowed(&request) {
            return ApprovalDecision::Approve;
        }
        let prefix = (request.tool_name == "bash")
            .then(|| command_of(&request.arguments))
            .flatten()
            .and_then(|command| suggested_prefix(&command));
        let (ask, answer) = Ask::new(request.tool_name.clone(), (self.describe)(&request), prefix);
        if self.questions.send(ask).is_err() {
            return ApprovalDecision::Reject {
                reason: "the user interface is closed".into(),
            };
        }
        match answer.await {
            Ok(Answer::Yes) => ApprovalDecision::Approve,
            Ok(Answer::AlwaysTool) => {
                self.remember(&request.tool_name);
                ApprovalDecision::Approve
            }
            Ok(Answer::AlwaysPrefix(prefix)) => {
                self.remember(&format!("bash({prefix})"));
                ApprovalDecision::Approve
            }
            Ok(Answer::No(reason)) if reason.trim().is_empty() => ApprovalDecision::Reject {
                reason: "the user declined".into(),
            },
            Ok(Answer::No(reason)) => ApprovalDecision::Reject { reason },
            Err(_) => ApprovalDecision::Reject {
                reason: "the user cancelled".into(),
            },
        }
    }
}
