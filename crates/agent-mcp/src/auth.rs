//! OAuth sign-in for streamable HTTP servers, as the MCP authorization spec describes, on the
//! SDK's `auth` support: discovery from the server's `401` (`WWW-Authenticate`, protected
//! resource metadata, authorization server metadata), a configured client or dynamic client
//! registration, PKCE, the `resource` indicator, tokens refreshed when they expire.
//!
//! [`crate::login`] runs the browser step with a loopback redirect; [`TokenStore`] keeps one file per
//! server, readable by its owner only. Tokens go to that file and to the server's
//! `Authorization` header, never to a log or a trace.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata,
    CredentialStore, OAuthClientConfig, StoredCredentials,
};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::config::{ServerConfig, expand_env};
use crate::error::McpError;

/// How long [`login`] waits for the browser to come back.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// The folder of the signed-in servers' tokens: `<dir>/<server>.json`, mode 0600.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenStore {
    dir: PathBuf,
}

/// Whether the client holds a token for a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignInState {
    /// No token (never signed in, signed out, or signed in to another URL).
    SignedOut,
    /// A token is on file.
    SignedIn {
        /// When the access token expires (seconds since the epoch), if the server said.
        expires_at: Option<u64>,
        /// Whether it can be refreshed without the browser.
        refreshable: bool,
        /// The scopes granted.
        scopes: Vec<String>,
    },
}

/// What is kept for one server.
#[derive(Serialize, Deserialize)]
struct TokenFile {
    /// The server the token is for; a token for another URL is not used.
    url: String,
    /// The redirect URI the client was registered with.
    redirect_uri: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    metadata: Option<AuthorizationMetadata>,
    credentials: StoredCredentials,
}

impl TokenStore {
    /// Tokens kept in `dir` (created on the first sign-in, mode 0700).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The file of `server`'s token.
    pub fn path(&self, server: &str) -> PathBuf {
        self.dir.join(format!("{server}.json"))
    }

    /// Whether a token for `server` at `url` is on file.
    pub fn state(&self, server: &str, url: &str) -> SignInState {
        let Some(file) = read(&self.path(server), url) else {
            return SignInState::SignedOut;
        };
        let Some(token) = &file.credentials.token_response else {
            return SignInState::SignedOut;
        };
        // The token's fields as the authorization server sent them (RFC 6749 section 5.1).
        let token = serde_json::to_value(token).unwrap_or_default();
        SignInState::SignedIn {
            expires_at: token["expires_in"]
                .as_u64()
                .zip(file.credentials.token_received_at)
                .map(|(lasts, received)| received + lasts),
            refreshable: token["refresh_token"].is_string(),
            scopes: file.credentials.granted_scopes.clone(),
        }
    }

    /// Forgets `server`'s token; `false` when there was none.
    ///
    /// # Errors
    ///
    /// When the file cannot be removed.
    pub fn remove(&self, server: &str) -> std::io::Result<bool> {
        match std::fs::remove_file(self.path(server)) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(error) => Err(error),
        }
    }
}

fn read(path: &Path, url: &str) -> Option<TokenFile> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str::<TokenFile>(&text)
        .ok()
        .filter(|file| file.url == url)
}

/// Writes `file` to `path` whole (a temporary file renamed), readable by its owner only.
fn write(path: &Path, file: &TokenFile) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let text = serde_json::to_vec_pretty(file).map_err(std::io::Error::other)?;
    let temporary = path.with_extension("json.tmp");
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temporary)?;
    out.write_all(&text)?;
    out.sync_all()?;
    std::fs::rename(&temporary, path)
}

/// The SDK's credential store over one server's token file.
pub(crate) struct FileCredentials {
    pub(crate) path: PathBuf,
    pub(crate) url: String,
    pub(crate) redirect_uri: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) metadata: Option<AuthorizationMetadata>,
}

#[async_trait]
impl CredentialStore for FileCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(read(&self.path, &self.url).map(|file| file.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let file = TokenFile {
            url: self.url.clone(),
            redirect_uri: self.redirect_uri.clone(),
            client_secret: self.client_secret.clone(),
            metadata: self.metadata.clone(),
            credentials,
        };
        write(&self.path, &file)
            .map_err(|error| AuthError::InternalError(format!("cannot save the token: {error}")))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(AuthError::InternalError(error.to_string())),
        }
    }
}

