//! `/rewind` and `/diff` in the UI: the points the conversation can go back to, going back to
//! one (the files put back as they were when it started, the session continued in a fork, as
//! `agent rewind` does — both through `agent_plan::rewind`), and a goal's file changes in a
//! scrollable view.

use std::sync::Arc;

use agent_plan::rewind::{self, Command};

use crate::session::Session;

impl Session {
    /// `/rewind [N] [--force] [--files-only]`.
    pub(crate) async fn rewind(&mut self, words: &[&str]) {
        let command = match rewind::parse_command(words) {
            Ok(command) => command,
            Err(mistake) => return self.app.notice(mistake),
        };
        let Some((trace_id, checkpoints)) = self.checkpoints() else {
            return;
        };
        let store = self.runner.store().clone();
        match command {
            Command::List => match rewind::points(store.as_ref(), &checkpoints, &trace_id).await {
                Ok(points) => self.app.notice(rewind::list_text(&trace_id, &points)),
                Err(error) => self.app.error(error.to_string()),
            },
            Command::Rewind(target, options) => {
                match rewind::rewind(store.as_ref(), &checkpoints, &trace_id, &target, options)
                    .await
                {
                    Ok(rewound) => {
                        let done = rewind::done_text(&trace_id, &target, options, &rewound);
                        if let Some(forked) = rewound.forked {
                            self.follow(forked.trace_id);
                        }
                        self.app.notice(done);
                    }
                    Err(error) => self.app.error(error.to_string()),
                }
            }
        }
    }

    /// `/diff N`: goal N's file changes, from its start to its end (or to now).
    pub(crate) async fn diff(&mut self, words: &[&str]) {
        let [number] = words else {
            return self
                .app
                .notice("/diff N shows the file changes of goal N (see /plan)");
        };
        let Some((trace_id, checkpoints)) = self.checkpoints() else {
            return;
        };
        let store = self.runner.store().clone();
        match rewind::goal_diff(store.as_ref(), &checkpoints, &trace_id, number).await {
            Ok(diff) => self.app.show_diff(format!("goal {number}"), &diff),
            Err(error) => self.app.error(error.to_string()),
        }
    }

    /// The trace and its checkpoints; `None` (said on the screen) when there are none.
    fn checkpoints(&mut self) -> Option<(String, Arc<agent_plan::rewind::CheckpointStore>)> {
        let Some(trace_id) = self.trace_id.clone() else {
            self.app.notice("no conversation yet: type a message first");
            return None;
        };
        match rewind::checkpoints_of(self.runner.options(), &trace_id) {
            Ok(Some(checkpoints)) => Some((trace_id, checkpoints)),
            Ok(None) => {
                self.app.notice(format!(
                    "{trace_id} has no checkpoints (they are off, traces are kept in a \
                     database, or no snapshot was taken yet)"
                ));
                None
            }
            Err(error) => {
                self.app.error(error.to_string());
                None
            }
        }
    }
}
