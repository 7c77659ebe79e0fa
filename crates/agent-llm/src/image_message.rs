//! Pictures on chat messages: a user message with pictures, the pictures of a user or tool
//! message, and a conversation made fit for a model that takes none ([`leave_out_images`]).
//! Apart from `image.rs`, which the message types use, so the two never import each other.

use crate::image::ChatImage;
use crate::types::ChatMessage;

/// `messages` for a model that takes no pictures: each picture becomes a short text saying it
/// was left out, so the model knows it is there (and a tool that returned one says so).
/// Returns whether any picture was replaced.
pub fn leave_out_images(messages: &mut [ChatMessage], model: &str) -> bool {
    let mut changed = false;
    for message in messages.iter_mut() {
        let Some(images) = message.images_mut().filter(|images| !images.is_empty()) else {
            continue;
        };
        let notes: Vec<String> = images
            .drain(..)
            .map(|image| {
                format!(
                    "{} (not shown: the model {model} does not take images)",
                    image.placeholder()
                )
            })
            .collect();
        let notes = notes.join("\n");
        match message {
            ChatMessage::UserWithImages { text, .. } => {
                *message = ChatMessage::user(format!("{text}\n{notes}"));
            }
            ChatMessage::Tool { content, .. } => {
                content.push('\n');
                content.push_str(&notes);
            }
            _ => {}
        }
        changed = true;
    }
    changed
}

impl ChatMessage {
    /// A user message with pictures; without any, a plain [`ChatMessage::User`].
    pub fn user_with_images(text: impl Into<String>, images: Vec<ChatImage>) -> Self {
        if images.is_empty() {
            ChatMessage::User(text.into())
        } else {
            ChatMessage::UserWithImages {
                text: text.into(),
                images,
            }
        }
    }

    /// The pictures of a user or tool message; empty for every other message.
    pub fn images(&self) -> &[ChatImage] {
        match self {
            ChatMessage::UserWithImages { images, .. } | ChatMessage::Tool { images, .. } => images,
            _ => &[],
        }
    }

    /// The pictures of a user or tool message, to change them in place (e.g. to load their
    /// bytes); `None` for a message that cannot carry any.
    pub fn images_mut(&mut self) -> Option<&mut Vec<ChatImage>> {
        match self {
            ChatMessage::UserWithImages { images, .. } | ChatMessage::Tool { images, .. } => {
                Some(images)
            }
            _ => None,
        }
    }
}
