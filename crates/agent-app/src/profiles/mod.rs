//! Agent profiles: loading them, the provider and model a profile asks for, and clients for
//! profiles on another provider.
//!
//! Profiles are layered, later layers changing what they name: the built-ins (`default`,
//! `explore`, `delegate`, `compaction`, `plan`); the top-level `max_iterations` and `max_cost`
//! of `agent.toml`, which are the `default` profile's; the `[agents.<name>]` tables of
//! `agent.toml`; the enabled plugins' `agents/*.md`; the user's `~/.config/agent/agents/*.md`;
//! the project's `<workspace>/.agent/agents/*.md`. Last, the top-level `max_cost` becomes the cap of every
//! profile that still has none. A profile's `abandon_rollback` is read apart
//! ([`abandon_rollback`]): it sets up the run's checkpoints, not the profile the runner holds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_checkpoint::AbandonRollback;
use agent_llm::LlmClient;
use agent_runner::agents::DEFAULT;
use agent_runner::profiles::builtin_profiles;
use agent_runner::{AgentTypeConfig, ProfileOrigin};

pub mod files;

use self::files::{AGENTS_DIR, ProfileError, apply_config, load_dir, read_profile_file};
use crate::config::{Environment, FILE_NAME, FileConfig, ProfileSpec, ProviderOverrides};
use crate::error::{Error, Result};
use crate::provider::{self, ProviderConfig};

/// Every profile by name.
pub type Profiles = BTreeMap<String, AgentTypeConfig>;

/// Checks the top-level `max_iterations` and `max_cost` of agent.toml as the command line and
/// the API check theirs (a usage error naming the file and the field).
pub fn check_limits(file: &FileConfig) -> Result<()> {
    let checked = file
        .max_iterations
        .map(agent_runner::check_max_iterations)
        .transpose()
        .and(file.max_cost.map(agent_runner::check_max_cost).transpose());
    checked.map(drop).map_err(|error| {
        let path = file
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from(FILE_NAME));
        Error::usage(format!(
            "invalid configuration in {}: `{}` {}",
            path.display(),
            error.field(),
            error.reason()
        ))
    })
}

/// The folders profile files are read from, in order: the enabled plugins' `agents/`, the
/// user's `agents/` (under `user_dir`, the user's agent folder), then the workspace's
/// `.agent/agents/`.
fn profile_dirs(workspace: &Path, user_dir: Option<&Path>) -> Vec<PathBuf> {
    let plugins = user_dir.map(crate::plugins::agent_dirs).unwrap_or_default();
    plugins
        .into_iter()
        .chain(user_dir.map(|dir| dir.join("agents")))
        .chain([workspace.join(AGENTS_DIR)])
        .collect()
}

/// Every profile, for runs in `workspace`, with the user's profile files under `user_dir`.
/// Errors name the file and the field.
pub fn load(file: &FileConfig, workspace: &Path, user_dir: Option<&Path>) -> Result<Profiles> {
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
        .unwrap_or_else(|| PathBuf::from(FILE_NAME));
    let usage = |error: ProfileError| Error::usage(error.to_string());
    apply_config(&mut profiles, &file.agents, &config_file).map_err(usage)?;
    for dir in profile_dirs(workspace, user_dir) {
        load_dir(&mut profiles, &dir).map_err(usage)?;
    }
    // The top-level cost cap is every profile's that sets none of its own (a run's sub-agents
    // included): a cap in agent.toml holds whichever profile runs.
    if let Some(cost) = file.max_cost {
        for profile in profiles.values_mut() {
            profile.limits.max_cost.get_or_insert(cost);
        }
    }
    Ok(profiles)
}

/// What an abandoned goal of a run as profile `name` does to the files, as the profile says:
/// its last definition that sets `abandon_rollback` wins (the `[agents.NAME]` table, then the
/// user's and the workspace's profile files, read in the order [`load`] reads them); `None`
/// when none sets it, and agent.toml's top-level value applies.
pub fn abandon_rollback(
    file: &FileConfig,
    workspace: &Path,
    user_dir: Option<&Path>,
    name: &str,
) -> Result<Option<AbandonRollback>> {
    read_apart(file, (workspace, user_dir), name, |spec| {
        spec.abandon_rollback
    })
}

