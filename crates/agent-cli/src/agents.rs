//! Agent profiles on the command line: loading them, the provider and model a profile asks for,
//! clients for profiles on another provider, and `agent agents`.
//!
//! Profiles are layered, later layers changing what they name: the built-ins (`default`,
//! `explore`, `delegate`, `compaction`, `plan`); the top-level `max_iterations` and `max_cost`
//! of `agent.toml`, which are the `default` profile's; the `[agents.<name>]` tables of
//! `agent.toml`; the user's `~/.config/agent/agents/*.md`; the project's
//! `<workspace>/.agent/agents/*.md`. Last, the top-level `max_cost` becomes the cap of every
//! profile that still has none. A profile's `abandon_rollback` is read apart
//! ([`abandon_rollback`]): it sets up the run's checkpoints, not the profile the runner holds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_runner::agents::DEFAULT;
use agent_runner::profiles::builtin_profiles;

use crate::profile_files::{AGENTS_DIR, ProfileError, apply_config, load_dir, read_profile_file};
use agent_checkpoint::AbandonRollback;
use agent_llm::LlmClient;
use agent_runner::{AgentTypeConfig, ProfileOrigin};
use anyhow::{Context, Result};
use clap::ValueEnum;
use serde_json::json;

use crate::cli::{AgentsArgs, ProviderArgs, ProviderKind};
use crate::config::{self, FileConfig, ProviderConfig};
use crate::exit::{ExitCode, UsageError};
use crate::output::print;
use crate::provider;

/// Checks the top-level `max_iterations` and `max_cost` of agent.toml as the command line and
/// the API check theirs (a usage error naming the file and the field).
pub(crate) fn check_limits(file: &FileConfig) -> Result<(), UsageError> {
    let checked = file
        .max_iterations
        .map(agent_runner::check_max_iterations)
        .transpose()
        .and(file.max_cost.map(agent_runner::check_max_cost).transpose());
    checked.map(drop).map_err(|error| {
        let path = file
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from(config::FILE_NAME));
        UsageError(format!(
            "invalid configuration in {}: `{}` {}",
            path.display(),
            error.field(),
            error.reason()
        ))
    })
}

/// Every profile, for runs in `workspace`. Errors name the file and the field.
pub(crate) fn load(
    file: &FileConfig,
    workspace: &Path,
) -> Result<BTreeMap<String, AgentTypeConfig>> {
    check_limits(file)?;
    let mut profiles = builtin_profiles();
    if let Some(default) = profiles.get_mut(DEFAULT) {
        if let Some(max) = file.max_iterations {
            default.limits.max_iterations = max;
        }
        if let Some(cost) = file.max_cost {
            default.limits.max_cost = Some(cost);
        }
    }
    let config_file = file
        .path
        .clone()
        .unwrap_or_else(|| PathBuf::from(config::FILE_NAME));
    let usage = |error: ProfileError| UsageError(error.to_string());
    apply_config(&mut profiles, &file.agents, &config_file).map_err(usage)?;
    for dir in [user_dir(), Some(workspace.join(AGENTS_DIR))]
        .into_iter()
        .flatten()
    {
        load_dir(&mut profiles, &dir).map_err(usage)?;
    }
    // The top-level cost cap is every profile's that sets none of its own (a run's sub-agents
    // included): a cap in agent.toml holds whichever profile runs.
    if let Some(cost) = file.max_cost {
        for profile in profiles.values_mut() {
            profile.limits.max_cost.get_or_insert(cost);
        }
    }
    crate::sandbox::check_profiles(&profiles);
    for (name, profile) in &profiles {
        if let Some(provider) = &profile.provider {
            provider_kind(provider).map_err(|message| {
                UsageError(format!(
                    "{}: `provider`: {message}",
                    location(name, profile)
                ))
            })?;
        }
    }
    Ok(profiles)
}

/// What an abandoned goal of a run as profile `name` does to the files, as the profile says:
/// its last definition that sets `abandon_rollback` wins (the `[agents.NAME]` table, then the
/// user's and the workspace's profile files, read in the order [`load`] reads them); `None`
/// when none sets it, and agent.toml's top-level value applies.
pub(crate) fn abandon_rollback(
    file: &FileConfig,
    workspace: &Path,
    name: &str,
) -> Result<Option<AbandonRollback>> {
    let mut found = file.agents.get(name).and_then(|spec| spec.abandon_rollback);
    let usage = |error: ProfileError| UsageError(error.to_string());
    for dir in [user_dir(), Some(workspace.join(AGENTS_DIR))]
        .into_iter()
        .flatten()
    {
        for path in crate::profile_files::files_in(&dir).map_err(usage)? {
            let (defined, spec, _) = read_profile_file(&path).map_err(usage)?;
            if defined == name && spec.abandon_rollback.is_some() {
                found = spec.abandon_rollback;
            }
        }
    }
    Ok(found)
}

