//! A session in the UI: the loop that draws the screen and waits for the next thing to show —
//! a key, an item of the trace's live feed, a question of the approver, a notice of the model
//! client (a retry), the end of a turn, a tick of the clock — and the turns it starts on the
//! runner it was given (the first message creates the trace, the next ones continue it; a
//! message typed while a turn runs is sent to it). Continuing a trace replays its recorded
//! events first, so its conversation is shown. When the session ends, its conversation is
//! written to the terminal's normal screen (`transcript.rs`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_execution::message::{ChatImage, UserInput};
use agent_execution::{LiveEvent, TraceStatus, watch_live};
use agent_runner::{AgentRunner, CancellationToken, RunOutcome};
use futures::StreamExt;
use ratatui::crossterm::event::{self, Event};
use tokio::sync::mpsc;

use crate::app::{App, Status};
use crate::approval::Questions;
use crate::keys::Action;
use crate::terminal::Screen;

/// What a session is given by its embedder.
pub struct Options {
    /// The runner of the session's turns, asking its risky calls through the
    /// [`Approver`](crate::Approver) whose questions are `questions`.
    pub runner: AgentRunner,
    /// The approver's questions.
    pub questions: Questions,
    /// The status line's fixed parts: model, context window, approval and sandbox modes.
    pub status: Status,
    /// The trace to continue, if any.
    pub trace_id: Option<String>,
    /// A first message, sent as the session opens (to the trace continued, if any).
    pub message: Option<String>,
    /// The workspace, for `@` completion and the history of the project.
    pub workspace: PathBuf,
    /// Whether reasoning starts unfolded.
    pub show_reasoning: bool,
    /// How a turn that did not complete is told (what to fix, how to go on); without it, its
    /// status and error.
    pub explain: Option<Explain>,
    /// Where log lines go while the screen is up, said in the greeting.
    pub log_file: Option<PathBuf>,
    /// The questions of the tools' servers to fill in, from a [`FormAsker`](crate::FormAsker).
    pub forms: Option<crate::elicit::FormQuestions>,
    /// The embedder's commands, mentions and last look at each message.
    pub extensions: Option<std::sync::Arc<dyn crate::Extensions>>,
    /// How the person is told that a turn ended or a question waits while they look away.
    pub notify: agent_runner::interaction::TerminalNotify,
}

/// Says how a turn that did not complete ended, for people; it may ask a server (the models
/// it serves), so it is called off the screen's loop.
pub type Explain = Arc<dyn Fn(&RunOutcome) -> String + Send + Sync>;

/// Something the loop waits for.
pub(crate) enum Msg {
    Term(Event),
    Live(String, Box<LiveEvent>),
    /// A turn ended: its outcome, and for one that did not complete what `explain` says.
    TurnEnded(Box<Result<RunOutcome, String>>, Option<String>),
}

pub(crate) struct Session {
    pub(crate) runner: AgentRunner,
    pub(crate) app: App,
    tx: mpsc::UnboundedSender<Msg>,
    pub(crate) trace_id: Option<String>,
    watcher: Option<tokio::task::JoinHandle<()>>,
    cancel: Option<CancellationToken>,
    explain: Option<Explain>,
    /// Messages typed as the turn ended, or with pictures while it ran, for the next one.
    waiting: Vec<String>,
    /// The pictures of the waiting messages.
    waiting_pictures: Vec<ChatImage>,
    pub(crate) quit: bool,
    pub(crate) extensions: Option<std::sync::Arc<dyn crate::Extensions>>,
    notifier: crate::notify::Notifier,
}