/// The skills a run as profile `name` offers, by name, as the profile's `skills` says (its
/// last definition that sets it wins, as for [`abandon_rollback`]); `None`: every skill.
pub fn skills(
    file: &FileConfig,
    workspace: &Path,
    user_dir: Option<&Path>,
    name: &str,
) -> Result<Option<Vec<String>>> {
    let names = read_apart(file, (workspace, user_dir), name, |spec| {
        spec.skills.clone()
    })?;
    Ok(names.map(|list| {
        let mut names = list.names();
        names.retain(|name| name != "none");
        names
    }))
}

/// What `pick` reads from the definitions of profile `name`: its last definition that gives
/// it wins (the `[agents.NAME]` table, then the profile files, read in the order [`load`]
/// reads them).
fn read_apart<T>(
    file: &FileConfig,
    (workspace, user_dir): (&Path, Option<&Path>),
    name: &str,
    pick: impl Fn(&ProfileSpec) -> Option<T>,
) -> Result<Option<T>> {
    let mut found = file.agents.get(name).and_then(&pick);
    let usage = |error: ProfileError| Error::usage(error.to_string());
    for dir in profile_dirs(workspace, user_dir) {
        for path in files::files_in(&dir).map_err(usage)? {
            let (defined, spec, _) = read_profile_file(&path).map_err(usage)?;
            if defined == name
                && let Some(value) = pick(&spec)
            {
                found = Some(value);
            }
        }
    }
    Ok(found)
}

/// Where a profile was defined, as messages name it.
pub fn location(name: &str, profile: &AgentTypeConfig) -> String {
    match &profile.origin {
        ProfileOrigin::Config(path) => format!("{} [agents.{name}]", path.display()),
        other => other.to_string(),
    }
}

/// The profile `name`, or a usage error listing the profiles.
pub fn get<'a>(profiles: &'a Profiles, name: &str) -> Result<&'a AgentTypeConfig> {
    profiles.get(name).ok_or_else(|| {
        let known: Vec<&str> = profiles.keys().map(String::as_str).collect();
        Error::usage(format!(
            "there is no agent profile {name:?}; the profiles are {} (see `agent agents`)",
            known.join(", ")
        ))
    })
}

/// The provider overrides of a run as `profile`: the overrides win, then the profile's provider
/// and model. The profile's model goes with its provider: an override naming another one drops
/// it (the model name would mean nothing there).
pub fn provider_overrides(
    flags: &ProviderOverrides,
    profile: &AgentTypeConfig,
) -> ProviderOverrides {
    let mut overrides = flags.clone();
    if overrides.kind.is_none() {
        overrides.kind = profile.provider;
    }
    let same_provider = profile.provider.is_none() || overrides.kind == profile.provider;
    if overrides.model.is_none() && same_provider {
        overrides.model.clone_from(&profile.model);
    }
    overrides
}

/// Clients for the profiles whose provider is not `main`'s, except `running` (the profile of
/// the run itself, whose client is the main one: the overrides may have moved it to another
/// provider). A profile with its own client and no model gets its provider's model (from
/// `agent.toml` when that names the same provider, else the provider's default), so that its
/// requests never carry the main provider's model name. A profile whose client cannot be set
/// up (no API key, say) runs on the main client; the returned notices say which.
pub fn clients(
    profiles: &mut Profiles,
    running: Option<&str>,
    main: &ProviderConfig,
    file: &FileConfig,
    env: &Environment,
) -> (BTreeMap<String, Arc<dyn LlmClient>>, Vec<String>) {
    let mut clients = BTreeMap::new();
    let mut notices = Vec::new();
    for (name, profile) in profiles.iter_mut() {
        let Some(kind) = profile.provider else {
            continue;
        };
        if kind == main.kind || running == Some(name.as_str()) {
            continue;
        }
        let flags = ProviderOverrides {
            kind: Some(kind),
            model: profile.model.clone(),
            ..ProviderOverrides::default()
        };
        let client = provider::resolve(&flags, file, env)
            .ok_or_else(|| Error::usage("no provider"))
            .and_then(|config| Ok((provider::client(&config)?, config.model)));
        match client {
            Ok((client, model)) => {
                profile.model.get_or_insert(model);
                clients.insert(name.clone(), client);
            }
            Err(error) => notices.push(format!(
                "agent: the agent profile {name} cannot reach its provider ({error}); it uses \
                 the main model client"
            )),
        }
    }
    (clients, notices)
}
