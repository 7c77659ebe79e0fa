//! What the model is told of the `explore` and `delegate` tools: their descriptions and the
//! JSON schemas of their parameters. The runner runs them; this is only their wording, beside
//! the goal tool's (`agent_goal`'s `tool.rs`).

use serde_json::{Value, json};

/// `explore`'s description; its branches have read-only tools when `read_only`.
pub fn explore_description(read_only: bool) -> String {
    let tools = if read_only {
        "with read-only tools"
    } else {
        "with their own tool set"
    };
    format!(
        "Try several approaches at once. Each branch runs as a separate sub-agent {tools}, with \
         its own plan and context, side by side with the others; it starts from `background` \
         when given, else from this conversation. When every branch has finished you get one \
         merged report with each branch's status and final answer. Use it to compare \
         alternatives before committing to one."
    )
}

/// `explore`'s parameters, with `agent` (see [`agent_parameter`]).
pub fn explore_parameters(agent: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "branches": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "description": "One description per branch: the approach it tries."
            },
            "background": {
                "type": "string",
                "description": "What every branch should know; this conversation when omitted."
            },
            "agent": agent
        },
        "required": ["branches"],
        "additionalProperties": false
    })
}

/// `delegate`'s description.
pub const DELEGATE_DESCRIPTION: &str = "Hand a self-contained sub-task to a sub-agent, which \
    runs it to completion with its own plan and context and returns its final answer and plan. \
    It does not see this conversation: put everything it needs into `task`. With `background`, \
    the call answers at once and the result comes as a message when the sub-agent ends.";

/// `delegate`'s parameters, with `agent` (see [`agent_parameter`]).
pub fn delegate_parameters(agent: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "task": {"type": "string", "description": "The task, with all the context it needs."},
            "agent": agent,
            "background": {"type": "boolean", "description": "Run it beside this conversation and go on meanwhile (default false)."}
        },
        "required": ["task"],
        "additionalProperties": false
    })
}

/// The optional `agent` parameter of `tool`: the profiles a call may name (name, what it is
/// for), the default being the one named like the tool.
pub fn agent_parameter(tool: &str, profiles: &[(&str, &str)]) -> Value {
    let names: Vec<&str> = profiles.iter().map(|(name, _)| *name).collect();
    let list: Vec<String> = profiles
        .iter()
        .map(|(name, description)| format!("`{name}`: {description}"))
        .collect();
    json!({
        "type": "string",
        "enum": names,
        "description": format!(
            "The agent profile that does the work (default `{tool}`). {}",
            list.join(" ")
        )
    })
}
