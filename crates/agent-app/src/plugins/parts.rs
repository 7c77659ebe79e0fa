//! What a plugin bundles beside its skills and commands, in Claude Code's layout: its hooks
//! (`hooks/hooks.json`, or the manifest's `hooks`: a path or the object itself), its MCP
//! servers (`.mcp.json`, or the manifest's `mcpServers`) and its agent profiles (`agents/*.md`,
//! read by [`crate::profiles`]). `${CLAUDE_PLUGIN_ROOT}` in an MCP server's command, arguments,
//! environment or folder becomes the plugin's folder; a hook command runs with
//! `CLAUDE_PLUGIN_ROOT` (and `AGENT_PLUGIN_ROOT`) set to it, so its shell expands it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_mcp::ServerConfig;
use serde::Deserialize;
use serde_json::Value;

use crate::config::HookSpec;
use crate::error::{Error, Result};

/// The variable plugin files name their own folder with.
pub const PLUGIN_ROOT: &str = "CLAUDE_PLUGIN_ROOT";

/// Where a plugin's hooks are when its manifest does not say.
const HOOKS_FILE: &str = "hooks/hooks.json";

/// Where a plugin's MCP servers are when its manifest does not say.
const MCP_FILE: &str = ".mcp.json";

/// Where a plugin's agent profiles are.
const AGENTS: &str = "agents";

/// A hooks file: Claude Code's `{"description": ..., "hooks": {EVENT: [...]}}`.
#[derive(Debug, Deserialize)]
struct HooksFile {
    #[serde(default)]
    hooks: BTreeMap<String, Vec<HookSpec>>,
}

/// The hooks of the plugin in `dir`, by event, as its files give them (checked where they
/// run, [`crate::hooks`]).
pub fn hooks(dir: &Path) -> Result<BTreeMap<String, Vec<HookSpec>>> {
    let mut found: BTreeMap<String, Vec<HookSpec>> = BTreeMap::new();
    for value in part(dir, "hooks", HOOKS_FILE)? {
        let file: HooksFile = serde_json::from_value(value)
            .map_err(|error| Error::usage(format!("{}: hooks: {error}", dir.display())))?;
        for (event, specs) in file.hooks {
            found.entry(event).or_default().extend(specs);
        }
    }
    Ok(found)
}

/// The MCP servers of the plugin in `dir`, by name, `${CLAUDE_PLUGIN_ROOT}` replaced.
pub fn mcp_servers(dir: &Path) -> Result<BTreeMap<String, ServerConfig>> {
    let mut found = BTreeMap::new();
    let root = dir.display().to_string();
    for value in part(dir, "mcpServers", MCP_FILE)? {
        // `.mcp.json` wraps them in `mcpServers`; the manifest's field is the map itself.
        let servers = match value.get("mcpServers") {
            Some(inner) => inner.clone(),
            None => value,
        };
        let Value::Object(servers) = servers else {
            return Err(Error::usage(format!(
                "{}: mcpServers is not an object",
                dir.display()
            )));
        };
        for (name, mut server) in servers {
            if let Value::Object(fields) = &mut server {
                // Claude Code's transport names: ours follow from `command` or `url`.
                fields.remove("type");
            }
            let server = with_root(server, &root);
            let config: ServerConfig = serde_json::from_value(server).map_err(|error| {
                Error::usage(format!("{}: MCP server {name}: {error}", dir.display()))
            })?;
            found.insert(name, config);
        }
    }
    Ok(found)
}

/// The JSON values of one part of a plugin: the manifest's `field` (an object, or the paths of
/// files relative to the plugin), else the file `default` when it exists.
fn part(dir: &Path, field: &str, default: &str) -> Result<Vec<Value>> {
    let manifest = super::manifest_json(dir)?;
    let paths: Vec<PathBuf> = match manifest.get(field) {
        Some(Value::Object(_)) => return Ok(vec![manifest[field].clone()]),
        Some(Value::String(path)) => vec![dir.join(path)],
        Some(Value::Array(paths)) => paths
            .iter()
            .filter_map(Value::as_str)
            .map(|path| dir.join(path))
            .collect(),
        _ => vec![dir.join(default)],
    };
    let mut values = Vec::new();
    for path in paths {
        // A path that climbs out of the plugin is not the plugin's.
        let inside = path
            .components()
            .all(|c| !matches!(c, std::path::Component::ParentDir));
        if !inside || !path.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|error| Error::io(format!("cannot read {}", path.display()), error))?;
        let value = serde_json::from_str(&text)
            .map_err(|error| Error::usage(format!("{}: {error}", path.display())))?;
        values.push(value);
    }
    Ok(values)
}

/// `value` with `${CLAUDE_PLUGIN_ROOT}` in every string replaced by `root`.
fn with_root(value: Value, root: &str) -> Value {
    match value {
        Value::String(text) => Value::String(text.replace(&format!("${{{PLUGIN_ROOT}}}"), root)),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| with_root(v, root)).collect())
        }
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, v)| (key, with_root(v, root)))
                .collect(),
        ),
        other => other,
    }
}

/// The agent-profile folders of the enabled plugins of the user whose agent folder is
/// `user_dir`.
pub fn agent_dirs(user_dir: &Path) -> Vec<PathBuf> {
    super::enabled(user_dir)
        .into_iter()
        .map(|(_, dir)| dir.join(AGENTS))
        .collect()
}

#[cfg(test)]
#[path = "parts_tests.rs"]
mod tests;
