//! Completion as the user types: slash commands while the first word starts with `/`, and
//! workspace files after `@` (the files `.gitignore` does not hide, listed once per session).
//! Tab takes the first candidate.

use std::path::Path;

/// The slash commands, as `/help` lists them (the chat's, shared with the line mode).
pub(crate) use agent_runner::interaction::slash::COMMANDS;

/// At most this many files are listed for `@` completion.
const MAX_FILES: usize = 20_000;
/// At most this many candidates are shown.
pub(crate) const SHOWN: usize = 8;

/// The candidates for the text before the cursor, and the byte range of the word they replace.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Candidates {
    pub(crate) items: Vec<String>,
    pub(crate) start: usize,
}

/// The workspace's files, relative, `/`-separated.
pub(crate) fn workspace_files(workspace: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for entry in ignore::WalkBuilder::new(workspace)
        .hidden(true)
        .build()
        .flatten()
    {
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        if let Ok(relative) = entry.path().strip_prefix(workspace) {
            files.push(relative.to_string_lossy().replace('\\', "/"));
        }
        if files.len() >= MAX_FILES {
            break;
        }
    }
    files.sort();
    files
}

/// What completes the text before the cursor.
pub(crate) fn candidates(before: &str, files: &[String]) -> Candidates {
    if before.starts_with('/') && !before.contains(char::is_whitespace) {
        let items = COMMANDS
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| name.starts_with(before) && *name != before)
            .map(str::to_owned)
            .collect();
        return Candidates { items, start: 0 };
    }
    let start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
    let Some(typed) = before[start..].strip_prefix('@') else {
        return Candidates::default();
    };
    let lower = typed.to_lowercase();
    // Paths that start with what was typed come first, then those that contain it.
    let (mut first, mut then): (Vec<&String>, Vec<&String>) = files
        .iter()
        .filter(|file| file.to_lowercase().contains(&lower) && file.as_str() != typed)
        .partition(|file| file.to_lowercase().starts_with(&lower));
    first.truncate(SHOWN);
    then.truncate(SHOWN.saturating_sub(first.len()));
    let items = first
        .into_iter()
        .chain(then)
        .map(|file| format!("@{file}"))
        .collect();
    Candidates { items, start }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_paths_complete() {
        let files = vec!["src/main.rs".to_owned(), "README.md".to_owned()];
        assert_eq!(candidates("/p", &files).items, ["/plan"]);
        assert!(candidates("/plan ", &files).items.is_empty());
        let found = candidates("look at @ma", &files);
        assert_eq!(found.items, ["@src/main.rs"]);
        assert_eq!(found.start, 8);
        assert_eq!(candidates("look at @READ", &files).items, ["@README.md"]);
        assert!(candidates("plain", &files).items.is_empty());
    }

    #[test]
    fn workspace_files_skip_what_git_ignores() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir(dir.path().join("target")).unwrap();
        std::fs::write(dir.path().join("target/x"), "").unwrap();
        std::fs::write(dir.path().join("a.rs"), "").unwrap();
        assert_eq!(workspace_files(dir.path()), ["a.rs"]);
    }
}
