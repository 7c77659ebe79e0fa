//! Pictures a person attaches to a task or a message, read by one function for every door: the
//! files of `agent run --image FILE`, and `@path/to/picture.png` mentions in the text of a task
//! or a chat message (the chat's line mode, the full-screen UI, ACP, `serve`), so a picture
//! means the same wherever it is typed. Bytes become a picture in
//! [`agent_llm::ChatImage::from_bytes`] (the types a model is sent, the size cap); whether the
//! model takes pictures is the runner's to check ([`agent_runner::RunError::NoVision`]).

use std::path::{Path, PathBuf};

use agent_llm::ChatImage;

use crate::error::{Error, Result};

/// The file extensions a `@mention` attaches as a picture (any case).
pub const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];

/// A task or a message with the pictures attached to it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prompt {
    /// The text, as the model reads it (the mentions stay in it, naming the pictures).
    pub text: String,
    /// The pictures, in the order they were named.
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

/// The words of `text` that mention a picture: `@` then a path ending in one of
/// [`IMAGE_EXTENSIONS`] (trailing punctuation `.,;:!?)` left out).
pub fn mentions(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .filter_map(|word| word.strip_prefix('@'))
        .map(|path| path.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'']))
        .filter(|path| {
            Path::new(path)
                .extension()
                .and_then(|ext| ext.to_str())
                .is_some_and(|ext| {
                    IMAGE_EXTENSIONS
                        .iter()
                        .any(|known| known.eq_ignore_ascii_case(ext))
                })
        })
        .collect()
}

/// `text` with the pictures it mentions (`@shot.png`, relative to `workspace` or absolute
/// inside it) and then the `files` named apart (`--image`, absolute or relative to the current
/// folder). A mention outside the workspace, of a missing file or of a file that is not a
/// picture is a usage error: a picture the person meant to show is never silently left out.
pub fn attach(text: &str, files: &[PathBuf], workspace: &Path) -> Result<Prompt> {
    let root = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_owned());
    let mut images = Vec::new();
    for mention in mentions(text) {
        let path = root.join(mention);
        let inside = path
            .canonicalize()
            .map_err(|error| Error::usage(format!("@{mention}: cannot read it: {error}")))?;
        if !inside.starts_with(&root) {
            return Err(Error::usage(format!(
                "@{mention}: a mentioned picture must be inside the workspace {}",
                root.display()
            )));
        }
        let mut image = load(&inside)?;
        image.name = Some(mention.to_owned());
        images.push(image);
    }
    for file in files {
        images.push(load(file)?);
    }
    Ok(Prompt {
        text: text.to_owned(),
        images,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_and_files_become_pictures_and_mistakes_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("shots")).unwrap();
        std::fs::write(dir.path().join("shots/a.PNG"), agent_test_support::TINY_PNG).unwrap();
        std::fs::write(dir.path().join("notes.png"), "not a picture").unwrap();
        assert_eq!(
            mentions("see @shots/a.PNG, and @src/main.rs or me@x.png @b.webp."),
            ["shots/a.PNG", "b.webp"]
        );
        let prompt = attach("What is in @shots/a.PNG?", &[], dir.path()).unwrap();
        assert_eq!(prompt.text, "What is in @shots/a.PNG?");
        assert_eq!(prompt.images.len(), 1);
        assert_eq!(prompt.images[0].placeholder(), "[image: shots/a.PNG 3×2]");
        let error = attach("@notes.png", &[], dir.path()).unwrap_err().to_string();
        assert!(error.contains("not a PNG, JPEG, GIF or WebP picture"), "{error}");
        let error = attach("@gone.png", &[], dir.path()).unwrap_err().to_string();
        assert!(error.contains("@gone.png: cannot read it"), "{error}");
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("o.png"), agent_test_support::TINY_PNG).unwrap();
        let escape = format!("@{}", outside.path().join("o.png").display());
        let error = attach(&escape, &[], dir.path()).unwrap_err().to_string();
        assert!(error.contains("must be inside the workspace"), "{error}");
        // A file named apart may be anywhere the person can read.
        let files = [outside.path().join("o.png")];
        let prompt = attach("look", &files, dir.path()).unwrap();
        assert_eq!(prompt.images[0].name.as_deref(), Some("o.png"));
    }
}
