//! The tool names a profile lists: Claude Code's names mapped to ours, and every name checked
//! against the tools that exist (built-in, added by the runner, MCP, patterns), so a typo is a
//! configuration error rather than a tool the model never gets.

use super::NameList;

/// Claude Code's tool names and ours.
pub(super) const CLAUDE_TOOLS: &[(&str, &str)] = &[
    ("Read", "read_file"),
    ("Write", "write_file"),
    ("Edit", "edit_file"),
    ("MultiEdit", "edit_file"),
    ("Glob", "glob_files"),
    ("LS", "glob_files"),
    ("Grep", "grep"),
    ("Bash", "bash"),
    ("Task", "delegate"),
    ("WebFetch", "web_fetch"),
    ("WebSearch", "web_search"),
];

/// The tools the runner adds to the registry's, and the web tools the factory adds (known
/// whatever the build, so that a profile naming them stays valid).
const RUNNER_TOOLS: [&str; 6] = [
    "goal",
    "read_progress",
    "explore",
    "delegate",
    "web_fetch",
    "web_search",
];

/// Whether a profile may name `name`: a built-in tool, one the runner adds, an MCP tool, a
/// pattern, or every tool.
fn known_tool(name: &str) -> bool {
    name.ends_with('*')
        || name.starts_with("mcp__")
        || matches!(name, "all")
        || RUNNER_TOOLS.contains(&name)
        || agent_tools::ToolRegistry::with_builtins()
            .get(name)
            .is_some()
}

/// Tool names with Claude Code's mapped to ours; checked for characters model APIs refuse.
pub(super) fn tool_names(
    list: &NameList,
    field: &'static str,
) -> Result<Vec<String>, (&'static str, String)> {
    let mut names = Vec::new();
    for name in list.names() {
        if let Some((_, ours)) = CLAUDE_TOOLS.iter().find(|(claude, _)| *claude == name) {
            names.push((*ours).to_owned());
            continue;
        }
        if name.starts_with(|c: char| c.is_ascii_uppercase()) {
            // Another Claude Code tool (TodoWrite, ...): no counterpart here.
            continue;
        }
        let plain = name.strip_suffix('*').unwrap_or(&name);
        let valid = plain
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid || name.len() > 64 {
            return Err((field, format!("{name:?} is not a tool name")));
        }
        if !known_tool(&name) {
            let mut known = agent_tools::ToolRegistry::with_builtins().names();
            known.extend(RUNNER_TOOLS.iter().map(|t| (*t).to_owned()));
            known.sort();
            return Err((
                field,
                format!(
                    "unknown tool {name:?}; the tools are {}, MCP tools (`mcp__<server>__<tool>`) \
                     and patterns ending in `*`",
                    known.join(", ")
                ),
            ));
        }
        names.push(name);
    }
    Ok(names)
}
