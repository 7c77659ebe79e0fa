//! Pictures a person attaches to a task apart from its text: the files of `agent run --image
//! FILE`. Bytes become a picture in [`agent_llm::ChatImage::from_bytes`] (the types a model is
//! sent, the size cap). `@shot.png` in a task or a message, at any door, is the runner's: it
//! attaches the pictures a text mentions from the workspace, and refuses pictures for a model
//! that takes none ([`agent_runner::RunError::NoVision`]).

use std::path::{Path, PathBuf};

use agent_llm::ChatImage;

use crate::error::{Error, Result};

/// A task or a message with the pictures attached to it apart from its text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    /// The text, as the model reads it.
    pub text: String,
    /// The pictures named apart (`--image`), in order.
    pub images: Vec<ChatImage>,
}

/// The picture in the file at `path`; a file that is missing, unreadable, not a PNG, JPEG, GIF
/// or WebP picture, or too large is a usage error naming it.
pub fn load(path: &Path) -> Result<ChatImage> {
    let shown = path.display();
    let bytes = std::fs::read(path)
        .map_err(|error| Error::usage(format!("image {shown}: cannot read it: {error}")))?;
    let name = path.file_name().map(|name| name.to_string_lossy());
    ChatImage::from_bytes(&bytes, name.as_deref())
        .map_err(|error| Error::usage(format!("image {shown}: {error}")))
}

/// `text` with the pictures of `files` (absolute or relative to the current folder; any file
/// the person can read, as a command-line argument may name).
pub fn attach(text: &str, files: &[PathBuf]) -> Result<Prompt> {
    Ok(Prompt {
        text: text.to_owned(),
        images: files.iter().map(|file| load(file)).collect::<Result<_>>()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_become_pictures_and_mistakes_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.png"), agent_test_support::TINY_PNG).unwrap();
        std::fs::write(dir.path().join("notes.png"), "not a picture").unwrap();
        let prompt = attach("look", &[dir.path().join("a.png")]).unwrap();
        assert_eq!(prompt.text, "look");
        assert_eq!(prompt.images[0].placeholder(), "[image: a.png 3×2]");
        let error = attach("x", &[dir.path().join("notes.png")])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("not a PNG, JPEG, GIF or WebP picture"),
            "{error}"
        );
        let error = attach("x", &[dir.path().join("gone.png")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("gone.png: cannot read it"), "{error}");
    }
}
