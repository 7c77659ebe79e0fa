//! Prompt caching: how much of each prompt of the long scripted task a provider's prompt cache
//! could serve, with the plan in a system message of its own (what the runner sends) and with
//! the plan in the system prompt's single block (what it sent before).
//!
//! A prompt token is *cache-eligible* when it belongs to the prefix the request shares with the
//! previous request of the same conversation, counted in whole units: the tool specs, then each
//! message (so a message that changes ends the prefix, as a changed block ends an Anthropic
//! cache hit). Both layouts are measured on the same run: the single-block requests are the
//! recorded requests with their leading system messages joined, exactly as they were sent before
//! the split. The main line is measured; explore branches are conversations of their own.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use agent_e2e::{ListModel, long_task};
use agent_llm::{
    ChatMessage, ChatRequest, ChatResponse, ChatStream, LlmClient, LlmError, ModelInfo,
    estimate_message_tokens, estimate_tools_tokens,
};
use anyhow::Result;
use async_trait::async_trait;

use crate::economy::{LONG_TASK, run_long_task};
use crate::stats::count;

/// Prompt tokens of the main line, and the cache-eligible part, for one layout.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Share {
    /// Model calls measured.
    pub(crate) calls: usize,
    /// Estimated prompt tokens of every call.
    pub(crate) prompt: usize,
    /// The tokens of the prefix each call shares with the call before it.
    pub(crate) eligible: usize,
}

impl Share {
    fn percent(&self) -> f64 {
        if self.prompt == 0 {
            0.0
        } else {
            100.0 * self.eligible as f64 / self.prompt as f64
        }
    }
}

/// The last request of one layout as units: (hash, tokens) of the tool specs, then of each
/// message.
#[derive(Default)]
struct Layout {
    previous: Vec<(u64, usize)>,
    share: Share,
}

impl Layout {
    fn add(&mut self, units: Vec<(u64, usize)>) {
        let shared: usize = units
            .iter()
            .zip(&self.previous)
            .take_while(|(now, before)| now.0 == before.0)
            .map(|(now, _)| now.1)
            .sum();
        self.share.calls += 1;
        self.share.prompt += units.iter().map(|u| u.1).sum::<usize>();
        self.share.eligible += shared;
        self.previous = units;
    }
}

/// A model that measures each main-line request in both layouts, then answers as `inner` does.
struct Measuring {
    inner: Arc<ListModel>,
    layouts: Mutex<(Layout, Layout)>,
}

impl Measuring {
    fn record(&self, request: &ChatRequest) {
        let first_user = request.messages.iter().find_map(|m| match m {
            ChatMessage::User(text) => Some(text.as_str()),
            _ => None,
        });
        if first_user != Some(LONG_TASK) {
            return;
        }
        let split = units(request, &request.messages);
        let joined = units(request, &join_leading_system(&request.messages));
        if let Ok(mut layouts) = self.layouts.lock() {
            layouts.0.add(split);
            layouts.1.add(joined);
        }
    }
}

/// The units of a request with `messages`: its tool specs, then each message.
fn units(request: &ChatRequest, messages: &[ChatMessage]) -> Vec<(u64, usize)> {
    let tools = (
        hash(&serde_json::to_string(&request.tools).unwrap_or_default()),
        estimate_tools_tokens(&request.tools),
    );
    std::iter::once(tools)
        .chain(messages.iter().map(|message| {
            (
                hash(&serde_json::to_string(message).unwrap_or_default()),
                estimate_message_tokens(message),
            )
        }))
        .collect()
}

/// The messages with the leading system messages joined into one, blank line between.
fn join_leading_system(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let leading = messages
        .iter()
        .take_while(|m| matches!(m, ChatMessage::System(_)))
        .count();
    let system: Vec<&str> = messages[..leading].iter().map(ChatMessage::text).collect();
    let mut out = vec![ChatMessage::system(system.join("\n\n"))];
    out.extend_from_slice(&messages[leading..]);
    out
}

fn hash(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

#[async_trait]
impl LlmClient for Measuring {
    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        self.record(&request);
        self.inner.stream(request).await
    }

    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        self.record(&request);
        self.inner.complete(request).await
    }

    fn model_info(&self, model: &str) -> ModelInfo {
        self.inner.model_info(model)
    }
}

/// One measured system prompt: its name, its size, and the shares of both layouts.
pub(crate) struct CacheRow {
    /// Which prompt.
    pub(crate) prompt: &'static str,
    /// Its estimated tokens.
    pub(crate) prompt_tokens: usize,
    /// The plan in its own system message.
    pub(crate) split: Share,
    /// The plan in the single system block.
    pub(crate) single: Share,
}

/// A system prompt of about 4,000 tokens, the size of a coding agent's instructions.
fn long_prompt() -> String {
    let rule = "Before you change a file, read it and the tests that cover it; keep changes small \
                and explain each in the goal's summary; run the tests after every change and \
                never leave them failing. ";
    format!(
        "{}\n\n{}",
        agent_runner::DEFAULT_SYSTEM_PROMPT,
        rule.repeat(100)
    )
}

