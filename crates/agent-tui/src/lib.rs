//! The full-screen terminal UI of the agent (`agent` and `agent chat` on a terminal): the
//! conversation streamed as Markdown, each tool call a cell with its state, the live plan in a
//! panel, a status line (model, context used, tokens and cost with sub-traces, trace, approval
//! and sandbox modes, a retried model request while it waits), approvals in a modal that
//! nothing typed before it appeared can answer, and an input with multi-line editing, a history
//! per project, and completion of slash commands and `@` paths. When a session ends, its
//! conversation is written to the terminal's normal screen, where it stays in the scrollback.
//!
//! It owns the screen, and the one layout of Markdown ([`markdown`]: styled lines) that the
//! line mode of `agent-cli` paints as ANSI text too. A session ([`run`]) drives the
//! [`AgentRunner`] its embedder built and shows the trace's live feed ([`agent_execution::watch_live`]) — the
//! events the store records and the text deltas of model calls — so the screen shows what the
//! trace holds. Risky calls are asked through the [`Approver`] the embedder puts in the
//! runner's options; a tool's server's questions to the person arrive through a [`FormAsker`]
//! and are filled in in a modal form. `/rewind` and `/diff` read the checkpoints the runner's
//! options name, through `agent-plan`'s rewinds. Depends on `agent-execution`, `agent-goal`,
//! `agent-runner` and `agent-plan`, never on the command line, a concrete store or a provider;
//! `ratatui` (its crossterm backend only) draws.
//!
//! The state ([`App`]) is apart from the terminal, so every screen can be drawn on a test
//! backend:
//!
//! ```
//! use agent_execution::{DeltaKind, LiveDelta, LiveEvent};
//! use agent_tui::{App, Status};
//! use ratatui::{Terminal, backend::TestBackend};
//!
//! let mut app = App::new(Status { model: "gpt-4o-mini".into(), ..Status::default() });
//! app.apply(&LiveEvent::Delta(LiveDelta {
//!     trace_id: "t".into(),
//!     goal_id: None,
//!     kind: DeltaKind::Text,
//!     delta: "# Done\n\nThe **tests** pass.".into(),
//! }));
//! let mut terminal = Terminal::new(TestBackend::new(40, 8)).unwrap();
//! terminal.draw(|frame| agent_tui::draw(frame, &mut app)).unwrap();
//! let screen = format!("{:?}", terminal.backend().buffer());
//! assert!(screen.contains("The tests pass."));
//! ```
//!
//! [`AgentRunner`]: agent_runner::AgentRunner
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod app;
mod approval;
mod attach;
mod cells;
mod commands;
mod complete;
mod diff_view;
mod elicit;
mod extend;
mod goal;
mod highlight;
mod history;
mod input;
mod keys;
pub mod markdown;
mod modal;
mod notices;
mod notify;
mod plan;
mod rewind;
mod session;
mod shells;
mod terminal;
mod transcript;
mod view;
mod wrap;

pub use app::{App, Status};
pub use approval::{Answer, Approver, Ask, AskKind, Describe, Questions};
pub use cells::{Cell, ToolCell, ToolState};
pub use elicit::{FormAnswer, FormAsker, FormQuestion, FormQuestions};
pub use extend::Extensions;
pub use keys::Action;
pub use session::{Explain, Options, run};
pub use view::draw;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
