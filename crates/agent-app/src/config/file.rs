//! What `agent.toml` may say ([`FileConfig`] and its tables), read and checked. Every field is
//! optional:
//!
//! ```toml
//! provider = "openai"            # openai | openai-responses | anthropic | scripted
//! model = "gpt-4o-mini"
//! base_url = "http://localhost:11434/v1"
//! api_key = "..."                # better: OPENAI_API_KEY / ANTHROPIC_API_KEY
//! script = "script.json"         # scripted provider
//! trace_dir = "/var/agent/traces"  # default: the user's data folder, one folder per project
//! store = "postgres://agent@db/agent"  # or a folder; instead of trace_dir
//! workspace = "."
//! max_iterations = 100
//! max_cost = 2.5
//! context_window = 128000
//! reasoning_effort = "high"      # low | medium | high: OpenAI-compatible reasoning models
//! thinking_budget = 8000         # Anthropic extended thinking, in tokens (at least 1024)
//! show_reasoning = true          # print reasoning in full instead of a one-line summary
//! instructions = false           # leave AGENTS.md and the environment out of the prompt
//! report = false                 # no closing report when a plan is done
//! max_agent_depth = 3            # how deep delegates and explorers may nest [default: 3]
//!
//! [models."my-local-model"]      # prices (US dollars per million tokens) and context window
//! input = 0.20
//! output = 0.60
//! cached_input = 0.05            # optional: the input price when absent
//! context_window = 32768         # optional
//! stream = false                 # optional: never ask this model for streamed answers
//! max_tokens = 1024              # optional: the most tokens of one answer
//! temperature = 0.2              # optional: the sampling temperature
//! vision = true                  # optional: takes images [default: by the model's name]
//!
//! [mcp.servers.files]            # an MCP server over stdio (see agent_mcp::ServerConfig)
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"]
//! read_only = ["read_text_file"] # other tools wait for approval
//!
//! [mcp.servers.remote]           # streamable HTTP; used only with `--mcp remote`
//! url = "http://127.0.0.1:3001/mcp"
//! headers = { Authorization = "Bearer ${REMOTE_TOKEN}" }
//! enabled = false
//!
//! [serve]                        # `agent serve` (flags win)
//! max_connections = 512          # open at once; at the cap the idlest one makes room
//! header_timeout = 10            # seconds to send a request head, or to keep an idle connection
//!
//! [tui]                          # the full-screen UI
//! notify = "osc9"                # bell | osc9 | off: when a turn ends or a question waits
//!                                # while the terminal is not focused [default: bell]
//!
//! [[hooks.PreToolUse]]           # a command run before matching tool calls (crate::hooks)
//! matcher = "Bash|write_file"
//! command = "./scripts/check.sh"
//! timeout = 30                   # seconds (default 60)
//! [web]                          # web_fetch and web_search (the `web` feature)
//! enabled = false                # no web tools at all [default: on]
//! allow_private_hosts = ["localhost", "wiki.corp", "10.0.0.0/8"]  # internal hosts web_fetch may read
//! search_url = "http://127.0.0.1:8888/search"  # a SearXNG instance for web_search [default: none]
//! search = "auto"                # who answers web_search: auto | provider | service | off
//!                                # auto: the service when search_url is set, else the model's
//!                                # provider where it searches (Anthropic, OpenAI Responses)
//!                                # and no base URL is set for it, else no web_search
//!                                # [default: auto]
//! max_bytes = 2097152            # the most bytes of a page read [default: 2 MiB]
//! timeout = 30                   # seconds one fetch may take [default: 30]
//!
//! [agents.reviewer]              # an agent profile (see agent_runner::profiles)
//! description = "Reviews changes; never edits."
//! base = "explore"               # start from a profile: read-only tools
//! prompt_file = "prompts/reviewer.md"
//! model = "gpt-4.1-mini"
//! max_iterations = 20
//! thinking_budget = 4000         # its own reasoning settings (reasoning_effort too)
//! loop_guard = { repeated_call = 4 }
//! ```
//!
//! The top-level `max_iterations` and `max_cost` are the `default` profile's limits. A model's
//! context window is `--context-window`, else its `[models."NAME"]` entry, else the top-level
//! `context_window`, else what the provider reports.
//!
//! Without a model named anywhere, an OpenAI-compatible server other than OpenAI's own
//! (`OPENAI_BASE_URL`, `--base-url` or `base_url`) is asked for its models (`GET /v1/models`):
//! the one it serves is used, and a server serving several is an error that lists them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_llm::{ProviderKind, ReasoningEffort};
use serde::Deserialize;

