//! What local servers say of a model's context window, read from their answers: llama.cpp's
//! `GET /props`, the `GET /v1/models` list (vLLM's `max_model_len`, llama.cpp's `meta.n_ctx`,
//! LM Studio's and OpenRouter's `*context_length`), Ollama's `POST /api/show` and `GET /api/ps`.

use serde_json::Value;

use crate::window::{ContextWindow, WindowSource};

/// A positive integer field.
fn tokens(value: &Value) -> Option<usize> {
    value
        .as_u64()
        .or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0)
                .map(|f| f as u64)
        })
        .filter(|&n| n > 0)
        .and_then(|n| usize::try_from(n).ok())
}

/// The window llama.cpp's `/props` states: `default_generation_settings.n_ctx` (the window of
/// each of its slots, which is what one request gets), or a top-level `n_ctx`.
pub(crate) fn from_props(body: &Value) -> Option<usize> {
    tokens(&body["default_generation_settings"]["n_ctx"]).or_else(|| tokens(&body["n_ctx"]))
}

/// The window the model list states for `model`: its entry (by id, or the only entry when no
/// id matches, as a local server may list its one model under a file name), from vLLM's
/// `max_model_len`, llama.cpp's `meta.n_ctx`, LM Studio's `loaded_context_length` or
/// `max_context_length`, or a `context_length` field.
pub(crate) fn from_model_list(body: &Value, model: &str) -> Option<usize> {
    let entries = body["data"].as_array()?;
    let entry = entries
        .iter()
        .find(|entry| entry["id"].as_str() == Some(model))
        .or(match entries.as_slice() {
            [only] => Some(only),
            _ => None,
        })?;
    tokens(&entry["max_model_len"])
        .or_else(|| tokens(&entry["meta"]["n_ctx"]))
        .or_else(|| tokens(&entry["loaded_context_length"]))
        .or_else(|| tokens(&entry["max_context_length"]))
        .or_else(|| tokens(&entry["context_length"]))
}

/// The window Ollama's `/api/show` gives its model: `num_ctx` of its parameters (a text of
/// `name value` lines), else Ollama's default, capped by the model's trained
/// `<architecture>.context_length` (Ollama runs a model with its default window whatever it
/// was trained for, and cuts the start of a longer prompt without saying so).
pub(crate) fn from_ollama_show(body: &Value) -> Option<ContextWindow> {
    let parameters = body["parameters"].as_str().unwrap_or_default();
    let num_ctx = parameters.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next() == Some("num_ctx"))
            .then(|| words.next()?.parse::<usize>().ok())
            .flatten()
    });
    if let Some(tokens) = num_ctx.filter(|&n| n > 0) {
        return Some(ContextWindow {
            tokens,
            source: WindowSource::Ollama,
        });
    }
    let info = body["model_info"].as_object()?;
    let trained = info
        .iter()
        .find(|(key, _)| key.ends_with(".context_length"))
        .and_then(|(_, value)| tokens(value))?;
    Some(ContextWindow {
        tokens: trained.min(crate::window::OLLAMA_DEFAULT_WINDOW),
        source: WindowSource::OllamaDefault { trained },
    })
}

/// The window of `model` as Ollama loaded it (`GET /api/ps`, `models[].context_length`).
pub(crate) fn from_ollama_ps(body: &Value, model: &str) -> Option<usize> {
    let same = |entry: &Value, field: &str| {
        entry[field]
            .as_str()
            .is_some_and(|name| name == model || name.strip_suffix(":latest") == Some(model))
    };
    body["models"]
        .as_array()?
        .iter()
        .find(|entry| same(entry, "name") || same(entry, "model"))
        .and_then(|entry| tokens(&entry["context_length"]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn llama_cpp_props_give_the_slot_window() {
        let props = json!({"default_generation_settings": {"n_ctx": 4096, "params": {}},
            "total_slots": 1, "model_path": "/m/smollm2.gguf"});
        assert_eq!(from_props(&props), Some(4096));
        assert_eq!(from_props(&json!({"n_ctx": 2048})), Some(2048));
        assert_eq!(from_props(&json!({"detail": "Not Found"})), None);
    }

    #[test]
    fn the_captured_llama_server_answers_give_its_window() {
        let props: Value =
            serde_json::from_str(include_str!("../../tests/fixtures/llama-server/props.json"))
                .unwrap();
        assert_eq!(from_props(&props), Some(2048));
        let models: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/llama-server/models.json"
        ))
        .unwrap();
        assert_eq!(from_model_list(&models, "smollm2"), Some(2048));
        let overflow = include_str!("../../tests/fixtures/llama-server/overflow-stream-400.http");
        let body = overflow.split("\r\n\r\n").nth(1).unwrap();
        let error = crate::formats::openai::parse_error(body);
        assert!(error.context_overflow);
        assert_eq!(crate::window::stated_window(&error.message), Some(2048));
    }

    #[test]
    fn model_lists_give_the_window_of_the_model_asked() {
        let vllm = json!({"object": "list", "data": [
            {"id": "Qwen/Qwen2.5-7B", "object": "model", "max_model_len": 32768},
            {"id": "other", "object": "model", "max_model_len": 8192}]});
        assert_eq!(from_model_list(&vllm, "Qwen/Qwen2.5-7B"), Some(32768));
        assert_eq!(
            from_model_list(&vllm, "missing"),
            None,
            "two entries, none asked"
        );
        let llama = json!({"object": "list", "data": [{"id": "smollm2.gguf", "meta":
            {"n_ctx": 2048, "n_ctx_train": 8192, "n_vocab": 49152}}]});
        assert_eq!(
            from_model_list(&llama, "smollm2"),
            Some(2048),
            "the only entry"
        );
        let openai = json!({"data": [{"id": "gpt-4o", "object": "model"}]});
        assert_eq!(from_model_list(&openai, "gpt-4o"), None);
    }

    #[test]
    fn ollama_gives_num_ctx_or_its_default_under_the_trained_window() {
        let set = json!({"parameters": "stop \"<|im_end|>\"\nnum_ctx                        16384",
            "model_info": {"qwen2.context_length": 32768}});
        assert_eq!(
            from_ollama_show(&set),
            Some(ContextWindow {
                tokens: 16384,
                source: WindowSource::Ollama
            })
        );
        let unset = json!({"parameters": "temperature 0.7", "model_info":
            {"general.architecture": "llama", "llama.context_length": 131072}});
        assert_eq!(
            from_ollama_show(&unset),
            Some(ContextWindow {
                tokens: 4096,
                source: WindowSource::OllamaDefault { trained: 131072 }
            })
        );
        let ps = json!({"models": [{"name": "llama3.2:latest", "model": "llama3.2:latest",
            "context_length": 8192}]});
        assert_eq!(from_ollama_ps(&ps, "llama3.2"), Some(8192));
        assert_eq!(from_ollama_ps(&ps, "qwen3"), None);
    }
}
