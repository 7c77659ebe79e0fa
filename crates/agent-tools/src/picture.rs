//! `read_file` of a picture: a PNG, JPEG, GIF or WebP file is returned as an image
//! ([`ToolOutput::images`]) with a line saying what it is, for a model that takes pictures
//! (the runner puts a note in its place for one that does not).

use std::io::Read;

use crate::{ToolError, ToolImage, ToolOutput, image_media_type};

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
