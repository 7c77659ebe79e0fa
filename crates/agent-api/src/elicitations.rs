//! Elicitations over HTTP: an MCP server's question to the person (a form with a JSON schema, or
//! a page to open) asked during a tool call of a served run waits here, beside the run's pending
//! approvals, until a client answers it with `POST /api/traces/{id}/elicitations/{eid}` or the
//! wait times out (declined).
//!
//! The MCP client of the runs asks through [`HttpElicitations::ask`]; the routes list and answer
//! (`routes/elicitations.rs`). A form's content is checked against the requested schema before it
//! reaches the server (the typed form of `agent_runner::interaction`, shared by every front end). The ids of recently answered questions are
//! remembered, so a second answer gets 409 rather than 404 (the waiting board, `board.rs`,
//! shared with approvals).

use std::time::Duration;

use agent_execution::ids::now_rfc3339;
use agent_runner::interaction::Form;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::board::{Board, Refusal};
use crate::error::ApiError;

/// How long a question waits for an answer before it is declined.
pub const DEFAULT_ELICITATION_TIMEOUT: Duration = Duration::from_secs(600);

/// How many answered ids are remembered per trace.
const ANSWERED_MEMORY: usize = 256;

/// What a server asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationMode {
    /// Fields to fill in: the typed form of the requested schema.
    Form {
        /// The form, with the schema as the server sent it.
        form: Form,
    },
    /// A page to open outside the agent; accepting means the person went there.
    Url {
        /// The page.
        url: String,
    },
}

/// A server's question, as the MCP client passes it on.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationQuestion {
    /// The name of the MCP server asking.
    pub server: String,
    /// What the server says it needs.
    pub message: String,
    /// A form or a page.
    pub mode: ElicitationMode,
}

/// The answer to a question.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationReply {
    /// Answered: the form's values by property name (empty for a page).
    Accept(Map<String, Value>),
    /// Refused, or nobody answered in time.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// A question waiting for an answer, as `GET /api/traces/{id}/elicitations` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct PendingElicitation {
    /// The question's id: the last segment of its answer URL.
    pub id: String,
    /// The MCP server asking.
    pub server: String,
    /// What the server says it needs, for people.
    pub message: String,
    /// `form` (fill in `requested_schema`) or `url` (open `url`).
    pub mode: String,
    /// The JSON schema of the form's content (form mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Value>,
    /// The page to open (URL mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// When the server asked (RFC 3339).
    pub requested_at: String,
    /// The typed form its answer is checked against (form mode).
    #[serde(skip)]
    pub(crate) form: Option<Form>,
}

/// The questions of served runs waiting for an answer, per trace.
pub struct HttpElicitations {
    board: Board<PendingElicitation, ElicitationReply>,
    timeout: Duration,
}

impl Default for HttpElicitations {
    fn default() -> Self {
        Self::new(DEFAULT_ELICITATION_TIMEOUT)
    }
}

