//! The state of the screen, built from the trace's live feed — the same stored events and
//! text deltas every other watcher gets — so that the UI shows exactly what is recorded: the
//! conversation's cells (a compaction's summary as a notice of it, never as a message of the
//! user), the plan, the figures of the status line, the questions waiting to be answered and
//! the messages queued for the running turn.

use std::collections::VecDeque;
use std::time::Instant;

use agent_execution::meta::{MessageMeta, ToolOutcome, with_placeholders};
use agent_execution::{DeltaKind, EventKind, LiveEvent, Message, NoticeKind, Role, TraceStatus};

use crate::approval::Ask;
use crate::cells::{Cell, ToolCell, ToolState};
use crate::input::Editor;
use crate::plan::{Plan, SubTrace};

/// What the status line says.
#[derive(Debug, Default, Clone)]
pub struct Status {
    /// The model.
    pub model: String,
    /// The model's context window, in tokens, when known.
    pub context_window: Option<u64>,
    /// The tokens of the newest model call (its prompt and answer).
    pub context_used: Option<u64>,
    /// Tokens of the trace's own messages.
    pub tokens: u64,
    /// Cost of the trace's own messages.
    pub cost: f64,
    /// Tokens and cost of its finished sub-traces.
    pub sub_tokens: u64,
    /// Cost of its finished sub-traces.
    pub sub_cost: f64,
    /// The trace, once there is one.
    pub trace_id: Option<String>,
    /// How risky calls are approved (`ask`, `yes`).
    pub approval: String,
    /// The sandbox of commands (`workspace-write`, `read-only`, `off`).
    pub sandbox: String,
}

/// A request the model client is sending again (`notices.rs`), for the status line.
#[derive(Debug, Clone)]
pub(crate) struct Retrying {
    /// Whether the server said it was rate limited.
    pub(crate) rate_limited: bool,
    /// Why the request failed.
    pub(crate) error: String,
    /// The attempt that follows, and how many there are at most.
    pub(crate) attempt: (u32, u32),
    /// When the next attempt goes out.
    pub(crate) at: Instant,
}

/// The whole state of the screen.
pub struct App {
    /// The conversation.
    pub cells: Vec<Cell>,
    /// The plan panel's content.
    pub(crate) plan: Plan,
    /// Whether the plan panel is shown: `None` follows the trace (shown when it has goals).
    pub(crate) show_plan: Option<bool>,
    /// The status line's figures.
    pub status: Status,
    /// The message being typed.
    pub(crate) input: Editor,
    /// Questions waiting for an answer, the one shown first.
    pub(crate) asks: VecDeque<Ask>,
    /// How far the question shown is answered (`modal.rs`).
    pub(crate) modal: crate::approval::Modal,
    /// When the last key came, for the modal to tell typing from answering.
    pub(crate) last_key: Option<Instant>,
    /// The servers' questions to the person, in a form (`elicit.rs`).
    pub(crate) forms: crate::elicit::Forms,
    /// The embedder's slash commands (`extend.rs`), with their `/`, and what each does.
    pub(crate) extra_commands: Vec<(String, String)>,
    /// Messages sent to the running turn and not recorded yet.
    pub(crate) queued: Vec<String>,
    /// Pictures pasted for the next message (`attach.rs`).
    pub(crate) attached: Vec<agent_execution::message::ChatImage>,
    /// Whether a turn runs.
    pub running: bool,
    /// How many lines the conversation is scrolled up from its end.
    pub(crate) scroll: usize,
    /// The time the screen is drawn at.
    pub now: Instant,
    /// Whether reasoning is unfolded.
    pub(crate) reasoning: bool,
    /// The candidates of completion, and where the word they replace starts.
    pub(crate) completion: crate::complete::Candidates,
    /// The workspace's files, for `@` completion.
    pub(crate) files: Vec<String>,
    /// The history of what was typed.
    pub(crate) history: crate::history::History,
    /// Set when a Ctrl-C asked to confirm quitting.
    pub(crate) quit_armed: bool,
    /// The tool-call ids of `goal` and `read_progress` calls, shown by the plan, not as cells.
    plan_calls: std::collections::HashSet<String>,
    /// A goal's diff or a tool's output, shown over the conversation until closed (`/diff N`,
    /// Ctrl-O).
    pub(crate) diff: Option<crate::diff_view::DiffView>,
    /// The run's background shells, listed over the conversation until closed (`/shells`).
    pub(crate) shells: Option<crate::shells::ShellsView>,
    /// The cells from this one on are the conversation (those before greeted the user); what
    /// is kept in the terminal when the session ends.
    pub(crate) kept_from: usize,
    /// The messages recorded since the trace began or was last compacted.
    messages_since_compaction: usize,
    /// What the model client is doing about its server (a retry), for the status line.
    pub(crate) model_notice: Option<Retrying>,
}

