//! The OAuth client credentials grant (the MCP extension `oauth-client-credentials`, SEP-1046):
//! a client that signs in as itself, with no person and no browser. Configured per server with
//! `[mcp.servers.NAME.oauth] grant = "client_credentials"`, a `client_id`, and either a secret
//! (`client_secret` or `client_secret_env`; sent as HTTP Basic or in the body, as the
//! authorization server's metadata says) or a private key (`private_key_file` or
//! `private_key_env`) that signs a JWT assertion (`private_key_jwt`, RFC 7523).
//!
//! The token is fetched when the server asks for one (its `401` names the authorization
//! server), kept in the server's token file like a signed-in person's ([`crate::TokenStore`],
//! owner-only), and fetched again when it expires or the server refuses it. The secret and the
//! key are never written there.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, ClientCredentialsConfig,
    CredentialStore, OAuthTokenResponse, StoredCredentials,
};

use crate::assertion::{Algorithm, SigningKey};
use crate::auth::{FileCredentials, SignInState, TokenStore};
use crate::config::{Grant, OAuthConfig, ServerConfig, expand_env};
use crate::error::McpError;

/// A token this close to its expiry is fetched again before it is used.
const EXPIRY_MARGIN_SECS: u64 = 30;

/// How the client proves who it is.
enum Secret {
    /// A shared secret.
    Password(String),
    /// A private key signing an assertion.
    Key(SigningKey),
}

/// Signs in to the HTTP server `name`: discovers its authorization server from its `401`,
/// registers the client (or uses the configured one), sends the person to the authorization
/// page through `open` (which opens a browser or prints the address), waits for the browser
/// to come back to a loopback address, and keeps the token in `tokens`. A server configured
/// with `grant = "client_credentials"` gets its token at once, without the browser.
///
/// # Errors
///
/// [`McpError::Config`] for a server that is not HTTP, [`McpError::SignIn`] when a step fails.
pub async fn login(
    name: &str,
    config: &ServerConfig,
    tokens: &TokenStore,
    open: &(dyn Fn(&str) + Send + Sync),
) -> Result<(), McpError> {
    if configured(config) {
        return fetch(name, config, tokens).await;
    }
    crate::auth::browser_login(name, config, tokens, open).await
}

/// Whether `config` signs in with the client credentials grant.
pub(crate) fn configured(config: &ServerConfig) -> bool {
    config
        .oauth
        .as_ref()
        .is_some_and(|oauth| oauth.grant == Grant::ClientCredentials)
}

/// Whether `name` has a token on file that has expired or is about to.
pub(crate) fn expired(name: &str, config: &ServerConfig, tokens: &TokenStore) -> bool {
    match tokens.state(name, config.url.as_deref().unwrap_or_default()) {
        SignInState::SignedOut => false,
        SignInState::SignedIn { expires_at, .. } => {
            expires_at.is_some_and(|at| at <= now() + EXPIRY_MARGIN_SECS)
        }
    }
}

/// Fetches a token for `name` with its client credentials and keeps it in `tokens`.
///
/// # Errors
///
/// [`McpError::Config`] when the credentials are not configured right,
/// [`McpError::SignIn`] when discovery or the token request fails.
pub(crate) async fn fetch(
    name: &str,
    config: &ServerConfig,
    tokens: &TokenStore,
) -> Result<(), McpError> {
    let invalid = |message: String| McpError::Config {
        server: name.to_owned(),
        message,
    };
    let failed = |message: String| McpError::SignIn {
        server: name.to_owned(),
        message,
    };
    let auth = |error: AuthError| failed(error.to_string());
    let url = config
        .url
        .clone()
        .ok_or_else(|| invalid("only HTTP servers (url = ...) sign in".into()))?;
    let oauth = config.oauth.clone().unwrap_or_default();
    let client_id = oauth
        .client_id
        .clone()
        .ok_or_else(|| invalid("grant = \"client_credentials\" needs a client_id".into()))?;
    let secret = secret(name, &oauth).map_err(invalid)?;
    crate::config::install_crypto();
    let challenge = crate::auth::challenge(&url).await.map_err(failed)?;
    let mut manager = AuthorizationManager::new(url.as_str())
        .await
        .map_err(auth)?;
    let metadata = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(auth)?
        .metadata;
    manager.set_metadata(metadata.clone());
    let scopes = if oauth.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        oauth.scopes.clone()
    };
    let store = FileCredentials {
        path: tokens.path(name),
        url: url.clone(),
        redirect_uri: String::new(),
        client_secret: None,
        metadata: Some(metadata.clone()),
    };
    match secret {
        Secret::Password(client_secret) => {
            // The SDK sends it as HTTP Basic when that is all the server takes, else in the body.
            manager.set_credential_store(store);
            let grant = ClientCredentialsConfig::ClientSecret {
                client_id,
                client_secret,
                scopes,
                resource: Some(url),
            };
            manager
                .validate_client_credentials_metadata(&grant)
                .map_err(auth)?;
            manager.configure_client_credentials(&grant).map_err(auth)?;
            manager
                .exchange_client_credentials(&grant)
                .await
                .map_err(auth)?;
        }
        Secret::Key(key) => {
            let token = with_assertion(&metadata, &url, &client_id, &key, &scopes)
                .await
                .map_err(failed)?;
            let granted = token_scopes(&token);
            let credentials = StoredCredentials::new(client_id, Some(token), granted, Some(now()))
                .with_issuer(metadata.issuer.clone());
            store.save(credentials).await.map_err(auth)?;
        }
    }
    tracing::info!(server = name, "fetched a token with the client credentials");
    Ok(())
}

