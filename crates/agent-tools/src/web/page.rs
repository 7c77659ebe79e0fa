//! A fetched response as the model reads it: HTML as Markdown, text and JSON as they are, a
//! picture as an image, with a first line saying what it is and notes saying what was cut.

use std::sync::LazyLock;

use regex::Regex;
use url::Url;

use crate::fs::{blocking, looks_binary};
use crate::output::floor_char_boundary;
use crate::{ToolError, ToolImage, ToolOutput, image_media_type};

/// Tags whose content a reader of the page does not see.
const HIDDEN_TAGS: [&str; 12] = [
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed",
    "meta", "link", "head",
];

/// A response as read.
pub(crate) struct Page {
    /// The URL that answered (after same-host redirects).
    pub(crate) url: Url,
    /// Its status code and reason.
    pub(crate) status: u16,
    pub(crate) reason: String,
    /// Its `Content-Type`, as sent.
    pub(crate) content_type: Option<String>,
    /// The body, up to the cap.
    pub(crate) body: Vec<u8>,
    /// When the body was cut: the cap, and the length the server declared if it did.
    pub(crate) cut: Option<(usize, Option<u64>)>,
}

/// What a body is.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
    Image(&'static str),
    Other(String),
}

/// The tool output for `page`, its text held to `max_output` bytes.
pub(crate) async fn render(
    page: Page,
    prompt: Option<&str>,
    max_output: usize,
) -> Result<ToolOutput, ToolError> {
    let kind = kind_of(page.content_type.as_deref(), &page.body);
    let mut head = format!(
        "Fetched {} ({} {}, {}, {} bytes",
        page.url,
        page.status,
        page.reason,
        page.content_type.as_deref().unwrap_or("no content type"),
        page.body.len(),
    );
    let failed = !(200..300).contains(&page.status);
    let text = match kind {
        Kind::Image(media_type) => {
            if page.cut.is_some() {
                return Err(ToolError::failed(format!(
                    "{} is a picture larger than {} bytes, which web_fetch does not read",
                    page.url,
                    page.body.len()
                )));
            }
            head.push_str(")\n");
            let output = ToolOutput::text(format!("{head}The picture follows."));
            return Ok(output.with_image(ToolImage {
                media_type: media_type.to_owned(),
                data: page.body,
            }));
        }
        Kind::Other(what) => {
            return Err(ToolError::failed(format!(
                "{} is {what} ({} bytes): web_fetch reads web pages, text, JSON and pictures",
                page.url,
                page.body.len()
            )));
        }
        Kind::Html => {
            let html = String::from_utf8_lossy(&page.body).into_owned();
            let markdown = blocking(move || Ok(html_to_markdown(&html))).await?;
            head.push_str(&format!(" → {} bytes of Markdown", markdown.len()));
            markdown
        }
        Kind::Text => String::from_utf8_lossy(&page.body).into_owned(),
    };
    head.push_str(")\n");
    if let Some((cap, declared)) = page.cut {
        let of = declared.map_or_else(String::new, |total| format!(" of {total}"));
        head.push_str(&format!(
            "Note: the body is larger than {cap} bytes; only its first {cap}{of} bytes were \
             read, so the page is cut short.\n"
        ));
    }
    if let Some(prompt) = prompt.map(str::trim).filter(|p| !p.is_empty()) {
        head.push_str(&format!("Read for: {prompt}\n"));
    }
    head.push('\n');
    let room = max_output.saturating_sub(head.len()).max(1);
    let shown = if text.len() > room {
        let end = floor_char_boundary(&text, room.saturating_sub(120));
        format!(
            "{}\n\n[... the page goes on: {} of its {} bytes are not shown ...]\n",
            &text[..end],
            text.len() - end,
            text.len()
        )
    } else {
        text
    };
    let output = format!("{head}{shown}");
    Ok(if failed {
        ToolOutput::error(output)
    } else {
        ToolOutput::text(output)
    })
}