impl App {
    /// An empty screen with this status line.
    pub fn new(status: Status) -> Self {
        Self {
            cells: Vec::new(),
            plan: Plan::default(),
            show_plan: None,
            status,
            input: Editor::default(),
            asks: VecDeque::new(),
            modal: crate::approval::Modal::default(),
            last_key: None,
            forms: crate::elicit::Forms::default(),
            extra_commands: Vec::new(),
            queued: Vec::new(),
            attached: Vec::new(),
            running: false,
            scroll: 0,
            now: Instant::now(),
            reasoning: false,
            completion: crate::complete::Candidates::default(),
            files: Vec::new(),
            history: crate::history::History::default(),
            quit_armed: false,
            plan_calls: std::collections::HashSet::new(),
            diff: None,
            shells: None,
            kept_from: 0,
            messages_since_compaction: 0,
            model_notice: None,
        }
    }

    /// Unfolds reasoning (or folds it back).
    pub fn set_reasoning_unfolded(&mut self, unfolded: bool) {
        self.reasoning = unfolded;
    }

    /// Forgets the conversation shown, for another trace (`/new`, `/fork`, `/resume`).
    pub fn reset(&mut self, trace_id: Option<String>) {
        self.cells.clear();
        self.plan = Plan::default();
        self.queued.clear();
        self.scroll = 0;
        self.plan_calls.clear();
        self.kept_from = 0;
        self.messages_since_compaction = 0;
        self.status.trace_id = trace_id;
        self.status.context_used = None;
        self.status.tokens = 0;
        self.status.cost = 0.0;
        self.status.sub_tokens = 0;
        self.status.sub_cost = 0.0;
    }

    /// Opens the scrollable view of `diff` (a unified diff) titled `title`, over the
    /// conversation until Esc closes it; an empty diff says that nothing changed.
    pub fn show_diff(&mut self, title: impl Into<String>, diff: &str) {
        self.diff = Some(crate::diff_view::DiffView::new(title.into(), diff));
    }

    /// Whether a diff is on the screen.
    pub fn diff_shown(&self) -> bool {
        self.diff.is_some()
    }

    /// Whether the plan panel is shown now.
    pub fn plan_shown(&self) -> bool {
        self.show_plan.unwrap_or_else(|| self.plan.has_goals())
    }

    /// Shows or hides the plan panel.
    pub fn toggle_plan(&mut self) {
        self.show_plan = Some(!self.plan_shown());
    }

    /// Adds a notice to the conversation.
    pub fn notice(&mut self, text: impl Into<String>) {
        self.cells.push(Cell::Notice(text.into()));
        self.scroll = 0;
    }

    /// Adds an error to the conversation.
    pub fn error(&mut self, text: impl Into<String>) {
        self.settle_streaming();
        self.cells.push(Cell::Error(text.into()));
        self.scroll = 0;
    }

    /// Adds a server's question to fill in, shown over everything else.
    pub fn elicit(&mut self, question: crate::elicit::FormQuestion) {
        self.forms.push(question);
    }

    /// Adds a question to answer.
    pub fn ask(&mut self, ask: Ask) {
        if self.asks.is_empty() {
            self.modal.open(self.now);
        }
        self.asks.push_back(ask);
    }

