//! Pictures in each wire format: OpenAI chat's `image_url` parts (a `data:` URL), Responses'
//! `input_image` parts, Anthropic's `image` blocks (base64 source). OpenAI's two formats take
//! no picture in a tool result, so the pictures of a turn's tool results follow them in one
//! user message ([`tool_pictures_intro`]).

use serde_json::{Value, json};

use crate::types::{ChatImage, ChatMessage};

/// The text that opens the user message carrying the pictures of tool results, in the formats
/// whose tool results take none.
pub(crate) fn tool_pictures_intro(call_ids: &[&str]) -> String {
    format!(
        "The pictures returned by the tool call{} above ({}), in order:",
        if call_ids.len() == 1 { "" } else { "s" },
        call_ids.join(", ")
    )
}

/// The pictures of the tool results in `run` (consecutive tool messages), with the ids of the
/// calls that returned them; empty when there are none.
pub(crate) fn tool_pictures(run: &[&ChatMessage]) -> (Vec<String>, Vec<ChatImage>) {
    let mut ids = Vec::new();
    let mut images = Vec::new();
    for message in run {
        if let ChatMessage::Tool {
            tool_call_id,
            images: own,
            ..
        } = message
            && !own.is_empty()
        {
            ids.push(tool_call_id.clone());
            images.extend(own.iter().cloned());
        }
    }
    (ids, images)
}

/// OpenAI chat: the `content` parts of a user message with pictures.
#[cfg(feature = "openai")]
pub(crate) fn openai_parts(text: &str, images: &[ChatImage]) -> Value {
    let mut parts = Vec::with_capacity(images.len() + 1);
    if !text.trim().is_empty() {
        parts.push(json!({"type": "text", "text": text}));
    }
    for image in images {
        parts.push(match image.data_url() {
            Some(url) => json!({"type": "image_url", "image_url": {"url": url}}),
            None => json!({"type": "text", "text": image.missing_text()}),
        });
    }
    Value::Array(parts)
}

/// Responses: the `content` parts of a user message with pictures.
#[cfg(feature = "openai-responses")]
pub(crate) fn responses_parts(text: &str, images: &[ChatImage]) -> Value {
    let mut parts = Vec::with_capacity(images.len() + 1);
    if !text.trim().is_empty() {
        parts.push(json!({"type": "input_text", "text": text}));
    }
    for image in images {
        parts.push(match image.data_url() {
            Some(url) => json!({"type": "input_image", "image_url": url, "detail": "auto"}),
            None => json!({"type": "input_text", "text": image.missing_text()}),
        });
    }
    Value::Array(parts)
}

/// Anthropic: the `image` blocks of pictures (a text block for one whose bytes are missing).
#[cfg(feature = "anthropic")]
pub(crate) fn anthropic_blocks(images: &[ChatImage]) -> Vec<Value> {
    images
        .iter()
        .map(|image| match image.data.as_deref() {
            Some(data) => json!({
                "type": "image",
                "source": {"type": "base64", "media_type": image.media_type, "data": data},
            }),
            None => json!({"type": "text", "text": image.missing_text()}),
        })
        .collect()
}

#[cfg(test)]
#[path = "images_tests.rs"]
mod tests;
