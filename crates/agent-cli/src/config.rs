//! Configuration: `agent.toml` and the precedence flags > environment > file.
//!
//! The file is looked for in the current folder, then in the user's config folder
//! (`$XDG_CONFIG_HOME/agent/agent.toml`, else `~/.config/agent/agent.toml`). Every field is
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
//!
//! [models."my-local-model"]      # prices (US dollars per million tokens) and context window
//! input = 0.20
//! output = 0.60
//! cached_input = 0.05            # optional: the input price when absent
//! context_window = 32768         # optional
//! stream = false                 # optional: never ask this model for streamed answers
//! max_tokens = 1024              # optional: the most tokens of one answer
//! temperature = 0.2              # optional: the sampling temperature
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

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::cli::{ProviderArgs, ProviderKind};

/// The name of the configuration file.
pub(crate) const FILE_NAME: &str = "agent.toml";

/// The contents of `agent.toml`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileConfig {
    pub(crate) provider: Option<ProviderKind>,
    pub(crate) model: Option<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<String>,
    pub(crate) script: Option<PathBuf>,
    pub(crate) trace_dir: Option<PathBuf>,
    /// Where traces are stored: a folder or a `postgres://` URL (see `crate::store`).
    pub(crate) store: Option<String>,
    pub(crate) workspace: Option<PathBuf>,
    pub(crate) max_iterations: Option<u32>,
    pub(crate) max_cost: Option<f64>,
    pub(crate) context_window: Option<usize>,
    pub(crate) reasoning_effort: Option<crate::cli::ReasoningEffort>,
    pub(crate) thinking_budget: Option<u32>,
    pub(crate) show_reasoning: Option<bool>,
    /// `false` leaves the project instructions and the environment block out of the prompt.
    pub(crate) instructions: Option<bool>,
    /// `false`: runs end without a closing report.
    pub(crate) report: Option<bool>,
    pub(crate) mcp: Option<agent_mcp::McpConfig>,
    /// What an abandoned goal's file changes become: `ask`, `always` (rolled back) or `never`.
    pub(crate) abandon_rollback: Option<agent_checkpoint::AbandonRollback>,
    /// Snapshots of the workspace at every goal.
    pub(crate) checkpoints: Option<CheckpointsConfig>,
    /// Tool calls allowed or denied before anyone is asked.
    pub(crate) approvals: Option<crate::approve::ApprovalsConfig>,
    /// The sandbox of the model's commands.
    pub(crate) sandbox: Option<SandboxFile>,
    /// `agent serve`'s connection limits.
    pub(crate) serve: Option<ServeConfig>,
    /// Prices and context windows of models, by name.
    #[serde(default)]
    pub(crate) models: std::collections::BTreeMap<String, ModelConfig>,
    /// Agent profiles: new ones, or changes to the built-ins.
    #[serde(default)]
    pub(crate) agents: std::collections::BTreeMap<String, crate::profile_files::ProfileSpec>,
    /// The file it was read from.
    #[serde(skip)]
    pub(crate) path: Option<PathBuf>,
}

/// A `[models."NAME"]` table: what a model costs and how much context it takes.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ModelConfig {
    /// US dollars per million uncached input tokens.
    pub(crate) input: Option<f64>,
    /// US dollars per million output tokens.
    pub(crate) output: Option<f64>,
    /// US dollars per million input tokens read from the prompt cache.
    pub(crate) cached_input: Option<f64>,
    /// The context window in tokens.
    pub(crate) context_window: Option<usize>,
    /// `false`: never ask for streamed answers of this model (servers that cannot stream it).
    pub(crate) stream: Option<bool>,
    /// The most tokens of one answer (`max_tokens` of every request for this model).
    pub(crate) max_tokens: Option<u32>,
    /// The sampling temperature of every request for this model.
    pub(crate) temperature: Option<f32>,
}

