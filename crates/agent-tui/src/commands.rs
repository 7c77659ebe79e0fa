//! The slash commands of a session: look at it (`/plan`, `/cost`, `/trace`, `/help`, `/diff`,
//! `/shells`, which also stops a background shell),
//! steer it (`/model NAME`, `/goal`, `/compact`, `/fork`, `/rewind`, `/new`, `/resume`) and leave
//! it (`/quit`). A mistake is answered with what would work; it never ends the session.

use agent_execution::TraceFilter;
use agent_execution::fork::{self, ForkPoint};
use agent_runner::{CancellationToken, stats_with_sub_traces};

use crate::cells::status_word;
use crate::session::Session;
use agent_runner::interaction::shells;
use agent_runner::interaction::slash::{self, COMMANDS, ForkAt, SlashCommand};

/// The keys, as `/help` lists them after the commands.
const KEYS: &str = "Enter sends · Shift+Enter, Ctrl-J or \\ then Enter: a new line · Up/Down: \
history · Tab: complete /commands and @files · PageUp/PageDown or the mouse wheel: scroll \
(Shift+drag selects text) · Ctrl-O: the newest tool output, whole · Ctrl-P: plan panel · Ctrl-T: \
unfold reasoning · Ctrl-V: attach the clipboard's picture (a pasted picture file's path attaches \
it too; Backspace on an empty line takes it off) · Esc or Ctrl-C: stop the turn (twice: quit) · Ctrl-D: quit · a question \
waits for ↑↓ or its letter, then Enter";

impl Session {
    /// Runs the command `line` (without its `/`).
    pub(crate) async fn command(&mut self, line: &str) {
        let command = match slash::parse(&format!("/{line}")) {
            Some(Ok(command)) => command,
            Some(Err(mistake)) => return self.app.notice(mistake),
            None => return,
        };
        if self.app.running && command.steers() {
            let name = line.split_whitespace().next().unwrap_or_default();
            self.app
                .notice(format!("/{name} waits for the turn to end (Esc stops it)"));
            return;
        }
        match command {
            SlashCommand::Quit => self.quit = true,
            SlashCommand::Help => {
                let mut text: Vec<String> = COMMANDS
                    .iter()
                    .map(|(name, about)| format!("{name:<10} {about}"))
                    .chain(
                        self.app
                            .extra_commands
                            .iter()
                            .map(|(name, about)| format!("{name} {about}")),
                    )
                    .collect();
                text.push(KEYS.to_owned());
                self.app.notice(text.join("\n"));
            }
            SlashCommand::Plan => self.plan(),
            SlashCommand::Goal(text) => self.goal(&text).await,
            SlashCommand::Cost => self.cost().await,
            SlashCommand::Model(name) => self.model(name.as_deref()).await,
            SlashCommand::Trace => match self.trace_id.clone() {
                Some(id) => self.app.notice(id),
                None => self
                    .app
                    .notice("no trace yet: it starts with your first message"),
            },
            SlashCommand::New => {
                self.forget();
                self.app
                    .notice("a new conversation starts with your next message");
            }
            SlashCommand::Compact => self.compact().await,
            SlashCommand::Fork(at) => self.fork(at).await,
            SlashCommand::Rewind(words) => {
                let words: Vec<&str> = words.iter().map(String::as_str).collect();
                self.rewind(&words).await;
            }
            SlashCommand::Diff(number) => self.diff(&[number.as_str()]).await,
            SlashCommand::Resume(id) => self.resume(id.as_deref()).await,
            SlashCommand::Shells(None) => self.show_shells(),
            SlashCommand::Shells(Some(id)) => {
                let trace_id = self.trace_id.clone().unwrap_or_default();
                match shells::kill(&trace_id, &id) {
                    Ok(said) => self.app.notice(said),
                    Err(error) => self.app.error(error),
                }
                self.refresh_shells();
            }
            SlashCommand::Other { name, args } => {
                let extensions = self.extensions.clone();
                match extensions {
                    Some(extensions) => match extensions.command(&name, &args).await {
                        Some(Ok(message)) => self.send(message).await,
                        Some(Err(error)) => self.app.notice(error),
                        None => self
                            .app
                            .notice(format!("unknown command /{name}; /help lists them")),
                    },
                    None => self
                        .app
                        .notice(format!("unknown command /{name}; /help lists them")),
                }
            }
            // A command this screen does not know yet.
            _ => self.app.notice(format!(
                "/{} is not available here",
                line.trim_start_matches('/')
            )),
        }
    }

    /// `/shells`: the run's background shells in their view.
    fn show_shells(&mut self) {
        let trace_id = self.trace_id.clone().unwrap_or_default();
        self.app
            .show_shells(shells::of_run(&trace_id), chrono::Utc::now());
    }

    /// Refreshes the `/shells` view when it is open.
    pub(crate) fn refresh_shells(&mut self) {
        if self.app.shells_shown() {
            self.show_shells();
        }
    }

