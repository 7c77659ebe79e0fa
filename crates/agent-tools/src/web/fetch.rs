//! `web_fetch(url, prompt?)`: one page over HTTP(S), its addresses checked at every hop and
//! pinned for the connection (see the module above for the rules).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use reqwest::redirect::Policy;
use serde::Deserialize;
use serde_json::json;
use url::{Host, Url};

use super::address::{Reach, is_metadata_name, reach};
use super::page::{Page, render};
use super::{WEB_FETCH, WebConfig, ensure_crypto_provider};
use crate::{Risk, ToolContext, ToolDefinition, ToolError, ToolLimits, ToolOutput, TypedTool};

/// How long resolving a host name may take.
const DNS_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest connect timeout, below the request's own.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// What `web_fetch` asks servers for, Markdown first where a server can give it.
const ACCEPTED: &str = "text/markdown, text/html;q=0.9, application/xhtml+xml;q=0.9, \
                        text/plain;q=0.8, application/json;q=0.8, */*;q=0.5";

/// `web_fetch(url, prompt?)`: reads a web page as Markdown, a text or JSON document as it is, or
/// a picture.
#[derive(Debug, Clone)]
pub struct WebFetchTool {
    config: Arc<WebConfig>,
}

impl WebFetchTool {
    /// A fetch tool with these settings.
    pub fn new(config: Arc<WebConfig>) -> Self {
        Self { config }
    }
}

/// Arguments of `web_fetch`.
#[derive(Debug, Deserialize)]
pub struct WebFetchArgs {
    /// The `http://` or `https://` URL.
    pub url: String,
    /// What the page is read for; shown with the page.
    pub prompt: Option<String>,
}

/// Where a fetch ended.
enum Fetched {
    /// A response that is no redirect (or a redirect without a target).
    Page(Page),
    /// A redirect to another host, not followed.
    Elsewhere { from: Url, to: Url, status: u16 },
}

#[async_trait]
impl TypedTool for WebFetchTool {
    type Args = WebFetchArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: WEB_FETCH.to_owned(),
            description: "Fetch a web page (http or https) and read it: HTML comes as Markdown \
                          (links kept), text and JSON as they are, a PNG, JPEG, GIF or WebP as a \
                          picture. Redirects on the same host are followed; a redirect to \
                          another host is reported, fetch that URL with another call. Addresses \
                          of this machine and its private networks are refused. Long pages are \
                          cut, with a note."
                .to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "url": { "type": "string", "description": "The http:// or https:// URL to fetch." },
                    "prompt": { "type": "string", "description": "What you want from the page (shown with it)." }
                },
                "required": ["url"],
                "additionalProperties": false
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::Risky
    }

    fn timeout(&self, _args: &WebFetchArgs, _limits: &ToolLimits) -> Duration {
        let hops = u32::try_from(self.config.max_redirects + 1).unwrap_or(u32::MAX);
        (self.config.timeout + DNS_TIMEOUT).saturating_mul(hops) + Duration::from_secs(5)
    }

    async fn run(&self, args: WebFetchArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let url = parse_url(&args.url)?;
        let fetched = tokio::select! {
            fetched = self.fetch(url) => fetched?,
            () = ctx.cancel.cancelled() => {
                return Err(ToolError::failed("web_fetch was cancelled"));
            }
        };
        match fetched {
            Fetched::Page(page) => {
                render(page, args.prompt.as_deref(), ctx.limits.max_output_bytes).await
            }
            Fetched::Elsewhere { from, to, status } => Ok(ToolOutput::text(format!(
                "{from} redirects ({status}) to another host: {to}\nIt was not followed; call \
                 web_fetch with that URL to read it."
            ))),
        }
    }
}

