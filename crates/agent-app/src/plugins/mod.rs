//! Plugins: a folder that bundles skills (`skills/NAME/SKILL.md`), custom commands
//! (`commands/NAME.md`), agent profiles (`agents/NAME.md`), hooks (`hooks/hooks.json`) and MCP
//! servers (`.mcp.json`) under a manifest, in Claude Code's layout
//! (`.claude-plugin/plugin.json`, read as it is; `plugin.json` at the top works too).
//! `agent plugin add PATH|GIT-URL` copies it into the user's `plugins/` folder
//! (`$XDG_CONFIG_HOME/agent/plugins/NAME`), where it can be listed, disabled, enabled and
//! removed. What every enabled plugin bundles is found after the user's and the project's own:
//! its skills and commands ([`crate::skills`], [`crate::commands`]), its profiles (the user's
//! and the project's files of the same name win, [`crate::profiles`]), its MCP servers (a server
//! of agent.toml of the same name wins, [`crate::mcp`]) and its hooks, which run beside
//! agent.toml's ([`crate::hooks`]). A plugin is installed by the user, into the user's folder,
//! never found in a project: installing it is accepting it, so its hooks and servers need no
//! further trust.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let source = dir.path().join("review-kit");
//! std::fs::create_dir_all(source.join(".claude-plugin")).unwrap();
//! std::fs::create_dir_all(source.join("commands")).unwrap();
//! std::fs::write(
//!     source.join(".claude-plugin/plugin.json"),
//!     r#"{"name": "review-kit", "description": "Reviews", "version": "1.0.0"}"#,
//! )
//! .unwrap();
//! std::fs::write(source.join("commands/review.md"), "Review $1.\n").unwrap();
//! let user = dir.path().join("user");
//! let added = agent_app::plugins::add(&user, source.to_str().unwrap()).unwrap();
//! assert_eq!(added.name, "review-kit");
//! let found = agent_app::commands::discover(dir.path(), Some(&user));
//! assert_eq!(found.get("review").unwrap().source, "plugin review-kit");
//! ```

mod parts;

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use self::parts::{PLUGIN_ROOT, agent_dirs, hooks, mcp_servers};
use crate::error::{Error, Result};

/// The marker of a disabled plugin, in its folder.
const DISABLED: &str = ".agent-disabled";

/// Where a plugin's manifest may be, in order.
const MANIFESTS: [&str; 2] = [".claude-plugin/plugin.json", "plugin.json"];

/// A plugin's manifest (Claude Code's `plugin.json`; other fields are left alone).
#[derive(Debug, Clone, Deserialize)]
struct Manifest {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    version: Option<String>,
}

/// An installed plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    /// Its name (the manifest's).
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// Its version.
    pub version: Option<String>,
    /// Whether its skills and commands are used.
    pub enabled: bool,
    /// Its folder.
    pub dir: PathBuf,
}

/// The folder plugins are installed in, under the user's agent folder `user_dir`.
pub fn plugins_dir(user_dir: &Path) -> PathBuf {
    user_dir.join("plugins")
}

/// The manifest file of the plugin folder `dir` and its JSON.
fn manifest_file(dir: &Path) -> Result<(PathBuf, serde_json::Value)> {
    let Some(file) = MANIFESTS.iter().map(|m| dir.join(m)).find(|f| f.is_file()) else {
        return Err(Error::usage(format!(
            "{} is not a plugin: it has no .claude-plugin/plugin.json",
            dir.display()
        )));
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|error| Error::io(format!("cannot read {}", file.display()), error))?;
    let json = serde_json::from_str(&text)
        .map_err(|error| Error::usage(format!("{}: {error}", file.display())))?;
    Ok((file, json))
}

/// The manifest's JSON of the plugin folder `dir`.
fn manifest_json(dir: &Path) -> Result<serde_json::Value> {
    manifest_file(dir).map(|(_, json)| json)
}

/// Reads the manifest of the plugin folder `dir`.
fn manifest(dir: &Path) -> Result<Manifest> {
    let (file, json) = manifest_file(dir)?;
    let manifest: Manifest = serde_json::from_value(json)
        .map_err(|error| Error::usage(format!("{}: {error}", file.display())))?;
    let valid = !manifest.name.is_empty()
        && manifest.name.len() <= 64
        && manifest
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !manifest.name.starts_with('.');
    if !valid {
        return Err(Error::usage(format!(
            "{}: {:?} is not a plugin name (letters, digits, `-`, `_`, `.`)",
            file.display(),
            manifest.name
        )));
    }
    Ok(manifest)
}