/// The HTTP client of a signed-in server: adds its token to each request, refreshes it when it
/// expires or is refused. `None` when no token is on file.
pub(crate) async fn signed_in_client(
    name: &str,
    url: &str,
    tokens: &TokenStore,
    http: crate::challenge::KeepingClient,
) -> Result<Option<AuthClient<crate::challenge::KeepingClient>>, McpError> {
    let path = tokens.path(name);
    let Some(file) = read(&path, url) else {
        return Ok(None);
    };
    crate::config::install_crypto();
    let failed = |error: AuthError| McpError::SignInRequired {
        server: name.to_owned(),
        message: error.to_string(),
    };
    let mut manager = AuthorizationManager::new(url).await.map_err(failed)?;
    if let Some(metadata) = file.metadata.clone() {
        manager.set_metadata(metadata);
    }
    let client_id = file.credentials.client_id.clone();
    manager.set_credential_store(FileCredentials {
        path,
        url: url.to_owned(),
        redirect_uri: file.redirect_uri.clone(),
        client_secret: file.client_secret.clone(),
        metadata: file.metadata,
    });
    if !manager.initialize_from_store().await.map_err(failed)? {
        return Ok(None);
    }
    if let Some(secret) = file.client_secret {
        manager
            .configure_client(
                OAuthClientConfig::new(client_id, file.redirect_uri).with_client_secret(secret),
            )
            .map_err(failed)?;
    }
    Ok(Some(AuthClient::new(http, manager)))
}

/// Signs in to the HTTP server `name` through the browser (see [`crate::login`]).
pub(crate) async fn browser_login(
    name: &str,
    config: &ServerConfig,
    tokens: &TokenStore,
    open: &(dyn Fn(&str) + Send + Sync),
) -> Result<(), McpError> {
    sign_in(name, config, tokens, open, &[]).await
}

/// Signs in to `name` again for the scopes its token has and those `wanted` names (a server's
/// `403 insufficient_scope` challenge asked for them), the sign-in page shown through `open`
/// (scope step-up).
pub(crate) async fn step_up(
    name: &str,
    config: &ServerConfig,
    tokens: &TokenStore,
    wanted: &str,
    open: &(dyn Fn(&str) + Send + Sync),
) -> Result<(), McpError> {
    let url = config.url.clone().unwrap_or_default();
    let mut scopes = match tokens.state(name, &url) {
        SignInState::SignedIn { scopes, .. } => scopes,
        SignInState::SignedOut => Vec::new(),
    };
    for scope in wanted.split_whitespace() {
        if !scopes.iter().any(|held| held == scope) {
            scopes.push(scope.to_owned());
        }
    }
    tracing::info!(
        server = name,
        "the server asks for a wider scope; signing in again"
    );
    sign_in(name, config, tokens, open, &scopes).await
}

/// The scope a server's `403 insufficient_scope` asks for, read from the `WWW-Authenticate`
/// challenge somewhere in `error`'s chain (the SDK passes it on as text).
pub(crate) fn wanted_scope(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = current {
        let text = error.to_string();
        if text.contains("insufficient_scope") || text.contains("insufficient scope") {
            return scope_in(&text);
        }
        current = error.source();
    }
    None
}

/// The `scope="…"` of an `insufficient_scope` challenge.
pub(crate) fn scope_in(challenge: &str) -> Option<String> {
    if !challenge.contains("insufficient_scope") && !challenge.contains("insufficient scope") {
        return None;
    }
    let start = challenge.find("scope=\"")? + "scope=\"".len();
    let end = challenge[start..].find('"')? + start;
    Some(challenge[start..end].to_owned()).filter(|scope| !scope.trim().is_empty())
}