impl WebFetchTool {
    /// Follows redirects on the same host, checking and pinning the addresses of every hop.
    async fn fetch(&self, mut url: Url) -> Result<Fetched, ToolError> {
        for _ in 0..=self.config.max_redirects {
            let addresses = self.vet(&url).await?;
            let client = self.client(&url, &addresses)?;
            let mut response = client
                .get(url.clone())
                .header(ACCEPT, ACCEPTED)
                .send()
                .await
                .map_err(|e| request_failed(&url, &e))?;
            let status = response.status();
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            if status.is_redirection()
                && let Some(location) = location
            {
                let next = url.join(&location).map_err(|e| {
                    ToolError::failed(format!("{url} redirects to {location:?}, not a URL: {e}"))
                })?;
                let next = parse_url(next.as_str())?;
                if same_site(&url, &next) {
                    url = next;
                    continue;
                }
                // Named to the model only if it could be fetched at all.
                self.vet(&next).await?;
                return Ok(Fetched::Elsewhere {
                    from: url,
                    to: next,
                    status: status.as_u16(),
                });
            }
            let content_type = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned);
            let declared = response.content_length();
            let mut body = Vec::new();
            let mut cut = false;
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| request_failed(&url, &e))?
            {
                let room = self.config.max_bytes - body.len();
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    cut = true;
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            return Ok(Fetched::Page(Page {
                url,
                status: status.as_u16(),
                reason: status.canonical_reason().unwrap_or("").to_owned(),
                content_type,
                body,
                cut: cut.then_some((self.config.max_bytes, declared)),
            }));
        }
        Err(ToolError::failed(format!(
            "{url} redirected more than {} times",
            self.config.max_redirects
        )))
    }

    /// The addresses `url`'s host resolves to, each one allowed; an error naming the first that
    /// is not.
    async fn vet(&self, url: &Url) -> Result<Vec<SocketAddr>, ToolError> {
        let port = url.port_or_known_default().unwrap_or(80);
        let policy = &self.config.allow_private_hosts;
        let (name, addresses): (Option<&str>, Vec<IpAddr>) = match url.host() {
            Some(Host::Ipv4(ip)) => (None, vec![IpAddr::V4(ip)]),
            Some(Host::Ipv6(ip)) => (None, vec![IpAddr::V6(ip)]),
            Some(Host::Domain(name)) => {
                if is_metadata_name(name) && !policy.names(name) {
                    return Err(refusal(url, name, "a cloud metadata service's name"));
                }
                let found =
                    tokio::time::timeout(DNS_TIMEOUT, tokio::net::lookup_host((name, port)))
                        .await
                        .map_err(|_| ToolError::failed(format!("resolving {name} timed out")))?
                        .map_err(|e| ToolError::failed(format!("cannot resolve {name}: {e}")))?;
                (Some(name), found.map(|address| address.ip()).collect())
            }
            None => return Err(ToolError::failed(format!("{url} names no host"))),
        };
        if addresses.is_empty() {
            return Err(ToolError::failed(format!(
                "{} resolves to no address",
                url.host_str().unwrap_or("")
            )));
        }
        for address in &addresses {
            if let Reach::Internal(kind) = reach(*address)
                && !name.is_some_and(|name| policy.names(name))
                && !policy.covers(*address)
            {
                let what = format!("{address}, a {kind} address");
                return Err(refusal(url, url.host_str().unwrap_or(""), &what));
            }
        }
        Ok(addresses
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect())
    }

    /// A client for one request to `url` that connects only to `addresses` (its host's
    /// checked addresses) and follows no redirect by itself.
    fn client(&self, url: &Url, addresses: &[SocketAddr]) -> Result<reqwest::Client, ToolError> {
        ensure_crypto_provider();
        let mut builder = reqwest::Client::builder()
            .redirect(Policy::none())
            .timeout(self.config.timeout)
            .connect_timeout(CONNECT_TIMEOUT.min(self.config.timeout))
            .user_agent(self.config.user_agent.clone());
        if let Some(Host::Domain(name)) = url.host() {
            builder = builder.resolve_to_addrs(name, addresses);
        }
        builder
            .build()
            .map_err(|e| ToolError::failed(format!("cannot make an HTTP client: {e}")))
    }
}

/// `text` as an `http` or `https` URL without credentials in it.
fn parse_url(text: &str) -> Result<Url, ToolError> {
    let url = Url::parse(text.trim())
        .map_err(|e| ToolError::failed(format!("{text:?} is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::failed(format!(
            "web_fetch reads http and https URLs, not {}:",
            url.scheme()
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ToolError::failed(
            "web_fetch does not send credentials written in the URL",
        ));
    }
    if url.host().is_none() {
        return Err(ToolError::failed(format!("{text:?} names no host")));
    }
    Ok(url)
}

/// Whether a redirect from `from` to `to` stays on the same site: the same host, give or take a
/// leading `www.`.
fn same_site(from: &Url, to: &Url) -> bool {
    let bare = |url: &Url| {
        let host = url.host_str().unwrap_or("").to_ascii_lowercase();
        host.strip_prefix("www.").map(str::to_owned).unwrap_or(host)
    };
    bare(from) == bare(to)
}

/// The error of an address `web_fetch` may not reach.
fn refusal(url: &Url, host: &str, what: &str) -> ToolError {
    ToolError::failed(format!(
        "web_fetch refuses {url}: {host} is {what}. Addresses of this machine and its private \
         networks are reached only when [web] allow_private_hosts in agent.toml names them."
    ))
}

fn request_failed(url: &Url, error: &reqwest::Error) -> ToolError {
    let why = if error.is_timeout() {
        "it timed out".to_owned()
    } else if error.is_connect() {
        "the connection failed".to_owned()
    } else {
        "the request failed".to_owned()
    };
    // The error's chain says what went wrong below (DNS, TLS, refused connection).
    let mut detail = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        detail.push_str(": ");
        detail.push_str(&cause.to_string());
        source = cause.source();
    }
    ToolError::failed(format!("cannot fetch {url}: {why} ({detail})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_http_without_credentials() {
        assert!(parse_url("https://docs.rs/serde").is_ok());
        for bad in [
            "file:///etc/passwd",
            "ftp://example.com/",
            "https://user:pw@example.com/",
            "not a url",
            "gopher://x",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        let a = parse_url("http://example.com/a").unwrap();
        assert!(same_site(
            &a,
            &parse_url("https://www.example.com/b").unwrap()
        ));
        assert!(!same_site(&a, &parse_url("http://example.org/").unwrap()));
    }
}
