//! What an OpenAI-compatible server says of itself before a run: whether it is OpenAI's own API,
//! and, when no model is named, the one model a local server serves.

use std::time::Duration;

use agent_llm::{OPENAI_DEFAULT_BASE_URL, OpenAiConfig, RetryPolicy, list_models};

/// Whether `url` is OpenAI's own API.
pub(super) fn is_openai(url: &str) -> bool {
    url.trim_end_matches('/') == OPENAI_DEFAULT_BASE_URL
}

/// The models the OpenAI-compatible server at `base_url` serves (`GET {base_url}/models`),
/// asked on a thread of its own so that it works inside and outside an async runtime.
pub(super) fn models(base_url: &str, api_key: Option<String>) -> Result<Vec<String>, String> {
    let mut config = OpenAiConfig::new(base_url, api_key).with_retry(RetryPolicy::none());
    config.timeouts.request = Duration::from_secs(10);
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|error| error.to_string())?;
                runtime
                    .block_on(list_models(&config))
                    .map_err(|error| error.to_string())
            })
            .join()
            .unwrap_or_else(|_| Err("the model list could not be read".into()))
    })
}

/// The model the OpenAI-compatible server at `base_url` serves, or why there is no single
/// one. Asked once, before anything runs.
pub(super) fn served_model(base_url: &str, api_key: Option<String>) -> Result<String, String> {
    let asked = models(base_url, api_key);
    let no_model = |why: String| {
        format!("no model named (--model, AGENT_MODEL or `model` in agent.toml), and {why}")
    };
    match asked {
        Ok(models) => match models.as_slice() {
            [model] => Ok(model.clone()),
            [] => Err(no_model(format!("the server at {base_url} lists no model"))),
            several => Err(no_model(format!(
                "the server at {base_url} serves several: {}; pick one with --model",
                several.join(", ")
            ))),
        },
        Err(error) => Err(no_model(format!(
            "the server at {base_url} did not list its models: {error}"
        ))),
    }
}
