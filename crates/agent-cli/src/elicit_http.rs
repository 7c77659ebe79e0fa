//! A server's questions to the person (MCP elicitation) in a served run: each waits on the
//! HTTP server's board (`/api/traces/{id}/elicitations`) for an answer from the viewer or any
//! client, and is declined when none comes in time or when it came outside a tool call (no run
//! to show it under).

use std::sync::Arc;

use agent_api::{ElicitationMode, ElicitationQuestion, ElicitationReply, HttpElicitations};
use agent_mcp::{ElicitationAnswer, ElicitationKind, ElicitationRequest, Elicitor};
use async_trait::async_trait;

/// The board of the questions MCP servers ask during a run served beside it (`agent run
/// --serve`): one per process, shared by the run's MCP client and the server.
pub(crate) fn run_board() -> Arc<HttpElicitations> {
    static BOARD: std::sync::OnceLock<Arc<HttpElicitations>> = std::sync::OnceLock::new();
    BOARD.get_or_init(Arc::default).clone()
}

/// Asks over HTTP, under the trace of the tool call the question came during.
#[derive(Debug)]
pub(crate) struct HttpElicitor {
    board: Arc<HttpElicitations>,
}

impl HttpElicitor {
    /// Asks on `board`.
    pub(crate) fn new(board: Arc<HttpElicitations>) -> Self {
        Self { board }
    }
}

#[async_trait]
impl Elicitor for HttpElicitor {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        let Some(trace_id) = request.trace_id else {
            tracing::warn!(server = %request.server,
                "an MCP server asked a question outside a tool call, with no run to show it \
                 under; declined: {}", request.message);
            return ElicitationAnswer::Decline;
        };
        let mode = match request.kind {
            ElicitationKind::Form { form } => ElicitationMode::Form { form },
            ElicitationKind::Url { url, .. } => ElicitationMode::Url { url },
        };
        let question = ElicitationQuestion {
            server: request.server,
            message: request.message,
            mode,
        };
        match self.board.ask(&trace_id, question).await {
            ElicitationReply::Accept(content) => ElicitationAnswer::Accept(content),
            ElicitationReply::Decline => ElicitationAnswer::Decline,
            ElicitationReply::Cancel => ElicitationAnswer::Cancel,
        }
    }
}