use super::{ProfileSpec, WebFile};
use crate::error::{Error, Result};

/// The name of the configuration file.
pub const FILE_NAME: &str = "agent.toml";

/// The contents of one `agent.toml`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct FileConfig {
    /// The model provider.
    pub provider: Option<ProviderKind>,
    /// The model name.
    pub model: Option<String>,
    /// The provider's base URL.
    pub base_url: Option<String>,
    /// The provider's API key (better kept in the environment).
    pub api_key: Option<String>,
    /// The script of the scripted provider.
    pub script: Option<PathBuf>,
    /// The folder traces are kept in.
    pub trace_dir: Option<PathBuf>,
    /// Where traces are stored: a folder or a `postgres://` URL (see [`crate::store`]).
    pub store: Option<String>,
    /// The folder runs work in.
    pub workspace: Option<PathBuf>,
    /// The `default` profile's model calls per run.
    pub max_iterations: Option<u32>,
    /// The spending cap of every profile that sets none, in US dollars.
    pub max_cost: Option<f64>,
    /// The context window of every model without its own in `[models."NAME"]`.
    pub context_window: Option<usize>,
    /// How hard OpenAI-compatible reasoning models think.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Anthropic extended thinking, in tokens (at least 1,024).
    pub thinking_budget: Option<u32>,
    /// Whether front ends show the model's reasoning in full.
    pub show_reasoning: Option<bool>,
    /// `false` leaves the project instructions and the environment block out of the prompt.
    pub instructions: Option<bool>,
    /// `false`: runs end without a closing report.
    pub report: Option<bool>,
    /// How many levels of sub-agents (`delegate`, `explore`) may nest below a main trace.
    pub max_agent_depth: Option<usize>,
    /// The MCP servers.
    pub mcp: Option<agent_mcp::McpConfig>,
    /// What an abandoned goal's file changes become: `ask`, `always` (rolled back) or `never`.
    pub abandon_rollback: Option<agent_checkpoint::AbandonRollback>,
    /// Snapshots of the workspace at every goal.
    pub checkpoints: Option<CheckpointsConfig>,
    /// Tool calls allowed or denied before anyone is asked.
    pub approvals: Option<ApprovalsConfig>,
    /// The sandbox of the model's commands.
    pub sandbox: Option<SandboxFile>,
    /// `agent serve`'s connection limits.
    pub serve: Option<ServeConfig>,
    /// The web tools' settings.
    pub web: Option<WebFile>,
    /// The full-screen UI's settings.
    pub tui: Option<TuiFile>,
    /// Prices and context windows of models, by name.
    #[serde(default)]
    pub models: BTreeMap<String, ModelConfig>,
    /// Agent profiles: new ones, or changes to the built-ins.
    #[serde(default)]
    pub agents: BTreeMap<String, ProfileSpec>,
    /// Lifecycle hooks by event (`[[hooks.PreToolUse]]`, see [`crate::hooks`]).
    #[serde(default)]
    pub hooks: BTreeMap<String, Vec<super::HookSpec>>,
    /// The file it was read from.
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

/// A `[models."NAME"]` table: what a model costs and how much context it takes.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ModelConfig {
    /// US dollars per million uncached input tokens.
    pub input: Option<f64>,
    /// US dollars per million output tokens.
    pub output: Option<f64>,
    /// US dollars per million input tokens read from the prompt cache.
    pub cached_input: Option<f64>,
    /// The context window in tokens.
    pub context_window: Option<usize>,
    /// `false`: never ask for streamed answers of this model (servers that cannot stream it).
    pub stream: Option<bool>,
    /// The most tokens of one answer (`max_tokens` of every request for this model).
    pub max_tokens: Option<u32>,
    /// The sampling temperature of every request for this model.
    pub temperature: Option<f32>,
    /// Whether the model takes pictures; by its name when unset ([`agent_llm::supports_images`]:
    /// GPT-4o and later, Claude 3 and later, Gemini, names with `vl`, `vision`, `llava`, ...).
    pub vision: Option<bool>,
}