impl FileConfig {
    /// The built-in prices with the `[models."NAME"]` prices on top. A table must give both
    /// `input` and `output`, in dollars (finite, not negative).
    pub(crate) fn prices(&self) -> Result<agent_llm::PriceTable> {
        let mut prices = agent_llm::PriceTable::default();
        for (name, model) in &self.models {
            let invalid = |field: &str, why: &str| {
                crate::exit::UsageError(format!(
                    "invalid configuration{}: [models.{name:?}] {field} {why}",
                    self.path
                        .as_ref()
                        .map(|p| format!(" in {}", p.display()))
                        .unwrap_or_default()
                ))
            };
            for (field, value) in [
                ("input", model.input),
                ("output", model.output),
                ("cached_input", model.cached_input),
            ] {
                if value.is_some_and(|v| !v.is_finite() || v < 0.0) {
                    return Err(
                        invalid(field, "must be a price in dollars per million tokens").into(),
                    );
                }
            }
            if model.context_window == Some(0) {
                return Err(invalid("context_window", "must be at least 1").into());
            }
            if model.max_tokens == Some(0) {
                return Err(invalid("max_tokens", "must be at least 1").into());
            }
            if model
                .temperature
                .is_some_and(|t| !t.is_finite() || !(0.0..=2.0).contains(&t))
            {
                return Err(invalid("temperature", "must be between 0 and 2").into());
            }
            match (model.input, model.output) {
                (Some(input), Some(output)) => {
                    let mut price = agent_llm::ModelPrice::new(input, output);
                    price.cached_input_per_mtok = model.cached_input;
                    prices.insert(name.clone(), price);
                }
                (None, None) if model.cached_input.is_none() => {}
                _ => return Err(invalid("", "needs both `input` and `output` prices").into()),
            }
        }
        Ok(prices)
    }

    /// The context window `[models."NAME"]` gives `model`, else the top-level one.
    pub(crate) fn context_window(&self, model: &str) -> Option<usize> {
        self.models
            .get(model)
            .and_then(|m| m.context_window)
            .or(self.context_window)
    }

    /// Reads the first `agent.toml` found, or the defaults when there is none.
    pub(crate) fn load() -> Result<Self> {
        for path in candidates() {
            if path.is_file() {
                return Self::read(&path);
            }
        }
        Ok(Self::default())
    }

    /// Reads one file; errors name the file and the field.
    pub(crate) fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        // A configuration error is a usage error (exit code 2), like a bad flag.
        let mut config: Self = toml::from_str(&text).map_err(|error| {
            crate::exit::UsageError(format!(
                "invalid configuration in {}: {error}",
                path.display()
            ))
        })?;
        config.path = Some(path.to_owned());
        Ok(config)
    }
}

/// Where `agent.toml` is looked for, in order.
fn candidates() -> Vec<PathBuf> {
    let mut paths = vec![PathBuf::from(FILE_NAME)];
    if let Some(dir) = user_dir() {
        paths.push(dir.join(FILE_NAME));
    }
    paths
}

/// The user's own folder of agent files: `$XDG_CONFIG_HOME/agent`, else `~/.config/agent`.
pub(crate) fn user_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .map(|dir| dir.join("agent"))
}

/// A non-empty environment variable.
pub(crate) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// How to reach a model, once flags, environment and file are merged.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProviderConfig {
    pub(crate) kind: ProviderKind,
    pub(crate) model: String,
    pub(crate) base_url: Option<String>,
    pub(crate) api_key: Option<String>,
    pub(crate) script: Option<PathBuf>,
    pub(crate) context_window: Option<usize>,
    /// Whether to ask for streamed answers (`--no-stream`, `[models."NAME"] stream = false`).
    pub(crate) stream: bool,
    /// `[models."NAME"] max_tokens`: the most tokens of one answer.
    pub(crate) max_tokens: Option<u32>,
    /// `[models."NAME"] temperature`.
    pub(crate) temperature: Option<f32>,
    /// Why the model could not be found out from the server, when none was named and the
    /// server did not name exactly one; building the client reports it.
    pub(crate) model_error: Option<String>,
}

