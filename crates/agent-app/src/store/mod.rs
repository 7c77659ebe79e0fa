//! Where traces are stored: a folder (the embedded default, `agent-store-fs`) or a PostgreSQL
//! database (`agent-store-pg`, the `postgres` feature), named by an override's store, else its
//! trace folder, else the environment's `AGENT_STORE` or `AGENT_TRACE_DIR`, else agent.toml's
//! `store` or `trace_dir`, else the project's own folder (see [`project`]).
//!
//! A `postgres://` or `postgresql://` URL names a database; `file://PATH` or a plain path names
//! a folder. The store a run opens is the one its sandbox protects ([`crate::sandbox`]): the
//! location is resolved once, here, and handed to both.

pub mod project;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_execution::TraceStore;

use crate::config::{Environment, FileConfig, StoreOverrides};
use crate::error::{Error, Result};

/// A store's location, as the user named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A trace folder.
    Folder(PathBuf),
    /// A PostgreSQL connection URL.
    Postgres(String),
}

/// What named a store's location.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// The front end's store override.
    StoreOverride,
    /// The front end's trace folder override.
    TraceDirOverride,
    /// An environment variable (`AGENT_STORE`, `AGENT_TRACE_DIR`).
    Environment(&'static str),
    /// A field (`store`, `trace_dir`) of the `agent.toml` at this path.
    File(&'static str, Option<PathBuf>),
    /// The default folder of the project, and why it is that one.
    Project(project::Found),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::StoreOverride => f.write_str("flag --store"),
            Self::TraceDirOverride => f.write_str("flag --trace-dir"),
            Self::Environment(name) => write!(f, "environment {name}"),
            Self::File(field, path) => write!(
                f,
                "agent.toml ({}) {field}",
                path.as_ref().map_or_else(
                    || crate::config::FILE_NAME.into(),
                    |p| p.display().to_string()
                )
            ),
            Self::Project(project::Found::Legacy) => {
                f.write_str("default: the project's own .trace folder")
            }
            Self::Project(project::Found::DataDir) => {
                f.write_str("default: the project's folder in the user's data folder")
            }
            Self::Project(project::Found::NoHome) => {
                f.write_str("default: no home folder, so the current folder")
            }
        }
    }
}

impl Location {
    /// Reads a location: a database URL, a `file://` URL or a path.
    pub fn parse(text: &str) -> Self {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Self::Postgres(text.to_owned())
        } else {
            Self::Folder(PathBuf::from(text.strip_prefix("file://").unwrap_or(text)))
        }
    }

    /// The location the overrides, the environment and agent.toml name, else the default folder
    /// of the project `dir` belongs to (see [`project`]), with what named it.
    pub fn resolve(
        named: &StoreOverrides,
        file: &FileConfig,
        env: &Environment,
        dir: &Path,
    ) -> (Self, Origin) {
        if let Some(store) = &named.store {
            return (Self::parse(store), Origin::StoreOverride);
        }
        if let Some(dir) = &named.trace_dir {
            return (Self::Folder(dir.clone()), Origin::TraceDirOverride);
        }
        if let Some(store) = env.get("AGENT_STORE") {
            return (Self::parse(store), Origin::Environment("AGENT_STORE"));
        }
        if let Some(dir) = env.get("AGENT_TRACE_DIR") {
            return (
                Self::Folder(PathBuf::from(dir)),
                Origin::Environment("AGENT_TRACE_DIR"),
            );
        }
        if let Some(store) = &file.store {
            return (Self::parse(store), Origin::File("store", file.path.clone()));
        }
        if let Some(dir) = &file.trace_dir {
            return (
                Self::Folder(dir.clone()),
                Origin::File("trace_dir", file.path.clone()),
            );
        }
        let (folder, found) = project::trace_dir(dir, env.data_dir().as_deref());
        (Self::Folder(folder), Origin::Project(found))
    }

    /// The trace folder, for a folder store.
    pub fn folder(&self) -> Option<&PathBuf> {
        match self {
            Self::Folder(dir) => Some(dir),
            Self::Postgres(_) => None,
        }
    }

    /// How to name this store on another command's line (`--trace-dir DIR`, `--store URL`).
    pub fn flag(&self) -> String {
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
pub fn redact(url: &str) -> String {
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

/// An open store with its location.
#[derive(Clone)]
pub struct Opened {
    /// The store.
    pub store: Arc<dyn TraceStore>,
    /// Where it is.
    pub location: Location,
}

impl fmt::Debug for Opened {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Opened")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

/// Opens the store at `location` (a folder is created when it does not exist).
pub async fn open(location: Location) -> Result<Opened> {
    let store: Arc<dyn TraceStore> = match &location {
        Location::Folder(dir) => Arc::new(
            agent_store_fs::FileSystemTraceStore::open(dir).map_err(|error| Error::Store {
                what: format!("cannot open the trace folder {}", dir.display()),
                source: Box::new(error),
            })?,
        ),
        Location::Postgres(url) => postgres(url).await?,
    };
    Ok(Opened { store, location })
}

/// Opens the store at `location` to read it: a trace folder that does not exist is not
/// created, and reads as an empty store.
pub async fn open_to_read(location: Location) -> Result<Arc<dyn TraceStore>> {
    if let Location::Folder(dir) = &location
        && !dir.exists()
    {
        return Ok(Arc::new(agent_execution::InMemoryTraceStore::new()));
    }
    Ok(open(location).await?.store)
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
        ) => Err(Error::usage(format!("--store {}: {error}", redact(url)))),
        Err(error) => Err(Error::Store {
            what: format!("cannot open the trace store {}", redact(url)),
            source: Box::new(error),
        }),
    }
}

#[cfg(not(feature = "postgres"))]
async fn postgres(url: &str) -> Result<Arc<dyn TraceStore>> {
    Err(Error::usage(format!(
        "--store {}: this build of agent has no PostgreSQL store (the `postgres` feature)",
        redact(url)
    )))
}

/// The run queue of a store that has one (a PostgreSQL database); `None` for a folder.
pub async fn queue(
    location: &Location,
) -> Result<Option<Arc<dyn agent_execution::queue::RunQueue>>> {
    match location {
        Location::Folder(_) => Ok(None),
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => {
            let queue = agent_store_pg::PgRunQueue::connect(url)
                .await
                .map_err(|error| Error::Store {
                    what: format!("cannot open the run queue of {location}"),
                    source: Box::new(error),
                })?;
            Ok(Some(Arc::new(queue)))
        }
        #[cfg(not(feature = "postgres"))]
        Location::Postgres(_) => Ok(None),
    }
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
        let arg = |store: Option<&str>, dir: Option<&str>| StoreOverrides {
            store: store.map(str::to_owned),
            trace_dir: dir.map(PathBuf::from),
        };
        let resolve = |named: &StoreOverrides, file: &FileConfig| {
            Location::resolve(named, file, &Environment::default(), Path::new(".")).0
        };
        assert_eq!(
            resolve(&arg(Some("postgres://flag/db"), Some("d")), &file),
            Location::Postgres("postgres://flag/db".into())
        );
        assert_eq!(
            resolve(&arg(None, Some("d")), &file),
            Location::Folder("d".into())
        );
        assert_eq!(
            resolve(&arg(None, None), &file),
            Location::Postgres("postgres://file/db".into())
        );
        let file = FileConfig {
            trace_dir: Some("t".into()),
            ..FileConfig::default()
        };
        assert_eq!(
            resolve(&arg(None, None), &file),
            Location::Folder("t".into())
        );
        assert_eq!(
            resolve(&arg(None, Some("f")), &file),
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
