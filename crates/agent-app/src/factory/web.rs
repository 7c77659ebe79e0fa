//! The web tools of every runner: `web_fetch` and `web_search` (agent-tools' `web` feature,
//! this crate's feature of the same name) with the settings of agent.toml's `[web]` table, given
//! to every runner the factory builds as an [`Extension`].
//!
//! What answers `web_search` is chosen here, once for every door (`[web] search`): the search
//! service of `search_url`, or the main model's provider where it searches the web itself
//! (Anthropic Messages, OpenAI Responses: [`agent_llm::LlmClient::offers_web_search`]), adapted
//! into a [`SearchBackend`](agent_tools::web::SearchBackend) by `web_search.rs`. `auto` takes
//! the service when there is one, else the provider's search, else gives no `web_search`. The
//! tool is registered in the runner's registry, so its sub-agents have the same one.
//!
//! Without the feature, `[web]` is still read (a file stays valid whatever the build), and runs
//! have no web tools.

use std::sync::Arc;

use agent_llm::LlmClient;

use super::Extension;
use crate::config::{FileConfig, SearchChoice};
use crate::error::{Error, Result};
use crate::provider::ProviderConfig;

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

/// Checks that `[web] search = "provider"` names a provider that searches: the main model's
/// (`provider`, reached by `client`). A usage error naming the file and the setting otherwise.
pub(crate) fn check_search(
    file: &FileConfig,
    provider: &ProviderConfig,
    client: &dyn LlmClient,
) -> Result<()> {
    let table = file.web.clone().unwrap_or_default();
    let wanted = table.enabled != Some(false) && table.search == Some(SearchChoice::Provider);
    if cfg!(feature = "web") && wanted && !client.offers_web_search() {
        return Err(Error::usage(format!(
            "invalid configuration{}: [web] search = \"provider\", but the model {:?} (provider \
             `{}`) is reached through an API without a web search of its own (Anthropic \
             Messages and OpenAI Responses have one); set search = \"service\" with a \
             search_url, or \"auto\"",
            file.in_file(),
            provider.model,
            provider.kind,
        )));
    }
    Ok(())
}

#[cfg(feature = "web")]
mod imp {
    use std::sync::Arc;
    use std::time::Duration;

    use agent_tools::web::{
        PrivateHosts, SearchBackend, SearchService, WebConfig, WebFetchTool, WebSearchTool,
    };
    use agent_tools::{ToolRegistry, TypedTool};

    use super::super::web_search::ProviderSearch;
    use super::super::{Extension, Scope};
    use crate::config::{FileConfig, SearchChoice, WebFile};
    use crate::error::{Error, Result};

    /// `web_fetch`, and `web_search` as `search` chooses.
    struct WebExtension {
        config: Arc<WebConfig>,
        search: SearchChoice,
    }

    impl WebExtension {
        /// What answers `web_search` in the runner of `scope`, if anything does.
        fn search_backend(&self, scope: &Scope<'_>) -> Option<Arc<dyn SearchBackend>> {
            let service =
                || -> Arc<dyn SearchBackend> { Arc::new(SearchService::new(self.config.clone())) };
            let provider = |chosen: bool| -> Option<Arc<dyn SearchBackend>> {
                let model = scope
                    .model
                    .filter(|model| chosen || !model.custom_endpoint)?;
                model
                    .client
                    .offers_web_search()
                    .then(|| -> Arc<dyn SearchBackend> {
                        let prices = model.prices.cloned().unwrap_or_default();
                        Arc::new(ProviderSearch::new(
                            model.client.clone(),
                            model.name,
                            prices,
                        ))
                    })
            };
            match self.search {
                SearchChoice::Off => None,
                SearchChoice::Service => Some(service()),
                SearchChoice::Provider => provider(true),
                _ if self.config.search_url.is_some() => Some(service()),
                // Not on a proxy or a compatible server unless asked: it may not search.
                _ => provider(false),
            }
        }
    }

