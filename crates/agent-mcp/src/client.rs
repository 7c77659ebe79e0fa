//! What the client offers servers beyond calling their tools: the folders it works in (roots,
//! answered to `roots/list`) and a person to answer a server's questions (elicitation). The
//! person is behind the [`Elicitor`] trait, which the command line (terminal prompts) or a
//! server (pending questions over HTTP) implements; without one, every question is declined.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use agent_tools::SandboxConfig;
use async_trait::async_trait;
use serde_json::{Map, Value};

/// What the client of a session offers every server it connects to.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The folders the agent works in, offered as roots (`file://` URIs).
    pub roots: Vec<PathBuf>,
    /// Who answers a server's questions.
    pub elicitor: Arc<dyn Elicitor>,
    /// Where the tokens of servers signed in to are kept (`agent mcp login`); `None` reaches
    /// every server without one.
    pub tokens: Option<Tokens>,
    /// Who opens a sign-in page when a signed-in server asks for a wider scope in the middle of
    /// a session (`403 insufficient_scope`); without one the call fails with the refusal.
    pub browser: Option<Arc<dyn Browser>>,
    /// The sandbox stdio servers start in (with the first root as the workspace): each in the
    /// mode its [`ServerConfig::sandbox`](crate::ServerConfig::sandbox) names, else this one's,
    /// with the network unless its `network = false`, and this sandbox's environment (secrets
    /// left out) under its own `env`. `None` starts them unconfined, with the whole environment.
    pub sandbox: Option<SandboxConfig>,
}

/// Opens a sign-in page for the person (a browser, or the address printed for them).
pub trait Browser: Send + Sync + fmt::Debug {
    /// Shows the page at `url`.
    fn open(&self, url: &str);
}

/// The token folder, when the crate signs in ([`crate::TokenStore`] with the `oauth` feature).
#[cfg(feature = "oauth")]
pub type Tokens = crate::auth::TokenStore;
/// The token folder, when the crate signs in (built without the `oauth` feature: none).
#[cfg(not(feature = "oauth"))]
pub type Tokens = std::convert::Infallible;

impl Default for ClientOptions {
    /// No roots, and every question declined ([`NoElicitor`]).
    fn default() -> Self {
        Self {
            roots: Vec::new(),
            elicitor: Arc::new(NoElicitor),
            tokens: None,
            browser: None,
            sandbox: None,
        }
    }
}

impl ClientOptions {
    /// The workspace `root` as the only root, and `elicitor` to answer questions.
    pub fn new(root: impl Into<PathBuf>, elicitor: Arc<dyn Elicitor>) -> Self {
        Self {
            roots: vec![root.into()],
            elicitor,
            tokens: None,
            browser: None,
            sandbox: None,
        }
    }

    /// The same, with the tokens of the servers signed in to kept in `tokens`.
    #[must_use]
    pub fn with_tokens(mut self, tokens: Tokens) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// The same, with stdio servers started in `sandbox` (see [`ClientOptions::sandbox`]).
    #[must_use]
    pub fn with_sandbox(mut self, sandbox: SandboxConfig) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    /// The same, signing in again through `browser` when a server asks for a wider scope.
    #[must_use]
    pub fn with_browser(mut self, browser: Arc<dyn Browser>) -> Self {
        self.browser = Some(browser);
        self
    }
}

/// A server's question to the person using the agent (`elicitation/create`).
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// The name of the server asking.
    pub server: String,
    /// The trace whose tool call the question came during: the trace of the server's newest
    /// call in flight, `None` when none is (a question outside a tool call).
    pub trace_id: Option<String>,
    /// What the server says it needs, for people.
    pub message: String,
    /// What kind of answer it wants.
    pub kind: ElicitationKind,
}

/// The two forms of a question.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationKind {
    /// Fields to fill in, read from the requested schema (a flat JSON schema object whose
    /// properties are strings, numbers, integers, booleans or enumerations): the one typed form
    /// every front end asks and checks (see [`agent_tools::interaction::form`]).
    Form {
        /// The form, with the schema as the server sent it.
        form: agent_tools::interaction::Form,
    },
    /// A page the person should open (a sign-in, a payment) outside the agent; accepting means
    /// they agreed to go there.
    Url {
        /// The page to open.
        url: String,
        /// The server's id of this question, empty when it sent none.
        elicitation_id: String,
    },
}

/// The person's answer to an [`ElicitationRequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// Answered: the form's values by property name (empty for a URL question).
    Accept(Map<String, Value>),
    /// Explicitly refused, or nobody was there to answer.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// Shows a server's question to a person and returns their answer.
///
/// Implementations must answer [`ElicitationAnswer::Decline`] when nobody can answer (no
/// terminal, a run without a person), never wait forever.
#[async_trait]
pub trait Elicitor: Send + Sync + fmt::Debug {
    /// Asks the question and waits for the answer.
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer;
}

/// Declines every question: the choice when nobody can answer.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoElicitor;

#[async_trait]
impl Elicitor for NoElicitor {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        tracing::warn!(
            server = %request.server,
            "an MCP server asked a question nobody can answer here; declined: {}",
            request.message
        );
        ElicitationAnswer::Decline
    }
}

/// The `file://` URI of a folder, made absolute.
pub(crate) fn file_uri(path: &std::path::Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file://");
    for byte in absolute.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(char::from(byte));
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_are_absolute_and_escaped() {
        assert_eq!(
            file_uri(std::path::Path::new("/work/my project")),
            "file:///work/my%20project"
        );
        assert!(file_uri(std::path::Path::new("rel")).starts_with("file:///"));
    }
}
