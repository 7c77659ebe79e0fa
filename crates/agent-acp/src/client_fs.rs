//! `read_file` and `write_file` through the editor, when it offers `fs/read_text_file` and
//! `fs/write_text_file`: the model then reads what the user sees, unsaved changes included, and
//! its writes land in the editor's buffers. Paths stay inside the session's folder; a read the
//! editor cannot answer falls back to the disk.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, WriteTextFileRequest};
use agent_runner::async_trait;
use agent_tools::sandbox::{PROTECTED_NAMES, SandboxMode};
use agent_tools::{Risk, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};
use serde_json::Value;

/// How many lines a read shows when the model gives no limit (as the built-in tool).
const DEFAULT_LIMIT: u32 = 2000;

/// `path` inside `workspace`, resolved as the built-in tools resolve it (symbolic links
/// followed, so none leads out), or why not.
fn inside(workspace: &Path, path: &str) -> Result<PathBuf, ToolError> {
    agent_tools::resolve_in_workspace(workspace, path)
}

fn string<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::failed(format!("`{key}` must be a string")))
}

/// Reads through the editor; the built-in tool's name, description and schema.
pub(crate) struct EditorRead {
    pub(crate) builtin: Arc<dyn Tool>,
    pub(crate) connection: ConnectionTo<Client>,
    pub(crate) session_id: String,
}

#[async_trait]
impl Tool for EditorRead {
    fn definition(&self) -> ToolDefinition {
        self.builtin.definition()
    }

    fn definition_is_fixed(&self) -> bool {
        self.builtin.definition_is_fixed()
    }

    fn risk(&self) -> Risk {
        Risk::ReadOnly
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = inside(&ctx.workspace, string(&args, "path")?)?;
        let first = args
            .get("offset")
            .and_then(Value::as_u64)
            .unwrap_or(1)
            .max(1);
        let limit = args
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_LIMIT, |l| {
                u32::try_from(l).unwrap_or(u32::MAX).max(1)
            });
        let first_line = u32::try_from(first).unwrap_or(u32::MAX);
        let request = ReadTextFileRequest::new(self.session_id.clone(), path)
            .line(first_line)
            .limit(limit);
        let text = match self.connection.send_request(request).block_task().await {
            Ok(answer) => answer.content,
            // The editor could not read it (not a text file, say): read the disk as usual.
            Err(_) => return self.builtin.call(args, ctx).await,
        };
        let mut out = String::new();
        for (index, line) in text.lines().enumerate() {
            out.push_str(&format!("{:>6}\t{line}\n", first as usize + index));
        }
        if out.is_empty() {
            out = "(no lines there)".to_owned();
        }
        if out.len() > ctx.limits.max_output_bytes {
            let mut cut = ctx.limits.max_output_bytes;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push_str("\n[output cut; use offset and limit to read the rest]");
        }
        Ok(ToolOutput::text(out))
    }
}

/// Writes through the editor; risky, so it is approved first like the built-in tool.
pub(crate) struct EditorWrite {
    pub(crate) builtin: Arc<dyn Tool>,
    pub(crate) connection: ConnectionTo<Client>,
    pub(crate) session_id: String,
}

#[async_trait]
impl Tool for EditorWrite {
    fn definition(&self) -> ToolDefinition {
        self.builtin.definition()
    }

    fn definition_is_fixed(&self) -> bool {
        self.builtin.definition_is_fixed()
    }

    fn risk(&self) -> Risk {
        Risk::Risky
    }

    /// Under the `read-only` sandbox nothing is written, through the editor or not: the
    /// built-in tool's confined form, which refuses and says why.
    fn confined_to(&self, mode: SandboxMode) -> Option<Arc<dyn Tool>> {
        match mode {
            SandboxMode::ReadOnly => self.builtin.confined_to(mode),
            _ => None,
        }
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = inside(&ctx.workspace, string(&args, "path")?)?;
        // What no tool writes (`.git`, `agent.toml`, `.agent/`) is not written through the
        // editor either.
        let root = ctx
            .workspace
            .canonicalize()
            .unwrap_or_else(|_| ctx.workspace.clone());
        if let Some(first) = path
            .strip_prefix(&root)
            .ok()
            .and_then(|relative| relative.components().next())
            .and_then(|first| first.as_os_str().to_str())
            .filter(|first| PROTECTED_NAMES.contains(first))
        {
            return Err(ToolError::failed(format!(
                "{} is protected: {first} is never written by tools",
                path.display()
            )));
        }
        let content = string(&args, "content")?.to_owned();
        let bytes = content.len();
        let request = WriteTextFileRequest::new(self.session_id.clone(), path.clone(), content);
        self.connection
            .send_request(request)
            .block_task()
            .await
            .map_err(|error| ToolError::failed(format!("the editor did not write it: {error}")))?;
        Ok(ToolOutput::text(format!(
            "wrote {bytes} bytes to {} (through the editor)",
            path.strip_prefix(&ctx.workspace).unwrap_or(&path).display()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_workspace_even_through_links() {
        let root = tempfile::tempdir().unwrap();
        let workspace = root.path().join("project");
        std::fs::create_dir_all(workspace.join("src")).unwrap();
        std::fs::create_dir_all(root.path().join("secret")).unwrap();
        std::os::unix::fs::symlink(root.path().join("secret"), workspace.join("link")).unwrap();
        let canonical = workspace.canonicalize().unwrap();
        assert_eq!(
            inside(&workspace, "src/lib.rs").unwrap(),
            canonical.join("src/lib.rs")
        );
        for outside in ["../secret/a", "src/../../secret/a", "/etc/passwd", "link/a"] {
            assert!(inside(&workspace, outside).is_err(), "{outside}");
        }
    }
}