/// Runs a session in the terminal until the user leaves; returns the trace it ended on.
///
/// # Errors
///
/// The terminal could not be set up or drawn on.
pub async fn run(options: Options) -> std::io::Result<Option<String>> {
    let mut screen = Screen::enter()?;
    let (tx, mut rx) = mpsc::unbounded_channel();
    read_keys(tx.clone());
    let mut app = App::new(options.status);
    app.set_reasoning_unfolded(options.show_reasoning);
    app.history = crate::history::History::load(&options.workspace);
    app.files = crate::complete::workspace_files(&options.workspace);
    if let Some(extensions) = &options.extensions {
        app.extra_commands = extensions.commands();
        app.files.extend(extensions.mentions());
    }
    let mut greeting = format!(
        "agent · {} · {}\nType a message and Enter · /help lists commands and keys · Ctrl-C stops a turn, twice quits",
        app.status.model,
        options.workspace.display()
    );
    if let Some(path) = &options.log_file {
        greeting.push_str(&format!("\nLog lines go to {}", path.display()));
    }
    app.notice(greeting);
    app.kept_from = app.cells.len();
    let mut session = Session {
        runner: options.runner,
        app,
        tx,
        trace_id: None,
        watcher: None,
        cancel: None,
        explain: options.explain,
        waiting: Vec::new(),
        waiting_pictures: Vec::new(),
        quit: false,
        extensions: options.extensions,
        notifier: crate::notify::Notifier::new(options.notify, Box::new(std::io::stdout())),
    };
    if let Some(trace_id) = options.trace_id {
        session.follow(trace_id);
    }
    if let Some(message) = options.message.filter(|m| !m.trim().is_empty()) {
        session.app.history.add(&message);
        session.start_turn(&message, &[]).await;
    }
    let mut questions = options.questions;
    let mut notices = session.runner.notices();
    let (_no_forms, none) = crate::elicit::FormAsker::new();
    let mut forms = options.forms.unwrap_or(none);
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    while !session.quit {
        session.app.now = Instant::now();
        screen
            .terminal
            .draw(|frame| crate::view::draw(frame, &mut session.app))?;
        tokio::select! {
            Some(msg) = rx.recv() => {
                session.handle(msg).await;
                // What else arrived is taken before drawing again.
                while let Ok(msg) = rx.try_recv() {
                    session.handle(msg).await;
                }
            }
            Some(ask) = questions.recv() => {
                session.app.now = Instant::now();
                let message = format!("agent: {} waits for your approval", ask.tool);
                session.notifier.question(session.app.now, &message);
                session.app.ask(ask);
            }
            Ok(notice) = notices.recv() => session.client_notice(&notice),
            Some(question) = forms.recv() => {
                session.notifier.question(Instant::now(), "agent: a tool has a question for you");
                session.app.elicit(question);
            }
            _ = tick.tick() => session.refresh_shells(),
        }
    }
    session.leave(&mut rx).await;
    drop(screen);
    crate::transcript::print(&session.app);
    Ok(session.trace_id)
}

/// Reads the terminal's events on a thread of their own until the session ends.
fn read_keys(tx: mpsc::UnboundedSender<Msg>) {
    std::thread::spawn(move || {
        while !tx.is_closed() {
            match event::poll(Duration::from_millis(100)) {
                Ok(true) => match event::read() {
                    Ok(event) => {
                        if tx.send(Msg::Term(event)).is_err() {
                            break;
                        }
                    }
                    Err(_) => break,
                },
                Ok(false) => {}
                Err(_) => break,
            }
        }
    });
}

