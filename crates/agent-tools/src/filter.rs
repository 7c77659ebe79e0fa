//! Which tools of a registry an agent gets ([`ToolFilter`]): by risk, then an allow list, then a
//! deny list, then the MCP servers (`mcp__<server>__<tool>`); a tool that only manages what
//! another starts (`shell_output`, `shell_kill` beside `bash`) comes only with it. Profiles say theirs; the runner
//! applies them when it builds an agent's registry.

use std::collections::BTreeSet;

use crate::Risk;

/// Which risks a tool set admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RiskLimit {
    /// Any tool.
    #[default]
    Any,
    /// Only tools whose [`risk`](crate::Tool::risk) is [`Risk::ReadOnly`].
    ReadOnly,
}

/// Selects tools from a registry: by risk, then an optional allow list, then a deny list, then
/// the MCP servers. A name ending in `*` matches every tool name starting with the rest
/// (`mcp__github__*`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolFilter {
    /// The risks admitted.
    pub risk: RiskLimit,
    /// When set, only these names.
    pub allow: Option<BTreeSet<String>>,
    /// Never these names.
    pub deny: BTreeSet<String>,
    /// When set, the tools of MCP servers (`mcp__<server>__<tool>`) only of these servers.
    pub mcp_servers: Option<BTreeSet<String>>,
}

/// Tools that only act on what another tool starts, with that tool and its risk: they come
/// with it and never without it (an agent that cannot run `bash` has no background shell to
/// read or stop).
const COMPANIONS: [(&str, &str, Risk); 2] = [
    ("shell_output", "bash", Risk::Risky),
    ("shell_kill", "bash", Risk::Risky),
];

/// The prefix of the tools MCP servers add to a registry: `mcp__<server>__<tool>`.
const MCP_PREFIX: &str = "mcp__";

/// True when `name` is matched by `pattern` (exactly, or by its start before a final `*`).
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(start) => name.starts_with(start),
        None => pattern == name,
    }
}

impl ToolFilter {
    /// Every tool.
    pub fn all() -> Self {
        Self::default()
    }

    /// Only read-only tools.
    pub fn read_only() -> Self {
        Self {
            risk: RiskLimit::ReadOnly,
            ..Self::default()
        }
    }

    /// The same filter admitting only `names` (among those its risk limit admits).
    #[must_use]
    pub fn allowing<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.allow = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// The same filter refusing `names` as well.
    #[must_use]
    pub fn denying<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.deny.extend(names.into_iter().map(Into::into));
        self
    }

    /// True when the tool `name` of this `risk` passes.
    pub fn admits(&self, name: &str, risk: Risk) -> bool {
        let companion = COMPANIONS.iter().find(|(tool, ..)| *tool == name);
        if companion.is_some_and(|(_, of, risk)| !self.admits(of, *risk)) {
            return false;
        }
        let risk_ok = match self.risk {
            RiskLimit::Any => true,
            RiskLimit::ReadOnly => risk == Risk::ReadOnly,
        };
        let server_ok = match (name.strip_prefix(MCP_PREFIX), &self.mcp_servers) {
            (Some(rest), Some(servers)) => rest
                .split_once("__")
                .is_some_and(|(server, _)| servers.contains(server)),
            _ => true,
        };
        risk_ok
            && server_ok
            && self
                .allow
                .as_ref()
                .is_none_or(|allow| allow.iter().any(|p| matches(p, name)))
            && !self.deny.iter().any(|p| matches(p, name))
    }

    /// The filter in a few words, e.g. `read-only`, `all`, `read_file, grep`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        match &self.allow {
            Some(allow) if allow.is_empty() => parts.push("goal tools only".to_owned()),
            Some(allow) => parts.push(allow.iter().cloned().collect::<Vec<_>>().join(", ")),
            None if self.is_read_only() => parts.push("read-only".to_owned()),
            None => parts.push("all".to_owned()),
        }
        if self.allow.is_some() && self.is_read_only() {
            parts.push("read-only".to_owned());
        }
        if !self.deny.is_empty() {
            let deny: Vec<_> = self.deny.iter().cloned().collect();
            parts.push(format!("not {}", deny.join(", ")));
        }
        if let Some(servers) = &self.mcp_servers {
            let servers: Vec<_> = servers.iter().cloned().collect();
            parts.push(format!("MCP: {}", servers.join(", ")));
        }
        parts.join("; ")
    }

    /// True when every tool it admits is read-only.
    pub fn is_read_only(&self) -> bool {
        self.risk == RiskLimit::ReadOnly
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_shell_tools_come_only_with_bash() {
        for (filter, with_bash) in [
            (ToolFilter::all(), true),
            (ToolFilter::read_only(), false),
            (ToolFilter::all().denying(["bash"]), false),
            (ToolFilter::all().allowing(["read_file", "shell_*"]), false),
            (ToolFilter::all().allowing(["bash", "shell_*"]), true),
        ] {
            assert_eq!(filter.admits("bash", Risk::Risky), with_bash, "{filter:?}");
            for tool in ["shell_output", "shell_kill"] {
                assert_eq!(
                    filter.admits(tool, Risk::ReadOnly),
                    with_bash,
                    "{tool}: {filter:?}"
                );
            }
        }
        // Other read-only tools are not bound to anything.
        assert!(ToolFilter::read_only().admits("read_file", Risk::ReadOnly));
    }
}