impl std::fmt::Debug for HttpElicitations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpElicitations")
            .field("waiting", &self.board.waiting())
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl HttpElicitations {
    /// An empty board whose questions are declined after `timeout` without an answer.
    pub fn new(timeout: Duration) -> Self {
        Self {
            board: Board::new(ANSWERED_MEMORY),
            timeout,
        }
    }

    /// The questions of a trace waiting for an answer, oldest first.
    pub fn pending(&self, trace_id: &str) -> Vec<PendingElicitation> {
        self.board.pending(trace_id)
    }

    /// Asks `question` for the run of `trace_id` and waits for the answer; declined when none
    /// comes within the board's timeout.
    pub async fn ask(&self, trace_id: &str, question: ElicitationQuestion) -> ElicitationReply {
        let (mode, form, url) = match question.mode {
            ElicitationMode::Form { form } => ("form", Some(form), None),
            ElicitationMode::Url { url } => ("url", None, Some(url)),
        };
        // The question leaves the board however the wait ends (answered, timed out, dropped).
        let (waiting, receiver) = self.board.park(trace_id, |next| {
            let id = format!("elicitation-{next}");
            let pending = PendingElicitation {
                id: id.clone(),
                server: question.server,
                message: question.message,
                mode: mode.to_owned(),
                requested_schema: form.as_ref().map(|form| form.schema().clone()),
                form,
                url,
                requested_at: now_rfc3339(),
            };
            (id, pending)
        });
        let id = waiting.id();
        match tokio::time::timeout(self.timeout, receiver).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(_)) => ElicitationReply::Decline,
            Err(_) => {
                tracing::warn!(%trace_id, elicitation_id = %id,
                    "nobody answered an MCP server's question in {:?}; declined", self.timeout);
                ElicitationReply::Decline
            }
        }
    }

    /// Answers a waiting question. 404 if the trace has no such question waiting, 409 if it was
    /// answered already, 400 `invalid_content` when an accepted form's content does not fit the
    /// requested schema (the question keeps waiting).
    pub fn answer(
        &self,
        trace_id: &str,
        id: &str,
        reply: ElicitationReply,
    ) -> Result<(), ApiError> {
        let check = |pending: &PendingElicitation| match (&reply, &pending.form) {
            (ElicitationReply::Accept(content), Some(form)) => form
                .check(content)
                .map_err(|message| ApiError::bad_request("invalid_content", message)),
            (ElicitationReply::Accept(content), None) if !content.is_empty() => {
                Err(ApiError::bad_request(
                    "invalid_content",
                    "a page (url mode) is accepted without content",
                ))
            }
            _ => Ok(()),
        };
        self.board
            .resolve(trace_id, id, check, reply.clone())
            .map_err(|refusal| match refusal {
                Refusal::Unknown => ApiError::NotFound(format!(
                    "trace {trace_id} has no elicitation {id} waiting for an answer"
                )),
                Refusal::Resolved => ApiError::conflict(
                    "already_answered",
                    format!("elicitation {id} of trace {trace_id} was already answered"),
                ),
                Refusal::Invalid(error) => error,
                Refusal::NotWaiting => ApiError::conflict(
                    "not_waiting",
                    format!("the run of trace {trace_id} stopped waiting for elicitation {id}"),
                ),
            })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn form() -> ElicitationQuestion {
        ElicitationQuestion {
            server: "asking".into(),
            message: "Who is there?".into(),
            mode: ElicitationMode::Form {
                form: Form::from_schema(&json!({"type": "object",
                    "properties": {"name": {"type": "string"}}, "required": ["name"]})),
            },
        }
    }

    async fn listed(board: &HttpElicitations, trace: &str) -> PendingElicitation {
        loop {
            if let Some(first) = board.pending(trace).into_iter().next() {
                return first;
            }
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn a_question_waits_until_answered_and_bad_content_keeps_it_waiting() {
        let board = Arc::new(HttpElicitations::default());
        let asking = tokio::spawn({
            let board = board.clone();
            async move { board.ask("t1", form()).await }
        });
        let pending = listed(&board, "t1").await;
        assert_eq!(pending.mode, "form");
        assert!(board.pending("t2").is_empty());
        let bad = board.answer("t1", &pending.id, ElicitationReply::Accept(Map::new()));
        let error = bad.unwrap_err();
        assert_eq!(error.status(), 400);
        assert!(error.to_string().contains("name"), "{error}");
        assert_eq!(board.pending("t1").len(), 1);
        let missing = board.answer("t1", "elicitation-99", ElicitationReply::Decline);
        assert_eq!(missing.unwrap_err().status(), 404);
        let content = json!({"name": "Ada"}).as_object().unwrap().clone();
        board
            .answer("t1", &pending.id, ElicitationReply::Accept(content.clone()))
            .unwrap();
        assert_eq!(asking.await.unwrap(), ElicitationReply::Accept(content));
        assert!(board.pending("t1").is_empty());
        let again = board.answer("t1", &pending.id, ElicitationReply::Decline);
        assert_eq!(again.unwrap_err().status(), 409);
    }

    #[tokio::test]
    async fn an_unanswered_question_is_declined_after_the_timeout() {
        let board = HttpElicitations::new(Duration::from_millis(50));
        assert_eq!(board.ask("t1", form()).await, ElicitationReply::Decline);
        assert!(board.pending("t1").is_empty());
    }
}