/// The configured secret or key, read from the file or the environment.
fn secret(name: &str, oauth: &OAuthConfig) -> Result<Secret, String> {
    let variable = |variable: &str| {
        std::env::var(variable)
            .map_err(|_| format!("the environment variable {variable} is not set"))
    };
    let password = match (&oauth.client_secret, &oauth.client_secret_env) {
        (Some(_), Some(_)) => return Err("set client_secret or client_secret_env, not both".into()),
        (Some(secret), None) => Some(expand_env(name, secret).map_err(|error| error.to_string())?),
        (None, Some(env)) => Some(variable(env)?),
        (None, None) => None,
    };
    let pem =
        match (&oauth.private_key_file, &oauth.private_key_env) {
            (Some(_), Some(_)) => {
                return Err("set private_key_file or private_key_env, not both".into());
            }
            (Some(path), None) => Some(std::fs::read_to_string(path).map_err(|error| {
                format!("cannot read the private key {}: {error}", path.display())
            })?),
            (None, Some(env)) => Some(variable(env)?),
            (None, None) => None,
        };
    match (password, pem) {
        (Some(password), None) => Ok(Secret::Password(password)),
        (None, Some(pem)) => {
            let algorithm =
                Algorithm::parse(oauth.signing_algorithm.as_deref().unwrap_or("ES256"))?;
            Ok(Secret::Key(SigningKey::from_pem(&pem, algorithm)?))
        }
        (Some(_), Some(_)) => Err("set a client secret or a private key, not both".into()),
        (None, None) => Err(
            "grant = \"client_credentials\" needs client_secret, client_secret_env, \
             private_key_file or private_key_env"
                .into(),
        ),
    }
}

/// The token request of `private_key_jwt` (RFC 7523 section 2.2): the assertion identifies the
/// client, so no `client_id` is sent.
async fn with_assertion(
    metadata: &AuthorizationMetadata,
    resource: &str,
    client_id: &str,
    key: &SigningKey,
    scopes: &[String],
) -> Result<OAuthTokenResponse, String> {
    let advertised = |field: &str, value: &str| {
        metadata
            .additional_fields
            .get(field)
            .and_then(|listed| listed.as_array())
            .is_none_or(|listed| listed.iter().any(|item| item.as_str() == Some(value)))
    };
    if !advertised("token_endpoint_auth_methods_supported", "private_key_jwt") {
        return Err("the authorization server does not take private_key_jwt".into());
    }
    if !advertised(
        "token_endpoint_auth_signing_alg_values_supported",
        key.algorithm().name(),
    ) {
        return Err(format!(
            "the authorization server does not take {} assertions",
            key.algorithm().name()
        ));
    }
    let endpoint = reqwest::Url::parse(&metadata.token_endpoint)
        .map_err(|error| format!("the token endpoint is not a URL: {error}"))?;
    if !secure(&endpoint) {
        return Err(format!(
            "the token endpoint {endpoint} is neither HTTPS nor on this machine"
        ));
    }
    // The assertion's audience is the authorization server's issuer identifier.
    let audience = metadata
        .issuer
        .clone()
        .ok_or("the authorization server's metadata names no issuer")?;
    let assertion = key.assertion(client_id, &audience)?;
    let mut form = reqwest::Url::parse("form:").map_err(|error| error.to_string())?;
    {
        let mut pairs = form.query_pairs_mut();
        pairs
            .append_pair("grant_type", "client_credentials")
            .append_pair(
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            )
            .append_pair("client_assertion", &assertion)
            .append_pair("resource", resource);
        if !scopes.is_empty() {
            pairs.append_pair("scope", &scopes.join(" "));
        }
    }
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|error| error.to_string())?;
    let response = client
        .post(endpoint)
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(form.query().unwrap_or_default().to_owned())
        .send()
        .await
        .map_err(|error| format!("the token request failed: {error}"))?;
    let status = response.status();
    let body = response.bytes().await.map_err(|error| error.to_string())?;
    if !status.is_success() {
        let answer: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        return Err(format!(
            "the token endpoint answered {status}: {} {}",
            answer["error"].as_str().unwrap_or("(no error code)"),
            answer["error_description"].as_str().unwrap_or_default()
        ));
    }
    serde_json::from_slice(&body).map_err(|error| format!("the token answer is not valid: {error}"))
}

/// HTTPS, or plain HTTP to this machine.
fn secure(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let local = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    url.scheme() == "https" || (url.scheme() == "http" && local)
}

/// The scopes a token answer grants (its `scope` field).
fn token_scopes(token: &OAuthTokenResponse) -> Vec<String> {
    serde_json::to_value(token).unwrap_or_default()["scope"]
        .as_str()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}
