//! Asking an OpenAI-compatible server the context window it runs a model with: llama.cpp's
//! `GET /props`, the `GET {base}/models` list, Ollama's `POST /api/show` (and `GET /api/ps`
//! for the model as loaded). The three are asked at once, each with a short deadline and no
//! retry; a server that answers none of them said nothing, and the caller assumes a window.
//!
//! `/props` and Ollama's API live at the server's root, above the OpenAI-compatible base
//! (`http://localhost:11434/v1` → `http://localhost:11434`).

use std::time::Duration;

use serde_json::{Value, json};

use crate::formats::openai as format;
use crate::formats::server_window::{
    from_model_list, from_ollama_ps, from_ollama_show, from_props,
};
use crate::http::{Timeouts, Transport, endpoint};
use crate::retry::RetryPolicy;
use crate::window::{ContextWindow, WindowSource};

/// How long each question may take.
const DEADLINE: Duration = Duration::from_secs(5);

/// The server's root: the base URL without its trailing `/v1`.
pub(crate) fn server_root(base_url: &str) -> &str {
    let base = base_url.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base)
}

/// How to reach the server: its OpenAI-compatible base URL, key and extra headers.
pub(crate) struct Server<'a> {
    pub(crate) base_url: &'a str,
    pub(crate) api_key: Option<&'a str>,
    pub(crate) extra_headers: &'a [(String, String)],
}

/// The window the server at `config.base_url` says it runs `model` with, or `None`.
pub(crate) async fn ask(config: &Server<'_>, model: &str) -> Option<ContextWindow> {
    let timeouts = Timeouts {
        connect: DEADLINE,
        request: DEADLINE,
        idle: DEADLINE,
    };
    let transport = Transport::new(RetryPolicy::none(), timeouts).ok()?;
    let root = server_root(config.base_url);
    let (props, models, show) = futures::join!(
        fetch(&transport, config, root, "/props", None),
        fetch(&transport, config, config.base_url, "/models", None),
        fetch(
            &transport,
            config,
            root,
            "/api/show",
            Some(json!({"model": model}))
        ),
    );
    if let Some(tokens) = props.as_ref().and_then(from_props) {
        return Some(window(tokens, WindowSource::LlamaCppProps));
    }
    if let Some(tokens) = models
        .as_ref()
        .and_then(|list| from_model_list(list, model))
    {
        return Some(window(tokens, WindowSource::ModelList));
    }
    let shown = show.as_ref().and_then(from_ollama_show)?;
    if let WindowSource::OllamaDefault { .. } = shown.source {
        // A loaded model says the window Ollama gave it.
        let loaded = fetch(&transport, config, root, "/api/ps", None).await;
        if let Some(tokens) = loaded.as_ref().and_then(|ps| from_ollama_ps(ps, model)) {
            return Some(window(tokens, WindowSource::Ollama));
        }
    }
    Some(shown)
}

fn window(tokens: usize, source: WindowSource) -> ContextWindow {
    ContextWindow { tokens, source }
}

/// `GET {base}{path}`, or a `POST` of `body`, as JSON; `None` on any failure.
async fn fetch(
    transport: &Transport,
    config: &Server<'_>,
    base: &str,
    path: &str,
    body: Option<Value>,
) -> Option<Value> {
    let url = endpoint(base, path).ok()?;
    let build = |client: &reqwest::Client| {
        let mut builder = match &body {
            Some(body) => client.post(&url).json(body),
            None => client.get(&url),
        };
        if let Some(key) = &config.api_key {
            builder = builder.bearer_auth(key);
        }
        for (name, value) in config.extra_headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder
    };
    let response = transport.send(build, format::parse_error).await.ok()?;
    let text = transport.read_body(response).await.ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_above_the_version_path() {
        assert_eq!(
            server_root("http://localhost:11434/v1"),
            "http://localhost:11434"
        );
        assert_eq!(server_root("http://h:8080/v1/"), "http://h:8080");
        assert_eq!(server_root("http://h:8080/api"), "http://h:8080/api");
    }
}