/// The message shown when no provider is configured.
pub(crate) const NO_PROVIDER: &str = "no model provider is configured.

Configure one of:
  OpenAI or any OpenAI-compatible server (DeepSeek, Qwen, Ollama, vLLM, llama.cpp, LM Studio):
      export OPENAI_API_KEY=sk-...            # and for a local server:
      export OPENAI_BASE_URL=http://localhost:11434/v1
  OpenAI's Responses API (Codex models; chosen by itself for models only served there):
      export OPENAI_API_KEY=sk-...  and pass --provider openai-responses
  Anthropic:
      export ANTHROPIC_API_KEY=sk-ant-...
  or pass --provider openai|openai-responses|anthropic|scripted with --model, --base-url, --api-key, --script,
  or write them in agent.toml (current folder, or ~/.config/agent/agent.toml).

To see the agent work without any model, run:  agent demo";

/// Merges flags > environment > file into a provider configuration. `None` when nothing
/// names a provider.
pub(crate) fn resolve_provider(flags: &ProviderArgs, file: &FileConfig) -> Option<ProviderConfig> {
    let kind = flags
        .provider
        .or(file.provider)
        .or_else(|| flags.script.as_ref().map(|_| ProviderKind::Scripted))
        .or_else(|| {
            if env("OPENAI_API_KEY").is_some() || env("OPENAI_BASE_URL").is_some() {
                Some(ProviderKind::Openai)
            } else if env("ANTHROPIC_API_KEY").is_some() || env("ANTHROPIC_BASE_URL").is_some() {
                Some(ProviderKind::Anthropic)
            } else {
                None
            }
        })?;
    let (key_var, url_var, default_model) = match kind {
        ProviderKind::Openai => ("OPENAI_API_KEY", "OPENAI_BASE_URL", "gpt-4o-mini"),
        ProviderKind::OpenaiResponses => ("OPENAI_API_KEY", "OPENAI_BASE_URL", "gpt-5-codex"),
        ProviderKind::Anthropic => (
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "claude-sonnet-4-5",
        ),
        ProviderKind::Scripted => ("", "", "scripted"),
    };
    let from_env = |name: &str| if name.is_empty() { None } else { env(name) };
    // The file's model, URL and key belong to the file's provider: a run on another one (by a
    // flag or a profile) does not send them there. OpenAI's two APIs share them.
    let own = |value: &Option<String>| match file.provider {
        Some(file_kind) if file_kind.account() != kind.account() => None,
        _ => value.clone(),
    };
    let base_url = flags
        .base_url
        .clone()
        .or_else(|| from_env(url_var))
        .or_else(|| own(&file.base_url));
    let api_key = flags
        .api_key
        .clone()
        .or_else(|| from_env(key_var))
        .or_else(|| own(&file.api_key));
    // AGENT_MODEL is read by the --model flag itself.
    let named = flags.model.clone().or_else(|| own(&file.model));
    let mut model_error = None;
    let model = match (named, kind, &base_url) {
        (Some(model), _, _) => model,
        // A local server is asked which model it serves.
        (None, ProviderKind::Openai, Some(url)) if !crate::discover::is_openai(url) => {
            match crate::discover::served_model(url, api_key.clone()) {
                Ok(model) => model,
                Err(error) => {
                    model_error = Some(error);
                    default_model.into()
                }
            }
        }
        (None, _, _) => default_model.into(),
    };
    let stream = !flags.no_stream
        && file
            .models
            .get(&model)
            .and_then(|m| m.stream)
            .unwrap_or(true);
    Some(ProviderConfig {
        kind,
        base_url,
        api_key,
        script: flags.script.clone().or_else(|| file.script.clone()),
        context_window: flags.context_window.or(file.context_window(&model)),
        stream,
        max_tokens: file.models.get(&model).and_then(|m| m.max_tokens),
        temperature: file.models.get(&model).and_then(|m| m.temperature),
        model_error,
        model,
    })
}

