//! Configuration of MCP servers: the `[mcp.servers.<name>]` tables of `agent.toml`, and the same
//! types for programs that build them in code.
//!
//! A server is either a child process spoken to over stdio (`command`, `args`, `env`, `cwd`,
//! and the `sandbox` and `network` of its confinement) or
//! a streamable HTTP endpoint (`url`, `headers`). `${NAME}` in an `env` or header value is
//! replaced by the environment variable `NAME` when the server starts, so secrets need not be
//! written into the file.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use agent_tools::SandboxMode;
use serde::{Deserialize, Serialize};

use crate::error::McpError;

/// How many times a server that stopped is started again in one session, by default.
pub const DEFAULT_MAX_RESTARTS: u32 = 3;
/// How long a server may take to start and answer the handshake, by default.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest server name; names become part of tool names, which are at most 64 bytes.
pub const MAX_SERVER_NAME_LEN: usize = 32;

/// The MCP servers a program knows, by name (`[mcp.servers.<name>]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// Every configured server, by name.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerConfig>,
}

/// One MCP server.
///
/// ```toml
/// [mcp.servers.files]
/// command = "npx"
/// args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"]
/// read_only = ["read_text_file", "list_directory"]
///
/// [mcp.servers.search]
/// url = "https://example.com/mcp"
/// headers = { Authorization = "Bearer ${SEARCH_TOKEN}" }
/// enabled = false        # only with `agent run --mcp search`
/// timeout_secs = 30
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The program to start (stdio transport), looked up on `PATH`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment variables added to the inherited environment; values may use `${NAME}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The folder it runs in [default: the current folder].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// The sandbox it runs in when the session has one ([`crate::ClientOptions::sandbox`]):
    /// `workspace-write`, `read-only` or `off` [default: the session's mode]. The file system
    /// as that mode says; `off` runs it unconfined, with the whole environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxMode>,
    /// Whether it may open internet sockets in its sandbox [default: true, as servers often
    /// need the network].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// The endpoint of a streamable HTTP server, e.g. `http://127.0.0.1:3001/mcp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP headers sent with every request; values may use `${NAME}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Whether runs use the server without being asked to (`--mcp NAME` turns on a disabled one).
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    /// Only these tools are offered (MCP names); empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// These tools are never offered (MCP names); wins over `allow`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// Tools that only read (MCP names): they run without approval. Every other tool of the
    /// server is risky and waits for approval in approval mode.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<String>,
    /// How long one tool call may take [default: the run's tool timeout].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// How long starting the server and the handshake may take [default: 30].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_secs: Option<u64>,
    /// How many times the server is started again after it stopped [default: 3].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_restarts: Option<u32>,
    /// How to sign in to an HTTP server that asks for OAuth (`agent mcp login NAME`); without
    /// it the client registers itself with the authorization server when it allows that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthConfig>,
}

/// A client registered beforehand with a server's authorization server
/// (`[mcp.servers.NAME.oauth]`), and what to ask for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// The registered client id; without it the client registers itself dynamically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The client's secret, for a confidential client (`${VAR}` reads the environment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The scopes to ask for [default: those the server names].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The loopback port the browser is sent back to, for a client registered with a fixed
    /// redirect URI `http://127.0.0.1:PORT/callback` [default: any free port].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_port: Option<u16>,
    /// How the client gets its token [default: `authorization_code`, a person signing in].
    #[serde(default, skip_serializing_if = "Grant::is_default")]
    pub grant: Grant,
    /// The environment variable holding the client's secret (instead of `client_secret`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_env: Option<String>,
    /// A PEM file with the client's PKCS#8 private key: the client authenticates with a signed
    /// JWT assertion (`private_key_jwt`) instead of a secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_file: Option<PathBuf>,
    /// The environment variable holding that PEM key (instead of `private_key_file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_env: Option<String>,
    /// The assertion's signing algorithm: `ES256`, `ES384` or `RS256` [default: `ES256`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_algorithm: Option<String>,
    /// Cross-app access: the token endpoint of the enterprise identity provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp_token_endpoint: Option<String>,
    /// Cross-app access: the client id registered with the identity provider, if it wants one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp_client_id: Option<String>,
    /// Cross-app access: a file holding the person's ID token from the identity provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token_file: Option<PathBuf>,
    /// Cross-app access: the environment variable holding that ID token instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token_env: Option<String>,
}