/// `~/.config/agent/agents` (or under `$XDG_CONFIG_HOME`).
fn user_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .map(|dir| dir.join("agent").join("agents"))
}

/// Where a profile was defined, as errors name it.
fn location(name: &str, profile: &AgentTypeConfig) -> String {
    match &profile.origin {
        ProfileOrigin::Config(path) => format!("{} [agents.{name}]", path.display()),
        other => other.to_string(),
    }
}

fn provider_kind(name: &str) -> Result<ProviderKind, String> {
    ProviderKind::from_str(name, true).map_err(|_| {
        format!("unknown provider {name:?}; use openai, openai-responses, anthropic or scripted")
    })
}

/// The profile `name`, or a usage error listing the profiles.
pub(crate) fn get<'a>(
    profiles: &'a BTreeMap<String, AgentTypeConfig>,
    name: &str,
) -> Result<&'a AgentTypeConfig> {
    profiles.get(name).ok_or_else(|| {
        let known: Vec<&str> = profiles.keys().map(String::as_str).collect();
        UsageError(format!(
            "there is no agent profile {name:?}; the profiles are {} (see `agent agents`)",
            known.join(", ")
        ))
        .into()
    })
}

/// The provider flags of a run as `profile`: the flags win, then the profile's provider and
/// model. The profile's model goes with its provider: a `--provider` naming another one drops
/// it (the model name would mean nothing there).
pub(crate) fn provider_args(flags: &ProviderArgs, profile: &AgentTypeConfig) -> ProviderArgs {
    let mut args = flags.clone();
    let profile_kind = profile
        .provider
        .as_deref()
        .and_then(|p| provider_kind(p).ok());
    if args.provider.is_none() {
        args.provider = profile_kind;
    }
    let same_provider = profile_kind.is_none() || args.provider == profile_kind;
    if args.model.is_none() && same_provider {
        args.model.clone_from(&profile.model);
    }
    args
}

/// Clients for the profiles whose provider is not `main`'s, except `running` (the profile of
/// a run started from the command line, whose client is the main one: the flags may have moved
/// it to another provider). A profile with its own client and no model gets its provider's model (from
/// `agent.toml` when that names the same provider, else the provider's default), so that its
/// requests never carry the main provider's model name. A profile whose client cannot be set
/// up (no API key, say) is reported and runs on the main client.
pub(crate) fn clients(
    profiles: &mut BTreeMap<String, AgentTypeConfig>,
    running: Option<&str>,
    main: &ProviderConfig,
    file: &FileConfig,
) -> BTreeMap<String, Arc<dyn LlmClient>> {
    let mut clients = BTreeMap::new();
    for (name, profile) in profiles.iter_mut() {
        let Some(kind) = profile
            .provider
            .as_deref()
            .and_then(|p| provider_kind(p).ok())
        else {
            continue;
        };
        if kind == main.kind || running == Some(name.as_str()) {
            continue;
        }
        let flags = ProviderArgs {
            provider: Some(kind),
            model: profile.model.clone(),
            ..ProviderArgs::default()
        };
        let client = config::resolve_provider(&flags, file)
            .context("no provider")
            .and_then(|config| Ok((provider::client(&config)?, config.model)));
        match client {
            Ok((client, model)) => {
                profile.model.get_or_insert(model);
                clients.insert(name.clone(), client);
            }
            Err(error) => tracing::warn!(
                "agent profile {name}: cannot set up its provider ({error:#}); it uses the main \
                 model client"
            ),
        }
    }
    clients
}

/// `agent agents`: the profiles, where each comes from, its tools and model.
pub(crate) async fn command(args: AgentsArgs) -> Result<ExitCode> {
    let file = FileConfig::load()?;
    let workspace = match args.workspace.clone().or_else(|| file.workspace.clone()) {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let profiles = load(&file, &workspace)?;
    if args.json {
        let list: Vec<_> = profiles
            .iter()
            .map(|(name, p)| {
                json!({
                    "name": name,
                    "description": p.description,
                    "source": location(name, p),
                    "tools": p.tools.summary(),
                    "model": p.model,
                    "provider": p.provider,
                    "max_iterations": p.limits.max_iterations,
                    "max_cost": p.limits.max_cost,
                    "max_depth": p.max_depth,
                    "sandbox": p.sandbox,
                })
            })
            .collect();
        print(&json!({ "agents": list }).to_string());
        return Ok(ExitCode::Completed);
    }
    let rows: Vec<[String; 5]> = profiles
        .iter()
        .map(|(name, p)| {
            [
                name.clone(),
                p.model.clone().unwrap_or_else(|| "-".into()),
                p.tools.summary(),
                location(name, p),
                p.description.clone(),
            ]
        })
        .collect();
    print(&crate::output::table(
        ["NAME", "MODEL", "TOOLS", "SOURCE", "DESCRIPTION"],
        &rows,
    ));
    Ok(ExitCode::Completed)
}