impl FileConfig {
    /// Reads one file; errors name the file and the field. A file that does not parse is a
    /// [`Error::Usage`], like a bad flag.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|error| Error::io(format!("cannot read {}", path.display()), error))?;
        Self::parse(&text, path)
    }

    /// Reads `text` as the file at `path` (named in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let mut config: Self = toml::from_str(text).map_err(|error| {
            Error::usage(format!(
                "invalid configuration in {}: {error}",
                path.display()
            ))
        })?;
        config.path = Some(path.to_owned());
        Ok(config)
    }

    /// Where a field of this file is, for messages: `PATH (field)`.
    pub fn source(&self, field: &str) -> String {
        match &self.path {
            Some(path) => format!("{} ({field})", path.display()),
            None => format!("{FILE_NAME} ({field})"),
        }
    }

    /// " in PATH" when the file has one, for error messages.
    pub(crate) fn in_file(&self) -> String {
        self.path
            .as_ref()
            .map(|p| format!(" in {}", p.display()))
            .unwrap_or_default()
    }

    /// The built-in prices with the `[models."NAME"]` prices on top. A table must give both
    /// `input` and `output`, in dollars (finite, not negative).
    pub fn prices(&self) -> Result<agent_llm::PriceTable> {
        let mut prices = agent_llm::PriceTable::default();
        for (name, model) in &self.models {
            let invalid = |field: &str, why: &str| {
                Error::usage(format!(
                    "invalid configuration{}: [models.{name:?}] {field} {why}",
                    self.in_file()
                ))
            };
            for (field, value) in [
                ("input", model.input),
                ("output", model.output),
                ("cached_input", model.cached_input),
            ] {
                if value.is_some_and(|v| !v.is_finite() || v < 0.0) {
                    return Err(invalid(
                        field,
                        "must be a price in dollars per million tokens",
                    ));
                }
            }
            if model.max_tokens == Some(0) {
                return Err(invalid("max_tokens", "must be at least 1"));
            }
            if model
                .temperature
                .is_some_and(|t| !t.is_finite() || !(0.0..=2.0).contains(&t))
            {
                return Err(invalid("temperature", "must be between 0 and 2"));
            }
            if model.context_window == Some(0) {
                return Err(invalid("context_window", "must be at least 1"));
            }
            match (model.input, model.output) {
                (Some(input), Some(output)) => {
                    let mut price = agent_llm::ModelPrice::new(input, output);
                    price.cached_input_per_mtok = model.cached_input;
                    prices.insert(name.clone(), price);
                }
                (None, None) if model.cached_input.is_none() => {}
                _ => return Err(invalid("", "needs both `input` and `output` prices")),
            }
        }
        Ok(prices)
    }

    /// Which models take pictures: the names' rule with the `[models."NAME"] vision` settings
    /// on top.
    pub fn vision(&self) -> agent_llm::Vision {
        agent_llm::Vision::new(
            self.models
                .iter()
                .filter_map(|(name, model)| Some((name.clone(), model.vision?))),
        )
    }

    /// The context window `[models."NAME"]` gives `model`, else the top-level one.
    pub fn context_window(&self, model: &str) -> Option<usize> {
        self.models
            .get(model)
            .and_then(|m| m.context_window)
            .or(self.context_window)
    }

    /// The rules of `[approvals]`; a rule that cannot be read is a usage error naming it and
    /// the file.
    pub fn approval_rules(&self) -> Result<agent_runner::ApprovalRules> {
        let Some(config) = &self.approvals else {
            return Ok(agent_runner::ApprovalRules::default());
        };
        agent_runner::ApprovalRules::parse(&config.allow, &config.deny).map_err(|error| {
            Error::usage(format!(
                "invalid configuration{}: [approvals] {error}",
                self.in_file()
            ))
        })
    }

    /// The `[sandbox]` table, or a table with the mode `sandbox = "MODE"` names.
    pub fn sandbox_table(&self) -> SandboxTable {
        match &self.sandbox {
            Some(SandboxFile::Table(table)) => table.clone(),
            Some(SandboxFile::Mode(mode)) => SandboxTable {
                mode: Some(*mode),
                ..SandboxTable::default()
            },
            None => SandboxTable::default(),
        }
    }
}

/// `[approvals]` of `agent.toml`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ApprovalsConfig {
    /// Calls that run without asking (`bash(cargo test)`, `write_file(src/**)`, `read_file`).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Calls that are always refused, whatever else says.
    #[serde(default)]
    pub deny: Vec<String>,
}

