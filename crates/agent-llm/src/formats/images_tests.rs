//! Pictures in each wire format: a user's pictures and a tool's, as the providers document them.

use std::sync::Arc;

use crate::types::{ChatImage, ChatMessage, ChatRequest, ToolCall};

fn picture(id: &str) -> ChatImage {
    ChatImage::new(id, "image/png", (4, 2), Arc::from("iVBORw0KGgo="))
}

fn unloaded() -> ChatImage {
    ChatImage {
        data: None,
        ..picture("gone")
    }
}

/// A user's picture, then a turn whose two tool calls returned a picture and nothing.
fn conversation() -> ChatRequest {
    let mut seen = ChatMessage::tool_result("c1", "read 12 bytes");
    if let Some(images) = seen.images_mut() {
        images.push(picture("b"));
    }
    ChatRequest::new(
        "m",
        vec![
            ChatMessage::system("sys"),
            ChatMessage::user_with_images("What is this?", vec![picture("a"), unloaded()]),
            ChatMessage::assistant(
                None,
                vec![
                    ToolCall::new("c1", "read_file", "{}"),
                    ToolCall::new("c2", "bash", "{}"),
                ],
            ),
            seen,
            ChatMessage::tool_result("c2", "ok"),
            ChatMessage::user("next"),
        ],
    )
}

#[cfg(feature = "openai")]
#[test]
fn openai_chat_sends_data_urls_and_tool_pictures_after_the_tool_messages() {
    let body = crate::formats::openai::request_body(&conversation(), false);
    let messages = body["messages"].as_array().unwrap();
    let user = &messages[1]["content"];
    assert_eq!(
        user[0],
        serde_json::json!({"type": "text", "text": "What is this?"})
    );
    assert_eq!(user[1]["type"], "image_url");
    assert_eq!(
        user[1]["image_url"]["url"],
        "data:image/png;base64,iVBORw0KGgo="
    );
    assert_eq!(
        user[2]["type"], "text",
        "an unloaded picture is said, not sent empty"
    );
    // Both tool messages stay plain text and adjacent; the picture follows them.
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["content"], "read 12 bytes");
    assert_eq!(messages[4]["role"], "tool");
    assert_eq!(messages[5]["role"], "user");
    assert!(
        messages[5]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("c1")
    );
    assert_eq!(messages[5]["content"][1]["type"], "image_url");
    assert_eq!(messages[6]["content"], "next");
    assert_eq!(messages.len(), 7);
}

#[cfg(feature = "openai-responses")]
#[test]
fn responses_sends_input_images() {
    let body = crate::formats::responses::request_body(&conversation(), &Default::default());
    let input = body["input"].as_array().unwrap();
    let user = &input[0]["content"];
    assert_eq!(user[0]["type"], "input_text");
    assert_eq!(user[1]["type"], "input_image");
    assert_eq!(user[1]["image_url"], "data:image/png;base64,iVBORw0KGgo=");
    let kinds: Vec<&str> = input
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "message",
            "message"
        ]
    );
    assert_eq!(input[5]["content"][1]["type"], "input_image");
}

#[cfg(feature = "anthropic")]
#[test]
fn anthropic_sends_base64_image_blocks_in_messages_and_tool_results() {
    use crate::formats::anthropic::{PromptCache, request_body};
    let body = request_body(&conversation(), false, 100, PromptCache::Off);
    let messages = body["messages"].as_array().unwrap();
    let user = &messages[0]["content"];
    assert_eq!(
        user[0],
        serde_json::json!({"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="
        }})
    );
    assert_eq!(user[1]["type"], "text", "the unloaded picture");
    assert_eq!(user[2]["text"], "What is this?");
    let results = &messages[2]["content"];
    assert_eq!(results[0]["type"], "tool_result");
    assert_eq!(results[0]["content"][0]["text"], "read 12 bytes");
    assert_eq!(results[0]["content"][1]["type"], "image");
    assert_eq!(results[1]["content"], "ok");
}

#[test]
fn pictures_count_in_the_estimate_and_survive_serde() {
    let plain = crate::estimate_message_tokens(&ChatMessage::user("What is this?"));
    let big = ChatImage::new("x", "image/png", (1000, 750), Arc::from(""));
    let with = ChatMessage::user_with_images("What is this?", vec![big]);
    assert_eq!(crate::estimate_message_tokens(&with), plain + 1000);
    let json = serde_json::to_string(&with).unwrap();
    let back: ChatMessage = serde_json::from_str(&json).unwrap();
    assert_eq!(back, with);
    assert_eq!(
        ChatMessage::user_with_images("plain", Vec::new()),
        ChatMessage::user("plain")
    );
}
