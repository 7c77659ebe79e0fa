//! The search tools: `glob_files` (file names) and `grep` (file contents).
//!
//! Both walk the workspace with `ignore`, so `.gitignore` rules are respected (even outside a git
//! repository), hidden files are included, `.git` is skipped and symlinks are not followed.

use std::io::Read;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::fs::{blocking, looks_binary};
use super::output::{Keep, truncate_output};
use super::path::{canonical_workspace, display_relative, open_inside, resolve_in_workspace};
use super::{Risk, ToolContext, ToolDefinition, ToolError, ToolOutput, TypedTool};

/// At most this many paths are listed by `glob_files`.
const MAX_GLOB_RESULTS: usize = 1000;
/// At most this many matching lines are shown by `grep`.
const MAX_GREP_MATCHES: usize = 500;
/// Matching lines longer than this many characters are cut in `grep` output.
const MAX_GREP_LINE_CHARS: usize = 500;
/// Files larger than this are skipped by `grep`.
const MAX_GREP_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// Walks the files under `dir` in file-name order, honouring ignore files and skipping `.git`;
/// stops with an error when `cancel` fires.
fn walk_files(
    dir: &Path,
    cancel: &CancellationToken,
    mut visit: impl FnMut(PathBuf) -> bool,
) -> Result<(), ToolError> {
    let walker = WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    for entry in walker {
        if cancel.is_cancelled() {
            return Err(ToolError::failed("cancelled"));
        }
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_some_and(|t| t.is_file()) && !visit(entry.into_path()) {
            break;
        }
    }
    Ok(())
}

/// The longest glob pattern taken, in bytes: as long as the longest path. Far longer ones can
/// make the glob library's regex exceed its size limit, which it does not report as an error.
const MAX_GLOB_BYTES: usize = 4096;

fn compile_glob(pattern: &str) -> Result<GlobMatcher, ToolError> {
    if pattern.len() > MAX_GLOB_BYTES {
        return Err(ToolError::failed(format!(
            "the glob pattern is {} bytes long; at most {MAX_GLOB_BYTES} are allowed",
            pattern.len()
        )));
    }
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|glob| glob.compile_matcher())
        .map_err(|e| ToolError::failed(format!("invalid glob pattern {pattern:?}: {e}")))
}

/// `glob_files(pattern)`: workspace files whose relative path matches a glob.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobFilesTool;

/// Arguments of `glob_files`.
#[derive(Debug, Deserialize)]
pub struct GlobFilesArgs {
    /// A glob relative to the workspace root.
    pub pattern: String,
}

#[async_trait]
impl TypedTool for GlobFilesTool {
    type Args = GlobFilesArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "glob_files".to_owned(),
            description: format!(
                "List workspace files whose path (relative to the workspace root) matches a glob. \
                 `*` does not cross `/`; use `**` for any depth, e.g. `**/*.rs` or `src/**/mod.rs`. \
                 Files ignored by .gitignore and the .git directory are skipped. Results are \
                 sorted; at most {MAX_GLOB_RESULTS} are listed."
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": { "type": "string", "description": "Glob relative to the workspace root, e.g. `**/*.rs`." }
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn run(&self, args: GlobFilesArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let root = canonical_workspace(&ctx.workspace)?;
        let pattern = relative_pattern(&root, &args.pattern)?;
        let matcher = compile_glob(&pattern)?;
        let cancel = ctx.cancel.clone();
        let max_bytes = ctx.limits.max_output_bytes;
        blocking(move || {
            let mut found = Vec::new();
            walk_files(&root, &cancel, |path| {
                let relative = display_relative(&root, &path);
                if matcher.is_match(&relative) {
                    found.push(relative);
                }
                true
            })?;
            if found.is_empty() {
                return Ok(ToolOutput::text(format!("no files match {pattern:?}")));
            }
            found.sort();
            let total = found.len();
            found.truncate(MAX_GLOB_RESULTS);
            let mut out = truncate_output(&found.join("\n"), max_bytes, Keep::Head);
            if total > MAX_GLOB_RESULTS {
                out.push_str(&format!(
                    "\n[showing {MAX_GLOB_RESULTS} of {total} matching files; use a narrower pattern]"
                ));
            }
            Ok(ToolOutput::text(out))
        })
        .await
    }
}

/// Turns a glob from the model into one relative to the workspace root: a leading `./` is
/// dropped, an absolute pattern must start with the root, and `..` is refused.
fn relative_pattern(root: &Path, pattern: &str) -> Result<String, ToolError> {
    let outside = || ToolError::OutsideWorkspace {
        path: pattern.to_owned(),
    };
    let trimmed = pattern.trim();
    if trimmed.is_empty() {
        return Err(ToolError::failed("pattern must not be empty"));
    }
    let relative = if trimmed.starts_with('/') {
        let root_text = root.to_string_lossy();
        let rest = trimmed
            .strip_prefix(root_text.as_ref())
            .ok_or_else(outside)?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return Err(outside());
        }
        rest.trim_start_matches('/')
    } else {
        trimmed
    };
    let relative = relative.trim_start_matches("./");
    if relative.split('/').any(|part| part == "..") {
        return Err(outside());
    }
    Ok(if relative.is_empty() {
        "**".to_owned()
    } else {
        relative.to_owned()
    })
}

