//! The model's context window against what every request carries: the floor of a request (the
//! parts no compaction removes: the tool specs, the system prompt, the plan and the task), the
//! room kept for an answer and for a summary, whether a full compaction can help, and the words
//! of what a run tells a person about its window. All pure: the runner decides with these and
//! makes the calls.
//!
//! A window too small for the floor with room for an answer cannot be helped by compacting: the
//! run stops before its next call with an error that names each part, its size, the window and
//! where that figure came from, and what helps ([`too_small`]). A floor that fits, but leaves a
//! summary no room under the compaction threshold ([`pruning_only`]), would have the run
//! summarise before every step (throwing each tool result away before the model read it): the
//! run then compacts only when a request would not fit the window at all
//! ([`compaction_due`]), and says so once ([`pruning_only_notice`]).

use agent_llm::{ChatMessage, ContextWindow, WindowSource};

use crate::compaction::{ContextBudget, estimate_chat};

/// The most tokens kept free for an answer when the agent sets no `max_tokens`.
pub const MAX_ANSWER_ROOM: usize = 4_096;

/// The tokens kept free for the answer: the agent's `max_tokens` (the budget's
/// `answer_tokens`), else an eighth of the window, at most [`MAX_ANSWER_ROOM`].
///
/// ```
/// let budget = agent_context::ContextBudget::for_window(2_048);
/// assert_eq!(agent_context::window::answer_room(&budget), 256);
/// ```
pub fn answer_room(budget: &ContextBudget) -> usize {
    match budget.answer_tokens {
        0 => (budget.context_window / 8).min(MAX_ANSWER_ROOM),
        set => set,
    }
}

/// The longest summary a full compaction asks for (its `max_tokens`): an eighth of the window,
/// between 256 and 8,192 tokens.
pub fn summary_cap(window: usize) -> u32 {
    (window / 8).clamp(256, 8_192) as u32
}

/// What a run keeps about its window from step to step: the window a refusal stated (when
/// smaller than the one in use), and which of the notices given once a run were given.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RunWindows {
    /// The window a refusal stated.
    pub refused: Option<ContextWindow>,
    /// Whether the run said that its floor leaves no room to compact ([`pruning_only_notice`]).
    pub floor_told: bool,
    /// Whether the run said that it leaves its oldest messages out of its requests
    /// ([`crate::leave_out::leave_out_for`]).
    pub left_out_told: bool,
}

/// What every request carries whatever compaction does, part by part, in estimated tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Floor {
    /// The system prompt (the first system message, when there are two).
    pub system_prompt: usize,
    /// The plan (the last leading system message).
    pub plan: usize,
    /// The tool specs.
    pub tools: usize,
    /// How many tools.
    pub tool_count: usize,
    /// The task (the first message after the system messages).
    pub task: usize,
}

impl Floor {
    /// The floor of `view`, whose tool specs (`tool_count` of them) weigh the budget's
    /// `request_tokens`.
    pub fn of(view: &[ChatMessage], budget: &ContextBudget, tool_count: usize) -> Self {
        let leading = view
            .iter()
            .take_while(|m| matches!(m, ChatMessage::System(_)))
            .count();
        let weigh = |messages: &[ChatMessage]| estimate_chat(messages, &agent_llm::estimate_tokens);
        let (system_prompt, plan) = match leading {
            0 => (0, 0),
            1 => (0, weigh(&view[..1])),
            n => (weigh(&view[..n - 1]), weigh(&view[n - 1..n])),
        };
        let task = view
            .get(leading)
            .map_or(0, |task| weigh(std::slice::from_ref(task)));
        Self {
            system_prompt,
            plan,
            tools: budget.request_tokens,
            tool_count,
            task,
        }
    }

    /// The whole floor.
    pub fn total(&self) -> usize {
        self.system_prompt + self.plan + self.tools + self.task
    }

    /// Whether it fits the window with room for the answer.
    pub fn fits(&self, budget: &ContextBudget) -> bool {
        self.total() + answer_room(budget) <= budget.context_window
    }

    /// Fails, with [`too_small`]'s error, when it does not fit the window with room for the
    /// answer.
    pub fn check(&self, budget: &ContextBudget, window: ContextWindow) -> Result<(), String> {
        match self.fits(budget) {
            true => Ok(()),
            false => Err(too_small(self, budget, window)),
        }
    }