    /// `/model`: the model, or with a name another one for the next turns, which the trace
    /// records.
    async fn model(&mut self, name: Option<&str>) {
        let now = self.app.status.model.clone();
        let Some(name) = name else {
            return self.app.notice(format!(
                "model {now} · /model NAME asks another model of the same provider from the next turn"
            ));
        };
        if name == now {
            return self.app.notice(format!("the model is {now} already"));
        }
        match self
            .runner
            .switch_model(name, self.trace_id.as_deref())
            .await
        {
            Ok(()) => {
                self.app.status.model = name.to_owned();
                let when = match self.app.running {
                    true => format!("from the next turn (the turn going on keeps {now})"),
                    false => format!("from the next turn on (was {now})"),
                };
                self.app
                    .notice(format!("model {name} {when}; the trace records it"));
            }
            Err(error) => self.app.error(format!("cannot switch the model: {error}")),
        }
    }

    fn plan(&mut self) {
        self.app.toggle_plan();
        let shown = if self.app.plan_shown() {
            "shown"
        } else {
            "hidden"
        };
        match self.app.plan.has_goals() {
            true => {
                let tree = self.app.plan.tree.to_todo_string();
                self.app
                    .notice(format!("{}\n(plan panel {shown})", tree.trim_end()));
            }
            false => self.app.notice(format!("no plan yet (plan panel {shown})")),
        }
    }

    async fn cost(&mut self) {
        let Some(trace_id) = self.trace_id.clone() else {
            self.app.notice("no conversation yet: type a message first");
            return;
        };
        let store = self.runner.store().clone();
        match stats_with_sub_traces(store.as_ref(), &trace_id).await {
            Ok(total) => self.app.notice(format!(
                "{} messages · {} tokens · ${:.4} (with sub-agents)",
                total.total_messages, total.total_tokens, total.total_cost
            )),
            Err(error) => self.app.error(error.to_string()),
        }
    }

    async fn compact(&mut self) {
        let Some(trace_id) = self.trace_id.clone() else {
            self.app.notice("no conversation yet: type a message first");
            return;
        };
        self.app.notice("compacting…");
        match self
            .runner
            .compact(&trace_id, &CancellationToken::new())
            .await
        {
            // The summary's message says it, with the tokens before and after.
            Ok(true) => {}
            Ok(false) => self
                .app
                .notice("the summariser gave no summary; the conversation is unchanged"),
            Err(error) => self.app.error(format!("cannot compact: {error}")),
        }
    }

    async fn fork(&mut self, at: ForkAt) {
        let Some(trace_id) = self.trace_id.clone() else {
            self.app.notice("no conversation yet: type a message first");
            return;
        };
        let point = match at {
            ForkAt::Goal(number) => ForkPoint::Goal(number),
            ForkAt::Message(sequence) => ForkPoint::Message(sequence),
        };
        let store = self.runner.store().clone();
        match fork::fork(store.as_ref(), &trace_id, &point).await {
            Ok(forked) => {
                self.follow(forked.trace_id.clone());
                self.app.notice(format!(
                    "forked {trace_id} into {} ({} messages); this conversation goes on there",
                    forked.trace_id, forked.messages
                ));
            }
            Err(error) => self.app.error(error.to_string()),
        }
    }

    async fn resume(&mut self, id: Option<&str>) {
        let store = self.runner.store().clone();
        let filter = TraceFilter {
            limit: Some(500),
            ..TraceFilter::default()
        };
        let traces = match store.list_traces(&filter).await {
            Ok(traces) => traces,
            Err(error) => return self.app.error(error.to_string()),
        };
        let mains = traces.into_iter().filter(|t| t.parent_trace_id.is_none());
        let Some(id) = id else {
            let listed: Vec<String> = mains
                .take(10)
                .map(|t| {
                    let task = t.task.lines().next().unwrap_or_default().to_owned();
                    format!(
                        "{}  {:<9}  {}",
                        t.trace_id.chars().take(8).collect::<String>(),
                        status_word(t.status),
                        crate::wrap::truncate(&task, 60)
                    )
                })
                .collect();
            let text = match listed.is_empty() {
                true => "no traces yet".to_owned(),
                false => format!("/resume ID continues one of these:\n{}", listed.join("\n")),
            };
            return self.app.notice(text);
        };
        let found: Vec<String> = mains
            .filter(|t| t.trace_id.starts_with(id))
            .map(|t| t.trace_id)
            .collect();
        match found.as_slice() {
            [one] => {
                let one = one.clone();
                self.follow(one.clone());
                self.app.notice(format!("continuing {one}"));
            }
            [] => self.app.notice(format!("no trace starts with {id}")),
            _ => self.app.notice(format!(
                "{} traces start with {id}: give more of it",
                found.len()
            )),
        }
    }
}
