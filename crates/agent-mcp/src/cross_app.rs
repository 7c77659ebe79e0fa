//! Cross-app access, the MCP extension for enterprise-managed authorization (SEP-990): a person
//! signed in to the company's identity provider (IdP) reaches an MCP server without a browser
//! step of its own. The person's ID token is exchanged at the IdP for an Identity Assertion JWT
//! Authorization Grant (ID-JAG, RFC 8693 token exchange) naming the server's authorization
//! server and the server, and that grant is exchanged at the authorization server for an access
//! token (RFC 7523 JWT bearer grant), the client authenticated with its secret.
//!
//! Configured with `[mcp.servers.NAME.oauth] grant = "cross_app_access"`, `client_id` and its
//! secret, `idp_token_endpoint` (and `idp_client_id` when the IdP wants one), and the ID token
//! in `id_token_file` or `id_token_env`.

use rmcp::transport::auth::AuthorizationMetadata;

use crate::config::OAuthConfig;
use crate::token_request::post;

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// What the client knows of the identity provider, and the person's ID token.
pub(crate) struct CrossApp {
    idp_token_endpoint: String,
    idp_client_id: Option<String>,
    id_token: String,
}

impl CrossApp {
    /// The configuration of `oauth`, the ID token read from its file or the environment.
    pub(crate) fn read(name: &str, oauth: &OAuthConfig) -> Result<Self, String> {
        let idp_token_endpoint = oauth
            .idp_token_endpoint
            .clone()
            .ok_or("grant = \"cross_app_access\" needs idp_token_endpoint")?;
        let id_token = match (&oauth.id_token_file, &oauth.id_token_env) {
            (Some(path), None) => std::fs::read_to_string(path)
                .map_err(|error| format!("cannot read the ID token {}: {error}", path.display()))?,
            (None, Some(env)) => crate::config::variable(env)?,
            (Some(_), Some(_)) => return Err("set id_token_file or id_token_env, not both".into()),
            (None, None) => {
                return Err(format!(
                    "{name}: grant = \"cross_app_access\" needs id_token_file or id_token_env"
                ));
            }
        };
        Ok(Self {
            idp_token_endpoint,
            idp_client_id: oauth.idp_client_id.clone(),
            id_token: id_token.trim().to_owned(),
        })
    }

    /// An access token for the server `resource` from its authorization server (`metadata`):
    /// the ID token exchanged for an ID-JAG at the IdP, the ID-JAG for the token there, the
    /// client authenticated with `client` (its id and secret).
    pub(crate) async fn token(
        &self,
        metadata: &AuthorizationMetadata,
        resource: &str,
        client: Option<(&str, &str)>,
        scopes: &[String],
    ) -> Result<serde_json::Value, String> {
        let audience = metadata
            .issuer
            .clone()
            .ok_or("the authorization server's metadata names no issuer")?;
        let scope = scopes.join(" ");
        let mut exchange = vec![
            ("grant_type", TOKEN_EXCHANGE),
            ("requested_token_type", ID_JAG),
            ("subject_token", self.id_token.as_str()),
            ("subject_token_type", ID_TOKEN),
            ("audience", audience.as_str()),
            ("resource", resource),
        ];
        if let Some(id) = &self.idp_client_id {
            exchange.push(("client_id", id));
        }
        if !scope.is_empty() {
            exchange.push(("scope", &scope));
        }
        let grant = post(&self.idp_token_endpoint, &exchange, None)
            .await
            .map_err(|error| format!("the identity provider's token exchange failed: {error}"))?;
        if grant["issued_token_type"]
            .as_str()
            .is_some_and(|kind| kind != ID_JAG)
        {
            return Err("the identity provider did not issue an ID-JAG".into());
        }
        let assertion = grant["access_token"].as_str().unwrap_or_default();
        let mut bearer = vec![
            ("grant_type", JWT_BEARER),
            ("assertion", assertion),
            ("resource", resource),
        ];
        if !scope.is_empty() {
            bearer.push(("scope", &scope));
        }
        post(&metadata.token_endpoint, &bearer, client).await
    }
}
