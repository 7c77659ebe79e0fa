//! The MCP servers of one session (a run, or a server's lifetime): started side by side, their
//! tools (and the resource tools, when a server has resources) added to a `ToolRegistry`, their
//! lists followed as they change, shut down together. A server that fails to start is reported
//! (a `tracing` warning and [`McpServers::failures`]) and left out; the others go on.

use std::collections::BTreeMap;
use std::sync::Arc;

use agent_tools::{Tool, ToolRegistry};

use crate::client::ClientOptions;
use crate::config::ServerConfig;
use crate::error::McpError;
use crate::resource_tools::resource_tools;
use crate::server::McpServer;
use crate::tool::McpTool;

/// Which of a server's lists changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum List {
    Tools,
    Resources,
}

/// The started MCP servers of a session and the tools they offer.
#[derive(Debug, Default)]
pub struct McpServers {
    servers: Vec<Arc<McpServer>>,
    failures: Vec<McpError>,
}

impl McpServers {
    /// Starts every server of `servers` at once (see [`McpConfig::select`]).
    ///
    /// Never fails: a server that cannot start is logged as a warning and kept in
    /// [`McpServers::failures`]; its tools are not offered.
    ///
    /// [`McpConfig::select`]: crate::McpConfig::select
    pub async fn start(servers: BTreeMap<String, ServerConfig>) -> Self {
        Self::start_with(servers, ClientOptions::default()).await
    }

    /// [`McpServers::start`] with what the client offers every server: roots, and someone to
    /// answer their questions.
    pub async fn start_with(
        servers: BTreeMap<String, ServerConfig>,
        options: ClientOptions,
    ) -> Self {
        let options = Arc::new(options);
        let started = futures::future::join_all(servers.into_iter().map(|(name, config)| {
            let options = options.clone();
            async move { McpServer::start_with(&name, config, options).await }
        }))
        .await;
        let mut session = Self::default();
        // Resources are listed once at start, then again when a server says they changed.
        let listed = futures::future::join_all(started.iter().flatten().map(|server| async {
            if let Err(error) = server.refresh_resources().await {
                tracing::warn!("{error}; its resources are not listed");
            }
        }));
        listed.await;
        for result in started {
            match result {
                Ok(server) => session.servers.push(server),
                Err(error) => {
                    tracing::warn!("{error}; its tools are not available");
                    session.failures.push(error);
                }
            }
        }
        session
    }

    /// The servers that started, by name.
    pub fn servers(&self) -> &[Arc<McpServer>] {
        &self.servers
    }

    /// The server named `name`, if it started.
    pub fn server(&self, name: &str) -> Option<&Arc<McpServer>> {
        self.servers.iter().find(|server| server.name() == name)
    }

    /// Why the servers that did not start did not.
    pub fn failures(&self) -> &[McpError] {
        &self.failures
    }

    /// The tools offered by the servers (allowed and not denied), in server then listing order.
    pub fn tools(&self) -> Vec<McpTool> {
        self.servers
            .iter()
            .flat_map(|server| {
                server
                    .listed_tools()
                    .iter()
                    .filter(|info| server.config().offers(&info.name))
                    .map(|info| McpTool::new(server.clone(), info))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Adds the offered tools to `registry`. A tool whose name is taken (two MCP names that
    /// differ only in characters a tool name cannot hold) is left out with a warning.
    ///
    /// Returns the registered names.
    pub fn register(&self, registry: &mut ToolRegistry) -> Vec<String> {
        let mut names = Vec::new();
        let tools = self
            .tools()
            .into_iter()
            .map(|tool| Arc::new(tool) as Arc<dyn Tool>)
            .chain(resource_tools(&self.servers));
        for tool in tools {
            let name = tool.definition().name;
            match registry.register(tool) {
                Ok(()) => names.push(name),
                Err(error) => tracing::warn!("an MCP tool is not offered: {error}"),
            }
        }
        names
    }

    /// Follows the servers' tool and resource list changes (`notifications/tools/list_changed`,
    /// `notifications/resources/list_changed`) for as long as the servers live: at each change,
    /// lists what changed again on every server that announced it, then calls `changed` — e.g.
    /// to give a runner the new tools before its next turn. A server that cannot be listed keeps
    /// its previous list (a warning says why).
    pub async fn follow_tool_changes(&self, mut changed: impl FnMut(&Self)) {
        let mut receivers: Vec<_> = self
            .servers
            .iter()
            .flat_map(|server| {
                [
                    (server.clone(), List::Tools, server.tool_changes()),
                    (server.clone(), List::Resources, server.resource_changes()),
                ]
            })
            .collect();
        // A change announced before this started following is not lost.
        let mut pending: Vec<usize> = receivers
            .iter()
            .enumerate()
            .filter(|(_, (_, _, receiver))| *receiver.borrow() > 0)
            .map(|(index, _)| index)
            .collect();
        while !receivers.is_empty() {
            if !pending.is_empty() {
                for index in std::mem::take(&mut pending) {
                    if let Some((server, list, _)) = receivers.get(index) {
                        refresh(server, *list).await;
                    }
                }
                changed(self);
                continue;
            }
            let waits = receivers
                .iter_mut()
                .map(|(_, _, receiver)| Box::pin(receiver.changed()));
            let (result, index, _) = futures::future::select_all(waits).await;
            if result.is_err() {
                // The server is gone: nothing more will come from it.
                receivers.remove(index);
                continue;
            }
            for (position, (server, list, receiver)) in receivers.iter_mut().enumerate() {
                let announced = position == index || receiver.has_changed().unwrap_or(false);
                if announced {
                    receiver.borrow_and_update();
                    refresh(server, *list).await;
                }
            }
            changed(self);
        }
    }

    /// Shuts every server down (gracefully, bounded); calls made afterwards fail.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.servers.iter().map(|server| server.shutdown())).await;
    }
}

/// Lists `list` of `server` again; a failure keeps the previous list, with a warning.
async fn refresh(server: &McpServer, list: List) {
    let (result, what) = match list {
        List::Tools => (server.refresh_tools().await, "tools"),
        List::Resources => (server.refresh_resources().await, "resources"),
    };
    match result {
        Ok(()) => tracing::info!(server = server.name(), "MCP server's {what} listed again"),
        Err(error) => tracing::warn!("{error}; its previous {what} stay"),
    }
}
