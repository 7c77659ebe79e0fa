//! The viewer's static files: content types, caching headers (`ETag`, `no-cache`, 304), the
//! page's Content-Security-Policy, the assets reachable without a token, and a guard that the
//! script never parses trace text as HTML.

use std::sync::Arc;

use crate::common::{get, read_only, send};
use agent_api::{ApiConfig, AppState};
use agent_execution::{InMemoryTraceStore, TraceStore};
use axum::body::Body;
use axum::http::{Request, StatusCode, header};

fn state() -> AppState {
    read_only(Arc::new(InMemoryTraceStore::new()) as Arc<dyn TraceStore>)
}

#[tokio::test]
async fn each_file_has_its_type_and_caching_headers() {
    let state = state();
    for (path, content_type, marker) in [
        ("/", "text/html; charset=utf-8", "<!doctype html>"),
        (
            "/static/app.js",
            "text/javascript; charset=utf-8",
            "class TraceView",
        ),
        ("/static/style.css", "text/css; charset=utf-8", ".dag"),
    ] {
        let answer = get(&state, path).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_eq!(answer.headers[header::CONTENT_TYPE], content_type, "{path}");
        assert_eq!(answer.headers[header::CACHE_CONTROL], "no-cache", "{path}");
        assert_eq!(
            answer.headers[header::X_CONTENT_TYPE_OPTIONS],
            "nosniff",
            "{path}"
        );
        assert!(answer.text.contains(marker), "{path}");
        let etag = answer.headers[header::ETAG].to_str().unwrap().to_owned();
        assert!(etag.starts_with('"') && etag.ends_with('"') && etag.len() == 18);

        // The same tag again: 304 with no body; another tag: the file.
        for (tag, status) in [
            (etag.clone(), StatusCode::NOT_MODIFIED),
            (format!("W/{etag}"), StatusCode::NOT_MODIFIED),
            (format!("\"other\", {etag}"), StatusCode::NOT_MODIFIED),
            ("\"other\"".to_owned(), StatusCode::OK),
        ] {
            let request = Request::get(path)
                .header(header::IF_NONE_MATCH, &tag)
                .body(Body::empty())
                .unwrap();
            let again = send(&state, request).await;
            assert_eq!(again.status, status, "{path} {tag}");
            assert_eq!(again.headers[header::ETAG], etag.as_str());
            if status == StatusCode::NOT_MODIFIED {
                assert!(again.text.is_empty());
            }
        }
    }
    let tags: std::collections::HashSet<_> = futures_tags(&state).await;
    assert_eq!(tags.len(), 3, "each file has its own tag");
}

async fn futures_tags(state: &AppState) -> std::collections::HashSet<String> {
    let mut tags = std::collections::HashSet::new();
    for path in ["/", "/static/app.js", "/static/style.css"] {
        let answer = get(state, path).await;
        tags.insert(answer.headers[header::ETAG].to_str().unwrap().to_owned());
    }
    tags
}

#[tokio::test]
async fn the_page_loads_only_from_its_own_origin() {
    let answer = get(&state(), "/").await;
    let policy = answer.headers[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap();
    for directive in [
        "default-src 'self'",
        "script-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(directive), "{policy}");
    }
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    assert!(answer.text.contains("src=\"/static/app.js\""));
    assert!(answer.text.contains("href=\"/static/style.css\""));
    assert!(!answer.text.contains("<script>"), "no inline script");
}

#[tokio::test]
async fn with_a_token_the_assets_stay_public_and_the_page_does_not() {
    let store: Arc<dyn TraceStore> = Arc::new(InMemoryTraceStore::new());
    let config = ApiConfig {
        token: Some("s3cret".into()),
        ..ApiConfig::default()
    };
    let state = AppState::builder(store).config(config).build().unwrap();
    for path in ["/static/app.js", "/static/style.css"] {
        assert_eq!(get(&state, path).await.status, StatusCode::OK, "{path}");
    }
    assert_eq!(get(&state, "/").await.status, StatusCode::UNAUTHORIZED);
    assert_eq!(get(&state, "/?token=s3cret").await.status, StatusCode::OK);
    for path in ["/static/", "/static/app.js.map", "/static/other.js"] {
        let answer = get(&state, path).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{path}");
    }
    // Public, but only to this server's own origin.
    let request = Request::get("/static/app.js")
        .header(header::ORIGIN, "http://evil.example")
        .header(header::HOST, "127.0.0.1:8420")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&state, request).await.status, StatusCode::FORBIDDEN);
}

#[test]
fn the_script_never_parses_text_as_html() {
    let script = include_str!("../../static/app.js");
    for sink in [
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
    ] {
        assert!(!script.contains(sink), "app.js uses {sink}");
    }
}
