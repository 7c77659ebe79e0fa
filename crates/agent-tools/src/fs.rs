//! The file tools: `read_file`, `write_file` and `edit_file`, all confined to the workspace.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::output::{Keep, truncate_output};
use super::path::{
    canonical_workspace, check_opened, display_relative, open_inside, resolve_in_workspace,
};
use super::sandbox::{PROTECTED_NAMES, SandboxMode};
use super::write_guard::WriteGuard;
use super::{Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput, TypedTool};

/// How many lines `read_file` shows when no `limit` is given.
const DEFAULT_READ_LIMIT: usize = 2000;
/// Lines longer than this many characters are cut in `read_file` output.
const MAX_LINE_CHARS: usize = 2000;
/// How many leading bytes are inspected to tell binary files from text.
pub(crate) const BINARY_SNIFF_BYTES: usize = 8192;

/// Runs blocking file-system work off the async runtime.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(ToolError::failed(format!(
            "the file operation was interrupted: {e}"
        ))),
    }
}

/// Whether the leading bytes of a file look binary (contain a NUL byte).
pub(crate) fn looks_binary(prefix: &[u8]) -> bool {
    prefix.iter().take(BINARY_SNIFF_BYTES).any(|&b| b == 0)
}

/// A path resolved inside the workspace, with its workspace-relative form for messages.
struct Target {
    root: PathBuf,
    absolute: PathBuf,
    shown: String,
}

impl Target {
    /// The folder the target is in, relative to the workspace root.
    fn parent_below_root(&self) -> PathBuf {
        self.absolute
            .parent()
            .and_then(|parent| parent.strip_prefix(&self.root).ok())
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }
}

fn target(ctx: &ToolContext, path: &str) -> Result<Target, ToolError> {
    let root = canonical_workspace(&ctx.workspace)?;
    let absolute = resolve_in_workspace(&root, path)?;
    let shown = display_relative(&root, &absolute);
    Ok(Target {
        root,
        absolute,
        shown,
    })
}

/// A target the model may write: not `.git`, `agent.toml`, `.agent/` or anything in them
/// ([`PROTECTED_NAMES`]), at the top of the workspace or below it (a nested repository's hooks,
/// a sub-project's configuration), whatever the approval rules say, since they hold the rules,
/// the history and what runs outside the sandbox.
fn writable_target(ctx: &ToolContext, path: &str) -> Result<Target, ToolError> {
    let target = target(ctx, path)?;
    let protected = target
        .absolute
        .strip_prefix(&target.root)
        .ok()
        .and_then(|relative| {
            relative
                .components()
                .filter_map(|c| c.as_os_str().to_str())
                .find(|name| PROTECTED_NAMES.contains(name))
        });
    if let Some(first) = protected {
        return Err(ToolError::failed(format!(
            "{:?} is protected: {first} is never written by tools",
            target.shown
        )));
    }
    Ok(target)
}

/// `read_file(path, offset?, limit?)`: a text file with line numbers.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFileTool;

/// Arguments of `read_file`.
#[derive(Debug, Deserialize)]
pub struct ReadFileArgs {
    /// The file path, relative to the workspace root or absolute inside it.
    pub path: String,
    /// The first line to show, 1-based.
    pub offset: Option<usize>,
    /// How many lines to show.
    pub limit: Option<usize>,
}

#[async_trait]
impl TypedTool for ReadFileTool {
    type Args = ReadFileArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "read_file".to_owned(),
            description: format!(
                "Read a text file in the workspace. Lines are shown numbered from 1, like `cat -n`. \
                 At most {DEFAULT_READ_LIMIT} lines are shown unless `limit` says otherwise; use \
                 `offset` to continue further down. A PNG, JPEG, GIF or WebP picture is shown as an \
                 image. Other binary files and directories are refused."
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "File path, relative to the workspace root or absolute inside it." },
                    "offset": { "type": "integer", "minimum": 0, "description": "First line to show, 1-based (default 1)." },
                    "limit": { "type": "integer", "minimum": 1, "description": format!("Number of lines to show (default {DEFAULT_READ_LIMIT}).") }
                },
                "required": ["path"],
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

    async fn run(&self, args: ReadFileArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let target = target(ctx, &args.path)?;
        let first = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(DEFAULT_READ_LIMIT).max(1);
        let max_bytes = ctx.limits.max_output_bytes;
        blocking(move || read_numbered(&target, first, limit, max_bytes)).await
    }
}