    /// The parts in words: `the system prompt 412, the 10 tool specs 1,450, the plan 35 and
    /// the task 60 tokens`.
    fn parts(&self) -> String {
        let tools = match self.tool_count {
            1 => "the tool spec".to_owned(),
            n => format!("the {n} tool specs"),
        };
        let mut parts: Vec<String> = Vec::new();
        if self.system_prompt > 0 {
            parts.push(format!(
                "the system prompt {}",
                thousands(self.system_prompt)
            ));
        }
        if self.tools > 0 {
            parts.push(format!("{tools} {}", thousands(self.tools)));
        }
        parts.push(format!("the plan {}", thousands(self.plan)));
        parts.push(format!("the task {}", thousands(self.task)));
        let last = parts.pop().unwrap_or_default();
        format!("{} and {last} tokens", parts.join(", "))
    }
}

/// Whether a full compaction is worth making now. A view over the compaction threshold is
/// compacted, unless the floor and the longest summary already reach the threshold: the
/// summary could not bring the request under it, so the run compacts only when the request
/// would not fit the window with room for the answer.
pub fn compaction_due(estimated: usize, floor: &Floor, budget: &ContextBudget) -> bool {
    if estimated <= budget.compaction_threshold() {
        return false;
    }
    if pruning_only(floor, budget) {
        return estimated + answer_room(budget) > budget.context_window;
    }
    true
}

/// Whether the floor and the longest summary reach the compaction threshold (see
/// [`compaction_due`]).
pub fn pruning_only(floor: &Floor, budget: &ContextBudget) -> bool {
    floor.total() + summary_cap(budget.context_window) as usize > budget.compaction_threshold()
}

/// What a run is told once when [`pruning_only`] holds.
pub fn pruning_only_notice(floor: &Floor, budget: &ContextBudget, window: ContextWindow) -> String {
    format!(
        "what every request carries ({}) takes {} of the model's {}-token window ({}), past the \
         compaction threshold of {}: the conversation is summarised only when a request would \
         not fit the window. For more room to work, offer fewer tools (a profile's tools) or \
         use a larger window{}",
        floor.parts(),
        thousands(floor.total()),
        thousands(window.tokens),
        window.source.describe(),
        thousands(budget.compaction_threshold()),
        larger_window(window.source),
    )
}

/// The error of a window too small for the floor, naming the part that does not fit (the task,
/// the tools or the system prompt) with its size, the window and where it came from, and what
/// helps.
pub fn too_small(floor: &Floor, budget: &ContextBudget, window: ContextWindow) -> String {
    let room = answer_room(budget);
    let kept = if budget.answer_tokens > 0 {
        format!("{} kept for the answer (max_tokens)", thousands(room))
    } else {
        format!("{} kept for the answer", thousands(room))
    };
    let biggest = [floor.task, floor.tools, floor.system_prompt, floor.plan]
        .into_iter()
        .max()
        .unwrap_or(0);
    let advice = if biggest == floor.task {
        format!(
            "the task alone is {} tokens: put the long text in a file in the workspace and ask \
             the model to read it, or use a larger window{}",
            thousands(floor.task),
            larger_window(window.source)
        )
    } else if biggest == floor.tools {
        format!(
            "offer fewer tools (a profile's tools, or fewer MCP servers), or use a larger \
             window{}",
            larger_window(window.source)
        )
    } else {
        format!(
            "shorten the system prompt (--no-instructions, a shorter AGENTS.md), or use a \
             larger window{}",
            larger_window(window.source)
        )
    };
    format!(
        "context_window: what every request carries does not fit the model's window of {} \
         tokens (from {}): {} make {}, with {kept}; {advice}",
        thousands(window.tokens),
        window.source.describe(),
        floor.parts(),
        thousands(floor.total()),
    )
}

/// The error of a refusal that states no window, after which compaction could not make the
/// request smaller than the one refused (`refused` tokens by the estimate).
pub fn not_smaller(floor: &Floor, refused: usize, window: ContextWindow) -> String {
    format!(
        "context_window: the server refused a request of about {} tokens as over its window, \
         which it does not state (the run assumed {} tokens, from {}), and what every request \
         carries ({}) makes {}, so no compaction can make the request smaller; set \
         --context-window (or context_window in agent.toml) to the window the server runs the \
         model with, and offer fewer tools or use a larger window{}",
        thousands(refused),
        thousands(window.tokens),
        window.source.describe(),
        floor.parts(),
        thousands(floor.total()),
        larger_window(window.source),
    )
}

