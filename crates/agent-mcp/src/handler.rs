//! What the client tells servers about itself, and how it answers them: the protocol version it
//! offers (the newest with an `initialize` handshake), its roots, its questions to the person
//! (elicitation) passed to the session's [`Elicitor`], and a server's
//! `notifications/{tools,prompts,resources}/list_changed`, which bump the counters its
//! [`crate::McpServer`] exposes so the session can list them again between turns.

use std::future::Future;
use std::sync::Arc;

// Roots are deprecated from protocol 2026-07-28 on; the versions this client speaks have them.
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorData, FormElicitationCapability, Implementation, RootsCapabilities,
    UrlElicitationCapability,
};
#[allow(deprecated)]
use rmcp::model::{ListRootsResult, Root};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::watch;

use crate::client::{
    ClientOptions, ElicitationAnswer, ElicitationKind, ElicitationRequest, Elicitor, file_uri,
};
use crate::version::OFFERED_VERSION;

/// The client side of one connection.
#[derive(Clone, Debug)]
pub(crate) struct Handler {
    /// The server's name, for the person asked a question.
    pub(crate) server: String,
    /// Bumped on each list change the server announces.
    pub(crate) changes: Arc<ListChanges>,
    /// Roots and the elicitor.
    pub(crate) options: Arc<ClientOptions>,
    /// The traces whose tool calls are in flight on the server.
    pub(crate) callers: Arc<Callers>,
    /// The last `403 insufficient_scope` challenge of an HTTP server.
    pub(crate) challenge: Arc<crate::challenge::Challenge>,
}

/// The traces whose tool calls are in flight on one server, oldest first: a server's question
/// comes while one of its calls runs, and belongs to that call's trace. JSON-RPC does not say
/// which call a question belongs to; with calls of several traces in flight at once, the newest
/// call's trace is taken.
#[derive(Debug, Default)]
pub(crate) struct Callers {
    calls: std::sync::Mutex<Vec<(u64, String)>>,
    next: std::sync::atomic::AtomicU64,
}

impl Callers {
    /// Notes a call of `trace_id` in flight until the returned guard is dropped.
    pub(crate) fn enter(self: &Arc<Self>, trace_id: &str) -> CallerGuard {
        let key = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.lock().push((key, trace_id.to_owned()));
        CallerGuard {
            callers: self.clone(),
            key,
        }
    }

    /// The trace of the newest call in flight.
    pub(crate) fn current(&self) -> Option<String> {
        self.lock().last().map(|(_, trace)| trace.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, String)>> {
        self.calls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Ends a call noted by [`Callers::enter`] when dropped.
pub(crate) struct CallerGuard {
    callers: Arc<Callers>,
    key: u64,
}

impl Drop for CallerGuard {
    fn drop(&mut self) {
        self.callers.lock().retain(|(key, _)| *key != self.key);
    }
}

/// How many times a server said each of its lists changed; a receiver wakes at each change.
#[derive(Debug)]
pub(crate) struct ListChanges {
    /// `notifications/tools/list_changed`.
    pub(crate) tools: watch::Sender<u64>,
    /// `notifications/prompts/list_changed`.
    pub(crate) prompts: watch::Sender<u64>,
    /// `notifications/resources/list_changed`.
    pub(crate) resources: watch::Sender<u64>,
}

impl ListChanges {
    /// No change yet.
    pub(crate) fn new() -> Self {
        Self {
            tools: watch::Sender::new(0),
            prompts: watch::Sender::new(0),
            resources: watch::Sender::new(0),
        }
    }
}

fn bump(counter: &watch::Sender<u64>) -> std::future::Ready<()> {
    counter.send_modify(|count| *count += 1);
    std::future::ready(())
}

impl Handler {
    fn elicitor(&self) -> Arc<dyn Elicitor> {
        self.options.elicitor.clone()
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(RootsCapabilities::default());
        capabilities.elicitation = Some(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::new())
                .with_url(UrlElicitationCapability::new()),
        );
        let mut config = ClientConfig::new(
            capabilities,
            Implementation::new("agent", env!("CARGO_PKG_VERSION")),
        );
        config.protocol_version = OFFERED_VERSION;
        config
    }

    #[allow(deprecated)]
    fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ListRootsResult, ErrorData>> + Send + '_ {
        let roots = self
            .options
            .roots
            .iter()
            .map(|path| {
                let mut root = Root::new(file_uri(path));
                root.name = path
                    .file_name()
                    .map(|name| name.to_string_lossy().into_owned());
                root
            })
            .collect();
        std::future::ready(Ok(ListRootsResult::new(roots)))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (message, kind) = match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                let schema = serde_json::to_value(&requested_schema)
                    .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
                let form = agent_tools::interaction::Form::from_schema(&schema);
                (message, ElicitationKind::Form { form })
            }
            ElicitRequestParams::UrlElicitationParams {
                message,
                url,
                elicitation_id,
                ..
            } => (
                message,
                ElicitationKind::Url {
                    url,
                    elicitation_id,
                },
            ),
            // A kind of question this client does not know.
            _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        let question = ElicitationRequest {
            server: self.server.clone(),
            trace_id: self.callers.current(),
            message,
            kind,
        };
        let result = match self.elicitor().elicit(question).await {
            ElicitationAnswer::Accept(content) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::Value::Object(content)),
            ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        };
        Ok(result)
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        tracing::debug!("an MCP server's tool list changed");
        bump(&self.changes.tools)
    }

    fn on_prompt_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        tracing::debug!("an MCP server's prompt list changed");
        bump(&self.changes.prompts)
    }

    fn on_resource_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        tracing::debug!("an MCP server's resource list changed");
        bump(&self.changes.resources)
    }
}