fn read_numbered(
    target: &Target,
    first: usize,
    limit: usize,
    max_bytes: usize,
) -> Result<ToolOutput, ToolError> {
    let shown = &target.shown;
    let io = |e| ToolError::io("read", shown, e);
    let file = open_inside(&target.root, &target.absolute, shown)?;
    let metadata = file.metadata().map_err(io)?;
    if metadata.is_dir() {
        return Err(ToolError::failed(format!(
            "{shown:?} is a directory, not a file; use glob_files to list its files"
        )));
    }
    let mut reader = BufReader::with_capacity(BINARY_SNIFF_BYTES, file);
    if let Some(media_type) = crate::picture::sniff(reader.fill_buf().map_err(io)?) {
        return crate::picture::read_picture(reader, metadata.len(), shown, media_type);
    }
    if looks_binary(reader.fill_buf().map_err(io)?) {
        return Err(ToolError::failed(format!(
            "{shown:?} is a binary file; read_file shows text files only"
        )));
    }
    let mut out = String::new();
    let mut line = Vec::new();
    let mut total = 0;
    let mut last_shown = 0;
    let mut byte_capped = false;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(io)? == 0 {
            break;
        }
        total += 1;
        if total < first || total >= first + limit || byte_capped {
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        let numbered = match text.char_indices().nth(MAX_LINE_CHARS) {
            Some((cut, _)) => format!("{total:>6}\t{}... [line truncated]\n", &text[..cut]),
            None => format!("{total:>6}\t{text}\n"),
        };
        if out.len() + numbered.len() > max_bytes && last_shown > 0 {
            byte_capped = true;
            continue;
        }
        out.push_str(&numbered);
        last_shown = total;
    }
    if total == 0 {
        return Ok(ToolOutput::text(format!("({shown} is empty)")));
    }
    if first > total {
        return Err(ToolError::failed(format!(
            "offset {first} is past the end of {shown:?}, which has {total} lines"
        )));
    }
    let mut out = truncate_output(&out, max_bytes, Keep::Head);
    if last_shown < total {
        out.push_str(&format!(
            "\n[showing lines {first}-{last_shown} of {total}; use offset={} to read more]",
            last_shown + 1
        ));
    }
    Ok(ToolOutput::text(out))
}

/// `write_file(path, content)`: creates or replaces a file atomically, within what its
/// [`WriteGuard`] allows.
#[derive(Debug, Clone, Default)]
pub struct WriteFileTool {
    guard: WriteGuard,
}

impl WriteFileTool {
    /// The tool writing only what `guard` allows.
    pub fn guarded(guard: WriteGuard) -> Self {
        Self { guard }
    }
}

/// Arguments of `write_file`.
#[derive(Debug, Deserialize)]
pub struct WriteFileArgs {
    /// The file path, relative to the workspace root or absolute inside it.
    pub path: String,
    /// The complete new content of the file.
    pub content: String,
}

#[async_trait]
impl TypedTool for WriteFileTool {
    type Args = WriteFileArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "write_file".to_owned(),
            description: "Create a file or replace its whole content. Missing parent directories \
                          are created. Prefer edit_file for changing part of an existing file."
                .to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "File path, relative to the workspace root or absolute inside it." },
                    "content": { "type": "string", "description": "The complete new content of the file." }
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::Risky
    }

    fn confined_to(&self, mode: SandboxMode) -> Option<Arc<dyn Tool>> {
        Some(Self::guarded(self.guard.confined_to(mode)).into_tool())
    }

    async fn run(&self, args: WriteFileArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let target = writable_target(ctx, &args.path)?;
        self.guard
            .check("write_file", &target.absolute, &target.shown)?;
        blocking(move || {
            if target.absolute.is_dir() {
                return Err(ToolError::failed(format!(
                    "{:?} is a directory, not a file",
                    target.shown
                )));
            }
            let existed = target.absolute.exists();
            // Folder by folder, none through a symlink another process swapped in.
            crate::beneath::create_dir_all(&target.root, &target.parent_below_root())
                .map_err(|e| ToolError::io("create the directory for", &target.shown, e))?;
            atomic_write(&target, args.content.as_bytes())?;
            let verb = if existed { "replaced" } else { "created" };
            Ok(ToolOutput::text(format!(
                "wrote {} bytes to {} ({verb})",
                args.content.len(),
                target.shown
            )))
        })
        .await
    }
}

