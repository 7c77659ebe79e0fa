//! Where traces are stored: a folder (the embedded default, `agent-store-fs`) or a PostgreSQL
//! database (`agent-store-pg`, the `postgres` feature), named by `--store` / `AGENT_STORE`, else
//! `--trace-dir` / `AGENT_TRACE_DIR`, else agent.toml's `store` or `trace_dir`, else the
//! project's own folder (see [`crate::project`]).
//!
//! A `postgres://` or `postgresql://` URL names a database; `file://PATH` or a plain path names
//! a folder.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_execution::TraceStore;
use anyhow::{Context, Result};

use crate::cli::TraceDirArg;
use crate::config::FileConfig;
use crate::exit::UsageError;

/// A store's location, as the user named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// A trace folder.
    Folder(PathBuf),
    /// A PostgreSQL connection URL.
    Postgres(String),
}

impl Location {
    /// Reads a location: a database URL, a `file://` URL or a path.
    pub(crate) fn parse(text: &str) -> Self {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Self::Postgres(text.to_owned())
        } else {
            Self::Folder(PathBuf::from(text.strip_prefix("file://").unwrap_or(text)))
        }
    }

    /// The location a command's flags, the environment and agent.toml name, for the project
    /// of the current folder.
    pub(crate) fn resolve(arg: &TraceDirArg, file: &FileConfig) -> Self {
        Self::resolve_in(arg, file, Path::new(".")).0
    }

    /// The location a command's flags, the environment and agent.toml name, else the default
    /// folder of the project `dir` belongs to (see [`crate::project`]); with where it came
    /// from, in words (for `agent config`).
    pub(crate) fn resolve_in(arg: &TraceDirArg, file: &FileConfig, dir: &Path) -> (Self, String) {
        let from_file = || {
            format!(
                "agent.toml ({})",
                file.path.as_ref().map_or_else(
                    || crate::config::FILE_NAME.into(),
                    |p| p.display().to_string()
                )
            )
        };
        if let Some(store) = &arg.store {
            return (
                Self::parse(store),
                flag_or_env("--store", "AGENT_STORE", store),
            );
        }
        if let Some(dir) = &arg.trace_dir {
            let text = dir.to_string_lossy();
            let source = flag_or_env("--trace-dir", "AGENT_TRACE_DIR", &text);
            return (Self::Folder(dir.clone()), source);
        }
        if let Some(store) = &file.store {
            return (Self::parse(store), format!("{} store", from_file()));
        }
        if let Some(dir) = &file.trace_dir {
            return (
                Self::Folder(dir.clone()),
                format!("{} trace_dir", from_file()),
            );
        }
        let (folder, found) = crate::project::trace_dir(dir);
        crate::project::notice(found, &folder);
        let source = match found {
            crate::project::Found::Legacy => "default: the project's own .trace folder",
            crate::project::Found::DataDir => {
                "default: the project's folder in the user's data folder"
            }
            crate::project::Found::NoHome => "default: no home folder, so the current folder",
        };
        (Self::Folder(folder), source.to_owned())
    }

    /// The trace folder, for a folder store.
    pub(crate) fn folder(&self) -> Option<&PathBuf> {
        match self {
            Self::Folder(dir) => Some(dir),
            Self::Postgres(_) => None,
        }
    }

    /// How to name this store on another command's line (`--trace-dir DIR`, `--store URL`).
    pub(crate) fn flag(&self) -> String {
        match self {
            Self::Folder(dir) => format!("--trace-dir {}", dir.display()),
            Self::Postgres(url) => format!("--store {}", redact(url)),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Folder(dir) => write!(f, "{}", dir.display()),
            Self::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

/// A URL with its password (if any) replaced by `***`, for messages.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let Some((credentials, host)) = rest.rsplit_once('@') else {
        return url.to_owned();
    };
    match credentials.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

/// `flag`, or the environment variable `var` when the value is the variable's (clap reads the
/// variable into the flag).
fn flag_or_env(flag: &str, var: &str, value: &str) -> String {
    if std::env::var(var).is_ok_and(|v| v == value) && !given_on_command_line(flag) {
        format!("environment {var}")
    } else {
        format!("flag {flag}")
    }
}

/// Whether `flag` (long form) is on this process's command line.
pub(crate) fn given_on_command_line(flag: &str) -> bool {
    std::env::args().any(|arg| arg == flag || arg.starts_with(&format!("{flag}=")))
}

/// An open store with its location.
pub(crate) struct Opened {
    /// The store.
    pub(crate) store: Arc<dyn TraceStore>,
    /// Where it is.
    pub(crate) location: Location,
}

/// Opens the store at `location`.
pub(crate) async fn open_at(location: Location) -> Result<Opened> {
    let store: Arc<dyn TraceStore> = match &location {
        Location::Folder(dir) => Arc::new(
            agent_store_fs::FileSystemTraceStore::open(dir)
                .with_context(|| format!("cannot open the trace folder {}", dir.display()))?,
        ),
        Location::Postgres(url) => postgres(url).await?,
    };
    Ok(Opened { store, location })
}

/// Opens the store a command's `--store`/`--trace-dir` (or the environment, or agent.toml) names.
pub(crate) async fn open(arg: &TraceDirArg, file: &FileConfig) -> Result<Opened> {
    open_at(Location::resolve(arg, file)).await
}

/// Opens the store of a command that runs the model: as [`open`], with the default folder
/// that of the project of its workspace (`--workspace`, agent.toml's, else the current folder).
pub(crate) async fn open_for_run(
    args: &crate::cli::ModelArgs,
    file: &FileConfig,
) -> Result<Opened> {
    let workspace = args
        .workspace
        .clone()
        .or_else(|| file.workspace.clone())
        .unwrap_or_else(|| PathBuf::from("."));
    open_at(Location::resolve_in(&args.trace_dir, file, &workspace).0).await
}

/// For commands that only read traces (or change existing ones): the store agent.toml and
/// the flags name, reading agent.toml itself. A trace folder that does not exist is not
/// created: it reads as an empty store.
pub(crate) async fn store_for(arg: &TraceDirArg) -> Result<Arc<dyn TraceStore>> {
    let location = Location::resolve(arg, &FileConfig::load()?);
    if let Location::Folder(dir) = &location
        && !dir.exists()
    {
        return Ok(Arc::new(agent_execution::InMemoryTraceStore::new()));
    }
    Ok(open_at(location).await?.store)
}

#[cfg(feature = "postgres")]
async fn postgres(url: &str) -> Result<Arc<dyn TraceStore>> {
    use agent_store_pg::{ConnectError, PgTraceStore};
    match PgTraceStore::connect(url).await {
        Ok(store) => Ok(Arc::new(store)),
        // A URL that does not parse, or a schema newer than this build, is the user's to fix.
        Err(
            error @ (ConnectError::Url(_)
            | ConnectError::Schema(agent_store_pg::SchemaError::TooNew { .. })),
        ) => Err(UsageError(format!("--store {}: {error}", redact(url))).into()),
        Err(error) => Err(anyhow::Error::new(error)
            .context(format!("cannot open the trace store {}", redact(url)))),
    }
}

#[cfg(not(feature = "postgres"))]
async fn postgres(url: &str) -> Result<Arc<dyn TraceStore>> {
    Err(UsageError(format!(
        "--store {}: this build of agent has no PostgreSQL store (the `postgres` feature)",
        redact(url)
    ))
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_urls_or_paths() {
        assert_eq!(
            Location::parse("postgres://a@h/db"),
            Location::Postgres("postgres://a@h/db".into())
        );
        assert_eq!(
            Location::parse("postgresql://h/db"),
            Location::Postgres("postgresql://h/db".into())
        );
        assert_eq!(
            Location::parse("file:///x/t"),
            Location::Folder("/x/t".into())
        );
        assert_eq!(Location::parse(".trace"), Location::Folder(".trace".into()));
    }

    #[test]
    fn the_store_flag_wins_then_the_folder_then_the_file() {
        let file = FileConfig {
            store: Some("postgres://file/db".into()),
            ..FileConfig::default()
        };
        let arg = |store: Option<&str>, dir: Option<&str>| TraceDirArg {
            store: store.map(str::to_owned),
            trace_dir: dir.map(PathBuf::from),
        };
        assert_eq!(
            Location::resolve(&arg(Some("postgres://flag/db"), Some("d")), &file),
            Location::Postgres("postgres://flag/db".into())
        );
        assert_eq!(
            Location::resolve(&arg(None, Some("d")), &file),
            Location::Folder("d".into())
        );
        assert_eq!(
            Location::resolve(&arg(None, None), &file),
            Location::Postgres("postgres://file/db".into())
        );
        let file = FileConfig {
            trace_dir: Some("t".into()),
            ..FileConfig::default()
        };
        assert_eq!(
            Location::resolve(&arg(None, None), &file),
            Location::Folder("t".into())
        );
        assert_eq!(
            Location::resolve(&arg(None, Some("f")), &file),
            Location::Folder("f".into())
        );
    }

    #[test]
    fn passwords_stay_out_of_messages() {
        let location = Location::parse("postgres://agent:s3cret@db:5432/agent");
        assert_eq!(location.to_string(), "postgres://agent:***@db:5432/agent");
        assert!(!location.flag().contains("s3cret"));
    }
}