/// How to get a larger window, by where the window came from.
fn larger_window(source: WindowSource) -> &'static str {
    match source {
        WindowSource::Configured => {
            " (--context-window, or context_window in agent.toml, if the server takes more)"
        }
        WindowSource::Table => " (another model)",
        WindowSource::Ollama | WindowSource::OllamaDefault { .. } => {
            " (Ollama's num_ctx: PARAMETER num_ctx in a Modelfile, or OLLAMA_CONTEXT_LENGTH)"
        }
        _ => {
            " (start the server with a larger context: llama-server -c, llama-cpp-python \
             --n_ctx, vLLM --max-model-len, Ollama's num_ctx)"
        }
    }
}

/// What a run says of a window it learned from its server, or assumes (`None` for a window
/// from the configuration or the table of known models, which need no word).
pub fn window_told(model: &str, window: ContextWindow) -> Option<String> {
    let tokens = thousands(window.tokens);
    Some(match window.source {
        WindowSource::OllamaDefault { trained } => format!(
            "Ollama does not say the num_ctx of {model}: assuming its default window of {tokens} \
             tokens (the model takes up to {}); Ollama cuts longer prompts without saying so, so \
             set num_ctx (PARAMETER num_ctx in a Modelfile, or OLLAMA_CONTEXT_LENGTH) and \
             --context-window to the same value to use more",
            thousands(trained)
        ),
        WindowSource::Assumed => format!(
            "the server does not say the context window of {model} (asked /props, /v1/models \
             and /api/show): assuming {tokens} tokens until it refuses a request; set \
             --context-window or [models.\"{model}\"] context_window to the window the server \
             runs it with"
        ),
        source if source.is_server() => format!(
            "the context window of {model} is {tokens} tokens (from {})",
            source.describe()
        ),
        _ => return None,
    })
}

/// The window a refusal's `message` states, when smaller than the window `was` the refused
/// request of about `request` tokens was built for, with what the run says of it.
///
/// ```
/// use agent_llm::{ContextWindow, WindowSource};
/// let was = ContextWindow { tokens: 128_000, source: WindowSource::Assumed };
/// let message = "This model's maximum context length is 4096 tokens. However, you requested 9000";
/// let (window, told) = agent_context::window::refused(message, was, 9_000).unwrap();
/// assert_eq!((window.tokens, window.source), (4_096, WindowSource::Refusal));
/// assert!(told.contains("keeps to 4,096 tokens"));
/// ```
pub fn refused(
    message: &str,
    was: ContextWindow,
    request: usize,
) -> Option<(ContextWindow, String)> {
    let stated = agent_llm::stated_window(message).filter(|&stated| stated < was.tokens)?;
    let window = ContextWindow {
        tokens: stated,
        source: WindowSource::Refusal,
    };
    Some((window, refusal_told(stated, was, request)))
}

/// `window` in the agent's own estimate of tokens, after a refusal of a request the agent
/// estimated at `estimated` tokens: when the refusal's `message` says the server counted more,
/// the window is scaled down by as much (the agent's estimate undercounts this server's
/// tokenizer), so that a retry made to fit the estimate fits the server's count; else `window`.
///
/// ```
/// use agent_llm::{ContextWindow, WindowSource};
/// let window = ContextWindow { tokens: 4_096, source: WindowSource::Refusal };
/// let message = "request (4000 tokens) exceeds the available context size (4096 tokens)";
/// let scaled = agent_context::window::as_estimated(window, message, 3_000);
/// assert_eq!(scaled.tokens, 3_072);
/// assert_eq!(agent_context::window::as_estimated(window, "too long", 3_000), window);
/// ```
pub fn as_estimated(window: ContextWindow, message: &str, estimated: usize) -> ContextWindow {
    match agent_llm::stated_prompt(message) {
        Some(counted) if counted > estimated && estimated > 0 => ContextWindow {
            tokens: window.tokens * estimated / counted,
            ..window
        },
        _ => window,
    }
}