/// How a client gets the token of a server that asks for OAuth.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// A person signs in through the browser (`agent mcp login NAME`).
    #[default]
    AuthorizationCode,
    /// The client signs in as itself with its own credentials, no browser: the token is fetched
    /// when the server asks for one and fetched again when it expires.
    ClientCredentials,
    /// Enterprise-managed authorization: the person's ID token from the company's identity
    /// provider is exchanged there for an authorization grant (ID-JAG), which the server's
    /// authorization server takes for a token (JWT bearer grant); no browser.
    CrossAppAccess,
}

impl Grant {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

fn enabled_by_default() -> bool {
    true
}

impl ServerConfig {
    /// A stdio server running `command` with `args`.
    pub fn stdio(
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            command: Some(command.into()),
            args: args.into_iter().map(Into::into).collect(),
            ..Self::empty()
        }
    }

    /// A streamable HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> Self {
        Self {
            url: Some(url.into()),
            ..Self::empty()
        }
    }

    fn empty() -> Self {
        Self {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            sandbox: None,
            network: None,
            url: None,
            headers: BTreeMap::new(),
            enabled: true,
            allow: Vec::new(),
            deny: Vec::new(),
            read_only: Vec::new(),
            timeout_secs: None,
            startup_timeout_secs: None,
            max_restarts: None,
            oauth: None,
        }
    }

    /// How the server is reached.
    ///
    /// # Errors
    ///
    /// Fails when both or neither of `command` and `url` are set, or when stdio-only fields are
    /// given to an HTTP server (and the other way round).
    pub fn transport(&self, server: &str) -> Result<TransportKind, McpError> {
        let invalid = |message: &str| McpError::Config {
            server: server.to_owned(),
            message: message.to_owned(),
        };
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => Err(invalid(
                "set either `command` (stdio) or `url` (HTTP), not both",
            )),
            (None, None) => Err(invalid(
                "set `command` (a stdio server) or `url` (an HTTP server)",
            )),
            (Some(command), None) => {
                if command.trim().is_empty() {
                    return Err(invalid("`command` is empty"));
                }
                if !self.headers.is_empty() {
                    return Err(invalid("`headers` are for HTTP servers (`url`)"));
                }
                Ok(TransportKind::Stdio)
            }
            (None, Some(url)) => {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(invalid("`url` must start with http:// or https://"));
                }
                let stdio_only = self.sandbox.is_some() || self.network.is_some();
                if !self.args.is_empty() || !self.env.is_empty() || self.cwd.is_some() || stdio_only
                {
                    return Err(invalid(
                        "`args`, `env`, `cwd`, `sandbox` and `network` are for stdio servers \
                         (`command`)",
                    ));
                }
                Ok(TransportKind::Http)
            }
        }
    }

    /// Whether the tool named `tool` (its MCP name) is offered to the model.
    pub fn offers(&self, tool: &str) -> bool {
        let allowed = self.allow.is_empty() || self.allow.iter().any(|name| name == tool);
        allowed && !self.deny.iter().any(|name| name == tool)
    }

    /// Whether the tool named `tool` (its MCP name) is listed as read-only.
    pub fn is_read_only(&self, tool: &str) -> bool {
        self.read_only.iter().any(|name| name == tool)
    }

    /// The call timeout, when the server sets one.
    pub fn call_timeout(&self) -> Option<Duration> {
        self.timeout_secs.map(Duration::from_secs)
    }

    /// How long starting the server may take.
    pub fn startup_timeout(&self) -> Duration {
        self.startup_timeout_secs
            .map_or(DEFAULT_STARTUP_TIMEOUT, Duration::from_secs)
    }

    /// How many times the server is started again after it stopped.
    pub fn restart_limit(&self) -> u32 {
        self.max_restarts.unwrap_or(DEFAULT_MAX_RESTARTS)
    }
}

/// The transport of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// A child process speaking JSON-RPC on its stdin and stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
}