/// `grep(pattern, path?, glob?)`: lines matching a regex in workspace files.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrepTool;

/// Arguments of `grep`.
#[derive(Debug, Deserialize)]
pub struct GrepArgs {
    /// A regular expression.
    pub pattern: String,
    /// The directory or file to search; the workspace root when absent.
    pub path: Option<String>,
    /// Only files matching this glob are searched.
    pub glob: Option<String>,
}

#[async_trait]
impl TypedTool for GrepTool {
    type Args = GrepArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "grep".to_owned(),
            description: format!(
                "Search file contents with a regular expression (Rust regex syntax). Output lines \
                 are `path:line: text`. Searches the whole workspace, or `path` (a directory or a \
                 file); `glob` keeps only matching files (`*.rs` matches file names, a glob with \
                 `/` matches the relative path). Ignored and binary files are skipped. At most \
                 {MAX_GREP_MATCHES} matches are shown."
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": { "type": "string", "description": "Regular expression to search for." },
                    "path": { "type": "string", "description": "Directory or file to search (default: the workspace root)." },
                    "glob": { "type": "string", "description": "Only search files matching this glob, e.g. `*.rs`." }
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn run(&self, args: GrepArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let regex = regex::RegexBuilder::new(&args.pattern)
            .size_limit(10 * 1024 * 1024)
            .build()
            .map_err(|e| {
                ToolError::failed(format!(
                    "invalid regular expression {:?}: {e}",
                    args.pattern
                ))
            })?;
        let glob = args.glob.as_deref().map(compile_glob).transpose()?;
        let glob_on_path = args.glob.as_deref().is_some_and(|g| g.contains('/'));
        let root = canonical_workspace(&ctx.workspace)?;
        let start = resolve_in_workspace(&root, args.path.as_deref().unwrap_or("."))?;
        let cancel = ctx.cancel.clone();
        let max_bytes = ctx.limits.max_output_bytes;
        blocking(move || {
            if !start.exists() {
                return Err(ToolError::NotFound {
                    path: display_relative(&root, &start),
                });
            }
            let mut matches = Vec::new();
            let mut capped = false;
            let mut search = |path: PathBuf| {
                let relative = display_relative(&root, &path);
                let selected = match &glob {
                    None => true,
                    Some(glob) if glob_on_path => glob.is_match(&relative),
                    Some(glob) => path.file_name().is_some_and(|name| glob.is_match(name)),
                };
                if selected {
                    capped = grep_file(&root, &path, &relative, &regex, &mut matches);
                }
                !capped
            };
            if start.is_file() {
                search(start.clone());
            } else {
                walk_files(&start, &cancel, &mut search)?;
            }
            if matches.is_empty() {
                return Ok(ToolOutput::text(format!(
                    "no matches for {:?}",
                    args.pattern
                )));
            }
            let mut out = truncate_output(&matches.join("\n"), max_bytes, Keep::Head);
            if capped {
                out.push_str(&format!(
                    "\n[stopped after {MAX_GREP_MATCHES} matches; narrow the pattern, path or glob]"
                ));
            }
            Ok(ToolOutput::text(out))
        })
        .await
    }
}

/// Appends the matching lines of one file to `matches`; returns true once the match cap is hit.
/// Unreadable, large and binary files are skipped.
/// A file that is not inside `root` once opened (a folder swapped for a symlink during the walk)
/// is skipped too.
fn grep_file(
    root: &Path,
    path: &Path,
    relative: &str,
    regex: &regex::Regex,
    matches: &mut Vec<String>,
) -> bool {
    let Ok(mut file) = open_inside(root, path, relative) else {
        return false;
    };
    if file
        .metadata()
        .map_or(true, |m| !m.is_file() || m.len() > MAX_GREP_FILE_BYTES)
    {
        return false;
    }
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return false;
    }
    if looks_binary(&bytes) {
        return false;
    }
    let text = String::from_utf8_lossy(&bytes);
    for (index, line) in text.lines().enumerate() {
        if !regex.is_match(line) {
            continue;
        }
        if matches.len() == MAX_GREP_MATCHES {
            return true;
        }
        let shown = match line.char_indices().nth(MAX_GREP_LINE_CHARS) {
            Some((cut, _)) => format!("{}...", &line[..cut]),
            None => line.to_owned(),
        };
        matches.push(format!("{relative}:{}: {shown}", index + 1));
    }
    false
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::relative_pattern;

    #[test]
    fn patterns_are_made_relative_and_confined() {
        let root = Path::new("/w/space");
        let ok = |p: &str| relative_pattern(root, p).unwrap();
        assert_eq!(ok("**/*.rs"), "**/*.rs");
        assert_eq!(ok("./src/*.rs"), "src/*.rs");
        assert_eq!(ok("/w/space/src/*.rs"), "src/*.rs");
        assert_eq!(ok("/w/space"), "**");
        for bad in ["../*", "src/../../x", "/w/spaceship/*", "/etc/*"] {
            let err = relative_pattern(root, bad).unwrap_err().to_string();
            assert!(err.contains("outside the workspace"), "{bad}: {err}");
        }
        assert!(relative_pattern(root, " ").is_err());
    }
}
