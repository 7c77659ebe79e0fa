//! What the embedder adds to a session: slash commands of its own (the prompts of MCP servers,
//! `/mcp__SERVER__PROMPT key=value …`, completed as they are typed and listed by `/help`), words
//! that complete after `@` besides the workspace's files (`@server:uri` resources), and a last
//! look at each message before it is sent (attaching what a mention points at).

use agent_runner::async_trait;

/// The embedder's part of a session ([`Options::extensions`](crate::Options::extensions)).
#[async_trait]
pub trait Extensions: Send + Sync {
    /// The commands it adds: the name with its `/`, and what it does.
    fn commands(&self) -> Vec<(String, String)>;

    /// What completes after `@` besides the workspace's files, without the `@`.
    fn mentions(&self) -> Vec<String>;

    /// Runs the command `name` (without its `/`) with the rest of the line: `Some(Ok(message))`
    /// sends the message, `Some(Err(text))` shows what is wrong, `None` is not one of its own.
    async fn command(&self, name: &str, args: &str) -> Option<Result<String, String>>;

    /// The message to send for what the person typed (`Err`: shown, nothing sent).
    async fn message(&self, text: &str) -> Result<String, String>;
}
