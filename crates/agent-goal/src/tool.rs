//! The goal tool as the model is told of it: its description, the JSON schema of its parameters
//! (as JSON text: this crate depends on serde alone) and the limits that keep a plan small
//! enough to send with every model call ([`GoalCommand::size_error`]).

use crate::command::GoalCommand;

/// Goals one call may add. The plan is sent with every model call, so a runaway call must not
/// be able to make it huge.
pub const MAX_GOALS_PER_CALL: usize = 50;
/// Goals a plan may hold, abandoned ones included.
pub const MAX_PLAN_GOALS: usize = 1000;
/// Characters of one text field of a goal call (a description, a summary, a reason).
pub const MAX_GOAL_TEXT_CHARS: usize = 4000;

/// What the `goal` tool does, as the model reads it.
pub const GOAL_TOOL_DESCRIPTION: &str = "Edit your plan. Fields can be combined in one call and apply in the \
            order abandon/done, edit/delete, add, focus. `add`: comma-separated new goals, \
            children of the focused goal (top level when none). `focus`: a goal's number \
            (e.g. \"2.1\") to work on. `done`: finish the focused goal with a summary of \
            what later goals need to know. `abandon`: give the focused goal up, with the \
            reason. `edit`: \"<number>: <new description>\" for a goal not started yet. \
            `delete`: numbers of goals not started yet to remove. `agent`: the profile that \
            carries out the added goals (or end a goal with `@<profile>`). `select`: the \
            branch (A, B, ...) of the latest exploration whose approach you chose. With `add`: \
            `check`, a shell command that must exit 0 before an added goal can be done (it runs \
            when you call done; a failure keeps the goal in progress and shows you the \
            output), or `judge`, what a reviewer must see for it to be met; `budget`, what each \
            added goal may spend. With `done`: `evidence` a judge reads (test output, files). \
            Every goal must end done or abandoned before the task is finished.";

/// The JSON schema of the `goal` tool's parameters.
pub const GOAL_TOOL_PARAMETERS: &str = r#"{
    "type": "object",
    "properties": {
        "add": {"type": "string", "description": "Comma-separated new goals."},
        "done": {"type": "string", "description": "Summary of the finished focused goal."},
        "abandon": {"type": "string", "description": "Why the focused goal is given up."},
        "focus": {"type": "string", "description": "Number of the goal to work on, e.g. \"2.1\"."},
        "reason": {"type": "string", "description": "Why the added goals are needed."},
        "edit": {"type": "string", "description": "\"<number>: <new description>\" of a pending goal."},
        "delete": {"type": "string", "description": "Comma-separated numbers of pending goals to remove."},
        "agent": {"type": "string", "description": "The agent profile that carries out the added goals."},
        "select": {"type": "string", "description": "The chosen branch of the latest exploration, e.g. \"A\"."},
        "check": {"type": "string", "description": "With add: a shell command that must exit 0 before the added goals can be done, e.g. \"python3 -m unittest -q\"."},
        "judge": {"type": "string", "description": "With add, instead of check: what a judge must find for the added goals to be met."},
        "budget": {
            "type": "object",
            "description": "With add: what each added goal may spend before you are told to finish or abandon it.",
            "properties": {
                "iterations": {"type": "integer", "minimum": 1, "description": "Model calls."},
                "tokens": {"type": "integer", "minimum": 1, "description": "Tokens."},
                "seconds": {"type": "integer", "minimum": 1, "description": "Seconds of model and tool time."}
            },
            "additionalProperties": false
        },
        "evidence": {"type": "string", "description": "With done: what shows the goal is met, for its judge."}
    },
    "additionalProperties": false
}"#;

impl GoalCommand {
    /// Why the command would make the plan too big, for a plan of `existing` goals: too many
    /// goals at once or in all, or a text too long to repeat on every model call; `None` when
    /// it would not.
    pub fn size_error(&self, existing: usize) -> Option<String> {
        let texts = [
            ("add", &self.add),
            ("done", &self.done),
            ("abandon", &self.abandon),
            ("reason", &self.reason),
            ("edit", &self.edit),
            ("select", &self.select),
            ("agent", &self.agent),
            ("check", &self.check),
            ("judge", &self.judge),
            ("evidence", &self.evidence),
        ];
        for (field, text) in texts {
            let Some(text) = text else { continue };
            // `add` is a list: each goal's description is held to the limit.
            let longest = match field {
                "add" => text.split(',').map(|d| d.trim().chars().count()).max(),
                _ => Some(text.trim().chars().count()),
            };
            if longest.unwrap_or(0) > MAX_GOAL_TEXT_CHARS {
                return Some(format!(
                    "`{field}` is too long: at most {MAX_GOAL_TEXT_CHARS} characters per text; \
                     keep plan texts short and put details in files"
                ));
            }
        }
        let adding = self.add.as_deref().map_or(0, |add| {
            add.split(',').filter(|d| !d.trim().is_empty()).count()
        });
        if adding > MAX_GOALS_PER_CALL {
            return Some(format!(
                "`add` lists {adding} goals; at most {MAX_GOALS_PER_CALL} can be added per call"
            ));
        }
        if adding > 0 && existing + adding > MAX_PLAN_GOALS {
            return Some(format!(
                "the plan holds {existing} goals and may hold at most {MAX_PLAN_GOALS}; finish \
                 or abandon goals instead of adding more"
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_json_and_names_every_field_of_a_command() {
        let schema: serde_json::Value = serde_json::from_str(GOAL_TOOL_PARAMETERS).unwrap();
        let properties = schema["properties"].as_object().unwrap();
        let command = serde_json::to_value(GoalCommand::default()).unwrap();
        for field in command.as_object().unwrap().keys() {
            assert!(
                properties.contains_key(field),
                "{field} is not in the schema"
            );
        }
        assert_eq!(properties.len(), command.as_object().unwrap().len());
        assert_eq!(schema["additionalProperties"], false);
    }

    #[test]
    fn oversized_commands_are_named() {
        let many = GoalCommand {
            add: Some(vec!["g"; 51].join(", ")),
            ..GoalCommand::default()
        };
        assert!(many.size_error(0).unwrap().contains("at most 50"));
        let one = GoalCommand {
            add: Some("g".into()),
            ..GoalCommand::default()
        };
        assert!(
            one.size_error(MAX_PLAN_GOALS)
                .unwrap()
                .contains("at most 1000")
        );
        assert_eq!(one.size_error(MAX_PLAN_GOALS - 1), None);
        let long = GoalCommand {
            check: Some("x".repeat(MAX_GOAL_TEXT_CHARS + 1)),
            ..GoalCommand::default()
        };
        assert!(
            long.size_error(0)
                .unwrap()
                .starts_with("`check` is too long")
        );
    }
}