    /// Takes one item of the trace's live feed.
    pub fn apply(&mut self, item: &LiveEvent) {
        match item {
            LiveEvent::Delta(delta) => {
                // An answer arrives: the request went through.
                self.model_notice = None;
                self.delta(delta.kind, &delta.delta);
            }
            LiveEvent::Stored(event) => self.event(&event.kind),
        }
    }

    /// A piece of the answer or reasoning being streamed.
    fn delta(&mut self, kind: DeltaKind, piece: &str) {
        let streaming = self
            .cells
            .iter_mut()
            .rev()
            .take(2)
            .find_map(|cell| match (kind, cell) {
                (
                    DeltaKind::Text | DeltaKind::Report,
                    Cell::Assistant {
                        text,
                        streaming: true,
                    },
                )
                | (
                    DeltaKind::Reasoning,
                    Cell::Reasoning {
                        text,
                        streaming: true,
                    },
                ) => Some(text),
                _ => None,
            });
        match streaming {
            Some(text) => text.push_str(piece),
            None => self.cells.push(match kind {
                // The closing report streams as text of the answer it follows.
                DeltaKind::Text | DeltaKind::Report => Cell::Assistant {
                    text: piece.to_owned(),
                    streaming: true,
                },
                DeltaKind::Reasoning => Cell::Reasoning {
                    text: piece.to_owned(),
                    streaming: true,
                },
            }),
        }
    }

    /// Drops what streamed, for the recorded message that replaces it.
    fn drop_streaming(&mut self) {
        self.cells.retain(|cell| {
            !matches!(
                cell,
                Cell::Assistant {
                    streaming: true,
                    ..
                } | Cell::Reasoning {
                    streaming: true,
                    ..
                }
            )
        });
    }

    /// Keeps what streamed as it is: the call ended without a message (it was stopped).
    fn settle_streaming(&mut self) {
        for cell in &mut self.cells {
            if let Cell::Assistant { streaming, .. } | Cell::Reasoning { streaming, .. } = cell {
                *streaming = false;
            }
        }
    }

