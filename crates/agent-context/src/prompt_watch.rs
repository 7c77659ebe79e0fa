//! Whether the server shows the model what the agent sends, told from the prompt tokens it
//! reports against the agent's estimates. A chat template without tool support drops the tool
//! specs from the prompt (the model cannot call what it was never shown), or renders a tool
//! result as an empty turn (the model answers without reading it); the server accepts the
//! request either way, and the run would look fine while the model works blind.
//!
//! - tools: the server's count of a request is under half of the agent's estimate of its tool
//!   specs alone;
//! - results: between two calls whose view only grew, by tool results of some size, the
//!   server's count grew by less than a quarter of them.
//!
//! Each is said once per run, with the usual fix.

use agent_execution::NoticeKind;

use crate::window::thousands;

/// The fix, for both.
const FIX: &str = "for llama.cpp's llama-server, start it with --jinja (it then renders tools \
and their results with the model's own template, or a generic one); for llama-cpp-python, use \
a chat format or a Jinja template that supports tools (see the README's section on local \
servers)";

/// Tool specs smaller than this are not checked: a count that small is within the estimate's
/// error.
const LEAST_TOOLS: usize = 200;
/// Tool results smaller than this are not checked.
const LEAST_RESULTS: usize = 150;

/// One model call as the checks see it.
///
/// ```
/// use agent_context::prompt_watch::{Call, PromptWatch};
/// let mut watch = PromptWatch::default();
/// let call = Call { reported: Some(233), estimated: 2_100, tools: 1_975, tool_count: 10, results: 0 };
/// assert_eq!(watch.after(call).len(), 1, "the tools never reached the prompt");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// The prompt tokens the server reported, when it reported them.
    pub reported: Option<u64>,
    /// The agent's estimate of the whole request.
    pub estimated: usize,
    /// The agent's estimate of the request's tool specs.
    pub tools: usize,
    /// How many tools the request offered.
    pub tool_count: usize,
    /// The agent's estimate of the tool results recorded since the previous call.
    pub results: usize,
}

/// What the checks remember between the calls of a run.
#[derive(Debug, Default)]
pub struct PromptWatch {
    /// The previous call's reported count and estimate.
    last: Option<(u64, usize)>,
    tools_told: bool,
    results_told: bool,
}

impl PromptWatch {
    /// Takes one call into account; returns what to tell, at most once per kind and run.
    pub fn after(&mut self, call: Call) -> Vec<(NoticeKind, String)> {
        let mut told = Vec::new();
        let Some(reported) = call.reported else {
            self.last = None;
            return told;
        };
        if !self.tools_told && call.tools >= LEAST_TOOLS && (reported as usize) * 2 < call.tools {
            self.tools_told = true;
            told.push((
                NoticeKind::ToolsNotShown,
                format!(
                    "the server counted {} prompt tokens for a request whose {} tool specs alone \
                     take about {}: its chat template is not showing the model its tools, so it \
                     cannot call them; {FIX}",
                    thousands(reported as usize),
                    call.tool_count,
                    thousands(call.tools),
                ),
            ));
        }
        if let Some((last_reported, last_estimated)) = self.last
            && !self.results_told
            && call.results >= LEAST_RESULTS
            && call.estimated >= last_estimated + call.results / 2
        {
            let grew = reported.saturating_sub(last_reported) as usize;
            if grew < call.results / 4 {
                self.results_told = true;
                told.push((
                    NoticeKind::ResultsNotShown,
                    format!(
                        "the server's prompt grew by {} tokens after tool results of about {}: \
                         its chat template is not showing the model the results of its tools, \
                         so it answers without reading them; {FIX}",
                        thousands(grew),
                        thousands(call.results),
                    ),
                ));
            }
        }
        self.last = Some((reported, call.estimated));
        told
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(reported: Option<u64>, estimated: usize, results: usize) -> Call {
        Call {
            reported,
            estimated,
            tools: 1_975,
            tool_count: 10,
            results,
        }
    }

    #[test]
    fn dropped_tools_are_told_once() {
        let mut watch = PromptWatch::default();
        let told = watch.after(call(Some(233), 2_100, 0));
        assert_eq!(told.len(), 1);
        assert_eq!(told[0].0, NoticeKind::ToolsNotShown);
        assert!(told[0].1.contains("233 prompt tokens"), "{}", told[0].1);
        assert!(told[0].1.contains("10 tool specs"), "{}", told[0].1);
        assert!(told[0].1.contains("--jinja"), "{}", told[0].1);
        assert!(watch.after(call(Some(240), 2_200, 0)).is_empty());
    }

    #[test]
    fn results_that_add_nothing_to_the_prompt_are_told() {
        let mut watch = PromptWatch::default();
        assert!(watch.after(call(Some(2_300), 2_100, 0)).is_empty());
        let told = watch.after(call(Some(2_320), 4_700, 2_500));
        assert_eq!(told.len(), 1);
        assert_eq!(told[0].0, NoticeKind::ResultsNotShown);
        assert!(told[0].1.contains("grew by 20 tokens"), "{}", told[0].1);
    }

    #[test]
    fn results_the_prompt_grows_by_and_compacted_views_are_not_told() {
        let mut watch = PromptWatch::default();
        assert!(watch.after(call(Some(2_300), 2_100, 0)).is_empty());
        assert!(watch.after(call(Some(4_800), 4_700, 2_500)).is_empty());
        // A compaction between the calls: the view shrank, nothing to compare.
        assert!(watch.after(call(Some(2_400), 2_300, 2_500)).is_empty());
        // No reported count: nothing to compare with next time either.
        assert!(watch.after(call(None, 4_800, 2_500)).is_empty());
        assert!(watch.after(call(Some(2_401), 7_300, 2_500)).is_empty());
    }
}
