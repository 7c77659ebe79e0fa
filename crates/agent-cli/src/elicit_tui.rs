//! A server's questions to the person (MCP elicitation) in the full-screen UI: each becomes a
//! form of `agent-tui` (one field at a time, defaults and choices from the schema), and the
//! person's answer goes back to the server.

use agent_mcp::{ElicitationAnswer, ElicitationKind, ElicitationRequest, Elicitor};
use agent_tui::{FormAnswer, FormAsker, FormQuestion};
use async_trait::async_trait;

/// Asks on the UI's screen.
#[derive(Debug)]
pub(crate) struct TuiElicitor {
    asker: FormAsker,
}

impl TuiElicitor {
    /// Asks through `asker`, whose questions the session shows.
    pub(crate) fn new(asker: FormAsker) -> Self {
        Self { asker }
    }
}

#[async_trait]
impl Elicitor for TuiElicitor {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        let (form, url) = match request.kind {
            ElicitationKind::Form { form } => (Some(form), None),
            ElicitationKind::Url { url, .. } => (None, Some(url)),
        };
        let (question, answer) = FormQuestion::new(request.server, request.message, form, url);
        match self.asker.ask(question, answer).await {
            FormAnswer::Accept(content) => ElicitationAnswer::Accept(content),
            FormAnswer::Decline => ElicitationAnswer::Decline,
            FormAnswer::Cancel => ElicitationAnswer::Cancel,
        }
    }
}
