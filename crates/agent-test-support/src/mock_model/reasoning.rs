//! Reasoning on the mock server: what a [`Turn`](super::Turn) thinks and how each format
//! renders it (`reasoning_content` or `reasoning` on OpenAI-compatible messages, signed
//! `thinking` and `redacted_thinking` blocks on Anthropic ones), and the documented rules of
//! the providers about reasoning sent back:
//!
//! - DeepSeek thinking mode (a server option, [`MockModelServer::deepseek_thinking`]): every
//!   answer carries `reasoning_content`, and an assistant message with `tool_calls` must carry
//!   its `reasoning_content` back (HTTP 400 `Missing \`reasoning_content\` field` otherwise),
//!   unchanged when this server issued it.
//! - Anthropic (always, as the real API does): `thinking` needs `budget_tokens` of at least
//!   1,024 and below `max_tokens`, and no temperature but 1; a thinking block's signature must
//!   be the one the server gave it, and a redacted block's data unchanged; with thinking
//!   enabled, the last assistant turn of a tool use must start with its thinking block.
//!
//! [`MockModelServer::deepseek_thinking`]: super::MockModelServer::deepseek_thinking

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::{RecordedRequest, WireFormat, lock};

/// The secret the server signs its thinking blocks with.
const SECRET: &str = "mock-model-server-thinking-secret";

/// The reasoning of a turn when DeepSeek thinking mode is on and the turn scripts none.
pub const DEFAULT_REASONING: &str = "The user wants an answer; I will work it out step by step.";

/// One piece of reasoning a turn carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Thought {
    /// Reasoning text: the OpenAI-compatible message field it goes in, and a signed `thinking`
    /// block for Anthropic.
    Text {
        /// `reasoning_content` or `reasoning`.
        field: String,
        /// The reasoning.
        text: String,
    },
    /// An Anthropic `redacted_thinking` block (not rendered for OpenAI-compatible requests).
    Redacted(String),
}

/// The signature of a thinking text: a keyed FNV-1a hash, as a client cannot forge it.
pub fn signature(thinking: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in SECRET.bytes().chain([0]).chain(thinking.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("sig_{hash:016x}")
}

/// The data of a redacted thinking block as the server sends it: the payload and its
/// signature.
fn sealed(data: &str) -> String {
    format!("{data}.{}", signature(data))
}

fn unsealed(data: &str) -> bool {
    data.rsplit_once('.')
        .is_some_and(|(payload, mac)| signature(payload) == mac)
}

/// The reasoning fields of an OpenAI-compatible message: each field's text, joined.
pub(super) fn openai_fields(thoughts: &[Thought]) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> = Vec::new();
    for thought in thoughts {
        if let Thought::Text { field, text } = thought {
            match fields.iter_mut().find(|(name, _)| name == field) {
                Some((_, joined)) => joined.push_str(text),
                None => fields.push((field.clone(), text.clone())),
            }
        }
    }
    fields
}

/// The Anthropic blocks of these thoughts, signed.
pub(super) fn anthropic_blocks(thoughts: &[Thought]) -> Vec<Value> {
    thoughts
        .iter()
        .map(|thought| match thought {
            Thought::Text { text, .. } => {
                json!({"type": "thinking", "thinking": text, "signature": signature(text)})
            }
            Thought::Redacted(data) => json!({"type": "redacted_thinking", "data": sealed(data)}),
        })
        .collect()
}

/// The server's reasoning state: the DeepSeek thinking-mode switch and the reasoning it gave
/// with each tool call.
#[derive(Debug, Default)]
pub(super) struct ReasoningState {
    deepseek: AtomicBool,
    issued: Mutex<HashMap<String, String>>,
}

impl ReasoningState {
    /// Turns DeepSeek thinking mode on.
    pub(super) fn deepseek_thinking(&self) {
        self.deepseek.store(true, Ordering::SeqCst);
    }

    /// Whether DeepSeek thinking mode is on.
    pub(super) fn deepseek(&self) -> bool {
        self.deepseek.load(Ordering::SeqCst)
    }