/// Writes `bytes` to a temporary file next to the target and renames it over the target,
/// keeping the permissions of a file that is replaced. The folder is opened once, without
/// following any symlink below the workspace root, and both files are reached through it, so a
/// folder swapped for a symlink meanwhile cannot send the write elsewhere; the temporary file is
/// also checked to be inside the workspace once created and once renamed (see
/// [`check_opened`]).
fn atomic_write(target: &Target, bytes: &[u8]) -> Result<(), ToolError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let io = |e| ToolError::io("write", &target.shown, e);
    let dir = crate::beneath::open_dir(&target.root, &target.parent_below_root()).map_err(io)?;
    let name = target.absolute.file_name().unwrap_or_default();
    let path = crate::beneath::in_dir(&dir, name);
    let temp = crate::beneath::in_dir(
        &dir,
        std::ffi::OsStr::new(&format!(
            ".{}.{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        )),
    );
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(io)?;
    let remove = |_: &std::fs::File| {
        let _ = std::fs::remove_file(&temp);
    };
    if let Err(error) = check_opened(&target.root, &file, &target.shown) {
        remove(&file);
        return Err(error);
    }
    let result = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        if let Ok(metadata) = std::fs::metadata(&path) {
            file.set_permissions(metadata.permissions())?;
        }
        std::fs::rename(&temp, &path)
    })();
    if let Err(error) = result {
        remove(&file);
        return Err(io(error));
    }
    if let Err(error) = check_opened(&target.root, &file, &target.shown) {
        let _ = std::fs::remove_file(&path);
        return Err(error);
    }
    Ok(())
}

/// `edit_file(path, old, new, replace_all?)`: exact string replacement in a file, within what
/// its [`WriteGuard`] allows.
#[derive(Debug, Clone, Default)]
pub struct EditFileTool {
    guard: WriteGuard,
}

impl EditFileTool {
    /// The tool writing only what `guard` allows.
    pub fn guarded(guard: WriteGuard) -> Self {
        Self { guard }
    }
}

/// Arguments of `edit_file`.
#[derive(Debug, Deserialize)]
pub struct EditFileArgs {
    /// The file path, relative to the workspace root or absolute inside it.
    pub path: String,
    /// The exact text to replace.
    pub old: String,
    /// The replacement text.
    pub new: String,
    /// Whether to replace every occurrence.
    pub replace_all: Option<bool>,
}

#[async_trait]
impl TypedTool for EditFileTool {
    type Args = EditFileArgs;

    fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: "edit_file".to_owned(),
            description: "Replace an exact piece of text in a file. `old` must match the file \
                          exactly (including whitespace and indentation) and, unless \
                          `replace_all` is true, occur exactly once; include surrounding lines to \
                          make it unique."
                .to_owned(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "File path, relative to the workspace root or absolute inside it." },
                    "old": { "type": "string", "description": "The exact text to replace." },
                    "new": { "type": "string", "description": "The text to put in its place." },
                    "replace_all": { "type": "boolean", "description": "Replace every occurrence instead of exactly one (default false)." }
                },
                "required": ["path", "old", "new"],
                "additionalProperties": false
            }),
        }
    }

    fn definition_is_fixed(&self) -> bool {
        true
    }

    fn risk(&self) -> Risk {
        Risk::Risky
    }

    fn confined_to(&self, mode: SandboxMode) -> Option<Arc<dyn Tool>> {
        Some(Self::guarded(self.guard.confined_to(mode)).into_tool())
    }

    async fn run(&self, args: EditFileArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if args.old.is_empty() {
            return Err(ToolError::failed(
                "`old` must not be empty; use write_file to create or overwrite a file",
            ));
        }
        if args.old == args.new {
            return Err(ToolError::failed(
                "`old` and `new` are the same; nothing to change",
            ));
        }
        let target = writable_target(ctx, &args.path)?;
        self.guard
            .check("edit_file", &target.absolute, &target.shown)?;
        blocking(move || edit(&target, &args)).await
    }
}

fn edit(target: &Target, args: &EditFileArgs) -> Result<ToolOutput, ToolError> {
    let shown = &target.shown;
    if target.absolute.is_dir() {
        return Err(ToolError::failed(format!(
            "{shown:?} is a directory, not a file"
        )));
    }
    let mut bytes = Vec::new();
    open_inside(&target.root, &target.absolute, shown)?
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io("read", shown, e))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        ToolError::failed(format!(
            "{shown:?} is not a UTF-8 text file; edit_file edits text only"
        ))
    })?;
    let count = text.matches(args.old.as_str()).count();
    let replace_all = args.replace_all.unwrap_or(false);
    if count == 0 {
        return Err(ToolError::failed(format!(
            "`old` was not found in {shown:?}; it must match exactly, including whitespace and indentation (read the file first)"
        )));
    }
    if count > 1 && !replace_all {
        return Err(ToolError::failed(format!(
            "`old` occurs {count} times in {shown:?}; include more surrounding text to make it unique, or set replace_all to true"
        )));
    }
    let updated = if replace_all {
        text.replace(&args.old, &args.new)
    } else {
        text.replacen(&args.old, &args.new, 1)
    };
    atomic_write(target, updated.as_bytes())?;
    let plural = if count == 1 { "" } else { "s" };
    Ok(ToolOutput::text(format!(
        "replaced {count} occurrence{plural} in {shown}"
    )))
}