/// `[checkpoints]` of `agent.toml`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CheckpointsConfig {
    /// `false` turns checkpoints off.
    pub(crate) enabled: Option<bool>,
    /// Files larger than this (bytes) are left out of snapshots [default: 10 MiB].
    pub(crate) max_file_bytes: Option<u64>,
    /// A workspace holding more than this (bytes) is not snapshotted [default: 1 GiB].
    pub(crate) max_snapshot_bytes: Option<u64>,
}

/// `[serve]` of `agent.toml`: how many connections `agent serve` keeps open and how long a
/// client has to send a request head (`--max-connections` and `--header-timeout` win).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServeConfig {
    /// The most connections open at once, WebSockets included [default: 512].
    pub(crate) max_connections: Option<usize>,
    /// Seconds a client has to send a request head, and the longest a connection stays open
    /// with no request [default: 10].
    pub(crate) header_timeout: Option<u64>,
}

/// agent.toml's `sandbox`: a mode, or a table.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum SandboxFile {
    /// `sandbox = "read-only"`.
    Mode(agent_tools::SandboxMode),
    /// `[sandbox]` with `mode`, `network`, `writable_roots`, `env_keep`, `env_set`.
    Table(SandboxTable),
}

/// The `[sandbox]` table.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SandboxTable {
    pub(crate) mode: Option<agent_tools::SandboxMode>,
    pub(crate) network: Option<bool>,
    #[serde(default)]
    pub(crate) writable_roots: Vec<std::path::PathBuf>,
    #[serde(default)]
    pub(crate) env_keep: Vec<String>,
    #[serde(default)]
    pub(crate) env_set: std::collections::BTreeMap<String, String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_settings_stay_with_the_file_provider() {
        let file = FileConfig {
            provider: Some(ProviderKind::Openai),
            model: Some("gpt-from-file".into()),
            base_url: Some("http://file/v1".into()),
            api_key: Some("file-key".into()),
            ..FileConfig::default()
        };
        let flags = ProviderArgs {
            provider: Some(ProviderKind::Anthropic),
            ..ProviderArgs::default()
        };
        let config = resolve_provider(&flags, &file).unwrap();
        assert_eq!(config.kind, ProviderKind::Anthropic);
        assert_eq!(config.model, "claude-sonnet-4-5");
        assert_ne!(config.base_url.as_deref(), Some("http://file/v1"));
        assert_ne!(config.api_key.as_deref(), Some("file-key"));
        // Without a provider in the file, its settings apply to whichever is chosen.
        let file = FileConfig {
            provider: None,
            ..file
        };
        let config = resolve_provider(&flags, &file).unwrap();
        assert_eq!(config.model, "gpt-from-file");
        assert_eq!(config.base_url.as_deref(), Some("http://file/v1"));
    }

    #[test]
    fn openai_settings_serve_both_openai_apis() {
        let flags = ProviderArgs {
            provider: Some(ProviderKind::OpenaiResponses),
            ..ProviderArgs::default()
        };
        let file: FileConfig = toml::from_str("provider = \"openai\"\n").unwrap();
        let config = resolve_provider(&flags, &file).unwrap();
        assert_eq!(config.kind, ProviderKind::OpenaiResponses);
        assert_eq!(config.model, "gpt-5-codex");
        let file: FileConfig =
            toml::from_str("provider = \"openai\"\nmodel = \"o3-pro\"\n").unwrap();
        assert_eq!(resolve_provider(&flags, &file).unwrap().model, "o3-pro");
        let file: FileConfig = toml::from_str("provider = \"openai-responses\"\n").unwrap();
        assert_eq!(file.provider, Some(ProviderKind::OpenaiResponses));
    }

    #[test]
    fn flags_win_over_the_file() {
        let file = FileConfig {
            provider: Some(ProviderKind::Openai),
            model: Some("from-file".into()),
            base_url: Some("http://file/v1".into()),
            ..FileConfig::default()
        };
        let flags = ProviderArgs {
            model: Some("from-flag".into()),
            base_url: Some("http://flag/v1".into()),
            ..ProviderArgs::default()
        };
        let config = resolve_provider(&flags, &file).unwrap();
        assert_eq!(config.kind, ProviderKind::Openai);
        assert_eq!(config.model, "from-flag");
        assert_eq!(config.base_url.as_deref(), Some("http://flag/v1"));
    }

    #[test]
    fn streaming_is_off_by_the_flag_or_the_model_table() {
        let mut file = FileConfig::default();
        file.models.insert(
            "local".into(),
            ModelConfig {
                stream: Some(false),
                ..ModelConfig::default()
            },
        );
        let mut flags = ProviderArgs {
            script: Some("s.json".into()),
            model: Some("local".into()),
            ..ProviderArgs::default()
        };
        assert!(!resolve_provider(&flags, &file).unwrap().stream);
        flags.model = Some("other".into());
        assert!(resolve_provider(&flags, &file).unwrap().stream);
        flags.no_stream = true;
        assert!(!resolve_provider(&flags, &file).unwrap().stream);
    }

    // Multi-threaded: the question blocks the test's thread while the mock server answers.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn without_a_model_a_local_server_is_asked_for_its_own() {
        let server = agent_test_support::mock_model::MockModelServer::start().await;
        server.serve_models(&["smollm2"]);
        let flags = ProviderArgs {
            provider: Some(ProviderKind::Openai),
            base_url: Some(server.openai_base()),
            ..ProviderArgs::default()
        };
        let config = resolve_provider(&flags, &FileConfig::default()).unwrap();
        assert_eq!(config.model, "smollm2");
        assert_eq!(config.model_error, None);

        server.serve_models(&["a", "b"]);
        let config = resolve_provider(&flags, &FileConfig::default()).unwrap();
        assert!(crate::provider::client(&config).is_err());
        let error = config.model_error.unwrap();
        assert!(error.contains("several: a, b"), "{error}");
    }

    #[test]
    fn the_context_window_comes_from_the_flag_then_the_model_table_then_the_file() {
        let mut file = FileConfig {
            context_window: Some(1000),
            ..FileConfig::default()
        };
        file.models.insert(
            "scripted".into(),
            ModelConfig {
                context_window: Some(2000),
                input: Some(1.0),
                output: Some(2.0),
                ..ModelConfig::default()
            },
        );
        let mut flags = ProviderArgs {
            script: Some("s.json".into()),
            ..ProviderArgs::default()
        };
        assert_eq!(
            resolve_provider(&flags, &file).unwrap().context_window,
            Some(2000)
        );
        flags.context_window = Some(3000);
        assert_eq!(
            resolve_provider(&flags, &file).unwrap().context_window,
            Some(3000)
        );
        flags.context_window = None;
        flags.model = Some("other".into());
        assert_eq!(
            resolve_provider(&flags, &file).unwrap().context_window,
            Some(1000)
        );
        let prices = file.prices().unwrap();
        let price = prices.price("scripted").unwrap();
        assert_eq!((price.input_per_mtok, price.output_per_mtok), (1.0, 2.0));
        assert!(prices.price("gpt-4o").is_some(), "the built-in prices stay");
    }

    #[test]
    fn a_script_implies_the_scripted_provider() {
        let flags = ProviderArgs {
            script: Some("s.json".into()),
            ..ProviderArgs::default()
        };
        let config = resolve_provider(&flags, &FileConfig::default()).unwrap();
        assert_eq!(config.kind, ProviderKind::Scripted);
        assert_eq!(config.model, "scripted");
    }

    #[test]
    fn the_file_rejects_unknown_fields_and_names_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.toml");
        std::fs::write(&path, "provider = \"openai\"\nmodle = \"x\"\n").unwrap();
        let error = format!("{:#}", FileConfig::read(&path).unwrap_err());
        assert!(
            error.contains("agent.toml") && error.contains("modle"),
            "{error}"
        );
    }
}
