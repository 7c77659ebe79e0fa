//! Tests of a plugin's hooks and MCP servers as Claude Code's files give them.

use super::*;

/// A plugin folder with `manifest` as its `.claude-plugin/plugin.json` and `files`.
fn plugin(manifest: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".claude-plugin")).unwrap();
    std::fs::write(dir.path().join(".claude-plugin/plugin.json"), manifest).unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn hooks_come_from_hooks_json_or_the_manifest() {
    let hooks_json = r#"{"hooks": {"PostToolUse": [{"matcher": "Write|Edit",
        "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/fmt.sh", "timeout": 5}]}]}}"#;
    let dir = plugin(r#"{"name": "p"}"#, &[("hooks/hooks.json", hooks_json)]);
    let found = hooks(dir.path()).unwrap();
    let spec = &found["PostToolUse"][0];
    assert_eq!(spec.matcher.as_deref(), Some("Write|Edit"));
    assert_eq!(spec.hooks[0].command, "${CLAUDE_PLUGIN_ROOT}/fmt.sh");
    assert_eq!(spec.hooks[0].timeout, Some(5));

    let inline = r#"{"name": "p", "hooks": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}}"#;
    let dir = plugin(inline, &[]);
    assert_eq!(hooks(dir.path()).unwrap()["Stop"].len(), 1);

    let elsewhere = r#"{"name": "p", "hooks": "./config/my-hooks.json"}"#;
    let dir = plugin(elsewhere, &[("config/my-hooks.json", hooks_json)]);
    assert!(hooks(dir.path()).unwrap().contains_key("PostToolUse"));

    // The control: a plugin without hooks has none, and a path out of the plugin is not read.
    let dir = plugin(r#"{"name": "p"}"#, &[]);
    assert!(hooks(dir.path()).unwrap().is_empty());
    let out = r#"{"name": "p", "hooks": "../hooks.json"}"#;
    let dir = plugin(out, &[]);
    std::fs::write(dir.path().join("../hooks.json"), hooks_json).unwrap();
    assert!(hooks(dir.path()).unwrap().is_empty());
}

#[test]
fn mcp_servers_have_the_plugin_root_in_their_command() {
    let mcp = r#"{"mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/servers/db",
        "args": ["--config", "${CLAUDE_PLUGIN_ROOT}/config.json"], "env": {"DB_PATH": "${CLAUDE_PLUGIN_ROOT}/data"}},
        "api": {"type": "http", "url": "https://example.com/mcp"}}}"#;
    let dir = plugin(r#"{"name": "p"}"#, &[(".mcp.json", mcp)]);
    let root = dir.path().display().to_string();
    let found = mcp_servers(dir.path()).unwrap();
    let db = &found["db"];
    assert_eq!(
        db.command.as_deref(),
        Some(format!("{root}/servers/db").as_str())
    );
    assert_eq!(
        db.args,
        ["--config".to_owned(), format!("{root}/config.json")]
    );
    assert_eq!(db.env["DB_PATH"], format!("{root}/data"));
    assert_eq!(found["api"].url.as_deref(), Some("https://example.com/mcp"));

    let inline = r#"{"name": "p", "mcpServers": {"x": {"command": "x-server"}}}"#;
    let dir = plugin(inline, &[]);
    assert!(mcp_servers(dir.path()).unwrap().contains_key("x"));

    let bad = r#"{"mcpServers": {"x": {"command": "x", "colour": "red"}}}"#;
    let dir = plugin(r#"{"name": "p"}"#, &[(".mcp.json", bad)]);
    let error = mcp_servers(dir.path()).unwrap_err().to_string();
    assert!(error.contains("MCP server x"), "{error}");
}
