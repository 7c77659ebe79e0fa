//! The task of `agent run`: the argument itself, standard input (`-`), or a file
//! (`--task-file FILE`, where `-` is standard input too).

use std::path::Path;

use anyhow::{Context, Result};

use crate::exit::UsageError;

/// The task the flags give, read from standard input or a file where they say so; `None` when
/// they give none (`--trace`). An empty task is a usage error; a reading error names what was
/// read.
pub(crate) async fn read(argument: Option<&str>, file: Option<&Path>) -> Result<Option<String>> {
    let (text, source) = match (argument, file) {
        (Some("-"), _) => (read_stdin().await?, "standard input".to_owned()),
        (Some(task), _) => (task.to_owned(), "the task argument".to_owned()),
        (None, Some(path)) if path == Path::new("-") => {
            (read_stdin().await?, "standard input".to_owned())
        }
        (None, Some(path)) => {
            let bytes = tokio::fs::read(path)
                .await
                .with_context(|| format!("cannot read the task file {}", path.display()))?;
            let text = String::from_utf8(bytes).map_err(|_| {
                UsageError(format!(
                    "the task file {} is not UTF-8 text",
                    path.display()
                ))
            })?;
            (text, format!("the task file {}", path.display()))
        }
        (None, None) => return Ok(None),
    };
    if text.trim().is_empty() {
        return Err(UsageError(format!("the task is empty ({source})")).into());
    }
    Ok(Some(text))
}

/// All of standard input, as text (read on a blocking thread: tokio's stdin is not built in).
async fn read_stdin() -> Result<String> {
    let bytes = tokio::task::spawn_blocking(|| {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes).map(|_| bytes)
    })
    .await
    .context("cannot read the task from standard input")?
    .context("cannot read the task from standard input")?;
    String::from_utf8(bytes)
        .map_err(|_| UsageError("the task on standard input is not UTF-8 text".into()).into())
}