/// Installs the plugin at `source` (a folder, or a git URL cloned with `git`) for the user
/// whose agent folder is `user_dir`. A plugin of the same name already installed is an error.
pub fn add(user_dir: &Path, source: &str) -> Result<Plugin> {
    let root = plugins_dir(user_dir);
    std::fs::create_dir_all(&root)
        .map_err(|error| Error::io(format!("cannot create {}", root.display()), error))?;
    let staging = root.join(format!(".adding-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let fetched = if is_git_url(source) {
        clone(source, &staging)
    } else {
        copy_tree(Path::new(source), &staging)
    };
    let installed = fetched.and_then(|()| {
        let manifest = manifest(&staging)?;
        let target = root.join(&manifest.name);
        if target.exists() {
            return Err(Error::usage(format!(
                "a plugin named {} is installed already (agent plugin remove {} first)",
                manifest.name, manifest.name
            )));
        }
        std::fs::rename(&staging, &target)
            .map_err(|error| Error::io(format!("cannot install {}", target.display()), error))?;
        Ok(Plugin {
            name: manifest.name,
            description: manifest.description,
            version: manifest.version,
            enabled: true,
            dir: target,
        })
    });
    let _ = std::fs::remove_dir_all(&staging);
    installed
}

/// Whether `source` names a git repository rather than a folder.
fn is_git_url(source: &str) -> bool {
    source.contains("://") || source.starts_with("git@")
}

/// Clones `url` into `target` (its history left out).
fn clone(url: &str, target: &Path) -> Result<()> {
    let output = std::process::Command::new("git")
        .args(["clone", "--quiet", "--depth", "1", "--", url])
        .arg(target)
        .output()
        .map_err(|error| Error::io("cannot run git".to_owned(), error))?;
    if !output.status.success() {
        return Err(Error::usage(format!(
            "git clone {url} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let _ = std::fs::remove_dir_all(target.join(".git"));
    Ok(())
}

/// Copies the folder `from` to `to`: files and folders only (symbolic links are left out, so a
/// plugin cannot carry a link to the user's files), `.git` left out.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    if !from.is_dir() {
        return Err(Error::usage(format!("{} is not a folder", from.display())));
    }
    let fail = |path: &Path, error| Error::io(format!("cannot copy {}", path.display()), error);
    std::fs::create_dir_all(to).map_err(|error| fail(to, error))?;
    for entry in std::fs::read_dir(from).map_err(|error| fail(from, error))? {
        let entry = entry.map_err(|error| fail(from, error))?;
        let kind = entry
            .file_type()
            .map_err(|error| fail(&entry.path(), error))?;
        let target = to.join(entry.file_name());
        if kind.is_dir() && entry.file_name() != ".git" {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(|error| fail(&entry.path(), error))?;
        }
    }
    Ok(())
}

/// The installed plugins, by name.
pub fn list(user_dir: &Path) -> Vec<Plugin> {
    let Ok(entries) = std::fs::read_dir(plugins_dir(user_dir)) else {
        return Vec::new();
    };
    let mut plugins: Vec<Plugin> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|dir| {
            dir.is_dir()
                && !dir
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .filter_map(|dir| {
            let manifest = manifest(&dir).ok()?;
            Some(Plugin {
                name: manifest.name,
                description: manifest.description,
                version: manifest.version,
                enabled: !dir.join(DISABLED).exists(),
                dir,
            })
        })
        .collect();
    plugins.sort_by(|a, b| a.name.cmp(&b.name));
    plugins
}

/// The enabled plugins' folders, by name.
pub fn enabled(user_dir: &Path) -> Vec<(String, PathBuf)> {
    list(user_dir)
        .into_iter()
        .filter(|plugin| plugin.enabled)
        .map(|plugin| (plugin.name, plugin.dir))
        .collect()
}

/// The installed plugin `name`, or an error listing the installed ones.
fn find(user_dir: &Path, name: &str) -> Result<Plugin> {
    let plugins = list(user_dir);
    let names: Vec<&str> = plugins.iter().map(|p| p.name.as_str()).collect();
    let missing = format!(
        "no plugin {name} is installed (installed: {})",
        names.join(", ")
    );
    plugins
        .iter()
        .find(|plugin| plugin.name == name)
        .cloned()
        .ok_or_else(|| Error::usage(missing))
}

/// Enables or disables the plugin `name`.
pub fn set_enabled(user_dir: &Path, name: &str, on: bool) -> Result<()> {
    let plugin = find(user_dir, name)?;
    let marker = plugin.dir.join(DISABLED);
    let done = if on {
        std::fs::remove_file(&marker).or_else(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Ok(()),
            _ => Err(e),
        })
    } else {
        std::fs::write(&marker, "")
    };
    done.map_err(|error| Error::io(format!("cannot change {}", marker.display()), error))
}

/// Removes the plugin `name`.
pub fn remove(user_dir: &Path, name: &str) -> Result<()> {
    let plugin = find(user_dir, name)?;
    std::fs::remove_dir_all(&plugin.dir)
        .map_err(|error| Error::io(format!("cannot remove {}", plugin.dir.display()), error))
}