/// What a body is, from its `Content-Type`, else from its first bytes.
fn kind_of(content_type: Option<&str>, body: &[u8]) -> Kind {
    let essence = content_type
        .and_then(|value| value.split(';').next())
        .map(|value| value.trim().to_ascii_lowercase());
    match essence.as_deref() {
        Some("text/html" | "application/xhtml+xml") => Kind::Html,
        Some("image/png" | "image/jpeg" | "image/jpg" | "image/gif" | "image/webp") => {
            image_media_type(body).map_or_else(
                || Kind::Other("not a picture it can read".into()),
                Kind::Image,
            )
        }
        Some(essence)
            if essence.starts_with("text/")
                || essence.ends_with("+json")
                || essence.ends_with("+xml")
                || matches!(
                    essence,
                    "application/json"
                        | "application/xml"
                        | "application/javascript"
                        | "application/x-ndjson"
                        | "application/yaml"
                        | "application/toml"
                ) =>
        {
            Kind::Text
        }
        None | Some("" | "application/octet-stream") => {
            if let Some(media_type) = image_media_type(body) {
                Kind::Image(media_type)
            } else if looks_binary(body) {
                Kind::Other("binary data".into())
            } else if looks_like_html(body) {
                Kind::Html
            } else {
                Kind::Text
            }
        }
        Some(other) => Kind::Other(other.to_owned()),
    }
}

/// Whether a body without a content type starts like an HTML document.
fn looks_like_html(body: &[u8]) -> bool {
    let start = String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase();
    let start = start.trim_start();
    start.starts_with("<!doctype html") || start.starts_with("<html") || start.contains("<body")
}

/// HTML as Markdown: what a reader sees, with its links; no script, style or other hidden
/// content, and pictures written inline as data shown by their description only.
pub(crate) fn html_to_markdown(html: &str) -> String {
    static INLINE_PICTURE: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"!\[([^\]]*)\]\(data:[^)]*\)").ok());
    static BLANK_LINES: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"\n[ \t]*\n(?:[ \t]*\n)+").ok());
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(HIDDEN_TAGS.to_vec())
        .build();
    let markdown = match converter.convert(html) {
        Ok(markdown) => markdown,
        // The parser takes any input; an error could only come from writing to memory.
        Err(_) => return String::new(),
    };
    let markdown = match INLINE_PICTURE.as_ref() {
        Some(pattern) => pattern.replace_all(&markdown, "[picture: $1]").into_owned(),
        None => markdown,
    };
    let markdown = match BLANK_LINES.as_ref() {
        Some(pattern) => pattern.replace_all(&markdown, "\n\n").into_owned(),
        None => markdown,
    };
    markdown.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_markdown_without_hidden_content() {
        let html = r#"<!doctype html><html><head><title>T</title><style>p{color:red}</style>
            <script>var secret = 1;</script></head><body><h1>Heading</h1>
            <p>A <a href="https://docs.rs/">link</a> and <b>bold</b>.</p>
            <noscript>enable js</noscript><img src="data:image/png;base64,AAAA" alt="dot">
            <ul><li>one</li><li>two</li></ul></body></html>"#;
        let markdown = html_to_markdown(html);
        assert!(markdown.contains("# Heading"), "{markdown}");
        assert!(markdown.contains("[link](https://docs.rs/)"), "{markdown}");
        assert!(markdown.contains("**bold**"), "{markdown}");
        assert!(
            markdown.contains("one") && markdown.contains("two"),
            "{markdown}"
        );
        for hidden in ["secret", "color:red", "enable js", "base64", "<", "T\n"] {
            assert!(!markdown.contains(hidden), "{hidden:?} in {markdown}");
        }
    }

    #[test]
    fn kinds_come_from_the_content_type_else_the_bytes() {
        let check = |content_type: Option<&str>, body: &[u8], expect: Kind| {
            assert_eq!(kind_of(content_type, body), expect, "{content_type:?}");
        };
        check(Some("text/html; charset=utf-8"), b"x", Kind::Html);
        check(Some("application/json"), b"{}", Kind::Text);
        check(Some("application/vnd.api+json"), b"{}", Kind::Text);
        check(
            Some("image/png"),
            b"\x89PNG\r\n\x1a\nxxxx",
            Kind::Image("image/png"),
        );
        check(None, b"<!DOCTYPE html><p>x", Kind::Html);
        check(None, b"plain", Kind::Text);
        check(None, b"\0\x01", Kind::Other("binary data".into()));
        check(
            Some("application/pdf"),
            b"%PDF",
            Kind::Other("application/pdf".into()),
        );
    }
}
