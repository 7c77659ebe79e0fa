//! `@server:uri` in a chat message (line mode and the full-screen UI): each mention of a
//! resource of a started MCP server is read and its contents attached to the message, under
//! the message, one `<resource server=… uri=…>` block each, so the model sees what the person
//! pointed at. A word is a mention only when what comes before its first `:` names a started
//! server; `@src/main.rs` and e-mail addresses stay as they are. A resource that cannot be read
//! stops the message with the reason (nothing is sent).

use std::time::Duration;

use agent_mcp::{McpServers, resource_text};

/// How long a server may take to read a mentioned resource when it sets no timeout.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The mentions of `message`: (server, uri) pairs, in order, each once.
pub(crate) fn mentions(servers: &McpServers, message: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for word in message.split_whitespace() {
        let Some((server, uri)) = word.strip_prefix('@').and_then(|rest| rest.split_once(':'))
        else {
            continue;
        };
        let uri = uri.trim_end_matches(['.', ',', ';', ')', '!', '?']);
        if uri.is_empty() || servers.server(server).is_none() {
            continue;
        }
        let pair = (server.to_owned(), uri.to_owned());
        if !found.contains(&pair) {
            found.push(pair);
        }
    }
    found
}

/// `message` with the contents of each resource it mentions attached; `Err` names a resource
/// that could not be read and why.
pub(crate) async fn attach(servers: &McpServers, message: &str) -> Result<String, String> {
    let mut text = message.to_owned();
    for (name, uri) in mentions(servers, message) {
        let Some(server) = servers.server(&name) else {
            continue;
        };
        let timeout = server.config().call_timeout().unwrap_or(READ_TIMEOUT);
        let read = server
            .read_resource(&uri, timeout)
            .await
            .map_err(|error| format!("cannot attach @{name}:{uri}: {error}"))?;
        text.push_str(&format!(
            "\n\n<resource server=\"{name}\" uri=\"{uri}\">\n{}\n</resource>",
            resource_text(&read).trim_end_matches('\n')
        ));
    }
    Ok(text)
}

/// The `@server:uri` of every resource the servers listed, for completion.
pub(crate) fn candidates(servers: &McpServers) -> Vec<String> {
    servers
        .servers()
        .iter()
        .flat_map(|server| {
            server
                .listed_resources()
                .into_iter()
                .map(move |resource| format!("@{}:{}", server.name(), resource.uri))
        })
        .collect()
}
