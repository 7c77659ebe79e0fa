//! The domain pattern of `web_fetch` rules: `web_fetch(domain:docs.rs)` covers fetches of
//! `docs.rs` and its subdomains, `web_fetch(domain:*.example.com)` the subdomains only.
//!
//! The host is read from the call's `url` with the parser `web_fetch` uses (WHATWG URL), so a
//! URL that a simpler reading would give another host (`https://evil.test\@docs.rs/`) is judged
//! by the host it is fetched from. That parser comes with the `web` feature, as `web_fetch`
//! does: without it a domain pattern is refused when the rule is read, so no rule silently
//! matches nothing.

#[cfg(feature = "web")]
use url::Url;

/// A domain a rule names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DomainPattern {
    /// The domain, lowercase, without a trailing dot.
    domain: String,
    /// `*.domain`: subdomains only.
    subdomains_only: bool,
}

impl DomainPattern {
    /// Reads `domain:NAME` or `domain:*.NAME`.
    pub(super) fn parse(pattern: &str) -> Result<Self, String> {
        if cfg!(not(feature = "web")) {
            return Err("domain rules need the `web` feature (this build has no web_fetch)".into());
        }
        let Some(name) = pattern.strip_prefix("domain:") else {
            return Err("a web_fetch pattern is `domain:NAME`, e.g. `domain:docs.rs`".into());
        };
        let name = name.trim().trim_end_matches('.').to_ascii_lowercase();
        let (domain, subdomains_only) = match name.strip_prefix("*.") {
            Some(rest) => (rest.to_owned(), true),
            None => (name, false),
        };
        let valid = !domain.is_empty()
            && domain.split('.').all(|label| {
                !label.is_empty()
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            });
        if !valid {
            return Err(format!("{domain:?} is not a domain name"));
        }
        Ok(Self {
            domain,
            subdomains_only,
        })
    }

    /// Whether the host of `url` is covered; a URL that does not parse is not.
    #[cfg(feature = "web")]
    pub(super) fn matches_url(&self, url: &str) -> bool {
        let Ok(url) = Url::parse(url.trim()) else {
            return false;
        };
        let Some(host) = url.host_str() else {
            return false;
        };
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let below = host
            .strip_suffix(&self.domain)
            .is_some_and(|rest| rest.ends_with('.'));
        below || (!self.subdomains_only && host == self.domain)
    }

    /// No pattern is ever read without the `web` feature ([`Self::parse`] refuses them).
    #[cfg(not(feature = "web"))]
    pub(super) fn matches_url(&self, _url: &str) -> bool {
        false
    }
}

#[cfg(all(test, feature = "web"))]
mod tests {
    use super::*;

    #[test]
    fn domains_cover_their_subdomains() {
        let docs = DomainPattern::parse("domain:docs.rs").unwrap();
        assert!(docs.matches_url("https://docs.rs/serde"));
        assert!(docs.matches_url("http://DOCS.RS./x"));
        assert!(docs.matches_url("https://static.docs.rs/"));
        assert!(!docs.matches_url("https://notdocs.rs/"));
        assert!(!docs.matches_url("https://docs.rs.evil.test/"));
        assert!(!docs.matches_url("https://evil.test\\@docs.rs/"));
        assert!(!docs.matches_url("https://evil.test/?docs.rs"));
        assert!(!docs.matches_url("not a url"));
        let subs = DomainPattern::parse("domain:*.example.com").unwrap();
        assert!(subs.matches_url("https://a.b.example.com/"));
        assert!(!subs.matches_url("https://example.com/"));
        for bad in ["docs.rs", "domain:", "domain:a b", "domain:a..b"] {
            assert!(DomainPattern::parse(bad).is_err(), "{bad}");
        }
    }
}
