//! The text the model sees for an MCP tool result: text blocks as they are, structured content
//! as JSON, resources and resource links as short references, images and audio as a note. The
//! same for a prompt's messages (the text a slash command sends) and a resource's contents.

use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptResult, ReadResourceResult, ResourceContents, Role,
};

/// The text of a tool result for the model, and whether the server flagged it as an error.
pub fn result_text(result: &CallToolResult) -> (String, bool) {
    let mut parts: Vec<String> = result.content.iter().map(block_text).collect();
    if let Some(structured) = &result.structured_content {
        // Servers are asked to repeat structured content as a text block; show it only once.
        let repeated = result.content.iter().any(|block| match block {
            ContentBlock::Text(text) => {
                serde_json::from_str::<serde_json::Value>(&text.text)
                    .ok()
                    .as_ref()
                    == Some(structured)
            }
            _ => false,
        });
        if !repeated {
            let json = serde_json::to_string_pretty(structured).unwrap_or_default();
            if parts.is_empty() {
                parts.push(json);
            } else {
                parts.push(format!("structured content:\n{json}"));
            }
        }
    }
    let text = if parts.is_empty() {
        "(the tool returned no content)".to_owned()
    } else {
        parts.join("\n")
    };
    (text, result.is_error == Some(true))
}

/// The text of a prompt's messages, as one message to send: the messages' text in order, each
/// under its role when the prompt has more than one role (`assistant:` before an example
/// answer).
pub fn prompt_text(result: &GetPromptResult) -> String {
    let role = |role: &Role| match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let mixed = result
        .messages
        .windows(2)
        .any(|pair| pair[0].role != pair[1].role);
    result
        .messages
        .iter()
        .map(|message| {
            let text = block_text(&message.content);
            if mixed {
                format!("{}: {text}", role(&message.role))
            } else {
                text
            }
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The text of a resource's contents: text as it is, binary contents as a note of their type
/// and size.
pub fn resource_text(result: &ReadResourceResult) -> String {
    let parts: Vec<String> = result
        .contents
        .iter()
        .map(|contents| match contents {
            ResourceContents::TextResourceContents { text, .. } => text.clone(),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[{uri}: {}, {} — not shown]",
                mime_type.as_deref().unwrap_or("binary"),
                size_of_base64(blob)
            ),
            // Newer protocol versions may add kinds of resource contents.
            #[allow(unreachable_patterns)]
            _ => "[contents of an unknown kind — not shown]".to_owned(),
        })
        .collect();
    if parts.is_empty() {
        "(the resource is empty)".to_owned()
    } else {
        parts.join("\n")
    }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!(
            "[image: {}, {} — not shown]",
            image.mime_type,
            size_of_base64(&image.data)
        ),
        ContentBlock::Audio(audio) => format!(
            "[audio: {}, {} — not shown]",
            audio.mime_type,
            size_of_base64(&audio.data)
        ),
        ContentBlock::Resource(resource) => match &resource.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                format!("[resource {uri}]\n{text}")
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => format!(
                "[resource {uri}: {}, {} — not shown]",
                mime_type.as_deref().unwrap_or("binary"),
                size_of_base64(blob)
            ),
            // Newer protocol versions may add kinds of resource contents.
            #[allow(unreachable_patterns)]
            _ => "[resource — not shown]".to_owned(),
        },
        ContentBlock::ResourceLink(link) => {
            let mut text = format!("[resource link: {} <{}>", link.name, link.uri);
            if let Some(mime) = &link.mime_type {
                text.push_str(&format!(" ({mime})"));
            }
            if let Some(description) = &link.description {
                text.push_str(&format!(" — {description}"));
            }
            text.push(']');
            text
        }
        // Newer protocol versions may add kinds of content.
        #[allow(unreachable_patterns)]
        _ => "[content of an unknown kind — not shown]".to_owned(),
    }
}

/// The decoded size of base64 data, for a person to read.
fn size_of_base64(data: &str) -> String {
    let trimmed = data.trim_end_matches('=');
    let bytes = trimmed.len() * 3 / 4;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{EmbeddedResource, Resource};
    use serde_json::json;

    use super::*;

    fn check(result: CallToolResult, expect: &str, expect_error: bool) {
        let (text, is_error) = result_text(&result);
        assert_eq!(text, expect);
        assert_eq!(is_error, expect_error);
    }

    fn result(content: Vec<ContentBlock>) -> CallToolResult {
        CallToolResult::success(content)
    }

    #[test]
    fn text_blocks_are_joined() {
        check(
            result(vec![ContentBlock::text("a"), ContentBlock::text("b")]),
            "a\nb",
            false,
        );
        check(result(vec![]), "(the tool returned no content)", false);
    }

    #[test]
    fn errors_keep_their_text_and_flag() {
        check(
            CallToolResult::error(vec![ContentBlock::text("no such file")]),
            "no such file",
            true,
        );
    }

    #[test]
    fn images_audio_and_blobs_become_notes() {
        check(
            result(vec![ContentBlock::image("AAAA", "image/png")]),
            "[image: image/png, 3 bytes — not shown]",
            false,
        );
        check(
            result(vec![ContentBlock::audio("A".repeat(4096), "audio/wav")]),
            "[audio: audio/wav, 3.0 KiB — not shown]",
            false,
        );
        let blob = ResourceContents::BlobResourceContents {
            uri: "file:///x.bin".into(),
            mime_type: None,
            blob: "AAAA".into(),
            meta: None,
        };
        check(
            result(vec![ContentBlock::Resource(EmbeddedResource::new(blob))]),
            "[resource file:///x.bin: binary, 3 bytes — not shown]",
            false,
        );
    }

    #[test]
    fn resources_and_links_are_referenced() {
        let text = ResourceContents::text("hello", "file:///a.txt");
        check(
            result(vec![ContentBlock::Resource(EmbeddedResource::new(text))]),
            "[resource file:///a.txt]\nhello",
            false,
        );
        let link = Resource::new("file:///b.txt", "b.txt").with_description("the b file");
        check(
            result(vec![ContentBlock::ResourceLink(link)]),
            "[resource link: b.txt <file:///b.txt> — the b file]",
            false,
        );
    }

    #[test]
    fn structured_content_is_shown_once() {
        let mut only = result(vec![]);
        only.structured_content = Some(json!({"sum": 3}));
        check(only, "{\n  \"sum\": 3\n}", false);

        let mut repeated = result(vec![ContentBlock::text("{\"sum\":3}")]);
        repeated.structured_content = Some(json!({"sum": 3}));
        check(repeated, "{\"sum\":3}", false);

        let mut both = result(vec![ContentBlock::text("The sum is 3.")]);
        both.structured_content = Some(json!({"sum": 3}));
        check(
            both,
            "The sum is 3.\nstructured content:\n{\n  \"sum\": 3\n}",
            false,
        );
    }
}