    impl Extension for WebExtension {
        fn register(&self, registry: &mut ToolRegistry, scope: &Scope<'_>) {
            let mut tools = vec![WebFetchTool::new(self.config.clone()).into_tool()];
            if let Some(backend) = self.search_backend(scope) {
                tools.push(WebSearchTool::with_backend(backend).into_tool());
            }
            for tool in tools {
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
        let search = table.search.unwrap_or_default();
        if search == SearchChoice::Service && config.search_url.is_none() {
            return Err(invalid(
                "search = \"service\" needs search_url, the address of the search service \
                 (a SearXNG instance answering ?q=...&format=json)"
                    .into(),
            ));
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
        Ok(Some(Arc::new(WebExtension {
            config: Arc::new(config),
            search,
        })))
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

    #[cfg(feature = "web")]
    use agent_llm::{ChatRequest, ChatStream, LlmError, ProviderKind, ScriptedClient};

    use super::*;

    fn file(text: &str) -> FileConfig {
        FileConfig::parse(text, Path::new("/p/agent.toml")).unwrap()
    }

    fn read(text: &str) -> Result<Option<Arc<dyn Extension>>> {
        extension(&file(text))
    }

    /// A client whose provider searches the web, finding one page.
    #[cfg(feature = "web")]
    struct Searching;

    #[cfg(feature = "web")]
    #[async_trait::async_trait]
    impl LlmClient for Searching {
        async fn stream(&self, _request: ChatRequest) -> Result<ChatStream, LlmError> {
            Err(LlmError::Unsupported {
                message: "no chat".into(),
            })
        }

        fn offers_web_search(&self) -> bool {
            true
        }

        async fn web_search(
            &self,
            _model: &str,
            _query: &str,
            _options: &agent_llm::WebSearchOptions,
        ) -> Result<agent_llm::WebSearchAnswer, LlmError> {
            let mut answer = agent_llm::WebSearchAnswer::new("found");
            answer.add_source(agent_llm::WebSource::new("A page", "https://a.test/"));
            Ok(answer)
        }
    }

    #[cfg(feature = "web")]
    fn provider(kind: ProviderKind) -> ProviderConfig {
        ProviderConfig {
            kind,
            model: "m".into(),
            base_url: None,
            api_key: None,
            script: None,
            context_window: None,
            stream: true,
            max_tokens: None,
            temperature: None,
            model_error: None,
        }
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
        assert!(
            FileConfig::parse(
                "[web]\nsearch = \"sometimes\"\n",
                Path::new("/p/agent.toml")
            )
            .is_err()
        );
    }

    #[cfg(feature = "web")]
    #[test]
    fn a_search_choice_that_cannot_be_met_is_a_usage_error() {
        let Err(error) = read("[web]\nsearch = \"service\"\n") else {
            panic!("a service without search_url was taken");
        };
        assert!(error.is_usage());
        assert!(error.to_string().contains("search_url"), "{error}");
        let wants = file("[web]\nsearch = \"provider\"\n");
        let chat = provider(ProviderKind::Openai);
        let scripted = ScriptedClient::new(Vec::new());
        let error = check_search(&wants, &chat, &scripted).unwrap_err();
        assert!(error.is_usage());
        let error = error.to_string();
        assert!(
            error.contains("/p/agent.toml") && error.contains("search = \"provider\""),
            "{error}"
        );
        // The control: a provider that searches meets it, and so does any provider under auto.
        assert!(check_search(&wants, &provider(ProviderKind::Anthropic), &Searching).is_ok());
        assert!(check_search(&file(""), &chat, &scripted).is_ok());
    }

    #[cfg(feature = "web")]
    #[tokio::test]
    async fn the_search_comes_from_the_setting_the_service_and_the_provider() {
        // What `web_search` answers in a runner of `client` (or none) under `text`, if it has
        // the tool: the provider's search names itself, a service on a closed port fails
        // naming its host.
        async fn searched(text: &str, client: Option<Arc<dyn LlmClient>>) -> Option<String> {
            let mut registry = agent_tools::ToolRegistry::new();
            let mut scope = crate::factory::Scope::new(Path::new("/"));
            if let Some(client) = &client {
                scope = scope.with_model(client, "m");
            }
            read(text).unwrap().unwrap().register(&mut registry, &scope);
            assert!(registry.get("web_fetch").is_some());
            registry.get("web_search")?;
            let ctx = agent_tools::ToolContext::new(std::env::temp_dir(), "t").unwrap();
            let result = registry
                .execute("web_search", r#"{"query": "q"}"#, &ctx)
                .await;
            Some(result.content)
        }
        let searching: Arc<dyn LlmClient> = Arc::new(Searching);
        let chat: Arc<dyn LlmClient> = Arc::new(ScriptedClient::new(Vec::new()));
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let service = format!("[web]\nsearch_url = \"http://127.0.0.1:{closed}/search\"\n");
        let by_provider = "searched with the web search of m's provider";
        let by_service = "the search service at 127.0.0.1 did not answer";
        // auto: no service and a provider without search give no web_search.
        assert_eq!(searched("", Some(chat.clone())).await, None);
        assert_eq!(searched("", None).await, None);
        // auto: the service when there is one, else the provider's search.
        let found = searched("", Some(searching.clone())).await.unwrap();
        assert!(found.contains(by_provider), "{found}");
        let found = searched(&service, Some(searching.clone())).await.unwrap();
        assert!(found.contains(by_service), "{found}");
        let found = searched(&service, Some(chat)).await.unwrap();
        assert!(found.contains(by_service), "{found}");
        // The setting wins over the order of auto.
        let provider = format!("{service}search = \"provider\"\n");
        let found = searched(&provider, Some(searching.clone())).await.unwrap();
        assert!(found.contains(by_provider), "{found}");
        assert_eq!(
            searched("[web]\nsearch = \"off\"\n", Some(searching)).await,
            None
        );
    }
}