impl Session {
    async fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Term(event) => {
                self.app.now = Instant::now();
                match event {
                    Event::FocusGained => self.notifier.focus(true),
                    Event::FocusLost => self.notifier.focus(false),
                    _ => {}
                }
                let action = self.app.on_event(&event);
                self.act(action).await;
            }
            Msg::Live(trace_id, item) => {
                if self.trace_id.as_deref() == Some(trace_id.as_str()) {
                    self.app.apply(&item);
                }
            }
            Msg::TurnEnded(ended, explained) => self.turn_ended(*ended, explained).await,
        }
    }

    async fn act(&mut self, action: Action) {
        match action {
            Action::Nothing => {}
            Action::Send(text) => self.send(text).await,
            Action::Command(command) => self.command(&command).await,
            Action::Stop => {
                if let Some(cancel) = &self.cancel {
                    cancel.cancel();
                }
            }
            Action::Quit => self.quit = true,
        }
    }

    /// Shows trace `trace_id` from its first event on, live.
    pub(crate) fn follow(&mut self, trace_id: String) {
        if let Some(watcher) = self.watcher.take() {
            watcher.abort();
        }
        // The screen is cleared when another trace replaces the one shown; the first one
        // keeps what was said before it.
        match &self.trace_id {
            Some(_) => self.app.reset(Some(trace_id.clone())),
            None => self.app.status.trace_id = Some(trace_id.clone()),
        }
        self.trace_id = Some(trace_id.clone());
        let mut feed = watch_live(self.runner.store().clone(), &trace_id, 0);
        let tx = self.tx.clone();
        self.watcher = Some(tokio::spawn(async move {
            while let Some(Ok(item)) = feed.next().await {
                if tx
                    .send(Msg::Live(trace_id.clone(), Box::new(item)))
                    .is_err()
                {
                    break;
                }
            }
        }));
    }

    /// Starts afresh: the next message starts a new trace.
    pub(crate) fn forget(&mut self) {
        if let Some(watcher) = self.watcher.take() {
            watcher.abort();
        }
        self.trace_id = None;
        self.app.reset(None);
    }

    pub(crate) async fn send(&mut self, text: String) {
        let text = match &self.extensions {
            Some(extensions) => match extensions.message(&text).await {
                Ok(text) => text,
                Err(error) => return self.app.error(error),
            },
            None => text,
        };
        let pictures = std::mem::take(&mut self.app.attached);
        if self.app.running {
            // A message with pictures waits for the turn's end: what reaches a running turn is
            // text.
            // Nor does a text overtake a message with pictures that waits.
            let sent = pictures.is_empty()
                && self.waiting.is_empty()
                && (self.trace_id.as_deref()).is_some_and(|id| self.runner.send(id, &text));
            if !sent {
                self.waiting.push(text.clone());
                self.waiting_pictures.extend(pictures);
            }
            self.app.queued.push(text);
            return;
        }
        self.start_turn(&text, &pictures).await;
    }

    async fn start_turn(&mut self, text: &str, images: &[ChatImage]) {
        let cancel = CancellationToken::new();
        let input = UserInput { text, images };
        let started = match self.trace_id.clone() {
            Some(id) => {
                self.runner
                    .continue_in_background(&id, input, cancel.clone())
                    .await
            }
            None => match self.runner.create(input).await {
                Ok(id) => {
                    self.follow(id.clone());
                    self.runner.resume_in_background(&id, cancel.clone()).await
                }
                Err(error) => Err(error),
            },
        };
        match started {
            Ok(handle) => {
                self.app.running = true;
                self.notifier.turn_started(Instant::now());
                self.cancel = Some(cancel);
                let tx = self.tx.clone();
                let explain = self.explain.clone();
                tokio::spawn(async move {
                    let ended = handle.wait().await.map_err(|error| error.to_string());
                    let explained = match (&ended, explain) {
                        (Ok(outcome), Some(explain))
                            if !matches!(
                                outcome.status,
                                TraceStatus::Completed | TraceStatus::Cancelled
                            ) =>
                        {
                            let outcome = outcome.clone();
                            tokio::task::spawn_blocking(move || explain(&outcome))
                                .await
                                .ok()
                        }
                        _ => None,
                    };
                    let _ = tx.send(Msg::TurnEnded(Box::new(ended), explained));
                });
            }
            Err(error) => {
                // The pictures stay for the next try (the text is in the history).
                self.app.attached.extend_from_slice(images);
                self.app.error(error.to_string());
            }
        }
    }

    /// A notice of the model client: shown when the call was for this session's trace or one
    /// of its sub-traces.
    fn client_notice(&mut self, notice: &agent_runner::SourcedNotice) {
        let ours = self.trace_id.as_deref().is_some_and(|id| {
            notice
                .source
                .strip_prefix(id)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('@'))
        });
        if ours {
            self.app.now = Instant::now();
            self.app.client_notice(&notice.notice);
        }
    }

    async fn turn_ended(&mut self, ended: Result<RunOutcome, String>, explained: Option<String>) {
        self.app.running = false;
        self.app.model_notice = None;
        self.cancel = None;
        match ended {
            Ok(outcome) => {
                let own = &outcome.stats;
                let all = &outcome.stats_with_sub_traces;
                self.app.status.tokens = own.total_tokens;
                self.app.status.cost = own.total_cost;
                self.app.status.sub_tokens = all.total_tokens.saturating_sub(own.total_tokens);
                self.app.status.sub_cost = (all.total_cost - own.total_cost).max(0.0);
                let told = match outcome.status {
                    TraceStatus::Cancelled => None,
                    TraceStatus::Completed => Some("agent: the turn is done".to_owned()),
                    status => Some(format!(
                        "agent: the turn {}",
                        crate::cells::status_word(status)
                    )),
                };
                if let Some(told) = told {
                    self.notifier.turn_ended(Instant::now(), &told);
                }
                match outcome.status {
                    TraceStatus::Completed => {}
                    TraceStatus::Cancelled => {
                        self.app
                            .notice("stopped · what was said is kept · type to go on");
                    }
                    status => self.app.error(explained.unwrap_or_else(|| {
                        format!(
                            "the turn ended {}: {}",
                            crate::cells::status_word(status),
                            outcome.error.as_deref().unwrap_or("no error recorded")
                        )
                    })),
                }
            }
            Err(error) => self.app.error(error),
        }
        self.app.queued.clear();
        if !self.waiting.is_empty() && !self.quit {
            let next = std::mem::take(&mut self.waiting).join("\n\n");
            let pictures = std::mem::take(&mut self.waiting_pictures);
            self.start_turn(&next, &pictures).await;
        }
    }

    /// Before leaving: a running turn is stopped and its end awaited (a few seconds at most),
    /// so that the trace records it.
    async fn leave(&mut self, rx: &mut mpsc::UnboundedReceiver<Msg>) {
        for ask in self.app.asks.drain(..) {
            ask.answer(crate::approval::Answer::No("the user left".into()));
        }
        if let Some(cancel) = self.cancel.take() {
            cancel.cancel();
            let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
            while let Ok(Some(msg)) = tokio::time::timeout_at(deadline, rx.recv()).await {
                if matches!(msg, Msg::TurnEnded(..)) {
                    break;
                }
            }
        }
        if let Some(watcher) = self.watcher.take() {
            watcher.abort();
        }
    }
}
