//! `/goal` in the full-screen UI: the runner's `goal_command` reads the line and does the work;
//! a new goal's message starts the turn (on a new trace when the session has none), and the
//! run keeps working until every goal is done or abandoned, or the person stops it (Esc).

use agent_plan::goal_command::{self, GoalRequest};

use crate::session::Session;

impl Session {
    /// Runs `/goal args`.
    pub(crate) async fn goal(&mut self, args: &str) {
        let request = match goal_command::parse(args) {
            Ok(request) => request,
            Err(error) => return self.app.notice(error.to_string()),
        };
        let trace_id = self.trace_id.clone();
        match (request, trace_id) {
            (GoalRequest::Set(goal), trace_id) => {
                let set =
                    match goal_command::set_goal(&self.runner, trace_id.as_deref(), &goal).await {
                        Ok(set) => set,
                        Err(error) => return self.app.error(error.to_string()),
                    };
                if set.created {
                    self.follow(set.trace_id.clone());
                }
                self.app
                    .notice(format!("goal {} set: {}", set.number, goal.text));
                self.send(set.message).await;
            }
            (GoalRequest::Show, Some(trace_id)) => {
                let store = self.runner.store().clone();
                match store.get_goal_tree(&trace_id).await {
                    Ok(tree) => self
                        .app
                        .notice(goal_command::status(&tree.unwrap_or_default())),
                    Err(error) => self.app.error(error.to_string()),
                }
            }
            (GoalRequest::Clear, Some(trace_id)) => {
                match goal_command::clear(&self.runner, &trace_id).await {
                    Ok(cleared) if cleared.is_empty() => {
                        self.app.notice("no goal set with /goal is open");
                    }
                    Ok(cleared) => self
                        .app
                        .notice(format!("abandoned: {}", cleared.join("; "))),
                    Err(error) => self.app.error(error.to_string()),
                }
            }
            (_, None) => self
                .app
                .notice("no goal yet: /goal TEXT [--check CMD] sets one"),
        }
    }
}
