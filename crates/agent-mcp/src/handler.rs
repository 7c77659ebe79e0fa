//! What the client tells servers about itself, and what it hears from them: a server's
//! `notifications/tools/list_changed` bumps a counter its [`crate::McpServer`] exposes, so the
//! session can list the tools again between turns.

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::watch;

/// The client side of one connection.
#[derive(Clone)]
pub(crate) struct Handler {
    /// Bumped on each tool list change the server announces.
    pub(crate) changes: Arc<watch::Sender<u64>>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("agent", env!("CARGO_PKG_VERSION")),
        )
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        tracing::debug!("an MCP server's tool list changed");
        self.changes.send_modify(|count| *count += 1);
        std::future::ready(())
    }
}