/// [`login`], asking for `wider` scopes besides those the server's metadata suggests.
async fn sign_in(
    name: &str,
    config: &ServerConfig,
    tokens: &TokenStore,
    open: &(dyn Fn(&str) + Send + Sync),
    wider: &[String],
) -> Result<(), McpError> {
    let Some(url) = config.url.clone() else {
        return Err(McpError::Config {
            server: name.to_owned(),
            message: "only HTTP servers (url = ...) sign in".into(),
        });
    };
    let failed = |message: String| McpError::SignIn {
        server: name.to_owned(),
        message,
    };
    let auth = |error: AuthError| failed(error.to_string());
    let oauth = config.oauth.clone().unwrap_or_default();
    let (mut manager, metadata) = discover(&url).await.map_err(failed)?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", oauth.callback_port.unwrap_or(0)))
        .await
        .map_err(|error| failed(format!("cannot listen for the browser: {error}")))?;
    let port = listener
        .local_addr()
        .map_err(|error| failed(error.to_string()))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let mut scopes = if oauth.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        oauth.scopes.clone()
    };
    for scope in wider {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
    let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let client_secret = match &oauth.client_id {
        Some(client_id) => {
            let secret = oauth
                .client_secret
                .as_deref()
                .map(|secret| expand_env(name, secret))
                .transpose()?;
            let mut client = OAuthClientConfig::new(client_id.clone(), redirect_uri.clone())
                .with_scopes(scopes.clone());
            if let Some(secret) = &secret {
                client = client.with_client_secret(secret.clone());
            }
            manager.configure_client(client).map_err(auth)?;
            secret
        }
        None => {
            manager
                .register_client("agent", &redirect_uri, &scope_refs)
                .await
                .map_err(auth)?
                .client_secret
        }
    };
    manager.set_credential_store(FileCredentials {
        path: tokens.path(name),
        url: url.clone(),
        redirect_uri,
        client_secret,
        metadata: Some(metadata),
    });
    let page = manager
        .get_authorization_url(&scope_refs)
        .await
        .map_err(auth)?;
    open(&page);
    let callback = tokio::time::timeout(LOGIN_TIMEOUT, callback(&listener, port))
        .await
        .map_err(|_| failed("the browser did not come back within 5 minutes".into()))?
        .map_err(failed)?;
    manager
        .exchange_code_for_token_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(auth)?;
    Ok(())
}

/// A manager of `url`'s sign-in holding the server's authorization metadata, found from the
/// challenge of its 401 answer (or its well-known documents), and that metadata.
pub(crate) async fn discover(
    url: &str,
) -> Result<(AuthorizationManager, AuthorizationMetadata), String> {
    crate::config::install_crypto();
    let challenge = challenge(url).await?;
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|error| error.to_string())?;
    let metadata = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|error| error.to_string())?
        .metadata;
    manager.set_metadata(metadata.clone());
    Ok((manager, metadata))
}

/// The server's `WWW-Authenticate` challenge to a request without a token, if it gives one.
pub(crate) async fn challenge(url: &str) -> Result<Option<String>, String> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|error| error.to_string())?;
    let initialize = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": crate::version::OFFERED_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "agent", "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let response = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .map_err(|error| format!("cannot reach the server: {error}"))?;
    Ok(response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned))
}

/// Waits for the browser's request to `/callback` and answers it.
async fn callback(
    listener: &tokio::net::TcpListener,
    port: u16,
) -> Result<AuthorizationCallback, String> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(|error| error.to_string())?;
        let mut request = Vec::new();
        let mut buffer = [0_u8; 4096];
        while !request.windows(4).any(|end| end == b"\r\n\r\n") && request.len() < 65536 {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => request.extend_from_slice(&buffer[..read]),
            }
        }
        let text = String::from_utf8_lossy(&request);
        let target = text.split_whitespace().nth(1).unwrap_or_default();
        if !target.starts_with("/callback") {
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
            continue;
        }
        let full = format!("http://127.0.0.1:{port}{target}");
        let denied = reqwest::Url::parse(&full).ok().and_then(|url| {
            url.query_pairs()
                .find(|(key, _)| key == "error")
                .map(|(_, value)| value.into_owned())
        });
        let result = match denied {
            Some(error) => Err(format!("the authorization server answered {error}")),
            None => {
                AuthorizationCallback::from_redirect_url(&full).map_err(|error| error.to_string())
            }
        };
        let page = match &result {
            Ok(_) => "Signed in. You can close this page and go back to the terminal.",
            Err(_) => "Signing in failed; the terminal says why.",
        };
        let _ = stream
            .write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                )
                .as_bytes(),
            )
            .await;
        return result;
    }
}

/// Whether a request failed on the server's `401` or `403` (its `WWW-Authenticate` challenge
/// is somewhere in the error's chain).
pub(crate) fn refused_for_auth(error: &(dyn std::error::Error + 'static)) -> bool {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = current {
        let auth_error = error
            .downcast_ref::<StreamableHttpError<reqwest::Error>>()
            .and_then(StreamableHttpError::auth_challenge)
            .is_some();
        if auth_error {
            return true;
        }
        current = error.source();
    }
    // The SDK's worker transport passes the HTTP error on as text only: "Auth required" is
    // how its `StreamableHttpError::AuthRequired` reads.
    error.to_string().contains("error: Auth required")
}
