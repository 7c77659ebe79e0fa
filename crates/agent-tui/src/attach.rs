//! Pictures pasted into the message being typed. A terminal pastes text only: dropping a file on
//! it, or pasting a copied file, pastes the file's path (quoted, with escaped spaces, or as a
//! `file://` URL). When everything pasted names one picture file (PNG, JPEG, GIF or WebP) by an
//! absolute path, as a dropped file is pasted, the picture is attached to the next message
//! instead (a relative path stays text: it is more likely words about the file), shown as `[image: shot.png 3×2]` above the
//! input; Backspace on an empty input takes the last one off. The person chose the file, so it
//! is read wherever it is (a `@shot.png` mention, which the model could also write, stays within
//! the workspace). Ctrl-V attaches the picture on the clipboard (a screenshot copied there), read
//! with `wl-paste` under Wayland or `xclip` under X11.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use std::path::PathBuf;

use agent_execution::message::ChatImage;

use crate::app::App;

impl App {
    /// Attaches the picture `pasted` names, if it names one; false leaves the paste to be typed.
    pub(crate) fn attach_pasted(&mut self, pasted: &str) -> bool {
        let Some(path) = pasted_path(pasted) else {
            return false;
        };
        // The first bytes say whether it is a picture, before a large file is read whole.
        let mut head = [0u8; 16];
        let read = std::fs::File::open(&path).and_then(|mut file| file.read(&mut head));
        if read
            .ok()
            .and_then(|n| agent_execution::message::image_media_type(&head[..n]))
            .is_none()
        {
            return false;
        }
        let too_large = std::fs::metadata(&path)
            .is_ok_and(|meta| meta.len() > agent_execution::message::MAX_IMAGE_BYTES as u64);
        let Some(bytes) = (!too_large).then(|| std::fs::read(&path).ok()).flatten() else {
            let limit = agent_execution::message::MAX_IMAGE_BYTES;
            self.error(format!(
                "{}: larger than the {limit} bytes a picture may be",
                path.display()
            ));
            return true;
        };
        let name = path.file_name().map(|name| name.to_string_lossy());
        match ChatImage::from_bytes(&bytes, name.as_deref()) {
            Ok(picture) => {
                self.attached.push(picture);
                true
            }
            Err(agent_execution::message::ImageError::NotAPicture) => false,
            Err(error) => {
                self.error(format!("{}: {error}", path.display()));
                true
            }
        }
    }

    /// Attaches the picture on the clipboard, or says why there is none.
    pub(crate) fn attach_clipboard(&mut self) {
        match clipboard_picture() {
            Ok(bytes) => match ChatImage::from_bytes(&bytes, Some("clipboard")) {
                Ok(picture) => self.attached.push(picture),
                Err(error) => self.notice(format!("the clipboard holds no picture: {error}")),
            },
            Err(why) => self.notice(why),
        }
    }

    /// The pictures attached to the message being typed, as the line above the input shows them.
    pub(crate) fn attached_line(&self) -> Option<String> {
        if self.attached.is_empty() {
            return None;
        }
        let shown: Vec<String> = self.attached.iter().map(ChatImage::placeholder).collect();
        Some(format!(
            "📎 {} · Backspace on an empty line takes the last off",
            shown.join(" ")
        ))
    }
}

/// How long a clipboard tool may take to answer.
const CLIPBOARD_WAIT: Duration = Duration::from_secs(2);

/// The bytes of the picture on the clipboard: `wl-paste` where a Wayland display is named, else
/// `xclip` where an X display is; the message says what is missing otherwise.
fn clipboard_picture() -> Result<Vec<u8>, String> {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some();
    let (program, args): (&str, &[&str]) = if wayland {
        ("wl-paste", &["--no-newline", "--type", "image/png"])
    } else if std::env::var_os("DISPLAY").is_some() {
        (
            "xclip",
            &["-selection", "clipboard", "-target", "image/png", "-out"],
        )
    } else {
        return Err("no clipboard to read: neither WAYLAND_DISPLAY nor DISPLAY is set".into());
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| format!("the clipboard could not be read with {program}: {error}"))?;
    let mut stdout = child.stdout.take().ok_or("no output")?;
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let limit = agent_execution::message::MAX_IMAGE_BYTES as u64 + 1;
        (&mut stdout)
            .take(limit)
            .read_to_end(&mut bytes)
            .map(|_| bytes)
    });
    let deadline = Instant::now() + CLIPBOARD_WAIT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{program} did not answer in time"));
            }
        }
    };
    let bytes = reader.join().ok().and_then(Result::ok).unwrap_or_default();
    let limit = agent_execution::message::MAX_IMAGE_BYTES;
    if bytes.len() > limit {
        // Cut off at the limit (the tool then fails to write the rest).
        return Err(format!(
            "the clipboard's picture is larger than the {limit} bytes a picture may be"
        ));
    }
    if !status.success() || bytes.is_empty() {
        return Err("the clipboard holds no picture".into());
    }
    Ok(bytes)
}

/// The file a paste names: one line, unquoted (`'…'`, `"…"`), unescaped (`\ `), a `file://` URL
/// decoded, `~/` at the start the home folder. `None` for anything else.
fn pasted_path(pasted: &str) -> Option<PathBuf> {
    let text = pasted.trim();
    if text.is_empty() || text.contains('\n') {
        return None;
    }
    let unquoted = ['\'', '"']
        .iter()
        .find_map(|&q| text.strip_prefix(q).and_then(|t| t.strip_suffix(q)))
        .map(str::to_owned);
    let text = match unquoted {
        Some(text) => text,
        None => unescape(text),
    };
    let text = match text.strip_prefix("file://") {
        Some(url) => percent_decode(url)?,
        None => text,
    };
    let path = match text.strip_prefix("~/") {
        Some(rest) => PathBuf::from(std::env::var_os("HOME")?).join(rest),
        None => PathBuf::from(text),
    };
    (path.is_absolute() && path.is_file()).then_some(path)
}

/// A shell-escaped path with its backslashes taken off (`My\ Shot.png` → `My Shot.png`).
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// `%20` and the like of a URL's path; `None` when an escape is broken or not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(byte);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_spellings_of_a_path_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("My Shot.png");
        std::fs::write(&file, b"x").unwrap();
        let shown = file.display().to_string();
        for pasted in [
            shown.clone(),
            format!("'{shown}'\n"),
            format!("\"{shown}\""),
            shown.replace(' ', "\\ "),
            format!("file://{}", shown.replace(' ', "%20")),
        ] {
            assert_eq!(pasted_path(&pasted), Some(file.clone()), "{pasted:?}");
        }
        assert_eq!(pasted_path(&format!("{shown}\nmore")), None);
        // The tests run in the crate's folder, which has this file.
        assert!(std::path::Path::new("Cargo.toml").is_file());
        assert_eq!(
            pasted_path("Cargo.toml"),
            None,
            "a relative path stays text"
        );
        assert_eq!(pasted_path("just words"), None);
        assert_eq!(
            pasted_path(&dir.path().display().to_string()),
            None,
            "a folder"
        );
    }
}
