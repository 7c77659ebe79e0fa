//! The web tools of every runner: `web_fetch` and `web_search` (agent-tools' `web` feature,
//! this crate's feature of the same name) with the settings of agent.toml's `[web]` table, given
//! to every runner the factory builds as an [`Extension`].
//!
//! Without the feature, `[web]` is still read (a file stays valid whatever the build), and runs
//! have no web tools.

use std::sync::Arc;

use super::Extension;
use crate::config::FileConfig;
use crate::error::Result;

/// The extension giving runners the web tools `file` asks for; `None` when `[web] enabled =
/// false` or the build has no web tools. A setting that cannot be read is a usage error naming
/// the file and the setting.
pub(crate) fn extension(file: &FileConfig) -> Result<Option<Arc<dyn Extension>>> {
    let table = file.web.clone().unwrap_or_default();
    if table.enabled == Some(false) {
        return Ok(None);
    }
    imp::extension(file, &table)
}

#[cfg(feature = "web")]
mod imp {
    use std::sync::Arc;
    use std::time::Duration;

    use agent_tools::ToolRegistry;
    use agent_tools::web::{PrivateHosts, WebConfig, web_tools};

    use super::super::{Extension, Scope};
    use crate::config::{FileConfig, WebFile};
    use crate::error::{Error, Result};

    /// `web_fetch`, and `web_search` when a search service is set.
    struct WebExtension {
        config: WebConfig,
    }

    impl Extension for WebExtension {
        fn register(&self, registry: &mut ToolRegistry, _scope: &Scope<'_>) {
            for tool in web_tools(&self.config) {
                if let Err(error) = registry.replace(tool) {
                    tracing::warn!("a web tool is not used: {error}");
                }
            }
        }
    }

    pub(super) fn extension(
        file: &FileConfig,
        table: &WebFile,
    ) -> Result<Option<Arc<dyn Extension>>> {
        let invalid = |why: String| {
            Error::usage(format!(
                "invalid configuration{}: [web] {why}",
                file.in_file()
            ))
        };
        let mut config = WebConfig {
            allow_private_hosts: PrivateHosts::parse(&table.allow_private_hosts)
                .map_err(|error| invalid(error.to_string()))?,
            ..WebConfig::default()
        };
        if let Some(url) = &table.search_url {
            let url = url.trim();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(invalid(format!(
                    "search_url {url:?} must be an http:// or https:// address"
                )));
            }
            config.search_url = Some(url.to_owned());
        }
        match table.max_bytes {
            Some(0) => return Err(invalid("max_bytes must be at least 1".into())),
            Some(bytes) => config.max_bytes = bytes,
            None => {}
        }
        match table.timeout {
            Some(0) => return Err(invalid("timeout must be at least 1 second".into())),
            Some(secs) => config.timeout = Duration::from_secs(secs),
            None => {}
        }
        Ok(Some(Arc::new(WebExtension { config })))
    }
}

#[cfg(not(feature = "web"))]
mod imp {
    use std::sync::Arc;

    use super::super::Extension;
    use crate::config::{FileConfig, WebFile};
    use crate::error::Result;

    pub(super) fn extension(
        _file: &FileConfig,
        _table: &WebFile,
    ) -> Result<Option<Arc<dyn Extension>>> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn read(text: &str) -> Result<Option<Arc<dyn Extension>>> {
        extension(&FileConfig::parse(text, Path::new("/p/agent.toml")).unwrap())
    }

    #[test]
    fn bad_settings_name_the_file_and_the_setting() {
        for (text, named) in [
            (
                "[web]\nallow_private_hosts = [\"not a host\"]\n",
                "not a host",
            ),
            ("[web]\nsearch_url = \"ftp://x\"\n", "search_url"),
            ("[web]\nmax_bytes = 0\n", "max_bytes"),
            ("[web]\ntimeout = 0\n", "timeout"),
        ] {
            let Err(error) = read(text) else {
                panic!("{text} was taken");
            };
            assert!(error.is_usage());
            let error = error.to_string();
            assert!(
                error.contains("/p/agent.toml") && error.contains(named),
                "{error}"
            );
        }
        assert!(read("[web]\nenabled = false\n").unwrap().is_none());
        assert_eq!(read("").unwrap().is_some(), cfg!(feature = "web"));
    }

    #[cfg(feature = "web")]
    #[test]
    fn the_tools_are_registered_as_configured() {
        let mut registry = agent_tools::ToolRegistry::new();
        read("")
            .unwrap()
            .unwrap()
            .register(&mut registry, &crate::factory::Scope::new(Path::new("/")));
        assert!(registry.get("web_fetch").is_some());
        assert!(registry.get("web_search").is_none(), "no search service");
        let mut registry = agent_tools::ToolRegistry::new();
        read("[web]\nsearch_url = \"http://127.0.0.1:8888/search\"\n")
            .unwrap()
            .unwrap()
            .register(&mut registry, &crate::factory::Scope::new(Path::new("/")));
        assert!(registry.get("web_search").is_some());
    }
}
