//! The web viewer's static files: `GET /` (the page), `GET /static/app.js` and
//! `GET /static/style.css`, all embedded in the binary.
//!
//! Every file is answered with its content type, `X-Content-Type-Options: nosniff`,
//! `Cache-Control: no-cache` and a strong `ETag` (a hash of the embedded bytes), so a browser
//! revalidates on each load and gets a `304 Not Modified` while the binary is the same. The
//! page also carries a Content-Security-Policy that allows only this origin's scripts, styles
//! and connections: trace text that slipped into markup could still not run.
//!
//! The assets (not the page) are public: with a token configured a browser cannot attach it to
//! a `<script>` or `<link>` load, and these files hold no trace data. See
//! [`is_public_asset`].

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::state::AppState;

/// One embedded file.
struct Asset {
    body: &'static str,
    content_type: &'static str,
    /// A quoted hash of `body`, computed at compile time.
    etag: [u8; 18],
}

impl Asset {
    const fn new(body: &'static str, content_type: &'static str) -> Self {
        Self {
            body,
            content_type,
            etag: etag(body.as_bytes()),
        }
    }
}

/// The page: the HTML shell that loads the script and the style sheet.
const INDEX: Asset = Asset::new(
    include_str!("../../static/index.html"),
    "text/html; charset=utf-8",
);

/// The application script (a plain ES module).
const APP_JS: Asset = Asset::new(
    include_str!("../../static/app.js"),
    "text/javascript; charset=utf-8",
);

/// The style sheet.
const STYLE_CSS: Asset = Asset::new(
    include_str!("../../static/style.css"),
    "text/css; charset=utf-8",
);

/// The paths of the assets, which need no token.
const PUBLIC_ASSETS: [&str; 2] = ["/static/app.js", "/static/style.css"];

/// What the page may load and connect to: this origin only.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
    style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
    form-action 'none'; frame-ancestors 'none'";

/// The routes of this module.
pub(crate) fn router() -> axum::Router<AppState> {
    axum::Router::new()
        .route("/", get(index))
        .route("/static/app.js", get(app_js))
        .route("/static/style.css", get(style_css))
}

/// True for the paths of the viewer's script and style sheet, which the token guard lets
/// through: they are the same for everyone and hold no trace data.
pub(crate) fn is_public_asset(path: &str) -> bool {
    PUBLIC_ASSETS.contains(&path)
}

async fn index(headers: HeaderMap) -> Response {
    let mut response = serve(&INDEX, &headers);
    if let Ok(policy) = HeaderValue::from_str(CONTENT_SECURITY_POLICY) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    response.headers_mut().insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

async fn app_js(headers: HeaderMap) -> Response {
    serve(&APP_JS, &headers)
}

async fn style_css(headers: HeaderMap) -> Response {
    serve(&STYLE_CSS, &headers)
}

/// A quoted 16-digit hex FNV-1a hash of `bytes`: `"0123456789abcdef"`.
const fn etag(bytes: &[u8]) -> [u8; 18] {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    let digits = b"0123456789abcdef";
    let mut out = [b'"'; 18];
    let mut d = 0;
    while d < 16 {
        out[1 + d] = digits[((hash >> (60 - 4 * d)) & 0xf) as usize];
        d += 1;
    }
    out
}

/// The file, or `304 Not Modified` when the request's `If-None-Match` names its tag.
fn serve(asset: &Asset, request: &HeaderMap) -> Response {
    let tag = HeaderValue::from_bytes(&asset.etag).unwrap_or(HeaderValue::from_static("\"0\""));
    let matches = request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .any(|candidate| {
            candidate == "*" || candidate.trim_start_matches("W/").as_bytes() == tag.as_bytes()
        });
    let common = [
        (header::ETAG, tag),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
    ];
    if matches {
        return (StatusCode::NOT_MODIFIED, common).into_response();
    }
    (
        common,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static(asset.content_type),
        )],
        asset.body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_are_quoted_hex_and_differ_per_file() {
        for tag in [INDEX.etag, APP_JS.etag, STYLE_CSS.etag] {
            assert_eq!(tag[0], b'"');
            assert_eq!(tag[17], b'"');
            assert!(tag[1..17].iter().all(u8::is_ascii_hexdigit));
        }
        assert_ne!(INDEX.etag, APP_JS.etag);
        assert_ne!(etag(b"a"), etag(b"b"));
    }

    #[test]
    fn only_the_assets_are_public() {
        assert!(is_public_asset("/static/app.js"));
        assert!(is_public_asset("/static/style.css"));
        assert!(!is_public_asset("/"));
        assert!(!is_public_asset("/static/"));
        assert!(!is_public_asset("/api/traces"));
    }
}