    fn event(&mut self, kind: &EventKind) {
        match kind {
            EventKind::TraceCreated { goal_tree, trace } => {
                self.status.trace_id = Some(trace.trace_id.clone());
                self.tree(goal_tree.clone());
            }
            EventKind::GoalTreeUpdated { goal_tree } => self.tree(goal_tree.clone()),
            EventKind::TraceUpdated { trace } => {
                self.status.tokens = trace.total_tokens;
                self.status.cost = trace.total_cost;
            }
            EventKind::MessageAdded { message, .. } => self.message(message),
            EventKind::MessageUpdated { message } => self.message_updated(message),
            EventKind::SubTraceStarted {
                trace_id,
                parent_goal_id,
                task,
                ..
            } => {
                self.plan.sub_traces.insert(
                    trace_id.clone(),
                    SubTrace {
                        parent_goal_id: parent_goal_id.clone(),
                        task: task.clone(),
                        status: None,
                    },
                );
            }
            EventKind::SubTraceCompleted {
                trace_id,
                status,
                stats,
                ..
            } => {
                if let Some(sub) = self.plan.sub_traces.get_mut(trace_id) {
                    sub.status = Some(*status);
                }
                self.status.sub_tokens += stats.total_tokens;
                self.status.sub_cost += stats.total_cost;
            }
            EventKind::LoopDetected { detail, .. } => {
                self.notice(format!("⚠ the agent is repeating itself: {detail}"));
            }
            EventKind::CompactionFailed { reason } => {
                self.notice(format!("⚠ compaction failed: {reason}"));
            }
            EventKind::Notice { kind, message, .. } => {
                let mark = if *kind == NoticeKind::ContextWindow {
                    "ⓘ"
                } else {
                    "⚠"
                };
                self.notice(format!("{mark} {message}"));
            }
            EventKind::TraceCompleted { status, .. } => {
                self.settle_streaming();
                for cell in &mut self.cells {
                    if let Cell::Tool(tool) = cell
                        && let ToolState::Running(_) = tool.state
                    {
                        tool.state = ToolState::Failed(None);
                        if *status == TraceStatus::Cancelled {
                            tool.outcome = Some(ToolOutcome::Cancelled);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn tree(&mut self, tree: agent_goal::GoalTree) {
        let before = self.plan.tree.current_id().map(str::to_owned);
        self.plan.set_tree(tree);
        let now = self.plan.tree.current_id().map(str::to_owned);
        if now != before
            && let Some(label) = self.plan.current_label()
        {
            self.cells.push(Cell::Notice(format!("▶ goal {label}")));
        }
    }

    fn message(&mut self, message: &Message) {
        self.status.tokens += message.tokens.unwrap_or(0);
        self.status.cost += message.cost.unwrap_or(0.0);
        self.model_notice = None;
        let meta = MessageMeta::of(message);
        if meta.compaction {
            // A summary the runner wrote for the model, not something the user said.
            self.settle_streaming();
            self.cells.push(Cell::Compacted {
                messages: std::mem::take(&mut self.messages_since_compaction),
                tokens_before: meta.tokens_before,
                tokens_after: meta.tokens_after,
            });
            return;
        }
        if message.role != Role::System {
            self.messages_since_compaction += 1;
        }
        match message.role {
            Role::User if meta.turn == Some(agent_execution::meta::Turn::Background) => {
                // The runner's word to the model of a background delegate's end.
                self.settle_streaming();
                let first = message.content.text().lines().next().unwrap_or_default();
                self.cells.push(Cell::Notice(format!("↻ {first}")));
            }
            Role::User => {
                self.settle_streaming();
                let text = message.content.text().to_owned();
                self.queued.retain(|queued| queued.trim() != text.trim());
                let text = with_placeholders(&text, &message.metadata);
                self.cells.push(Cell::User(text));
            }
            Role::Assistant => self.assistant(message),
            Role::Tool => {
                let Some(id) = &message.tool_call_id else {
                    return;
                };
                let ms = message.duration_ms;
                let failed = message.content.is_error();
                for cell in self.cells.iter_mut().rev() {
                    if let Cell::Tool(tool) = cell
                        && &tool.id == id
                    {
                        tool.output = with_placeholders(message.content.text(), &message.metadata);
                        tool.outcome = meta.outcome;
                        tool.state = if failed {
                            ToolState::Failed(ms)
                        } else {
                            ToolState::Done(ms)
                        };
                        return;
                    }
                }
                if failed && self.plan_calls.contains(id) {
                    self.cells
                        .push(Cell::Error(message.content.text().to_owned()));
                }
            }
            Role::System => {}
        }
    }

    fn assistant(&mut self, message: &Message) {
        self.drop_streaming();
        let meta = MessageMeta::read(&message.metadata);
        if let Some(usage) = meta.usage {
            let used = usage.prompt_tokens.unwrap_or(0) + usage.completion_tokens.unwrap_or(0);
            self.status.context_used = Some(used);
        }
        let Some(turn) = message.content.as_assistant() else {
            return;
        };
        let reasoning = turn.reasoning_text();
        if !reasoning.trim().is_empty() {
            self.cells.push(Cell::Reasoning {
                text: reasoning,
                streaming: false,
            });
        }
        if let Some(text) = turn.text.as_deref().filter(|t| !t.trim().is_empty()) {
            self.cells.push(Cell::Assistant {
                text: text.to_owned(),
                streaming: false,
            });
        }
        for call in &turn.tool_calls {
            if call.name == "goal" || call.name == "read_progress" {
                self.plan_calls.insert(call.id.clone());
                continue;
            }
            self.cells.push(Cell::Tool(ToolCell {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                state: ToolState::Running(self.now),
                output: String::new(),
                outcome: None,
            }));
        }
    }

    fn message_updated(&mut self, message: &Message) {
        if message.role != Role::Assistant {
            return;
        }
        let Some(text) = message.content.as_assistant().and_then(|t| t.text.clone()) else {
            return;
        };
        // An interrupted answer stored afterwards, or an annotated one: the newest cell of the
        // answer shows what is stored.
        if let Some(Cell::Assistant { text: shown, .. }) = self
            .cells
            .iter_mut()
            .rev()
            .find(|cell| matches!(cell, Cell::Assistant { .. }))
        {
            *shown = text;
        }
    }
}
