//! The model call a tool's call took (a provider's web search): its tokens and cost ride on the
//! tool's output ([`ToolOutput::with_usage`]) to the runner, which records them on the tool's
//! message ([`take_usage`]), so the run's totals and its cost budget count them.

use crate::ToolOutput;

impl ToolOutput {
    /// The same output, saying the call took a model call of `tokens` tokens costing `cost`
    /// dollars (a provider's web search): the runner records them on the tool's message
    /// ([`TOOL_USAGE`], taken back by [`take_usage`]), so the run's totals and its cost budget
    /// count them.
    #[must_use]
    pub fn with_usage(mut self, tokens: u64, cost: f64) -> Self {
        let usage = serde_json::json!({"tokens": tokens, "cost": cost});
        self.metadata.insert(TOOL_USAGE.to_owned(), usage);
        self
    }
}

/// The metadata key of a tool output whose call took a model call: `{"tokens", "cost"}`
/// ([`ToolOutput::with_usage`]).
pub const TOOL_USAGE: &str = "tool_usage";

/// Takes the tokens and cost [`ToolOutput::with_usage`] put in `metadata` out of it.
///
/// ```
/// let mut output = agent_tools::ToolOutput::text("found").with_usage(1_200, 0.004);
/// assert_eq!(agent_tools::take_usage(&mut output.metadata), Some((1_200, 0.004)));
/// assert!(output.metadata.is_empty());
/// ```
pub fn take_usage(metadata: &mut serde_json::Map<String, serde_json::Value>) -> Option<(u64, f64)> {
    let usage = metadata.remove(TOOL_USAGE)?;
    let tokens = usage.get("tokens").and_then(serde_json::Value::as_u64)?;
    let cost = usage.get("cost").and_then(serde_json::Value::as_f64)?;
    Some((tokens, cost.max(0.0)))
}