/// The cache-eligible share of the long task's prompts, with the runner's default system prompt
/// and with a long one.
pub(crate) async fn measure(goals: usize, calls: usize) -> Result<Vec<CacheRow>> {
    eprintln!("agent-bench: cache-eligible share of the prompts");
    let prompts = [
        ("default", agent_runner::DEFAULT_SYSTEM_PROMPT.to_owned()),
        ("long", long_prompt()),
    ];
    let mut rows = Vec::new();
    for (name, prompt) in prompts {
        let (split, single) = run(goals, calls, &prompt).await?;
        rows.push(CacheRow {
            prompt: name,
            prompt_tokens: agent_llm::estimate_tokens(&prompt),
            split,
            single,
        });
    }
    Ok(rows)
}

/// One run of the long task with `prompt`; the shares of both layouts.
async fn run(goals: usize, calls: usize, prompt: &str) -> Result<(Share, Share)> {
    let task = long_task(goals, calls);
    let llm = Arc::new(Measuring {
        inner: Arc::new(task.model(1_000_000_000)),
        layouts: Mutex::new((Layout::default(), Layout::default())),
    });
    run_long_task(llm.clone(), |options| {
        options.system_prompt = prompt.to_owned();
    })
    .await?;
    let layouts = llm
        .layouts
        .lock()
        .map_err(|_| anyhow::anyhow!("the measurements were poisoned"))?;
    Ok((layouts.0.share, layouts.1.share))
}

/// The rows of the report's summary table: the share with each system prompt, ours against
/// the single block.
pub(crate) fn summary_rows(rows: &[CacheRow]) -> String {
    rows.iter()
        .map(|row| {
            format!(
                "| 5. caching | cache-eligible share of the prompt tokens, {} system prompt (~{} tokens): plan in its own message vs in the single system block | {:.1}% | {:.1}% | {:+.1} points |\n",
                row.prompt,
                count(row.prompt_tokens as f64),
                row.split.percent(),
                row.single.percent(),
                row.split.percent() - row.single.percent(),
            )
        })
        .collect()
}

/// The report's section: the table and how to read it.
pub(crate) fn section(rows: &[CacheRow]) -> String {
    let mut table = String::new();
    for row in rows {
        for (layout, share) in [
            ("plan in its own system message (ours)", &row.split),
            ("plan in the single system block", &row.single),
        ] {
            table.push_str(&format!(
                "| {}, ~{} tokens | {layout} | {} | {} | {} | {:.1}% |\n",
                row.prompt,
                count(row.prompt_tokens as f64),
                share.calls,
                count(share.prompt as f64),
                count(share.eligible as f64),
                share.percent()
            ));
        }
    }
    format!(
        "\n## 5. Prompt caching\n\n\
         The share of the long task's prompt tokens (section 2's task, main line, goal compaction \
         and prune) that a prompt cache could serve: the prefix each request shares with the one \
         before it, in whole units (the tool specs, then each message), as an Anthropic cache hit \
         ends at the first changed block and an OpenAI-compatible one at the first changed byte. \
         For each system prompt both rows are the same run; the second joins the system prompt \
         and the plan into one system message, as the runner sent them before the plan had a \
         message of its own. The model is scripted and the estimate deterministic, so these \
         figures are exact, not medians.\n\n\
         | system prompt | layout | model calls | prompt tokens | cache-eligible | share |\n\
         |---|---|---:|---:|---:|---:|\n{table}\n\
         The plan comes before the conversation (SPEC §3), so a plan change ends the shared \
         prefix in both layouts; with the plan apart, the tool specs and the system prompt are \
         still shared. The gain is therefore the system prompt's size times the number of plan \
         changes: small with the short default prompt, larger with instructions of a coding \
         agent's size (the long prompt), and larger again on tasks whose plan changes more \
         often per call. What stays uncached in both layouts is each call's new messages, the plan when \
         it changed, and, after each finished goal, everything after the summary that replaced \
         the goal's messages: the price of a short context, which section 2 shows to be far the \
         larger saving.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_separate_plan_keeps_more_of_each_prompt_cacheable() {
        let rows = measure(4, 6).await.unwrap();
        for row in &rows {
            let (split, single) = (&row.split, &row.single);
            assert_eq!(split.calls, single.calls);
            assert!(split.calls > 20, "{split:?}");
            assert!(split.eligible > single.eligible, "{split:?} {single:?}");
            assert!(split.percent() > 50.0, "{split:?}");
        }
        // The longer the prompt, the more the split saves.
        let gain = |row: &CacheRow| row.split.percent() - row.single.percent();
        assert!(gain(&rows[1]) > gain(&rows[0]));
        let text = section(&rows);
        assert!(
            text.contains("| plan in its own system message (ours) |"),
            "{text}"
        );
    }
}
