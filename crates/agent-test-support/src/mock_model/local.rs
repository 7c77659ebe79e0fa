//! The local model servers the mock can play besides the wire format, after captures of the
//! real ones (`crates/agent-llm/tests/fixtures/llama-server/`, `…/llamacpp/`): what each says
//! of its window and where, how it refuses a prompt over the window, and what its chat template
//! shows the model of a request, which is what the prompt tokens it reports count.
//!
//! The mock counts a prompt's tokens as a quarter of the bytes of what the template renders
//! (each message's text and tool calls, the tool specs' JSON), plus four per message.

use serde_json::{Value, json};

use super::RecordedRequest;

/// A local model server, as the mock plays it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalServer {
    /// llama.cpp's `llama-server -c n_ctx`: `GET /props` and the model list's `meta.n_ctx` say
    /// the window; a prompt over it gets a 400 `exceed_context_size_error` naming it, streamed
    /// or not.
    LlamaServer {
        /// The window of each request.
        n_ctx: usize,
    },
    /// vLLM with `--max-model-len`: the model list's `max_model_len` says the window; a prompt
    /// over it gets OpenAI's 400 `This model's maximum context length is N tokens`.
    Vllm {
        /// The window.
        max_model_len: usize,
    },
    /// Ollama: `POST /api/show` gives the model's `num_ctx` among its parameters when it is set,
    /// and its trained `<arch>.context_length`; `GET /api/ps` lists nothing loaded. A prompt over
    /// the window is refused as vLLM does (the real Ollama cuts its start without a word).
    Ollama {
        /// `num_ctx` of the model's parameters.
        num_ctx: Option<usize>,
        /// The model's trained window.
        trained: usize,
    },
    /// A server that says nothing of its window where it could (llama-cpp-python): only its
    /// refusal of a prompt over `window` names it (OpenAI's 400).
    Silent {
        /// The window.
        window: usize,
    },
}

impl LocalServer {
    /// The window a request gets.
    pub fn window(self) -> usize {
        match self {
            Self::LlamaServer { n_ctx } => n_ctx,
            Self::Vllm { max_model_len } => max_model_len,
            Self::Ollama { num_ctx, trained } => num_ctx.unwrap_or(trained.min(4_096)),
            Self::Silent { window } => window,
        }
    }

    /// The answer to a request about the server rather than a chat (`GET /props`, the model
    /// list, `POST /api/show`, `GET /api/ps`), as `(status, body)`; `None` for a chat.
    pub(super) fn info(self, request: &RecordedRequest, models: &[String]) -> Option<(u16, Value)> {
        let path = request.path.as_str();
        let not_found = (
            404,
            json!({"error": {"code": 404, "message": "File Not Found",
            "type": "not_found_error"}}),
        );
        if request.method == "GET" && path.ends_with("/models") {
            let data: Vec<Value> = models
                .iter()
                .map(|id| {
                    let mut entry = json!({"id": id, "object": "model", "owned_by": "mock"});
                    match self {
                        Self::LlamaServer { n_ctx } => {
                            entry["meta"] = json!({"n_ctx": n_ctx, "n_ctx_train": 8192});
                        }
                        Self::Vllm { max_model_len } => {
                            entry["max_model_len"] = json!(max_model_len);
                        }
                        _ => {}
                    }
                    entry
                })
                .collect();
            return Some((200, json!({"object": "list", "data": data})));
        }
        match (request.method.as_str(), path) {
            ("GET", "/props") => Some(match self {
                Self::LlamaServer { n_ctx } => (
                    200,
                    json!({"default_generation_settings": {"n_ctx": n_ctx}, "total_slots": 4,
                        "chat_template_caps": {"supports_tools": true}}),
                ),
                _ => not_found,
            }),
            ("POST", "/api/show") => Some(match self {
                Self::Ollama { num_ctx, trained } => {
                    let mut parameters = "stop \"<|im_end|>\"".to_owned();
                    if let Some(num_ctx) = num_ctx {
                        parameters.push_str(&format!("\nnum_ctx                        {num_ctx}"));
                    }
                    (
                        200,
                        json!({"parameters": parameters, "model_info": {
                            "general.architecture": "qwen2", "qwen2.context_length": trained}}),
                    )
                }
                _ => not_found,
            }),
            ("GET", "/api/ps") => Some(match self {
                Self::Ollama { .. } => (200, json!({"models": []})),
                _ => not_found,
            }),
            _ => None,
        }
    }