/// `[checkpoints]` of `agent.toml`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CheckpointsConfig {
    /// `false` turns checkpoints off.
    pub enabled: Option<bool>,
    /// Files larger than this (bytes) are left out of snapshots [default: 10 MiB].
    pub max_file_bytes: Option<u64>,
    /// A workspace holding more than this (bytes) is not snapshotted [default: 1 GiB].
    pub max_snapshot_bytes: Option<u64>,
}

/// `[serve]` of `agent.toml`: how many connections `agent serve` keeps open and how long a
/// client has to send a request head (`--max-connections` and `--header-timeout` win).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServeConfig {
    /// The most connections open at once, WebSockets included [default: 512].
    pub max_connections: Option<usize>,
    /// Seconds a client has to send a request head, and the longest a connection stays open
    /// with no request [default: 10].
    pub header_timeout: Option<u64>,
}

/// `[tui]` of `agent.toml`: the full-screen UI's settings.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct TuiFile {
    /// How the UI tells the person that a turn ended or a question waits [default: bell].
    pub notify: Option<agent_tools::interaction::TerminalNotify>,
}

/// agent.toml's `sandbox`: a mode, or a table.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum SandboxFile {
    /// `sandbox = "read-only"`.
    Mode(agent_tools::SandboxMode),
    /// `[sandbox]` with `mode`, `network`, `writable_roots`, `env_keep`, `env_set`,
    /// `unix_sockets`.
    Table(SandboxTable),
}

/// The `[sandbox]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SandboxTable {
    /// The mode.
    pub mode: Option<agent_tools::SandboxMode>,
    /// Whether commands may reach the network.
    pub network: Option<bool>,
    /// More folders commands may write in.
    #[serde(default)]
    pub writable_roots: Vec<PathBuf>,
    /// Variables passed to commands although their names look secret.
    #[serde(default)]
    pub env_keep: Vec<String>,
    /// Variables set for commands.
    #[serde(default)]
    pub env_set: BTreeMap<String, String>,
    /// Unix sockets outside the workspace commands may reach with the network off.
    #[serde(default)]
    pub unix_sockets: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_rejects_unknown_fields_and_names_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.toml");
        std::fs::write(&path, "provider = \"openai\"\nmodle = \"x\"\n").unwrap();
        let error = FileConfig::read(&path).unwrap_err();
        assert!(error.is_usage());
        let error = error.to_string();
        assert!(
            error.contains("agent.toml") && error.contains("modle"),
            "{error}"
        );
    }

    #[test]
    fn the_tui_notify_setting_is_one_of_three_words() {
        use agent_tools::interaction::TerminalNotify;
        let read = |text: &str| FileConfig::parse(text, Path::new("agent.toml"));
        let file = read("[tui]\nnotify = \"osc9\"\n").unwrap();
        assert_eq!(file.tui.unwrap().notify, Some(TerminalNotify::Osc9));
        let file = read("[tui]\nnotify = \"off\"\n").unwrap();
        assert_eq!(file.tui.unwrap().notify, Some(TerminalNotify::Off));
        let error = read("[tui]\nnotify = \"loud\"\n").unwrap_err().to_string();
        assert!(error.contains("loud") && error.contains("osc9"), "{error}");
    }

    #[test]
    fn bad_rules_name_the_file_and_the_rule() {
        let file = FileConfig::parse(
            "[approvals]\nallow = [\"bash(cargo test\"]\n",
            Path::new("/p/agent.toml"),
        )
        .unwrap();
        let error = file.approval_rules().unwrap_err().to_string();
        assert!(error.contains("/p/agent.toml"), "{error}");
        assert!(error.contains("\"bash(cargo test\""), "{error}");
    }

    #[test]
    fn prices_need_both_sides_and_stay_beside_the_built_in_ones() {
        let file = FileConfig::parse(
            "[models.local]\ninput = 1.0\noutput = 2.0\ncontext_window = 2000\n",
            Path::new("agent.toml"),
        )
        .unwrap();
        let prices = file.prices().unwrap();
        let price = prices.price("local").unwrap();
        assert_eq!((price.input_per_mtok, price.output_per_mtok), (1.0, 2.0));
        assert!(prices.price("gpt-4o").is_some(), "the built-in prices stay");
        assert_eq!(file.context_window("local"), Some(2000));
        let half = FileConfig::parse("[models.x]\ninput = 1.0\n", Path::new("agent.toml"));
        assert!(half.unwrap().prices().unwrap_err().is_usage());
    }
}