/// What a run says when a refusal states a window smaller than the one it used.
fn refusal_told(refused: usize, was: ContextWindow, request: usize) -> String {
    format!(
        "the server refused a request of about {} tokens as over its window of {} tokens \
         (the run assumed {} from {}): the run keeps to {} tokens from now on",
        thousands(request),
        thousands(refused),
        thousands(was.tokens),
        was.source.describe(),
        thousands(refused),
    )
}

/// `12,345`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(task: &str) -> Vec<ChatMessage> {
        vec![
            ChatMessage::System("You are an agent. ".repeat(20)),
            ChatMessage::System("## Current Plan".into()),
            ChatMessage::User(task.into()),
            ChatMessage::User("A long conversation. ".repeat(500)),
        ]
    }

    #[test]
    fn a_window_the_tools_fill_is_refused_naming_the_tools() {
        let mut budget = ContextBudget::for_window(2_048);
        budget.request_tokens = 1_450;
        let floor = Floor::of(&view("Do it"), &budget, 10);
        assert!((1_450..1_700).contains(&floor.total()), "{floor:?}");
        let window = ContextWindow {
            tokens: 2_048,
            source: WindowSource::LlamaCppProps,
        };
        assert!(floor.fits(&budget));
        budget.answer_tokens = 512;
        assert!(
            !floor.fits(&budget),
            "the tools, the prompt and the answer do not fit"
        );
        let error = too_small(&floor, &budget, window);
        assert!(
            error.contains("window of 2,048 tokens (from the server's /props)"),
            "{error}"
        );
        assert!(error.contains("the 10 tool specs 1,450"), "{error}");
        assert!(
            error.contains("512 kept for the answer (max_tokens)"),
            "{error}"
        );
        assert!(error.contains("offer fewer tools"), "{error}");
        assert!(error.contains("llama-server -c"), "{error}");
    }

    #[test]
    fn a_long_task_is_named_as_what_does_not_fit() {
        let mut budget = ContextBudget::for_window(2_048);
        budget.request_tokens = 900;
        let task = "The text to work on. ".repeat(2_000);
        let floor = Floor::of(&view(&task), &budget, 10);
        let window = ContextWindow {
            tokens: 2_048,
            source: WindowSource::Refusal,
        };
        assert!(
            !floor.fits(&budget),
            "a task of 10,000 tokens does not fit 2,048"
        );
        let error = too_small(&floor, &budget, window);
        assert!(error.contains("the task alone is"), "{error}");
        assert!(error.contains("refusal"), "{error}");
        assert!(!error.contains("128,000"), "{error}");
    }

    #[test]
    fn a_floor_near_the_threshold_compacts_only_what_would_not_fit() {
        let mut budget = ContextBudget::for_window(2_048);
        budget.request_tokens = 1_300;
        let floor = Floor::of(&view("Do it"), &budget, 10);
        assert!(pruning_only(&floor, &budget), "{floor:?}");
        let threshold = budget.compaction_threshold();
        assert!(!compaction_due(threshold + 100, &floor, &budget));
        assert!(compaction_due(2_000, &floor, &budget));
        budget.request_tokens = 200;
        let small = Floor::of(&view("Do it"), &budget, 2);
        assert!(!pruning_only(&small, &budget));
        assert!(compaction_due(threshold + 1, &small, &budget));
    }

    #[test]
    fn figures_have_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(128_000), "128,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn learned_and_assumed_windows_are_told_and_known_ones_are_not() {
        let told = |source| {
            window_told(
                "smollm2",
                ContextWindow {
                    tokens: 4_096,
                    source,
                },
            )
        };
        let props = told(WindowSource::LlamaCppProps).unwrap();
        assert!(
            props.contains("4,096 tokens (from the server's /props)"),
            "{props}"
        );
        let assumed = told(WindowSource::Assumed).unwrap();
        assert!(assumed.contains("does not say"), "{assumed}");
        assert!(assumed.contains("--context-window"), "{assumed}");
        let ollama = told(WindowSource::OllamaDefault { trained: 131_072 }).unwrap();
        assert!(
            ollama.contains("num_ctx") && ollama.contains("131,072"),
            "{ollama}"
        );
        assert_eq!(told(WindowSource::Table), None);
        assert_eq!(told(WindowSource::Configured), None);
    }
}