    /// The 400 of a prompt of `tokens` over the window.
    pub(super) fn too_long(self, tokens: usize) -> Value {
        let window = self.window();
        match self {
            Self::LlamaServer { n_ctx } => json!({"error": {"code": 400,
                "message": format!("request ({tokens} tokens) exceeds the available context size \
                    ({n_ctx} tokens), try increasing it"),
                "type": "exceed_context_size_error", "n_prompt_tokens": tokens, "n_ctx": n_ctx}}),
            _ => json!({"error": {
                "message": format!("This model's maximum context length is {window} tokens. \
                    However, you requested {tokens} tokens ({tokens} in the messages, 0 in the \
                    completion). Please reduce the length of the messages or completion."),
                "type": "invalid_request_error", "param": "messages",
                "code": "context_length_exceeded"}}),
        }
    }
}

/// What a server's chat template shows the model of a request: the tool specs, and the
/// results of tool calls (a template without tool support drops the first and renders the
/// second as an empty turn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    /// Whether the tool specs reach the prompt.
    pub tools: bool,
    /// Whether tool results reach the prompt.
    pub results: bool,
}

impl Template {
    /// A template that shows everything.
    pub const FULL: Template = Template {
        tools: true,
        results: true,
    };
}

/// The prompt tokens of a chat-completions request as `template` renders it.
pub(super) fn prompt_tokens(body: &Value, template: Template) -> usize {
    let mut bytes = 0;
    let mut messages = 0;
    for message in body["messages"].as_array().into_iter().flatten() {
        messages += 1;
        if message["role"] == "tool" && !template.results {
            continue;
        }
        bytes += text_bytes(&message["content"]);
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            bytes += call["function"]["name"].as_str().map_or(0, str::len);
            bytes += call["function"]["arguments"].as_str().map_or(0, str::len);
        }
    }
    if template.tools
        && let Some(tools) = body["tools"].as_array()
    {
        bytes += tools
            .iter()
            .map(|tool| tool.to_string().len())
            .sum::<usize>();
    }
    bytes.div_ceil(4) + 4 * messages
}

fn text_bytes(content: &Value) -> usize {
    match content {
        Value::String(text) => text.len(),
        Value::Array(parts) => parts.iter().map(|p| text_bytes(&p["text"])).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_decides_what_the_prompt_counts() {
        let body = json!({"messages": [
            {"role": "user", "content": "a".repeat(400)},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function",
                "function": {"name": "read_file", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c", "content": "b".repeat(4_000)}],
            "tools": [{"type": "function", "function": {"name": "read_file",
                "description": "d".repeat(2_000), "parameters": {}}}]});
        let full = prompt_tokens(&body, Template::FULL);
        let bare = prompt_tokens(
            &body,
            Template {
                tools: false,
                results: false,
            },
        );
        assert!(full > bare + 1_400, "{full} {bare}");
        assert!((100..130).contains(&bare), "{bare}");
    }

    #[test]
    fn each_server_refuses_in_its_own_words() {
        let llama = LocalServer::LlamaServer { n_ctx: 2048 }.too_long(3000);
        assert_eq!(llama["error"]["type"], "exceed_context_size_error");
        assert_eq!(llama["error"]["n_ctx"], 2048);
        let vllm = LocalServer::Vllm {
            max_model_len: 4096,
        }
        .too_long(5000);
        assert!(
            vllm["error"]["message"]
                .as_str()
                .unwrap()
                .contains("maximum context length is 4096 tokens")
        );
    }
}