impl McpConfig {
    /// The servers a session uses: every enabled server, and those in `named` even when disabled.
    ///
    /// # Errors
    ///
    /// Fails when a name in `named` is not configured, or a selected server's configuration is
    /// invalid.
    pub fn select(&self, named: &[String]) -> Result<BTreeMap<String, ServerConfig>, McpError> {
        for name in named {
            if !self.servers.contains_key(name) {
                return Err(McpError::UnknownServer {
                    name: name.clone(),
                    known: self.servers.keys().cloned().collect(),
                });
            }
        }
        let mut selected = BTreeMap::new();
        for (name, server) in &self.servers {
            if server.enabled || named.contains(name) {
                validate_name(name)?;
                server.transport(name)?;
                selected.insert(name.clone(), server.clone());
            }
        }
        Ok(selected)
    }
}

/// Checks that a server name can be part of a tool name: 1 to 32 ASCII letters, digits, `-` or
/// `_`, without `__` (the separator of `mcp__<server>__<tool>`).
///
/// # Errors
///
/// [`McpError::Config`] saying what is wrong.
pub fn validate_name(name: &str) -> Result<(), McpError> {
    let valid = (1..=MAX_SERVER_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !name.contains("__");
    if valid {
        Ok(())
    } else {
        Err(McpError::Config {
            server: name.to_owned(),
            message: format!(
                "a server name is 1 to {MAX_SERVER_NAME_LEN} ASCII letters, digits, '-' or '_', \
                 without '__'"
            ),
        })
    }
}

/// Replaces every `${NAME}` in `value` by the environment variable `NAME`.
///
/// # Errors
///
/// [`McpError::Config`] naming the variable when it is not set, or when a `${` is not closed.
pub fn expand_env(server: &str, value: &str) -> Result<String, McpError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(McpError::Config {
                server: server.to_owned(),
                message: format!("unclosed `${{` in {value:?}"),
            });
        };
        let name = &after[..end];
        let variable = std::env::var(name).map_err(|_| McpError::Config {
            server: server.to_owned(),
            message: format!("the environment variable {name} is not set"),
        })?;
        out.push_str(&variable);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The environment variable `name`, which must be set.
pub(crate) fn variable(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("the environment variable {name} is not set"))
}

