//! Approvals asked in the UI: the runner's [`ApprovalHandler`] side ([`Approver`]) sends each
//! risky call, described by the embedder (the whole command, or a diff of the change), to the
//! screen and waits for the answer of the modal: yes, no with a reason the model reads, always
//! this tool, or always commands starting like this one. The rules are the session's of every
//! front end ([`SessionApprovals`]): "always" answers hold for the rest of the session, but a
//! call an approval rule cannot check is always asked, with its warning and without "always";
//! a rerun without the sandbox is offered only for a call the person approved in the modal. A
//! question nobody answers (the UI closed, the turn stopped) is a refusal.

use std::path::PathBuf;

use agent_runner::interaction::{Check, Question, SessionApprovals};
use agent_runner::{
    ApprovalDecision, ApprovalHandler, ApprovalRequest, RerunApprover, RerunRequest, async_trait,
};
use tokio::sync::{mpsc, oneshot};

pub use agent_runner::interaction::Answer;

/// How the embedder describes a call before the user decides: the lines of the command or diff.
pub type Describe = std::sync::Arc<dyn Fn(&ApprovalRequest) -> String + Send + Sync>;

/// A question waiting on the screen.
#[derive(Debug)]
pub struct Ask {
    /// The tool.
    pub tool: String,
    /// The lines that describe the call.
    pub description: String,
    /// Why the call is asked about although an answer or a rule would not ask otherwise (an
    /// approval rule cannot check it): shown above the choices; "always" is not offered then.
    pub warning: Option<String>,
    /// Whether "always" answers are offered.
    pub always: bool,
    /// The prefix "always" may allow, for a command.
    pub prefix: Option<String>,
    reply: oneshot::Sender<Answer>,
}

impl Ask {
    /// A question and the receiver of its answer (for tests and other front ends); "always"
    /// offered.
    pub fn new(
        tool: impl Into<String>,
        description: impl Into<String>,
        prefix: Option<String>,
    ) -> (Self, oneshot::Receiver<Answer>) {
        let (reply, answer) = oneshot::channel();
        let ask = Self {
            tool: tool.into(),
            description: description.into(),
            warning: None,
            always: true,
            prefix,
            reply,
        };
        (ask, answer)
    }

    /// The question about `question`'s call, described by `description`.
    fn about(question: Question, description: String) -> (Self, oneshot::Receiver<Answer>) {
        let always = question.offers_always();
        let (mut ask, answer) = Self::new(question.tool, description, question.prefix);
        ask.warning = question.warning;
        ask.always = always;
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
    session: SessionApprovals,
}

impl Approver {
    /// A handler whose questions arrive on the returned receiver, described by `describe`;
    /// "always" rules are matched against calls in `workspace`.
    pub fn new(describe: Describe, workspace: PathBuf) -> (std::sync::Arc<Self>, Questions) {
        let (questions, receiver) = mpsc::unbounded_channel();
        let approver = std::sync::Arc::new(Self {
            questions,
            describe,
            session: SessionApprovals::new(workspace),
        });
        (approver, receiver)
    }
}

/// The question about a command the sandbox refused, above the command.
const RERUN_QUESTION: &str = "The sandbox refused this command: run it again without the sandbox?";

/// A command the sandbox refused is asked about in the same modal, when the person approved
/// the call itself; only yes (or "always", which is not remembered) runs it again, once.
#[async_trait]
impl RerunApprover for Approver {
    async fn rerun_unsandboxed(&self, request: RerunRequest) -> bool {
        if !self.session.may_offer_rerun(&request) {
            return false;
        }
        let description = format!("{RERUN_QUESTION}\n  $ {}", request.command);
        let (mut ask, answer) = Ask::new("bash", description, None);
        ask.always = false;
        if self.questions.send(ask).is_err() {
            return false;
        }
        matches!(answer.await, Ok(Answer::Yes | Answer::AlwaysTool))
    }
}

#[async_trait]
impl ApprovalHandler for Approver {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        let question = match self.session.check(&request) {
            Check::Approved => return ApprovalDecision::Approve,
            Check::Ask(question) => question,
        };
        let (ask, answer) = Ask::about(question, (self.describe)(&request));
        if self.questions.send(ask).is_err() {
            return SessionApprovals::unattended(&request, "the user interface is closed");
        }
        match answer.await {
            Ok(answer) => self.session.answer(&request, answer),
            Err(_) => ApprovalDecision::Reject {
                reason: "the user cancelled".into(),
            },
        }
    }
}
