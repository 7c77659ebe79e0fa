//! The environment of a confined command: the agent's variables without those whose names or
//! values look like secrets (unless kept by name), then the configured ones.

use std::ffi::OsString;
use std::sync::OnceLock;

use regex::Regex;

use super::{SandboxConfig, SandboxMode};

/// Parts of a variable name that mark it as a secret kept out of commands.
const SECRET_MARKERS: [&str; 7] = [
    "KEY",
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
];

/// Words of a variable name (between underscores) that mark it as a secret: `GH_PAT`,
/// `PGPASS`-like `DB_PASS`, `SSH_AUTH_SOCK` (the user's ssh agent), `SESSION_COOKIE`.
const SECRET_WORDS: [&str; 5] = ["PAT", "PASS", "PGPASS", "AUTH", "COOKIE"];

/// Whether a variable name looks like it holds a secret.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_MARKERS.iter().any(|marker| upper.contains(marker))
        || upper.split('_').any(|word| SECRET_WORDS.contains(&word))
}

/// Whether a variable's value looks like a credential, whatever its name: a URL with a
/// password (`postgres://app:hunter2@db/app`, a proxy with credentials), a private key, or a
/// token of a well-known format (GitHub, GitLab, OpenAI, Anthropic, Slack, AWS, Google,
/// Hugging Face, npm, PyPI, Stripe, a JSON web token).
pub fn looks_secret(value: &str) -> bool {
    static PATTERN: OnceLock<Option<Regex>> = OnceLock::new();
    let pattern = PATTERN.get_or_init(|| {
        Regex::new(concat!(
            // A URL with a user and a password.
            r"[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@",
            r"|-----BEGIN [A-Z ]*PRIVATE KEY-----",
            r"|(?:^|[^A-Za-z0-9_])(?:",
            r"gh[pousr]_[A-Za-z0-9]{20,}",
            r"|github_pat_[A-Za-z0-9_]{20,}",
            r"|glpat-[A-Za-z0-9_-]{20,}",
            r"|sk-[A-Za-z0-9_-]{20,}",
            r"|sk_(?:live|test)_[A-Za-z0-9]{16,}",
            r"|rk_live_[A-Za-z0-9]{16,}",
            r"|xox[abposr]-[A-Za-z0-9-]{10,}",
            r"|(?:AKIA|ASIA)[0-9A-Z]{16}",
            r"|AIza[0-9A-Za-z_-]{35}",
            r"|hf_[A-Za-z0-9]{30,}",
            r"|npm_[A-Za-z0-9]{36}",
            r"|pypi-[A-Za-z0-9_-]{50,}",
            r"|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.",
            r")",
        ))
        .ok()
    });
    pattern
        .as_ref()
        .is_some_and(|pattern| pattern.is_match(value))
}

/// The environment of a command in `config`: the given variables without secrets (unless kept
/// by name; all of them with the sandbox off), then the configured ones.
pub(super) fn command_env(
    config: &SandboxConfig,
    vars: impl Iterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    if config.mode == SandboxMode::Off {
        return with_set(config, vars.collect());
    }
    scrubbed_env(config, vars)
}

/// The given variables without those whose names or values look secret (unless kept by name)
/// or that the settings remove, then the configured ones: the environment of a confined
/// command, and of a stdio MCP server in every mode.
pub fn scrubbed_env(
    config: &SandboxConfig,
    vars: impl Iterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let kept = vars
        .filter(|(name, value)| {
            let name = name.to_string_lossy();
            let removed = is_secret_name(&name)
                || looks_secret(&value.to_string_lossy())
                || config.env_remove.iter().any(|r| *r == name);
            config.env_keep.iter().any(|keep| *keep == name) || !removed
        })
        .collect();
    with_set(config, kept)
}

fn with_set(
    config: &SandboxConfig,
    mut env: Vec<(OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    for (name, value) in &config.env_set {
        env.retain(|(existing, _)| existing.to_string_lossy() != name.as_str());
        env.push((name.into(), value.into()));
    }
    env
}