    /// Remembers the `reasoning_content` the server gave with each of a turn's tool calls.
    pub(super) fn issued<'a>(&self, ids: impl Iterator<Item = &'a str>, text: &str) {
        let mut issued = lock(&self.issued);
        for id in ids {
            issued.insert(id.to_owned(), text.to_owned());
        }
    }

    /// The first reasoning rule the request breaks.
    pub(super) fn check(&self, request: &RecordedRequest) -> Result<(), String> {
        match request.format() {
            Some(WireFormat::OpenAi) if self.deepseek.load(Ordering::SeqCst) => {
                self.deepseek_rule(&request.body)
            }
            Some(WireFormat::Anthropic) => anthropic(&request.body),
            _ => Ok(()),
        }
    }

    fn deepseek_rule(&self, body: &Value) -> Result<(), String> {
        let issued = lock(&self.issued);
        for (index, message) in body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let calls = message["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if message["role"] != "assistant" || calls.is_empty() {
                continue;
            }
            let Some(sent) = message["reasoning_content"].as_str() else {
                return Err(format!(
                    "Missing `reasoning_content` field in the assistant message at message index \
                     {index}. For more information, please refer to \
                     https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
                ));
            };
            for call in &calls {
                if let Some(given) = issued.get(call["id"].as_str().unwrap_or_default())
                    && given != sent
                {
                    return Err(format!(
                        "messages[{index}]: `reasoning_content` differs from the reasoning that \
                         came with the tool call"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Anthropic's documented rules about extended thinking.
fn anthropic(body: &Value) -> Result<(), String> {
    let thinking = body.get("thinking").filter(|t| t["type"] == "enabled");
    if let Some(thinking) = thinking {
        let budget = thinking["budget_tokens"].as_u64().unwrap_or(0);
        if budget < 1_024 {
            return Err(
                "thinking.enabled.budget_tokens: Input should be greater than or equal \
                        to 1024"
                    .into(),
            );
        }
        if body["max_tokens"].as_u64().unwrap_or(0) <= budget {
            return Err("`max_tokens` must be greater than `thinking.budget_tokens`".into());
        }
        if body
            .get("temperature")
            .is_some_and(|t| t.as_f64() != Some(1.0))
        {
            return Err("`temperature` may only be set to 1 when thinking is enabled".into());
        }
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    for (index, message) in messages.iter().enumerate() {
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        for (at, block) in blocks.iter().enumerate() {
            let place = format!("messages.{index}.content.{at}");
            match block["type"].as_str() {
                Some("thinking") => {
                    let text = block["thinking"].as_str().unwrap_or_default();
                    if block["signature"].as_str() != Some(signature(text).as_str()) {
                        return Err(format!("{place}: Invalid `signature` in `thinking` block"));
                    }
                }
                Some("redacted_thinking") => {
                    if !unsealed(block["data"].as_str().unwrap_or_default()) {
                        return Err(format!(
                            "{place}: Invalid `data` in `redacted_thinking` block"
                        ));
                    }
                }
                _ => continue,
            }
            if message["role"] != "assistant" {
                return Err(format!(
                    "{place}: thinking blocks are only allowed in assistant messages"
                ));
            }
        }
    }
    if thinking.is_none() {
        return Ok(());
    }
    let last_assistant = messages
        .iter()
        .enumerate()
        .rev()
        .find(|(_, m)| m["role"] == "assistant");
    if let Some((index, message)) = last_assistant {
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        let uses_tools = blocks.iter().any(|b| b["type"] == "tool_use");
        let first = blocks
            .first()
            .and_then(|b| b["type"].as_str())
            .unwrap_or("");
        if uses_tools && !matches!(first, "thinking" | "redacted_thinking") {
            return Err(format!(
                "messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, \
                 but found `{first}`. When `thinking` is enabled, a final `assistant` message \
                 must start with a thinking block (preceeding the lastmost set of `tool_use` and \
                 `tool_result` blocks). We recommend you include thinking blocks from previous \
                 turns. To avoid this requirement, disable `thinking`."
            ));
        }
    }
    Ok(())
}