/// Installs rustls' ring provider for the process, unless one is installed: every reqwest client
/// (this crate's and the SDK's sign-in ones) needs it.
pub(crate) fn install_crypto() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race against another installer is fine: a provider is installed either way.
        // ring builds without a C toolchain; rustls deprecates it only for its lack of
        // post-quantum key exchange (see `agent_llm::ensure_crypto_provider`).
        #[allow(deprecated)]
        let provider = rustls::crypto::ring::default_provider();
        let _ = provider.install_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<McpConfig, toml::de::Error> {
        toml::from_str(text)
    }

    #[test]
    fn a_stdio_and_an_http_server_parse_with_defaults() {
        let config = parse(
            r#"
            [servers.files]
            command = "npx"
            args = ["-y", "server"]
            env = { TOKEN = "x" }
            read_only = ["read"]

            [servers.remote]
            url = "http://127.0.0.1:3001/mcp"
            headers = { Authorization = "Bearer t" }
            enabled = false
            deny = ["write"]
            timeout_secs = 5
            "#,
        )
        .unwrap();
        let files = &config.servers["files"];
        assert_eq!(files.transport("files").unwrap(), TransportKind::Stdio);
        assert!(files.enabled);
        assert!(files.is_read_only("read") && !files.is_read_only("write"));
        let remote = &config.servers["remote"];
        assert_eq!(remote.transport("remote").unwrap(), TransportKind::Http);
        assert_eq!(remote.call_timeout(), Some(Duration::from_secs(5)));
        assert!(remote.offers("read") && !remote.offers("write"));
        assert_eq!(remote.restart_limit(), DEFAULT_MAX_RESTARTS);
    }

    #[test]
    fn the_grant_is_a_person_signing_in_unless_it_says_client_credentials() {
        let config = parse(
            "[servers.a]\nurl = \"https://h/mcp\"\n[servers.a.oauth]\n\
             grant = \"client_credentials\"\nclient_id = \"c\"\n\
             private_key_file = \"key.pem\"\nsigning_algorithm = \"ES384\"\n\
             [servers.b]\nurl = \"https://h/mcp\"\n[servers.b.oauth]\nclient_id = \"c\"\n",
        )
        .unwrap();
        let a = config.servers["a"].oauth.clone().unwrap();
        assert_eq!(a.grant, Grant::ClientCredentials);
        assert_eq!(a.private_key_file, Some(PathBuf::from("key.pem")));
        let cross = parse(
            "[servers.a]\nurl = \"https://h/mcp\"\n[servers.a.oauth]\n\
             grant = \"cross_app_access\"\nidp_token_endpoint = \"https://idp/token\"\n\
             id_token_env = \"ID_TOKEN\"\n",
        )
        .unwrap();
        assert_eq!(
            cross.servers["a"].oauth.as_ref().unwrap().grant,
            Grant::CrossAppAccess
        );
        let b = config.servers["b"].oauth.clone().unwrap();
        assert_eq!(b.grant, Grant::AuthorizationCode);
        let error =
            parse("[servers.a]\nurl = \"https://h\"\n[servers.a.oauth]\ngrant = \"password\"\n")
                .unwrap_err();
        assert!(error.to_string().contains("client_credentials"), "{error}");
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let error = parse("[servers.a]\ncommand = \"x\"\ncomand = \"y\"\n").unwrap_err();
        assert!(error.to_string().contains("comand"), "{error}");
    }

    #[test]
    fn a_server_needs_exactly_one_transport() {
        let mut both = ServerConfig::stdio("x", ["a"]);
        both.url = Some("http://h/mcp".into());
        for (config, needle) in [
            (both, "not both"),
            (ServerConfig::empty(), "set `command`"),
            (ServerConfig::http("ftp://h"), "http://"),
            (
                ServerConfig {
                    headers: [("A".into(), "b".into())].into(),
                    ..ServerConfig::stdio("x", Vec::<String>::new())
                },
                "headers",
            ),
        ] {
            let error = config.transport("s").unwrap_err().to_string();
            assert!(error.contains(needle), "{error}");
        }
    }

    #[test]
    fn allow_and_deny_filter_tools() {
        let config = ServerConfig {
            allow: vec!["a".into(), "b".into()],
            deny: vec!["b".into()],
            ..ServerConfig::stdio("x", Vec::<String>::new())
        };
        assert!(config.offers("a"));
        assert!(!config.offers("b"));
        assert!(!config.offers("c"));
    }

    #[test]
    fn selection_takes_enabled_servers_and_named_ones() {
        let mut config = McpConfig::default();
        config
            .servers
            .insert("on".into(), ServerConfig::stdio("x", Vec::<String>::new()));
        let mut off = ServerConfig::stdio("y", Vec::<String>::new());
        off.enabled = false;
        config.servers.insert("off".into(), off);
        let names = |named: &[&str]| {
            let named: Vec<String> = named.iter().map(|s| s.to_string()).collect();
            config
                .select(&named)
                .unwrap()
                .into_keys()
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&[]), ["on"]);
        assert_eq!(names(&["off"]), ["off", "on"]);
        let error = config.select(&["nope".into()]).unwrap_err().to_string();
        assert!(error.contains("nope") && error.contains("off"), "{error}");
    }

    #[test]
    fn server_names_must_fit_in_tool_names() {
        for good in ["files", "my-server", "a_b", "X1"] {
            validate_name(good).unwrap();
        }
        for bad in ["", "a b", "a__b", "a.b", &"x".repeat(33)] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn environment_references_are_expanded() {
        let path = std::env::var("PATH").unwrap();
        assert_eq!(expand_env("s", "p=${PATH};").unwrap(), format!("p={path};"));
        assert_eq!(expand_env("s", "plain").unwrap(), "plain");
        let missing = expand_env("s", "${AGENT_MCP_SURELY_UNSET_VARIABLE}").unwrap_err();
        assert!(
            missing
                .to_string()
                .contains("AGENT_MCP_SURELY_UNSET_VARIABLE")
        );
        assert!(expand_env("s", "${OPEN").is_err());
    }
}
