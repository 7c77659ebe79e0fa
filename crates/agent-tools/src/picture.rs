//! Pictures from the workspace. `read_file` of a PNG, JPEG, GIF or WebP file returns it as an
//! image ([`ToolOutput::images`]) with a line saying what it is, for a model that takes pictures
//! (the runner puts a note in its place for one that does not); and a person's `@shot.png` in a
//! task or a message names one to attach ([`mentioned_pictures`]), read with the same
//! confinement as the file tools.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use crate::path::{canonical_workspace, open_inside, resolve_in_workspace};
use crate::{ToolError, ToolImage, ToolOutput, image_media_type};

/// The file extensions a `@mention` attaches as a picture (any case).
pub const PICTURE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];

/// The words of `text` that mention a picture: `@` then a path ending in one of
/// [`PICTURE_EXTENSIONS`] (trailing punctuation such as `.,;:!?)` left out).
///
/// ```
/// assert_eq!(
///     agent_tools::picture_mentions("see @ui/a.PNG, not @src/main.rs nor me@x.png"),
///     ["ui/a.PNG"]
/// );
/// ```
pub fn picture_mentions(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .filter_map(|word| word.strip_prefix('@'))
        .map(|path| path.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'']))
        .filter(|path| {
            Path::new(path)
                .extension()
                .and_then(|ext| ext.to_str())
                .is_some_and(|ext| {
                    PICTURE_EXTENSIONS
                        .iter()
                        .any(|k| k.eq_ignore_ascii_case(ext))
                })
        })
        .collect()
}

/// The pictures `text` mentions ([`picture_mentions`]), each with its mention, read from
/// `workspace` as `read_file` reads (never outside it, symbolic links followed and checked).
/// A mention of a file that is missing, outside the workspace, not a picture or too large is
/// an error naming it: a picture the person meant to show is never silently left out.
pub fn mentioned_pictures(
    text: &str,
    workspace: &Path,
) -> Result<Vec<(String, ToolImage)>, String> {
    let mut found = Vec::new();
    for mention in picture_mentions(text) {
        let named = |error: ToolError| format!("@{mention}: {error}");
        let root = canonical_workspace(workspace).map_err(named)?;
        let path = resolve_in_workspace(&root, mention).map_err(named)?;
        let file = open_inside(&root, &path, mention).map_err(named)?;
        let size = file
            .metadata()
            .map_err(|e| named(ToolError::io("read", mention, e)))?;
        let mut reader = BufReader::new(file);
        let prefix = reader
            .fill_buf()
            .map_err(|e| named(ToolError::io("read", mention, e)))?;
        let Some(media_type) = sniff(prefix) else {
            return Err(format!("@{mention}: not a PNG, JPEG, GIF or WebP picture"));
        };
        let output = read_picture(reader, size.len(), mention, media_type).map_err(named)?;
        found.extend(
            output
                .images
                .into_iter()
                .map(|image| (mention.to_owned(), image)),
        );
    }
    Ok(found)
}

/// The largest picture `read_file` returns, in bytes: the most a provider takes in one image
/// (Anthropic's 5 MiB), so a larger one is refused here with the reason, not by the provider.
pub(crate) const MAX_PICTURE_BYTES: u64 = 5 * 1024 * 1024;

/// The picture's media type when `prefix` (a file's first bytes) starts one.
pub(crate) fn sniff(prefix: &[u8]) -> Option<&'static str> {
    image_media_type(prefix)
}

/// Reads the picture `file` (of `media_type`, shown to the model as `shown`) whole.
pub(crate) fn read_picture(
    mut file: impl Read,
    size: u64,
    shown: &str,
    media_type: &str,
) -> Result<ToolOutput, ToolError> {
    if size > MAX_PICTURE_BYTES {
        return Err(ToolError::failed(format!(
            "{shown:?} is a picture of {size} bytes, more than the {MAX_PICTURE_BYTES} a model \
             is sent; make a smaller copy (e.g. with `convert -resize`) and read that"
        )));
    }
    let mut data = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.by_ref()
        .take(MAX_PICTURE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|e| ToolError::io("read", shown, e))?;
    if data.len() as u64 > MAX_PICTURE_BYTES {
        return Err(ToolError::failed(format!(
            "{shown:?} grew past {MAX_PICTURE_BYTES} bytes while it was read"
        )));
    }
    let text = format!(
        "{shown} is a picture ({media_type}, {} bytes); it follows.",
        data.len()
    );
    Ok(ToolOutput::text(text).with_image(ToolImage {
        media_type: media_type.to_owned(),
        data,
    }))
}
