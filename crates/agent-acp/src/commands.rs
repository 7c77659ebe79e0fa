//! The slash commands of a session: advertised to the client with `available_commands_update`
//! once a session is open, and run by the agent when a prompt starts with one. `/goal` is the
//! runner's (`agent_plan::goal_command`): `/goal TEXT [--check CMD]` gives the session a goal
//! and runs the turn that works on it, `/goal` alone says where the plan is, `/goal clear` drops
//! the goals set with it.

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, UnstructuredCommandInput,
};
use agent_plan::goal_command::{self, GoalRequest};
use agent_runner::AgentRunner;

/// The `/goal` command every session offers, first of those its update advertises (the
/// host's custom commands follow it).
pub(crate) fn goal_command() -> AvailableCommand {
    let hint = "what is to be achieved [--check CMD]";
    AvailableCommand::new(
        "goal",
        "Work until the goal is done (and its --check command exits 0); alone: where the plan \
         is; `clear`: drop it",
    )
    .input(AvailableCommandInput::Unstructured(
        UnstructuredCommandInput::new(hint),
    ))
}

/// The arguments of a `/goal` prompt (what follows the command's name), or `None` for any
/// other prompt.
pub(crate) fn goal_args(prompt: &str) -> Option<&str> {
    let rest = prompt.trim_start().strip_prefix("/goal")?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then_some(rest.trim())
}

/// What a `/goal` prompt comes to.
pub(crate) enum GoalTurn {
    /// Say this and end the turn.
    Say(String),
    /// Run the turn with this message (the goal is in the plan; the trace exists).
    Work(String),
}

/// Carries out `/goal args` on session `id` (`created`: whether its trace exists yet).
pub(crate) async fn goal(
    runner: &AgentRunner,
    id: &str,
    created: bool,
    args: &str,
) -> Result<GoalTurn, String> {
    let store = runner.store();
    match goal_command::parse(args).map_err(|e| e.to_string())? {
        GoalRequest::Set(goal) => {
            if !created {
                runner
                    .create_as(id, &goal.text)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            let set = goal_command::add_goal(store.as_ref(), id, &goal)
                .await
                .map_err(|e| e.to_string())?;
            Ok(GoalTurn::Work(set.message))
        }
        _ if !created => Ok(GoalTurn::Say(
            "No goal yet: /goal TEXT [--check CMD] sets one.".to_owned(),
        )),
        GoalRequest::Show => {
            let tree = store.get_goal_tree(id).await.map_err(|e| e.to_string())?;
            Ok(GoalTurn::Say(goal_command::status(
                &tree.unwrap_or_default(),
            )))
        }
        GoalRequest::Clear => {
            let cleared = goal_command::clear(runner, id)
                .await
                .map_err(|e| e.to_string())?;
            Ok(GoalTurn::Say(match cleared.is_empty() {
                true => "No goal set with /goal is open.".to_owned(),
                false => format!("Abandoned: {}.", cleared.join("; ")),
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_goal_command_is_read_as_one() {
        assert_eq!(
            goal_args("/goal Ship it --check make"),
            Some("Ship it --check make")
        );
        assert_eq!(goal_args("  /goal"), Some(""));
        assert_eq!(goal_args("/goals"), None);
        assert_eq!(goal_args("reach the /goal"), None);
    }
}
