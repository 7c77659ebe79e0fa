//! The OAuth client credentials grant (the MCP extension `oauth-client-credentials`, SEP-1046):
//! a client that signs in as itself, with no person and no browser. Configured per server with
//! `[mcp.servers.NAME.oauth] grant = "client_credentials"`, a `client_id`, and either a secret
//! (`client_secret` or `client_secret_env`; sent as HTTP Basic or in the body, as the
//! authorization server's metadata says) or a private key (`private_key_file` or
//! `private_key_env`) that signs a JWT assertion (`private_key_jwt`, RFC 7523).
//!
//! `grant = "cross_app_access"` is the other grant without a browser (see [`crate::cross_app`]).
//! Either way the token is fetched when the server asks for one (its `401` names the
//! authorization server), kept in the server's token file like a signed-in person's
//! ([`crate::TokenStore`], owner-only), and fetched again when it expires or the server refuses
//! it. The secret, the key and the ID token are never written there.

use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, ClientCredentialsConfig, CredentialStore, OAuthTokenResponse,
    StoredCredentials,
};

use crate::assertion::{Algorithm, SigningKey};
use crate::auth::{FileCredentials, SignInState, TokenStore};
use crate::config::{Grant, OAuthConfig, ServerConfig, expand_env, variable};
use crate::error::McpError;
use crate::token_request::{now, post};

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

/// Whether `config` signs in without a person: the client credentials grant, or cross-app
/// access.
pub(crate) fn configured(config: &ServerConfig) -> bool {
    config.oauth.as_ref().is_some_and(|oauth| {
        matches!(
            oauth.grant,
            Grant::ClientCredentials | Grant::CrossAppAccess
        )
    })
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

/// Fetches a token for `name` with its client credentials (or by cross-app access) and keeps it
/// in `tokens`.
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
        .ok_or_else(|| invalid("this grant needs a client_id".into()))?;
    let (secret, cross_app) = if oauth.grant == Grant::CrossAppAccess {
        let app = crate::cross_app::CrossApp::read(name, &oauth).map_err(invalid)?;
        let secret = password(name, &oauth).map_err(invalid)?;
        (secret.map(Secret::Password), Some(app))
    } else {
        (Some(secret(name, &oauth).map_err(invalid)?), None)
    };
    let (mut manager, metadata) = crate::auth::discover(&url).await.map_err(failed)?;
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
    let answer = match (secret, cross_app) {
        (secret, Some(app)) => {
            let password = match &secret {
                Some(Secret::Password(password)) => Some((client_id.as_str(), password.as_str())),
                _ => None,
            };
            app.token(&metadata, &url, password, &scopes)
                .await
                .map_err(failed)?
        }
        (Some(Secret::Password(client_secret)), None) => {
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
            tracing::info!(server = name, "fetched a token with the client credentials");
            return Ok(());
        }
        (Some(Secret::Key(key)), None) => {
            with_assertion(&metadata, &url, &client_id, &key, &scopes)
                .await
                .map_err(failed)?
        }
        (None, None) => return Err(invalid("no client credentials".into())),
    };
    let token: OAuthTokenResponse = serde_json::from_value(answer)
        .map_err(|error| failed(format!("the token answer is not valid: {error}")))?;
    let granted = token_scopes(&token);
    let credentials = StoredCredentials::new(client_id, Some(token), granted, Some(now()))
        .with_issuer(metadata.issuer.clone());
    store.save(credentials).await.map_err(auth)?;
    tracing::info!(server = name, "fetched a token without a browser");
    Ok(())
}

/// The configured secret, read from the environment when it says so.
fn password(name: &str, oauth: &OAuthConfig) -> Result<Option<String>, String> {
    match (&oauth.client_secret, &oauth.client_secret_env) {
        (Some(_), Some(_)) => Err("set client_secret or client_secret_env, not both".into()),
        (Some(secret), None) => expand_env(name, secret)
            .map(Some)
            .map_err(|error| error.to_string()),
        (None, Some(env)) => variable(env).map(Some),
        (None, None) => Ok(None),
    }
}

/// The configured secret or key, read from the file or the environment.
fn secret(name: &str, oauth: &OAuthConfig) -> Result<Secret, String> {
    let password = password(name, oauth)?;
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
) -> Result<serde_json::Value, String> {
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
    // The assertion's audience is the authorization server's issuer identifier.
    let audience = metadata
        .issuer
        .clone()
        .ok_or("the authorization server's metadata names no issuer")?;
    let assertion = key.assertion(client_id, &audience)?;
    let scope = scopes.join(" ");
    let mut pairs = vec![
        ("grant_type", "client_credentials"),
        (
            "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        ),
        ("client_assertion", assertion.as_str()),
        ("resource", resource),
    ];
    if !scope.is_empty() {
        pairs.push(("scope", &scope));
    }
    post(&metadata.token_endpoint, &pairs, None).await
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
